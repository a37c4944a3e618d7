"""The benchmark scripts still run and print complete tables (at tiny budgets; no timing is judged)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_script(*args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def table_rows(text):
    """The data rows of the markdown table in `text`, as lists of cell strings."""
    rows = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:]]     # drop the header


def test_bench_act_prints_every_size():
    rows = table_rows(run_script("benchmarks/bench_act.py", "--repeats", "1"))
    assert len(rows) == 6                                 # two sizes x N = 3, 10, 30
    for row in rows:
        assert float(row[6]) > 0 and float(row[7]) > 0    # seconds per call, ms per ponder step
    assert [round(float(r[5])) for r in rows] == [3, 10, 30, 3, 10, 30]


@pytest.mark.slow
def test_bench_train_step_numpy_and_torch_cpu():
    text = run_script("benchmarks/bench_train_step.py", "--sizes", "parity", "--ponder", "3",
                      "--backends", "numpy,cpu", "--seconds", "0.05", "--clock", "cpu")
    assert "FAILED" not in text
    rows = table_rows(text)
    assert [r[4] for r in rows] == ["numpy", "torch cpu"]
    for row in rows:
        assert round(float(row[2])) == 3 and float(row[5]) > 0
    assert rows[0][7] == "1.00x"


@pytest.mark.slow
def test_bench_overhead_prints_every_piece():
    rows = table_rows(run_script("benchmarks/bench_overhead.py", "--repeats", "1", "--calls", "20"))
    assert len(rows) == 4
    for row in rows:
        assert float(row[1]) > 0 and float(row[2]) > 0 and row[3].endswith("x")


@pytest.mark.slow
def test_bench_population_prints_alone_and_population_rates():
    rows = table_rows(run_script("benchmarks/bench_population.py", "--sizes", "parity", "--K", "1,2",
                                 "--seconds", "0.05"))
    assert [(r[0], r[1]) for r in rows] == [("parity", "1"), ("parity", "2")]
    for row in rows:
        assert float(row[2]) > 0 and float(row[3]) > 0 and row[4].endswith("x")


@pytest.mark.slow
def test_bench_sweep_times_each_engine():
    text = run_script("benchmarks/bench_sweep.py", "--sizes", "parity", "--networks", "4", "--iterations", "2",
                      "--setups", "pool:torch,population:torch")
    rows = table_rows(text)
    assert [(r[1], r[2]) for r in rows] == [("pool", "torch"), ("population", "torch")]
    assert all(float(r[3]) > 0 and float(r[4]) > 0 for r in rows) and rows[0][5] == "1.00x"


@pytest.mark.slow
def test_bench_sweep_times_a_sweep_as_a_user_runs_it():
    """--realistic: 7 taus x 2 seeds and the 2 no-ACT runs, the default halting bias and evaluations."""
    text = run_script("benchmarks/bench_sweep.py", "--realistic", "--sizes", "parity", "--iterations", "2",
                      "--setups", "population:numpy")
    assert "16 networks x 2 iterations" in text and "ponder as training makes it" in text
    rows = table_rows(text)
    assert [(r[1], r[2]) for r in rows] == [("population", "numpy")] and float(rows[0][4]) > 0


@pytest.mark.slow
def test_bench_core_vs_engine_times_both_libraries():
    rows = table_rows(run_script("benchmarks/bench_core_vs_engine.py", "--repeats", "1", "--calls", "1",
                                 "--ponder", "3"))
    assert [(r[0], r[2]) for r in rows] == [("parity (rnn)", "numpy"), ("parity (rnn)", "torch"),
                                            ("logic (lstm)", "numpy"), ("logic (lstm)", "torch")]
    assert all(float(r[3]) > 0 and float(r[4]) > 0 and float(r[5]) > 0 for r in rows)
