"""The paper's size beside Fojo et al. (act_experiments.experiments.parity64): read, claims, table
and figure on tiny stand-ins for its three sweeps, and iterations to 98% counted as Fojo et al. do."""

import pytest

from act_experiments.experiments import parity64
from act_experiments.sweeps import launch

TINY = ["--task", "parity", "--bits", "3", "--hidden", "4", "--batch-size", "4", "--iterations", "6",
        "--eval-every", "2", "--eval-size", "16", "--workers", "1", "--backend", "numpy", "--max-ponder", "3"]


def sweep(root, *argv):
    """launch.main on argv, writing runs/ and results/ under root."""
    try:
        launch.main(list(argv), root=root)
    except SystemExit as exit_info:
        assert exit_info.code in (0, None), argv


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity64")
    sweep(root, "--name", "parity64_main", *TINY, "--taus", "1e-2", "--fixed-ponders", "2", "--no-baseline",
          "--seeds", "2")
    sweep(root, "--name", "parity64_random", *TINY, "--random-ponders", "parity64_main:1e-2", "--no-baseline",
          "--seeds", "2")
    sweep(root, "--name", "parity64_rest", *TINY, "--taus", "1e-1", "--fixed-ponders", "8", "--seeds", "1")
    return root / "results"


@pytest.mark.slow
def test_every_setting_is_read_with_its_seeds_and_fojos_numbers(committed):
    data = parity64.read(committed)
    keys = [s["key"] for s in data["settings"]]
    assert keys == [parity64.NO_ACT, 1e-1, 1e-2, parity64.random_key(1e-2), parity64.fixed_key(2), parity64.fixed_key(8)]
    by = {s["key"]: s for s in data["settings"]}
    assert by[1e-2]["seeds"] == [0, 1] and by[1e-2]["fojo_steps"] == 53_000 and by[1e-2]["fojo_repetitions"] == 1.81
    assert by[parity64.NO_ACT]["fojo_steps"] is None
    for s in data["settings"]:
        assert s["solved"] == sum(i is not None for i in s["iterations"])
        assert all(i is None or i % 2 == 0 for i in s["iterations"])        # an evaluation's iteration
    rows = parity64.table_rows(data)
    assert rows[0].startswith("| no ACT | not solved |") and any(r.startswith("| ACT τ = 1e-2 | 53k | 1.81 |") for r in rows)


def test_the_claims_are_decided_by_the_rules_fixed_in_advance(committed):
    data = parity64.read(committed)
    c = parity64.claims(data)
    by = {s["key"]: s for s in data["settings"]}
    act, fixed = by[1e-2], by[parity64.fixed_key(2)]
    assert c["a"]["holds"] == (act["solved"] >= 3 and fixed["solved"] >= 3)     # two seeds: never
    assert c["a"]["holds"] is False
    assert c["b"]["holds"] == (by[parity64.NO_ACT]["solved"] == 0)
    assert c["d"]["seeds"] == [0, 1] and c["d"]["holds"] == (c["d"]["mean"] <= 0)
    # with only some sweeps committed, the claims that need the others are not decided
    partial = parity64.read(committed, names=("parity64_rest",))
    assert parity64.claims(partial)["a"]["holds"] is None and parity64.claims(partial)["d"]["holds"] is None


def test_the_figure_and_the_script_line(committed, tmp_path, capsys):
    (path,) = parity64.plot(parity64.read(committed), tmp_path)
    assert path.name == "parity64_curves.png" and path.stat().st_size > 10_000
    assert "claim (a)" in parity64.describe(parity64.read(committed))
    with pytest.raises(FileNotFoundError):
        parity64.read(tmp_path)
