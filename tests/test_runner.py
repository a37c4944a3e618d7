"""act_experiments.experiments.runner: the experiments of named entries over seeds behind scripts/pitfalls.py
and scripts/universal_transformer.py. A run that stops loses nothing and resumes where it stopped,
other settings are refused, and the command lines answer bad input in one line."""

import importlib.util
import json
from pathlib import Path

import pytest

from act_experiments.experiments import runner

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("entry", "seed", "iteration", "error", "note")


def fake_train(calls, fail_at=None):
    """A train(entry, seed) that records its calls and returns two evaluations (or raises at fail_at)."""
    def train(entry, seed):
        if (entry, seed) == fail_at:
            raise KeyboardInterrupt            # a stop in the middle of a run
        calls.append((entry, seed))
        rows = [{"entry": entry, "seed": seed, "iteration": it, "error": 0.5 / (1 + it), "note": None}
                for it in (0, 10)]
        return rows, f"{entry} seed {seed}"
    return train


def meta(entries=("a", "b"), seeds=2, lr=0.1):
    return {"experiment": "demo", "entries": list(entries), "seeds": seeds, "settings": {"lr": lr}}


def run(tmp_path, calls, **kw):
    fail_at = kw.pop("fail_at", None)
    return runner.run_entries("demo", kw.pop("meta", meta()), fake_train(calls, fail_at), COLUMNS, tmp_path,
                                  entries_key="entries", script="scripts/demo.py", log=lambda line: None, **kw)


def test_every_entry_and_seed_is_trained_once_and_read_back_as_numbers(tmp_path):
    calls = []
    run(tmp_path, calls)
    assert calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    rows, record = runner.read("demo", tmp_path, ("entry", "note"), "scripts/demo.py")
    assert len(rows) == 8 and rows[1] == {"entry": "a", "seed": 0, "iteration": 10, "error": 0.5 / 11, "note": ""}
    assert record["seeds"] == 2 and record["command"] is None and record["wall_time_s"] >= 0
    last = runner.final_rows(rows)
    assert [(r["entry"], r["seed"], r["iteration"]) for r in last] == [("a", 0, 10), ("b", 0, 10), ("a", 1, 10),
                                                                     ("b", 1, 10)]


def test_a_stopped_run_keeps_whole_runs_only_and_resumes_where_it_stopped(tmp_path):
    calls = []
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, calls, fail_at=("a", 1))
    rows, _ = runner.read("demo", tmp_path, ("entry", "note"), "scripts/demo.py")
    assert {(r["entry"], r["seed"]) for r in rows} == {("a", 0), ("b", 0)} and len(rows) == 4
    calls.clear()
    run(tmp_path, calls)
    assert calls == [("a", 1), ("b", 1)]
    calls.clear()
    run(tmp_path, calls)                                         # nothing left to do
    assert calls == []


def test_other_settings_are_refused_new_entries_are_added_and_force_starts_over(tmp_path):
    calls = []
    run(tmp_path, calls)
    before = (tmp_path / "demo.csv").read_text()
    with pytest.raises(ValueError, match="other settings"):
        run(tmp_path, calls, meta=meta(lr=0.2))
    with pytest.raises(ValueError, match="other seeds"):
        run(tmp_path, calls, meta=meta(seeds=3))
    assert (tmp_path / "demo.csv").read_text() == before       # a refused run writes nothing
    calls.clear()
    run(tmp_path, calls, meta=meta(entries=("c",)))
    assert calls == [("c", 0), ("c", 1)]
    assert json.loads((tmp_path / "demo.json").read_text())["entries"] == ["a", "b", "c"]
    calls.clear()
    run(tmp_path, calls, meta=meta(lr=0.2), force=True)
    rows, record = runner.read("demo", tmp_path, ("entry", "note"), "scripts/demo.py")
    assert calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1)] and len(rows) == 8
    assert record["settings"] == {"lr": 0.2} and record["entries"] == ["a", "b"]


def test_reading_missing_results_names_the_command_that_writes_them(tmp_path):
    with pytest.raises(ValueError, match=r"python scripts/demo.py run demo"):
        runner.read("demo", tmp_path, ("entry",), "scripts/demo.py")


def load(script):
    spec = importlib.util.spec_from_file_location(script.replace("/", "_"), ROOT / "scripts" / f"{script}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv, code", [
    (["run", "nothing"], 2), (["run", "gallery", "--seeds", "0"], 2), (["run", "gallery", "--iterations", "-1"], 2),
    (["run", "gallery", "--pitfalls", "no such bug"], 2), (["plot", "--results", "/nonexistent/folder"], 1), ([], 2)])
def test_the_pitfalls_script_refuses_bad_input_in_one_line(argv, code, capsys):
    with pytest.raises(SystemExit) as stop:
        load("pitfalls").main(argv)
    assert stop.value.code == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_the_pitfalls_script_refuses_a_folder_with_other_settings_in_one_line(tmp_path, capsys, monkeypatch):
    from act_experiments.experiments import pitfalls as script
    (tmp_path / "prefix.csv").write_text(",".join(script.COLUMNS) + "\n")
    (tmp_path / "prefix.json").write_text(json.dumps({"experiment": "prefix", "seeds": 2, "settings": {}}))
    with pytest.raises(SystemExit) as stop:
        script.main(["run", "prefix", "--out", str(tmp_path)])
    assert stop.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other settings" in err and "--force" in err


