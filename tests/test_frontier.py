"""The frontier page (act_experiments.experiments.frontier): the lower convex hull of fixed
schedules, a point's distance below it, the committed controls it reads, and its command line."""

import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from act_experiments.experiments import frontier, measured  # noqa: E402
from act_experiments.sweeps.reading import load_sweep  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("points, hull", [
    ([(1, 0.5), (2, 0.35), (3, 0.013), (5, 0.036), (10, 0.499)], [(1, 0.5), (3, 0.013), (5, 0.036), (10, 0.499)]),
    ([(0, 1), (1, 0.5), (2, 0)], [(0, 1), (2, 0)]),                     # a point on the segment is no vertex
    ([(2, 0.3), (2, 0.1), (4, 0.2)], [(2, 0.1), (4, 0.2)]),            # of a shared x, the lowest
    ([(5, 0.2)], [(5, 0.2)]),
    ([(3, 0.1), (1, 0.1), (2, 0.5)], [(1, 0.1), (3, 0.1)]),            # any order in, sorted by x out
])
def test_lower_hull_keeps_the_vertices_only(points, hull):
    assert frontier.lower_hull(points) == pytest.approx(hull)


def test_every_point_lies_on_or_above_the_hull_and_its_slopes_rise():
    rng = np.random.default_rng(0)
    for _ in range(50):
        points = list(zip(rng.integers(1, 20, size=12), rng.random(12)))
        hull = frontier.lower_hull(points)
        assert all(frontier.hull_at(hull, x) <= y + 1e-12 for x, y in points)
        slopes = np.diff([y for _, y in hull]) / np.diff([x for x, _ in hull])
        assert np.all(np.diff(slopes) > 0)
        assert set(hull) <= {(float(x), float(y)) for x, y in points}


def test_below_reads_the_frontier_at_the_points_own_N():
    hull = [(1.0, 0.5), (2.0, 0.3), (3.0, 0.1)]
    assert frontier.hull_at(hull, 2.5) == pytest.approx(0.2)
    assert frontier.hull_at(hull, 0.5) is None and frontier.hull_at(hull, 3.5) is None
    assert frontier.below((2.5, 0.15), hull, 0.05) and not frontier.below((2.5, 0.16), hull, 0.05)
    assert not frontier.below((3.5, 0.0), hull)                   # outside the ladder: nothing brackets it


def test_the_committed_controls_are_read_with_what_is_missing_named():
    controls = frontier.read()
    assert {"parity", "addition", "logic", "chains"} <= set(controls)
    parity = controls["parity"]
    assert parity["ladder"] == measured.fixed_ladder(load_sweep("parity16_measured", tables=()))
    assert parity["random"] is not None and parity["missing"] is None
    assert sorted(s for s, _, _ in parity["act"][1e-3]) == list(range(8))
    logic = controls["logic"]
    if logic["random"] is None:
        assert logic["missing"] == "logic_gates10_measured_random"
    chains = controls["chains"]
    if frontier.chains_random() is None:
        assert chains["random"] is None and "random depths" in chains["missing"]
    else:
        assert chains["missing"] is None and sorted(s for s, _, _ in chains["random"][0.01]) == list(range(8))
    # the chains: ACT at 1e-2 below the fixed depths' frontier on all three seeds
    assert all(gap < 0 for *_, gap in frontier.gaps(controls["chains"])[0.01])


def test_the_script_prints_and_draws(tmp_path):
    done = subprocess.run([sys.executable, "scripts/plot_frontier.py", "--figures", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "parity (parity16_measured, parity16_measured_random)" in done.stdout
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["frontier.png"]
