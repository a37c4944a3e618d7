"""Skewed parity's registered claims (act_experiments.experiments.skewed): Holm's correction, the
verdict decided on the corrected p-values, the Spearman claim, and the command line."""

import numpy as np
import pytest

from act_experiments.experiments import skewed
from act_experiments.sweeps.reading import NO_ACT, fixed_key, random_key

BITS = (1, 2, 13, 14, 15, 16)


def test_holm_multiplies_by_the_rank_and_keeps_the_order():
    # sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> raised to 0.06
    assert skewed.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert skewed.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert skewed.holm([0.02]) == pytest.approx([0.02])


@pytest.mark.parametrize("bad", [[], [0.1, 1.5], [[0.1]], [-0.01]])
def test_holm_refuses_what_is_no_list_of_p_values(bad):
    with pytest.raises(ValueError, match="pvalues"):
        skewed.holm(bad)


def sweeps(act_minus_ladder, act_minus_random, N_rising=True, seeds=8, taus=skewed.TAUS):
    """In-memory sweeps: per τ, ACT's error per seed is the ladder's at its N (2.5, halfway between
    F = 2 and F = 3) plus ``act_minus_ladder[τ][seed]``; the random schedule's is ACT's minus
    ``act_minus_random[τ][seed]``; N by non-zero bits rises (or falls) with the bits."""
    runs, difficulty = [], []
    for s in range(seeds):
        for F, error in ((1, 0.30), (2, 0.20), (3, 0.10), (5, 0.05)):
            key = NO_ACT if F == 1 else fixed_key(F)
            runs.append({"key": key, "seed": s, "act": False, "fixed_ponder": None if F == 1 else F,
                         "sequence_error": error + 0.001 * s, "mean_N": F})
        for tau in taus:
            error = 0.15 + 0.001 * s + act_minus_ladder[tau][s]
            runs.append({"key": tau, "seed": s, "act": True, "fixed_ponder": None, "sequence_error": error,
                         "mean_N": 2.5})
            for b in BITS:
                N = 2 + (b if N_rising else -b) / 8 + 0.01 * s
                difficulty.append({"key": tau, "seed": s, "difficulty": b, "N": N, "count": 10, "error": 0.0})
    random = [{"key": random_key(tau), "seed": r["seed"], "act": False, "fixed_ponder": None,
               "sequence_error": r["sequence_error"] - act_minus_random[tau][r["seed"]], "mean_N": 2.5}
              for tau in taus for r in runs if r["key"] == tau]
    return {"act": {"name": "act", "runs": runs, "difficulty": difficulty},
            "random": {"name": "random", "runs": random, "difficulty": []}}


def every_tau(per_seed):
    return {tau: per_seed for tau in skewed.TAUS}


def test_a_clear_gain_holds_at_every_tau_after_holm():
    gain = every_tau([-0.03 - 0.002 * (s % 3) for s in range(8)])
    data = sweeps(gain, gain)
    for against in ("ladder", "random"):
        result = skewed.claim(data, against)
        assert list(result) == list(skewed.TAUS)
        for v in result.values():
            assert v["verdict"] == "holds" and v["wins"] == 8
            assert v["sign_holm"] == pytest.approx(4 / 256) and v["t_holm"] >= v["t_p"]
            assert v["mean"] == pytest.approx(np.mean(gain[skewed.TAUS[0]]))


def test_seven_of_eight_passes_alone_but_not_after_holm():
    """7 of 8 seeds: sign p = 9/256 = 0.035 < 0.05, times 4 taus = 0.14: not shown."""
    d = every_tau([-0.03] * 7 + [0.005])
    data = sweeps(d, d)
    v = skewed.claim(data, "random")[skewed.TAUS[0]]
    assert v["sign_p"] == pytest.approx(9 / 256) and v["sign_holm"] == pytest.approx(36 / 256)
    assert v["verdict"] == "not shown"
    # alone, one τ needs no correction, and the same seeds pass
    alone = skewed.claim(data, "random", tau_list=skewed.TAUS[:1])[skewed.TAUS[0]]
    assert alone["verdict"] == "holds"


def test_a_loss_is_refuted_and_a_small_gain_is_not_shown():
    loss, small = every_tau([0.02 + 0.001 * s for s in range(8)]), every_tau([-0.005 - 0.0001 * s for s in range(8)])
    assert {v["verdict"] for v in skewed.claim(sweeps(loss, loss), "ladder").values()} == {"refuted"}
    shown = skewed.claim(sweeps(small, small), "ladder")
    assert {v["verdict"] for v in shown.values()} == {"not shown"}      # below the 0.01 that counts


def test_the_ladder_is_read_at_each_seeds_measured_N():
    zero = every_tau([0.0] * 8)
    v = skewed.compare(sweeps(zero, zero), "ladder", 1e-3)
    assert v["other"] == pytest.approx([0.15 + 0.001 * s for s in range(8)])      # halfway 0.20 -> 0.10


def test_spearman_holds_when_N_rises_with_the_bits():
    zero = every_tau([0.0] * 8)
    rising = skewed.spearman(sweeps(zero, zero))
    assert all(r["verdict"] == "holds" and r["positive"] == 8 and r["mean"] == pytest.approx(1.0)
               for r in rising.values())
    falling = skewed.spearman(sweeps(zero, zero, N_rising=False))
    assert all(r["verdict"] == "does not hold" and r["positive"] == 0 for r in falling.values())


def test_a_comparison_needs_two_shared_seeds():
    zero = {tau: [0.0] for tau in skewed.TAUS}
    with pytest.raises(ValueError, match="share 1 seed"):
        skewed.compare(sweeps(zero, zero, seeds=1), "random", 1e-3)
    with pytest.raises(ValueError, match="against"):
        skewed.compare(sweeps(zero, zero, seeds=1), "fixed", 1e-3)


def test_the_figure_and_the_summary_show_every_seed(tmp_path):
    gain = every_tau([-0.03 - 0.002 * (s % 3) for s in range(8)])
    data = sweeps(gain, gain)
    (path,) = skewed.plot(data, tmp_path)
    assert path.name == "skewed_parity.png" and path.stat().st_size > 10_000
    text = skewed.describe(data)
    assert text.count("against the ladder") == 4 and text.count("against the random") == 4
    assert "positive on 8 of 8" in text


def test_the_script_says_in_one_line_when_a_sweep_is_missing(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        skewed.main([str(tmp_path / "nothing"), str(tmp_path / "none"), "--figures", str(tmp_path)])
    assert "plot_skewed.py: no sweep results" in str(stop.value)
    assert not list(tmp_path.glob("*.png"))


def test_easy_and_hard_weights_each_row_by_its_count():
    rows = [{"key": 1e-3, "difficulty": 1, "count": 30, "error": 0.0, "N": 2.0},
            {"key": 1e-3, "difficulty": 2, "count": 10, "error": 0.4, "N": 4.0},
            {"key": 1e-3, "difficulty": 14, "count": 5, "error": 0.2, "N": 6.0},
            {"key": 1e-3, "difficulty": 16, "count": 15, "error": 0.6, "N": 10.0}]
    found = skewed.easy_and_hard({"difficulty": rows})
    assert found[1e-3]["easy"] == pytest.approx((0.1, 2.5)) and found[1e-3]["hard"] == pytest.approx((0.5, 9.0))
