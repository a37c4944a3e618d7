"""act_backward against centred finite differences in float64, for both cells.

A coordinate whose nudge changes some N(t) sits on a discontinuity of the loss, where a centred
difference means nothing, and is skipped (act_numpy/gradcheck.py); each case also asserts that
most coordinates were actually checked.
"""

import numpy as np
import pytest

from act_numpy.act import act_forward
from act_numpy.gradcheck import check_act_gradients
from conftest import logit, make_problem

TOL = 1e-6

# name -> (make_problem kwargs, act kwargs, predicate on N that proves the case is what it says)
CASES = {
    "carried state, mixed N": (dict(T=3, halting_bias=-1.0), dict(epsilon=0.05, max_ponder=8),
                               lambda N, M: len(np.unique(N)) > 1),
    "N = 1 everywhere": (dict(halting_bias=8.0, w_h_scale=0.5), dict(epsilon=0.01, max_ponder=100),
                         lambda N, M: np.all(N == 1)),
    "N at the cap M": (dict(halting_bias=-6.0, w_h_scale=0.5), dict(epsilon=0.01, max_ponder=4),
                       lambda N, M: np.all(N == M)),
    "sum h in [1 - eps, 1)": (dict(halting_bias=logit(0.2485), w_h_scale=0.0), dict(epsilon=0.01, max_ponder=100),
                              lambda N, M: np.all(N == 4)),
    "mixed N across the batch": (dict(B=5, T=1, halting_bias=0.0, w_h_scale=4.0), dict(epsilon=0.01, max_ponder=10),
                                 lambda N, M: len(np.unique(N[:, 0])) > 1),
    "large epsilon": (dict(T=2, halting_bias=-0.5), dict(epsilon=0.3, max_ponder=10), lambda N, M: True),
    "small epsilon": (dict(T=2, halting_bias=0.5), dict(epsilon=1e-3, max_ponder=10), lambda N, M: True),
}


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
@pytest.mark.parametrize("case", list(CASES))
def test_gradients_match_finite_differences(cell, case):
    problem_kw, act_kw, predicate = CASES[case]
    x, params, dy, dponder = make_problem(cell, **problem_kw)
    _, N, _, _ = act_forward(x, params, cell=cell, **act_kw)
    assert predicate(N, act_kw["max_ponder"]), f"case {case!r} did not produce its N pattern: {N}"
    report = check_act_gradients(x, params, dy, dponder, cell=cell, max_coords=40,
                                 rng=np.random.default_rng(1), **act_kw)
    for name, r in report.items():
        assert r["checked"] > r["skipped"], f"{name}: {r['skipped']} of {r['checked'] + r['skipped']} skipped"
        assert r["rel_error"] < TOL, f"{name}: rel error {r['rel_error']:.2e}"
    assert set(report) == {"W_x", "W_s", "b_s", "W_h", "b_h", "W_y", "b_y", "x"}


def test_skipped_coordinates_are_counted():
    """A problem poised on a discontinuity: a nudge of b_h flips N, so b_h is skipped, not compared."""
    h = 0.33
    x, params, dy, dponder = make_problem("rnn", B=1, T=1, halting_bias=logit(h), w_h_scale=0.0)
    # 3 h lands exactly on the threshold 1 - eps: any nudge of b_h moves N between 3 and 4
    report = check_act_gradients(x, params, dy, dponder, cell="rnn", epsilon=1 - 3 * h, max_ponder=10)
    assert report["b_h"] == {"rel_error": 0.0, "checked": 0, "skipped": 1}