def test_the_pitfalls_experiment_trains_reads_and_draws_a_tiny_experiment(tmp_path, monkeypatch):
    from act_experiments.experiments import pitfalls as script
    monkeypatch.setitem(script.EXPERIMENTS["gallery"]["settings"], "eval_size", 20)
    monkeypatch.setitem(script.EXPERIMENTS["gallery"]["settings"], "eval_every", 1)
    monkeypatch.setitem(script.EXPERIMENTS["gallery"]["settings"], "probe_every", 1)
    lines = []
    script.run_experiment("gallery", seeds=1, iterations=2, pitfalls=["correct", "plain average"], out=tmp_path,
                          log=lines.append)
    assert len(lines) == 2
    from act_experiments.experiments import pitfalls as pitfalls_experiment
    rows, record = pitfalls_experiment.read_experiment("gallery", tmp_path)
    assert {r["pitfall"] for r in rows} == {"correct", "plain average"} and len(rows) == 2 * 3
    assert record["settings"]["iterations"] == 2
    # the file and the code name the mean number of updates N alike: mean_N, beside rho, the ponder
    # cost N + R; the committed files have the same header
    header = (tmp_path / "gallery.csv").read_text().splitlines()[0]
    assert header == (script.COMMITTED / "gallery.csv").read_text().splitlines()[0]
    assert "mean_N" in header.split(",") and "ponder" not in header.split(",")
    assert all(r["rho"] > r["mean_N"] >= 1 for r in rows)
    summary = pitfalls_experiment.summarise(rows)
    assert set(summary) == {"correct", "plain average"} and summary["correct"]["seeds"] == 1
    assert summary["plain average"]["grad_data"][2] == 0.0 < summary["correct"]["grad_data"][1]
    paths = script.plot(script.read(tmp_path), tmp_path / "figures")
    assert [p.name for p in paths] == ["pitfalls_gallery.png"]


@pytest.mark.parametrize("name, folder", [("gallery", "pitfalls"), ("sequence", "pitfalls"), ("prefix", "pitfalls"),
                                          ("ponder_sum_h", "pitfalls_ponder_sum_h")])
def test_a_rerun_of_a_committed_pitfalls_experiment_finds_its_record_equal_and_nothing_to_train(name, folder,
                                                                                                tmp_path):
    """A rerun of a committed experiment resumes, trains nothing and leaves the CSV as it was."""
    from act_experiments.experiments import pitfalls as script
    committed = ROOT / "results" / folder
    for suffix in (".csv", ".json"):
        (tmp_path / f"{name}{suffix}").write_bytes((committed / f"{name}{suffix}").read_bytes())
    lines = []
    script.run_experiment(name, out=tmp_path, log=lines.append)
    assert lines == []
    assert (tmp_path / f"{name}.csv").read_bytes() == (committed / f"{name}.csv").read_bytes()
    before, after = (json.loads((d / f"{name}.json").read_text()) for d in (committed, tmp_path))
    bookkeeping = ("command", "machine", "wall_time_s")
    assert {k: v for k, v in after.items() if k not in bookkeeping} == {
        k: v for k, v in before.items() if k not in bookkeeping}


def test_a_plan_of_two_tables_keeps_whole_units_and_keeps_what_the_experiment_added(tmp_path):
    """run_plan: a unit's rows reach the second table before the first; rows of a unit that a stop
    kept out of the first table are dropped on the rerun, which trains the unit again."""
    tables = {"runs.csv": ["unit", "value"], "detail.csv": ["unit", "part"]}
    calls = []

    def train(unit):
        calls.append(unit)
        return {"runs.csv": [{"unit": unit, "value": unit / 4}],
                "detail.csv": [{"unit": unit, "part": p} for p in range(2)]}, f"unit {unit}"

    def plan(lr=0.1, **kw):
        return runner.run_plan(tmp_path, [1, 2, 3], train, tables, {"settings": {"lr": lr}},
                               unit_of=lambda table, row: int(row["unit"]), record="record.json", name="demo",
                               script="scripts/demo.py", log=lambda line: None, **kw)
    plan()
    whole = {name: (tmp_path / name).read_text() for name in tables}
    record = json.loads((tmp_path / "record.json").read_text())
    (tmp_path / "record.json").write_text(json.dumps(dict(record, extra=7)))   # what an experiment adds to its record
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    (tmp_path / "runs.csv").write_text("\n".join(lines[:-1]) + "\n")   # unit 3 stopped before its last append
    calls.clear()
    assert plan()["extra"] == 7 and calls == [3]
    assert {name: (tmp_path / name).read_text() for name in tables} == whole
    assert record["settings"] == {"lr": 0.1} and record["command"] is None
    with pytest.raises(ValueError, match="record.json holds other settings; use --force to start demo over"):
        plan(lr=0.2)
    resets = []
    calls.clear()
    plan(lr=0.2, force=True, reset=lambda: resets.append(1))
    assert calls == [1, 2, 3] and resets == [1]
    assert "extra" not in json.loads((tmp_path / "record.json").read_text())
