"""What the course's text claims, checked against the paper, the code and the committed results.

Each test guards a claim that was once stated wrongly: equation numbers (every ``\\tag{n}`` must
show the paper's equation n, and a comment that names a formula must cite its number), who pays
the ponder cost, what ρ − 2 means, which sweep a notebook quotes and with which numbers, and what
the paper says about single networks on parity. Docs and requirements say what a user needs,
not where they were written.
"""

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from act_experiments.data import tasks
from act_numpy.halting import halting_weights
from act_numpy.model import ACTModel, sequence_steps

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DOCS = sorted((ROOT / "docs").glob("*.md"))
SOURCES = sorted([*ROOT.glob("act_numpy/*.py"), *ROOT.glob("act_torch/*.py"), *ROOT.glob("act_experiments/**/*.py"),
                  *ROOT.glob("act_course/**/*.py"), *ROOT.glob("scripts/*.py")])


def cells(kind=None):
    """(notebook name, cell index, cell type, source) for every cell, or only cells of `kind`."""
    for path in NOTEBOOKS:
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if kind is None or cell["cell_type"] == kind:
                yield path.name, i, cell["cell_type"], "".join(cell["source"])


def markdown(prefix):
    """All markdown of the notebook whose name starts with `prefix`, joined."""
    return "\n\n".join(src for name, _, _, src in cells("markdown") if name.startswith(prefix))


def sentences(text):
    """Split prose into sentences, not at "eq." / "e.g." / "i.e." / "vs."."""
    return re.split(r"(?<=[.!?])(?<!eq\.)(?<!eqs\.)(?<!e\.g\.)(?<!i\.e\.)(?<!vs\.)\s+|\n", text)


def prose():
    """(where, sentence) over the notebooks' markdown cells and the docs."""
    for name, i, _, src in cells("markdown"):
        for s in sentences(src):
            yield f"{name} cell {i}", s
    for path in DOCS:
        text = re.sub(r"(?<!\n)\n(?!\n)", " ", path.read_text(encoding="utf-8"))   # unwrap lines
        for s in sentences(text):
            yield path.name, s


def runs(sweep):
    with open(ROOT / "results" / sweep / "runs.csv", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------------
# Equation numbers

def normalise(tex):
    """LaTeX with spacing and delimiter sizes removed, so that formulas compare by content."""
    tex = re.sub(r"\\\\(\[[^\]]*\])?", "", tex)                          # line breaks in cases
    tex = re.sub(r"\\(?:big|Big|bigg|Bigg)[lr]?(?![a-zA-Z])|\\left|\\right", "", tex)
    tex = re.sub(r"\\(?:textstyle|displaystyle|qquad|quad)(?![a-zA-Z])|\\[,;:! ]", "", tex)
    tex = re.sub(r"\\text\{[^}]*\}", "", tex)
    tex = tex.replace(r"\dfrac", r"\frac").replace(r"\geq", r"\ge")
    return re.sub(r"\s+", "", tex)


D_L = r"\\frac\{\\partial\\mathcal\{L\}\}"          # \frac{\partial L}
D_LHAT = r"\\frac\{\\partial\\hat\{\\mathcal\{L\}\}\}"
# The paper's equations (Graves 2016, v6), by number: every pattern must occur in a display
# tagged with that number (after normalise()).
PAPER_EQUATIONS = {
    1: [r"s_t=\\mathcal\{S\}\(s_\{t-1\},W_xx_t\)"],
    2: [r"y_t=W_ys_t\+b_y"],
    3: [r"\\mathcal\{S\}\(s_\{t-1\},x\^1_t\)", r"\\mathcal\{S\}\(s\^\{n-1\}_t,x\^n_t\)", r"x\^n_t=x_t\+\\delta_\{n,1\}"],
    4: [r"y\^n_t=W_ys\^n_t\+b_y"],
    5: [r"h\^n_t=\\sigma\(W_hs\^n_t\+b_h\)"],
    6: [r"p\^n_t=\\begin\{cases\}h\^n_t&n<N\(t\)R\(t\)&n=N\(t\)"],
    7: [r"N\(t\)=\\min\\\{n':", r"h\^n_t\\ge1-\\epsilon"],
    8: [r"R\(t\)=1-\\sum_\{n(=1\}\^\{N\(t\)-1|<N\(t\))\}h\^n_t"],
    9: [r"s_t=\\sum\S*p\^n_ts\^n_t", r"y_t=\\sum\S*p\^n_ty\^n_t"],
    10: [r"\\rho_t=N\(t\)\+R\(t\)"],
    11: [r"\\mathcal\{P\}(\(x\))?=\\sum_\{t=1\}\^\{T\}\\rho_t"],
    12: [r"\\hat\{\\mathcal\{L\}\}(\(x,y\))?=\\mathcal\{L\}(\(x,y\))?\+\\tau\\mathcal\{P\}"],
    13: [r"N\(t\)=\\min\\\{M,", r"h\^n_t\\ge1-\\epsilon"],
    14: [r"\\frac\{\\partial\\mathcal\{P\}\}\{\\partialh\^n_t\}=\\begin\{cases\}-1&n<N\(t\)0&n=N\(t\)"],
    # with N(t) held fixed the paper writes dL/dh minus (tau before N, 0 at N): not 0 at N
    15: [D_LHAT + r"\{\\partialh\^n_t\}=\\begin\{cases\}" + D_L + r"\{\\partialh\^n_t\}-\\tau&n<N\(t\)"
         + D_L + r"\{\\partialh\^(n|\{N\(t\)\})_t\}&n=N\(t\)"],
    16: [D_L + r"\{\\partialh\^n_t\}=\\sum_\{n'=1\}\^\{N\(t\)\}" + D_L + r"\{\\partialp\^\{n'\}_t\}"
         r"\\frac\{\\partialp\^\{n'\}_t\}\{\\partialh\^n_t\}"],
    17: [D_L + r"\{\\partialp\^n_t\}=" + D_L + r"\{\\partialy_t\}y\^n_t\+" + D_L + r"\{\\partials_t\}s\^n_t"],
    18: [r"\\frac\{\\partialp\^\{n'\}_t\}\{\\partialh\^n_t\}=\\begin\{cases\}\\delta_\{n,n'\}&n<N\(t\),n'<N\(t\)"
         r"-1&n<N\(t\),n'=N\(t\)0&n=N\(t\)"],
    19: [D_LHAT + r"\{\\partialh\^n_t\}=" + D_L + r"\{\\partialy_t\}\(y\^n_t-y\^\{N\(t\)\}_t\)\+" + D_L
         + r"\{\\partials_t\}\(s\^n_t-s\^\{N\(t\)\}_t\)-\\tau"],
    20: [D_LHAT + r"\{\\partialh\^\{N\(t\)\}_t\}=0"],
    21: [r"b_\{i\+1\}=T_i\(b_i,b_\{i-1\}\)"],
}


def tagged_displays():
    """(where, n, normalised display) for every $$ ... \\tag{n} ... $$ in the notebooks."""
    found = []
    for name, i, _, src in cells("markdown"):
        displays = re.findall(r"\$\$(.+?)\$\$", src, flags=re.S)
        in_displays = sum(len(re.findall(r"\\tag\{", d)) for d in displays)
        assert in_displays == len(re.findall(r"\\tag\{", src)), f"{name} cell {i}: a \\tag outside $$ ... $$"
        for d in displays:
            for tag in re.findall(r"\\tag\{([^}]*)\}", d):
                found.append((f"{name} cell {i}", tag, normalise(re.sub(r"\\tag\{[^}]*\}", "", d))))
    return found


def test_every_tag_shows_the_papers_equation_of_that_number():
    displays = tagged_displays()
    assert len(displays) >= 21
    for where, tag, tex in displays:
        assert tag.isdigit() and int(tag) in PAPER_EQUATIONS, f"{where}: \\tag{{{tag}}} is not an equation of the paper"
        for pattern in PAPER_EQUATIONS[int(tag)]:
            assert re.search(pattern, tex), f"{where}: \\tag{{{tag}}} on a formula that is not the paper's ({tag}): {tex}"


def test_every_paper_equation_is_shown_with_its_number():
    shown = {int(tag) for _, tag, _ in tagged_displays()}
    assert shown == set(PAPER_EQUATIONS), f"missing: {sorted(set(PAPER_EQUATIONS) - shown)}"


def test_the_tag_check_rejects_a_wrong_number():
    # the check itself: the mistake it was written for (a surrogate scalar tagged as eq. 10)
    # and the old eq. (15) with 0 at n = N must both fail
    bad_10 = normalise(r"L = \sum \frac{\partial L}{\partial \rho_t}\,\bigl(N(t) + R(t)\bigr)")
    assert not all(re.search(p, bad_10) for p in PAPER_EQUATIONS[10])
    bad_15 = normalise(r"\frac{\partial \hat{\mathcal{L}}}{\partial h^n_t} = \begin{cases} \dfrac{\partial "
                       r"\mathcal{L}}{\partial h^n_t} - \tau & n < N(t) \\[6pt] 0 & n = N(t) \end{cases}")
    assert not all(re.search(p, bad_15) for p in PAPER_EQUATIONS[15])


def cited_equations(line):
    """The equation numbers a line cites as "eq. (n)", "eqs (a)-(b), (c)", "equation n", ..."""
    cited = set()
    for m in re.finditer(r"\b(?:eqs?\.?|equations?)\s*\(?\d+\)?(?:\s*(?:[-–,]|and)\s*\(?\d+\)?)*", line, flags=re.I):
        tokens = re.findall(r"\d+|[-–]", m.group(0))
        numbers = []
        for k, tok in enumerate(tokens):
            if tok.isdigit():
                if k >= 2 and tokens[k - 1] in "-–" and numbers:
                    numbers.extend(range(numbers[-1] + 1, int(tok) + 1))
                else:
                    numbers.append(int(tok))
        cited.update(numbers)
    return cited


# A formula named in a line that cites equation numbers must cite (at least) its own number.
FORMULA_NUMBERS = [
    (r"moves p\^N by -1|dp\^N/dh|dp\^\{?n'\}?/dh", {18}),
    (r"dL/dp\^n\s*=", {16, 17}),
    (r"rho_t\s*=\s*N(\(t\))?\s*\+\s*R|rho\s*=\s*\(?N\s*\+\s*R|ρ_t\s*=\s*N(\(t\))?\s*\+\s*R", {10, 11, 12}),
    (r"h\^n\s*=\s*sigma|h\^n_t\s*=\s*\\sigma|sigmoid of eq", {5}),
    (r"sum_n p\^n s\^n|s_t = sum_n p\^n", {9}),
    (r"b_\{i\+1\}\s*=\s*T_i", {21}),
    (r"N\(t\)\s*=\s*min", {7, 13}),
    (r"L\^ = L \+ tau P|L̂ = L \+ τ P|\bL \+ tau \*? ?P\b", {11, 12}),
    (r"delta_\{n,1\}|δ_\{n,1\}", {3}),
]


def lines_to_check():
    for path in SOURCES:
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield f"{path.relative_to(ROOT)}:{k}", line
    for name, i, _, src in cells():
        for line in src.splitlines():
            yield f"{name} cell {i}", line
    for path in DOCS:
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield f"{path.name}:{k}", line


def test_formulas_cite_their_own_equation_numbers():
    checked = 0
    for where, line in lines_to_check():
        cited = cited_equations(line)
        if not cited:
            continue
        for pattern, numbers in FORMULA_NUMBERS:
            if re.search(pattern, line):
                checked += 1
                assert cited & numbers, f"{where}: cites eq. {sorted(cited)} for a formula of eq. {sorted(numbers)}: {line.strip()}"
    assert checked >= 15, f"only {checked} lines checked: the patterns no longer match the text"


def test_cited_equations_parser():
    assert cited_equations("eqs (6)-(8), (13) and eq. 20") == {6, 7, 8, 13, 20}
    assert cited_equations("equations (14)–(20)") == set(range(14, 21))
    assert cited_equations("no citation (10) here") == set()


# ---------------------------------------------------------------------------------------------
# The ponder cost of the first input step (addition: the step with no target)

def test_first_input_step_pays_the_ponder_cost():
    x, y, mask = tasks.make_batch("addition", np.random.default_rng(0), 32, max_numbers=3, max_digits=2)
    has_later_target = mask[:, 1:].sum(axis=1) > 0
    assert (mask[:, 0] == 0).all() and has_later_target.any()
    assert (sequence_steps(mask)[has_later_target, 0] == 1).all()
    D, O = x.shape[2], tasks.output_size("addition", max_digits=2)
    model = ACTModel("lstm", D, 8, O, loss="softmax", heads=tasks.num_heads("addition", max_digits=2), tau=1e-2,
                     max_ponder=5, rng=np.random.default_rng(1))
    _, _, stats = model.loss(x, y, mask)
    assert (stats["rho"][has_later_target, 0] >= 2.0).all()


def test_no_text_says_the_first_step_is_free_of_ponder_cost():
    for where, s in prose():
        if re.search(r"\bfirst\b", s) and "ponder" in s:
            assert not re.search(r"\b(no|without|free of|pays no)\s+(\w+\s+)?ponder cost|ponder cost[^.]*\bnot "
                                 r"(paid|charged|counted)", s), f"{where}: {s}"
    assert re.search(r"first[^.]*pays the ponder cost", markdown("07_"))


# ---------------------------------------------------------------------------------------------
# rho - 2 is the remainder only for N = 2

def test_rho_lies_between_n_plus_epsilon_and_n_plus_one():
    h = np.random.default_rng(0).uniform(0.0, 1.0, (2000, 30))
    for epsilon in (0.01, 0.1):
        N, _, R = halting_weights(h, epsilon=epsilon, max_ponder=30)
        rho = N + R
        assert ((rho > N + epsilon) & (rho <= N + 1)).all()
        assert not np.allclose((rho - 2)[N != 2], R[N != 2])      # rho - 2 = R only when N = 2


def test_no_text_reads_rho_minus_two_as_the_remainder_in_general():
    for where, s in prose():
        if re.search(r"excess over 2|ρ_?t? ?[−-] ?2|\\rho_t - 2", s) and "remainder" in s:
            assert re.search(r"two updates|N = 2|N=2", s, flags=re.I), f"{where}: {s}"


# ---------------------------------------------------------------------------------------------
# Notebook 06 quotes the committed logic sweep: its length and the baseline's numbers

def curves(sweep):
    with open(ROOT / "results" / sweep / "curves.csv", newline="") as f:
        return list(csv.DictReader(f))


def error_curves(sweep):
    """{run: {iteration: held-out sequence error}} from a sweep's curves.csv."""
    out = {}
    for r in curves(sweep):
        out.setdefault(r["run"], {})[int(r["iteration"])] = float(r["sequence_error"])
    return out


def test_committed_sweep_quotes_match_its_files():
    checked = 0
    for name, i, _, src in cells("markdown"):
        for s in sentences(src):
            named = re.findall(r"results/(\w+)", s)
            if "committed sweep" not in s or not named:
                continue
            sweep = named[0]
            meta = json.loads((ROOT / "results" / sweep / "sweep.json").read_text())
            for iterations in re.findall(r"(\d+) iterations", s):
                assert int(iterations) == meta["shared_options"]["iterations"], f"{name} cell {i}: {s}"
                checked += 1
            # "its sequence error is a and b at iteration k": the no-ACT seeds in curves.csv
            for a, b, k in re.findall(r"(\d\.\d+) and (\d\.\d+) at iteration (\d+)", s):
                got = sorted(float(r["sequence_error"]) for r in curves(sweep)
                             if r["run"].startswith("noact") and int(r["iteration"]) == int(k))
                assert sorted([float(a), float(b)]) == got, f"{name} cell {i}: iteration {k} reads {got}"
                checked += 1
    assert checked >= 3


def test_notebook_06_quotes_the_sweep_it_shows():
    # section 7 draws the first of these that is committed; "the committed sweep" must be that one
    shown = next(s for s in ("logic", "logic_long", "logic_small") if (ROOT / "results" / s / "runs.csv").exists())
    quoted = [s for s in sentences(markdown("06_")) if "committed sweep" in s and "results/" in s]
    assert quoted
    for s in quoted:
        assert f"results/{shown}" in s, s


# ---------------------------------------------------------------------------------------------
# Parity and the seed: what the paper says, and what the committed sweeps show

def test_no_text_says_the_paper_found_all_or_nothing_parity():
    # the paper reports the mean error per tau; it does not say single networks either solved
    # parity or stayed at chance
    for where, s in prose():
        if re.search(r"paper", s, flags=re.I):
            assert not re.search(r"either solved|solved (the task|it|parity) or (did not|not|stayed)|or stayed near chance",
                                 s), f"{where}: {s}"


def test_quoted_parity_seed_errors_match_runs_csv():
    checked = 0
    for name, i, _, src in cells("markdown"):
        for s in sentences(src):
            named = re.findall(r"results/(parity\w*)", s)
            if not named:
                continue
            table = runs(named[0])
            for tau, *errors in re.findall(r"τ = ([\d.e-]+)(?: ended)? at (\d\.\d+), (\d\.\d+) and (\d\.\d+)", s):
                got = sorted(float(r["sequence_error"]) for r in table if r["act"] == "1" and float(r["tau"]) == float(tau))
                assert sorted(map(float, errors)) == got, f"{name} cell {i}: τ = {tau} reads {got}"
                checked += 1
    assert checked >= 2


# ---------------------------------------------------------------------------------------------
# Docs and requirements describe machines by size, not by where they were written

WHERE_WRITTEN = re.compile(r"workplace|\blent\b|\b(this|first|earlier|later|no) session|load average|shared (2-core |two-core )?(machine|vm|cpu)|"
                           r"sandbox|this machine|course's machine|other people|uncontended", re.I)


@pytest.mark.parametrize("path", [*DOCS, ROOT / "requirements.txt", ROOT / "README.md",
                                  *sorted((ROOT / "notebooks").glob("*.ipynb"))], ids=lambda p: p.name)
def test_docs_do_not_speak_of_where_they_were_written(path):
    if path.suffix == ".ipynb":     # the notebooks' prose: their markdown cells
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    bad = [f"{k}: {line.strip()}" for k, line in enumerate(text.splitlines(), 1) if WHERE_WRITTEN.search(line)]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------------------------
# Beyond the paper (notebooks 12-14): prose numbers held to the committed CSVs

def rows_of(path):
    with open(ROOT / "results" / path, newline="") as f:
        return list(csv.DictReader(f))


def test_convnet_aig_rates_quoted_in_notebook_14_and_its_account():
    hard = {}
    for r in rows_of("convnet_aig/runs.csv"):
        if r["kind"] == "hard":
            hard.setdefault(float(r["target_rate"]), []).append(r)
    executed = {t: np.mean([float(r["executed"]) for r in rs]) for t, rs in hard.items()}
    accuracy = {t: np.mean([float(r["accuracy"]) for r in rs]) for t, rs in hard.items()}
    quoted = "0.32, 0.44, 0.56, 0.70 and 0.86 of the blocks at $t$ = 0.2, 0.35, 0.5, 0.65 and 0.8"
    assert quoted in markdown("14_")
    assert [f"{executed[t]:.2f}" for t in sorted(executed)] == ["0.32", "0.44", "0.56", "0.70", "0.86"]
    gaps = [executed[t] - t for t in executed]
    assert f"{min(gaps):.2f} to {max(gaps):.2f} above $t$" in markdown("14_")
    assert f"above t, by {min(gaps):.2f} to {max(gaps):.2f}" in (ROOT / "docs" / "convnet_aig.md").read_text()
    assert f"from {accuracy[0.2]:.2f} at $t = 0.2$ to {accuracy[0.8]:.2f} at $t = 0.8$" in markdown("14_")
    static = {}
    for r in rows_of("convnet_aig/runs.csv"):
        if r["kind"] == "static":
            static.setdefault(int(r["blocks"]), []).append(float(r["accuracy"]))
    assert f"reach {np.mean(static[2]):.3f}, three blocks {np.mean(static[3]):.3f}" in markdown("14_")


def test_pondernet_steps_per_count_quoted_in_notebook_12():
    steps = {}
    for r in rows_of("pondernet8_extrapolation/counts.csv"):
        steps.setdefault((r["model"], float(r["knob"])), {}).setdefault(int(r["seed"]), {})[int(r["count"])] = float(r["steps"])
    for (model, knob), seeds in steps.items():       # "averaged over the four seeds ... less than one"
        assert len(seeds) == 4
        assert abs(np.mean([s[8] - s[4] for s in seeds.values()])) < 1, (model, knob)
    text = markdown("12_")
    assert "averaged over the four seeds, the mean number of steps changes by less than one" in text
    act, pnet = steps["act", 0.1][3], steps["pondernet", 1e-3][0]
    assert f"τ = 0.1 goes from {act[4]:.2f} steps at 4 non-zero bits to {act[8]:.2f} at 8" in text
    assert f"β = 10⁻³ from {pnet[4]:.2f} to {pnet[8]:.2f}" in text


def test_universal_transformer_numbers_quoted_in_notebook_13():
    last = {}
    for r in rows_of("universal_transformer/compute.csv"):
        key = (r["entry"], r["seed"])
        if key not in last or int(r["iteration"]) > int(last[key]["iteration"]):
            last[key] = r
    by_entry = {}
    for (entry, _), r in last.items():
        by_entry.setdefault(entry, []).append(r)
    act = by_entry[next(e for e in by_entry if e.startswith("ACT") and "0.01" in e)]
    steps = [float(r["mean_N"]) for r in act]          # the mean number of updates N
    text = markdown("13_")
    assert f"with {np.mean(steps):.2f} layer applications per position ({min(steps):.2f} to {max(steps):.2f} over the seeds)" in text
    assert all(float(r["sequence_error"]) == 0 for r in act)
    per_depth = ", ".join(f"{np.mean([float(r[f'mean_N_d{k}']) for r in act]):.1f}" for k in range(5))
    assert f"Its mean $N$ per depth, {per_depth} and {np.mean([float(r['mean_N_d5']) for r in act]):.1f}" in text


def test_simplified_ponder_cost_numbers_in_the_pitfalls_account():
    from act_experiments.experiments import pitfalls as pitfalls_experiment
    rows, meta = pitfalls_experiment.read_experiment("ponder_sum_h", ROOT / "results" / "pitfalls_ponder_sum_h")
    text = (ROOT / "docs" / "pitfalls.md").read_text(encoding="utf-8")
    for name, s in pitfalls_experiment.summarise(rows).items():
        e, n = s["error"], s["mean_N"]
        assert (f"| {name} | {e[0]:.3f} ({e[1]:.3f}–{e[2]:.3f}) | {n[0]:.2f} ({n[1]:.2f}–{n[2]:.2f}) |") in text, name
    ends = {(r["pitfall"], r["seed"]): r for r in pitfalls_experiment.final_evals(rows)}
    fewer = sum(ends["ponder sums h", s]["mean_N"] < ends["correct", s]["mean_N"] for s in range(meta["seeds"]))
    assert f"only {fewer} of the {meta['seeds']} seeds take fewer updates" in text


# ---------------------------------------------------------------------------------------------
# Notebooks 05-10: what the prose quotes of the committed sweeps and of the measured checks.
# Live runs change with ACT_SEED, the thread count and the CPU, so their numbers are printed by
# the cells, not quoted in the text; the text may quote the committed rows of the checks' table.

def check_values(notebook, claim):
    """Every measured value of one check in results/notebook_checks/checks.csv."""
    values = [float(r["value"]) for r in rows_of("notebook_checks/checks.csv")
              if r["notebook"] == notebook and r["claim"] == claim]
    assert values, (notebook, claim)
    return values


def by_tau(sweep, column="sequence_error"):
    """{tau, or None for the no-ACT runs: sorted values of `column` over the seeds}."""
    out = {}
    for r in runs(sweep):
        out.setdefault(float(r["tau"]) if r["act"] == "1" else None, []).append(float(r[column]))
    return {k: sorted(v) for k, v in out.items()}


def ponder_per_difficulty(sweep):
    """{run: {difficulty: mean ponder}} from a sweep's difficulty.csv."""
    out = {}
    for r in rows_of(f"{sweep}/difficulty.csv"):
        out.setdefault(r["run"], {})[int(r["difficulty"])] = float(r["ponder"])
    return out


WORDS = {**dict(enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())), 24: "twenty-four"}


def pct(x):
    return f"{100 * x:.1f}%"


def test_notebook_05_quotes_the_measured_checks():
    text = markdown("05_")
    final = check_values("05_parity", "held-out error after 1000 iterations (chance 0.5)")
    assert f"the {WORDS[len(final)]} runs measured for `docs/notebook_checks.md` ended between {min(final):.3f} and {max(final):.3f}" in text
    gap = check_values("05_parity", "no-ACT error minus ACT error")
    assert f"in the {WORDS[len(gap)]} runs measured for `docs/notebook_checks.md` the baseline ended {min(gap):.2f} to {max(gap):.2f} above ACT" in text


def test_notebook_05_describes_the_sweep_it_shows():
    # section 5 shows parity.largest_sweep(); the text must name that sweep and its settings
    from act_experiments.training import config
    from act_experiments.experiments import parity
    shown = parity.largest_sweep()
    assert shown == "parity16_gpu"
    text = markdown("05_")
    assert f"today `results/{shown}/`." in text
    meta = json.loads((ROOT / "results" / shown / "sweep.json").read_text())
    opts = meta["shared_options"]
    cap = opts.get("max_ponder", config.TASK_DEFAULTS["parity"]["max_ponder"])
    assert (opts["bits"], opts["hidden"], opts["batch_size"], opts["lr"], opts["iterations"], opts["dtype"]) == \
        (16, 128, 128, 3e-3, 20000, "float32")
    assert "It trains 16-bit parity with the paper's network, a tanh RNN of 128 units with batch 128, " \
           "at a learning rate of $3\\cdot 10^{-3}$ for 20 000 iterations" in text
    assert meta["taus"] == [1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3] and meta["seeds"] == 4 and meta["baseline"]
    assert meta["runs"] == len(runs(shown)) == 36 and len(by_tau(shown)[None]) == 4 and cap == 100
    assert ("eight τ from $10^{-4}$ to 0.3 ($10^{-4}$, $3\\cdot 10^{-4}$, $10^{-3}$, …, 0.3) with four seeds each, "
            "and four networks without ACT, 36 in all, with the paper's cap $M = 100$") in text
    assert (meta["engine"], meta["backend"], meta["device"]) == ("population", "torch", "cuda")
    assert "NVIDIA H100" in meta["machine"] and round(meta["wall_time_s"]) == 262
    assert meta["workers"] == 1 and meta["runs"] == 36
    assert ("trained as one population of 36 networks with the PyTorch backend, in float32 with CUDA graphs, "
            "on one NVIDIA H100 GPU in 262 s") in text


def test_notebook_05_quotes_the_gpu_sweep():
    text = markdown("05_")
    errors, ponder = by_tau("parity16_gpu"), by_tau("parity16_gpu", "mean_ponder")
    mean = {k: np.mean(v) for k, v in errors.items()}
    assert (f"the mean errors are {mean[1e-4]:.3f}, {mean[3e-4]:.3f} and {mean[1e-3]:.3f} at τ = 0.0001, 0.0003 and 0.001, "
            f"against {mean[None]:.2f} without ACT") in text
    small = sorted(errors[1e-4] + errors[3e-4] + errors[1e-3])
    below20, below5 = sum(e < 0.2 for e in small), sum(e < 0.05 for e in small)
    assert (f"{WORDS[below20]} of these {WORDS[len(small)]} networks end below 20% error, {WORDS[below5]} below 5% "
            f"(the best at {pct(small[0])})") in text
    assert "nine of twelve networks below 20% error" in text and (below20, len(small)) == (9, 12)
    assert f"only started to learn ({errors[3e-3][0]:.3f}–{errors[3e-3][-1]:.3f})" in text
    assert f"their mean is still {mean[None] - mean[3e-3]:.2f} below the baseline's" in text
    high = [t for t in errors if t is not None and t >= 1e-2]
    held = [p for t in high for p in ponder[t]]
    stuck = sorted(e for t in high for e in errors[t])
    assert len(stuck) == 16 and "those sixteen networks" in text
    assert f"(mean ρ {min(held):.2f} to {max(held):.2f})" in text
    assert (f"near chance ({stuck[0]:.3f}–{stuck[-1]:.3f}, against {errors[None][0]:.3f}–{errors[None][-1]:.3f} "
            "without ACT)") in text
    assert all(mean[t] > mean[None] - 0.01 for t in high)             # "end where the baseline does"
    at1000 = [float(r["mean_ponder"]) for r in curves("parity16_gpu") if r["run"].startswith("tau")
              and float(r["run"][3:r["run"].index("-")]) >= 1e-2 and int(r["iteration"]) == 1000]
    err1000 = [float(r["sequence_error"]) for r in curves("parity16_gpu") if r["run"].startswith("tau")
               and float(r["run"][3:r["run"].index("-")]) >= 1e-2 and int(r["iteration"]) == 1000]
    assert len(at1000) == 16 and min(err1000) > 0.45
    assert f"by iteration 1000 they already ponder at most {max(at1000):.2f} on average" in text
    # beside the paper: no tau <= 0.03 has a mean below 5%, four runs of twenty-four do
    paper = [e for t, v in errors.items() if t is not None and t <= 0.03 for e in v]
    assert min(mean[t] for t in errors if t is not None) > 0.05 and "no τ has a mean below 5%" in text
    assert f"only {WORDS[sum(e < 0.05 for e in paper)]} runs of {WORDS[len(paper)]} do" in text
    assert f"The baseline's {mean[None]:.2f} is a little closer to chance than the paper's 40%" in text
    assert (f"({errors[1e-4][0]:.3f} to {errors[1e-4][-1]:.3f} at τ = 0.0001, {errors[3e-4][0]:.3f} to "
            f"{errors[3e-4][-1]:.3f} at τ = 0.0003, {errors[1e-3][0]:.3f} to {errors[1e-3][-1]:.3f} at τ = 0.001)") in text
    assert min(mean, key=mean.get) == 1e-4
    second = min(m for t, m in mean.items() if t != 1e-4)
    assert f"τ = 0.0001 has the lowest mean by only {second - mean[1e-4]:.3f}" in text


def test_notebook_05_gpu_sweep_failures_ponder_most():
    text = markdown("05_")
    table = runs("parity16_gpu")
    small = [r for r in table if r["act"] == "1" and float(r["tau"]) <= 3e-4]
    failed = sorted((r for r in small if float(r["sequence_error"]) > 0.2), key=lambda r: float(r["mean_ponder"]))
    solved = [float(r["mean_ponder"]) for r in small if float(r["sequence_error"]) <= 0.2]
    assert len(failed) == 3 and len(solved) == 5
    top3 = sorted((float(r["mean_ponder"]) for r in table), reverse=True)[:3]
    assert sorted(top3) == [float(r["mean_ponder"]) for r in failed]           # "the three that ponder most of all 36"
    assert (f"(mean ρ {float(failed[0]['mean_ponder']):.1f}, {float(failed[1]['mean_ponder']):.1f} and "
            f"{float(failed[2]['mean_ponder']):.1f}, against {min(solved):.1f} to {max(solved):.1f} for the other five)") in text
    most = sorted(int(r["max_N"]) for r in failed)
    assert f"with up to {most[0]} to {most[-1]} updates on some inputs" in text
    assert max(int(r["max_N"]) for r in table) < 100 and "None of them reaches the cap $M = 100$" in text
    ponder = ponder_per_difficulty("parity16_gpu")
    best = sorted(table, key=lambda r: float(r["sequence_error"]))[:3]
    assert all(float(r["sequence_error"]) < 0.02 for r in best)
    values = [p for r in best for p in ponder[r["run"]].values()]
    assert (f"the ponder of the three best networks (below 2% error) rises little and levels off, within {min(values):.1f} "
            f"to {max(values):.1f} updates on every number of bits") in text
    # two rise by about one update from one bit to six and stay near it; the third rises less and comes back
    rising = sorted((r["run"] for r in best if ponder[r["run"]][6] - ponder[r["run"]][1] > 0.8),
                    key=lambda run: ponder[run][1])
    other = [r["run"] for r in best if r["run"] not in rising]
    assert len(rising) == 2 and len(other) == 1
    for run in rising:
        assert all(abs(ponder[run][b] - ponder[run][6]) < 0.35 for b in range(6, 17))   # "stay near it after"
    a, b = rising
    assert (f"Two of them gain about one update from one bit to six ({ponder[a][1]:.2f} to {ponder[a][6]:.2f} and "
            f"{ponder[b][1]:.2f} to {ponder[b][6]:.2f}) and stay near it after ({ponder[a][16]:.2f} and "
            f"{ponder[b][16]:.2f} on sixteen bits)") in text
    o = ponder[other[0]]
    assert max(o.values()) - o[1] < 0.6 and o[16] < max(o.values())
    assert (f"the third goes from {o[1]:.2f} to at most {max(o.values()):.2f} and back to {o[16]:.2f}") in text
    assert all(ponder[r["run"]][16] > ponder[r["run"]][1] + 1 for r in failed)      # "ponder more as the bits grow"
    steep = max(failed, key=lambda r: ponder[r["run"]][16] - ponder[r["run"]][1])["run"]
    assert f"(one from {ponder[steep][1]:.1f} updates on one bit to {ponder[steep][16]:.1f} on sixteen)" in text
    mid = [run for run in ponder if run.startswith(("tau0.001-", "tau0.003-"))]
    fewer = sum(ponder[run][16] < ponder[run][1] for run in mid)
    assert f"at τ = 0.001 and 0.003 {WORDS[fewer]} of the {WORDS[len(mid)]} networks ponder less on sixteen bits than on one" in text
    # the learning curves: the first network below 0.4 error, and still falling at the end
    curve = error_curves("parity16_gpu")
    left = min(it for run, c in curve.items() if run.startswith("tau") for it, e in c.items() if e < 0.4)
    assert f"the first network leaves it (error below 0.4) at iteration {left}" in text
    for t in ("0.0001", "0.0003", "0.001"):
        seeds = [c for run, c in curve.items() if run.startswith(f"tau{t}-")]
        assert np.mean([c[20000] for c in seeds]) < np.mean([c[15000] for c in seeds]) - 0.05
    assert "are still falling over the last 5000 iterations" in text


def test_notebook_05_quotes_the_earlier_cpu_sweep():
    text = markdown("05_")
    meta = json.loads((ROOT / "results" / "parity16_seeds" / "sweep.json").read_text())
    assert meta["shared_options"]["max_ponder"] == 20 and meta["seeds"] == 6 and meta["backend"] == "numpy"
    assert meta["taus"] == [3e-4, 1e-3, 3e-3, 1e-2] and meta["runs"] == 30 and round(meta["wall_time_s"]) == 1920
    assert "2 CPUs" in meta["machine"]
    assert ("`results/parity16_seeds/` has the same task and settings with a cap of $M = 20$: six seeds at each of four τ "
            "(0.0003, 0.001, 0.003 and 0.01) and six without ACT, 30 networks trained as populations by the NumPy backend "
            "on 2 CPU cores in 1920 s") in text
    errors = by_tau("parity16_seeds")
    small = sorted(errors[3e-4] + errors[1e-3])
    assert len(small) == 12 and len(errors[None]) == 6
    below20, below5 = sum(e < 0.2 for e in small), sum(e < 0.05 for e in small)
    assert (f"Of its {WORDS[12]} networks with τ ≤ 0.001, {WORDS[below20]} end below 20% error and {WORDS[below5]} "
            f"below 5% (the best at {pct(small[0])})") in text
    assert f"({errors[3e-3][0]:.2f}–{errors[3e-3][-1]:.2f})" in text
    assert max(errors[None]) < 0.47 and min(errors[None]) > 0.44          # "none ... leaves chance"
    assert f"(about {np.mean(errors[1e-2]):.2f})" in text


def test_notebook_05_quotes_the_8_bit_sweeps():
    text = markdown("05_")
    long, short = by_tau("parity8_long"), by_tau("parity8")
    mean = {k: np.mean(v) for k, v in long.items()}
    assert f"{mean[None]:.2f}" == "0.38"
    assert "leaves the baseline at about 0.38 while ACT with small τ gets to " \
           f"{pct(min(mean[1e-4], mean[1e-3]))}–{pct(max(mean[1e-4], mean[1e-3]))}".replace("%–", "–") in text
    upto = [t for t in long if t is not None and t <= 0.01]
    low = [e for t in upto for e in long[t]]
    lo, hi = min(mean[t] for t in upto), max(mean[t] for t in upto)
    assert f"from about 0.38 to {pct(lo)[:-1]}–{pct(hi)} (eight of its nine networks below 5%)" in text
    assert sum(e < 0.05 for e in low) == 8 and len(low) == 9
    assert "its seeds at " + ", ".join(f"{100 * e:.0f}%" for e in long[0.1][:2]) + f" and {100 * long[0.1][2]:.0f}%" in text
    at3000 = sorted(np.mean(short[t]) for t in (1e-4, 1e-3))
    assert f"still at {at3000[0]:.2f}–{at3000[1]:.2f} for small τ" in text
    ponder = ponder_per_difficulty("parity8")
    tau3 = [ponder[f"tau0.001-seed{s}"] for s in range(3)]
    assert round(np.mean([p[1] for p in tau3])) == 4 and round(np.mean([p[8] for p in tau3])) == 8
    assert round(max(max(p.values()) for p in tau3)) == 17
    assert "rose from about 4 to about 8, carried by one network that pondered up to 17 updates" in text
    solved = [p for run, p in ponder_per_difficulty("parity8_long").items()
              if not run.startswith("noact") and float(run[3:run.index("-")]) <= 0.01]
    assert round(min(min(p.values()) for p in solved)) == 3 and round(max(max(p.values()) for p in solved)) == 6
    assert max(p[8] - p[1] for p in solved) <= 0.6
    assert "(3 to 6 updates; no network rises by more than 0.6 from one bit to eight)" in text


def test_notebook_06_quotes_the_long_logic_sweep():
    text = markdown("06_")
    curve = {}
    for r in curves("logic_long"):
        curve.setdefault(r["run"], {})[int(r["iteration"])] = (float(r["sequence_error"]), float(r["mean_ponder"]))
    act = [run for run in curve if run.startswith("tau") and float(run[3:run.index("-")]) <= 0.01]
    assert act and all(curve[run][2000][0] <= 0.01 for run in act)
    base = sorted(curve[run][2000][0] for run in curve if run.startswith("noact"))
    assert f"1% error or less by iteration 1500–2000, while the baseline is still at {base[0]:.2f}–{base[-1]:.2f} there" in text
    tau01 = [run for run in curve if run.startswith("tau0.01-")]
    its = sorted(curve[tau01[0]])
    mean_rho = [np.mean([curve[run][it][1] for run in tau01]) for it in its]
    assert f"the mean ρ falls from {max(mean_rho):.1f} to {mean_rho[-1]:.1f} by iteration {its[-1]}" in text
    ponder = ponder_per_difficulty("logic_long")
    one, three = (np.mean([ponder[run][g] for run in tau01]) for g in (1, 3))
    assert f"from about {one:.0f} updates for one gate to about {three:.1f} for three" in text
    assert round(np.mean(by_tau("logic_long", "mean_ponder")[3e-3])) == 10 and "(ρ ≈ 10)" in text
    final = by_tau("logic_long")[None]
    assert f"given 6000 iterations ({final[0]:.3f} and {final[1]:.3f})" in text
    wrong = [float(r["error"]) * int(r["count"]) for r in rows_of("logic_long/difficulty.csv")
             if r["run"].startswith("noact") and int(r["difficulty"]) > 1]
    assert max(wrong) <= 1 + 1e-9 and "with at most one 2- or 3-gate vector in about 300 wrong" in text


# ---------------------------------------------------------------------------------------------
# The ten-gate logic sweep (results/logic_gates10): notebook 06, section 8, and the README's row

def gates10_numbers():
    """The numbers notebook 06 and the README quote of results/logic_gates10, computed from its CSVs."""
    meta = json.loads((ROOT / "results" / "logic_gates10" / "sweep.json").read_text())
    errors, ponders = by_tau("logic_gates10"), by_tau("logic_gates10", "mean_ponder")
    mean = {k: np.mean(v) for k, v in errors.items()}
    se = {k: np.std(v, ddof=1) / np.sqrt(len(v)) for k, v in errors.items()}
    gap, se_gap = mean[None] - mean[1e-3], np.hypot(se[1e-3], se[None])
    assert gap > 2 * se_gap                                      # the claim fixed before the sweep ran
    rho = {k: np.mean(v) for k, v in ponders.items()}
    return meta, errors, mean, se, gap, se_gap, rho


def test_notebook_06_quotes_the_ten_gate_logic_sweep():
    text = markdown("06_")
    meta, errors, mean, se, gap, se_gap, rho = gates10_numbers()
    opts, cap = meta["shared_options"], meta["shared_options"]["max_ponder"]
    # what the sweep is
    assert (opts["max_vectors"], opts["max_gates"], opts["hidden"], opts["batch_size"], opts["lr"], cap,
            opts["iterations"]) == (3, 10, 128, 16, 1e-3, 20, 20000)
    assert ("up to 10 gates per vector, the paper's LSTM of 128 cells and its batches of 16, but at most 3 vectors per "
            "sequence instead of 10, Adam at $10^{-3}$, the cap $M = 20$ and 20 000 iterations") in text
    assert meta["taus"] == [1e-3, 3e-3, 1e-2, 3e-2] and meta["seeds"] == 4 and meta["baseline"]
    assert meta["runs"] == len(runs("logic_gates10")) == 20 and len(errors[None]) == 4
    assert "2 CPUs" in meta["machine"] and round(meta["wall_time_s"]) == 1430
    assert ("It has τ = 1e-3, 3e-3, 1e-2 and 3e-2 with four seeds each and four networks without ACT, 20 networks, "
            "trained on 2 CPU cores in 1430 s") in text
    # fixed before it ran: the calibration (seed 0, the same settings) and the fresh seeds
    assert sorted({int(r["seed"]) for r in runs("logic_gates10")}) == [10, 11, 12, 13]
    assert "The sweep then ran on seeds 10 to 13, which the calibration never used" in text
    cal = {}
    for vectors in (1, 3):
        folder = f"logic_calibration/logic_cal_v{vectors}"
        cal_meta = json.loads((ROOT / "results" / folder / "sweep.json").read_text())
        assert cal_meta["shared_options"] == {**opts, "max_vectors": vectors}
        assert {int(r["seed"]) for r in rows_of(f"{folder}/runs.csv")} == {0}
        cal[vectors] = {float(r["tau"]) if r["act"] == "1" else None: float(r["sequence_error"])
                        for r in rows_of(f"{folder}/runs.csv")}
    assert "calibration runs with the same settings, one network each, on seed 0" in text
    assert cal[1][None] - cal[1][1e-3] < 0.05 < cal[3][None] - cal[3][1e-3]
    assert f"the baseline ended close to ACT ({cal[1][None]:.3f} against {cal[1][1e-3]:.3f} for τ = 1e-3)" in text
    assert f"τ = 1e-3 ended at {cal[3][1e-3]:.3f} and the baseline at {cal[3][None]:.3f}" in text
    # the result
    assert (f"τ = 1e-3 ends at {mean[1e-3]:.3f} ± {se[1e-3]:.3f} (mean ± standard error over its four seeds) and no ACT "
            f"at {mean[None]:.3f} ± {se[None]:.3f}: a difference of {gap:.3f}, whose standard error is {se_gap:.3f}, so "
            f"about {gap / se_gap:.0f} standard errors where two were asked for") in text
    assert max(errors[1e-3]) < min(errors[None])
    assert (f"Each of the four τ = 1e-3 networks ({errors[1e-3][0]:.3f} to {errors[1e-3][-1]:.3f}) ends below each of "
            f"the four baselines ({errors[None][0]:.3f} to {errors[None][-1]:.3f})") in text
    assert abs(mean[3e-2] - mean[None]) < 2 * np.hypot(se[3e-2], se[None]) and rho[3e-2] < 2.1
    assert (f"τ = 3e-3 is close behind ({mean[3e-3]:.3f}), τ = 1e-2 in between ({mean[1e-2]:.3f}), and τ = 3e-2, which "
            f"keeps its networks at about one update per vector, ends where no ACT does ({mean[3e-2]:.3f})") in text
    # beside the paper: three gates against ten, the levels, still falling
    long_meta = json.loads((ROOT / "results" / "logic_long" / "sweep.json").read_text())
    long = by_tau("logic_long")[None]
    assert (f"the baseline caught up, {long[0]:.3f} and {long[1]:.3f} after {long_meta['shared_options']['iterations']} "
            f"iterations; at ten it is still at {mean[None]:.3f} after 20 000") in text
    assert f"the ten-gate sweep of section 8 leaves ours at {mean[None]:.3f} after 20 000 iterations" in text
    assert f"here the baseline is at {mean[None]:.2f} and τ = 1e-3 at {mean[1e-3]:.2f}" in text
    curve = error_curves("logic_gates10")
    for prefix in ("tau0.001-", "noact-"):
        group = [c for run, c in curve.items() if run.startswith(prefix)]
        assert np.mean([c[20000] for c in group]) < np.mean([c[16000] for c in group]) - 0.02, prefix
    assert "the learning curves of both are still falling over the last 4000 iterations" in text
    # the ponder: rho = N + R with 0 < R <= 1 and N <= M, so a mean rho of 20.1 is 19 to 20 updates
    assert cap + 1 >= rho[1e-3] >= 19 + 1
    assert f"At τ = 1e-3 the mean ponder is ρ = {rho[1e-3]:.1f} with the cap $M = {cap}$" in text
    assert "that is between 19 and 20 updates per vector on average, at or next to the cap" in text
    per_gate = weighted_ponder("logic_gates10", "tau0.001-")
    assert sorted(per_gate) == list(range(1, 11))
    assert (f"the mean ρ lies between {min(per_gate.values()):.1f} and {max(per_gate.values()):.1f} for every number "
            "of gates from one to ten") in text
    # what ponder costs
    assert "between 19 and 20 LSTM updates per vector where the baseline makes one" in text
    assert f"τρ ≈ {1e-3 * rho[1e-3]:.2f} per vector at τ = 1e-3" in text
    assert (f"τ = 1e-2 ponders ρ = {rho[1e-2]:.1f} and ends at {mean[1e-2]:.3f}, and τ = 3e-2 (ρ = {rho[3e-2]:.2f}) "
            "hardly ponders and gains nothing") in text
    act, base = pooled_error("logic_gates10", "tau0.001-"), pooled_error("logic_gates10", "noact-")
    short, longer = [act[g] for g in range(1, 6)], [act[g] for g in range(6, 11)]
    assert all(0 < base[g] - act[g] < 0.1 for g in range(6, 11))          # "not far below the baseline"
    assert (f"τ = 1e-3 gets {pct(min(short))} to {pct(max(short))} of the vectors of one to five gates wrong, but "
            f"{100 * min(longer):.0f}% to {100 * max(longer):.0f}% of those of six to ten gates, not far below the "
            f"baseline, which gets {100 * min(base.values()):.0f}% to {100 * max(base.values()):.0f}% wrong at every "
            "length") in text
    assert (f"the gain mostly on vectors of one to five gates ({pct(min(short))} to {pct(max(short))} wrong at τ = 1e-3 "
            f"against {100 * min(base[g] for g in range(1, 6)):.0f}% to {100 * max(base[g] for g in range(1, 6)):.0f}% "
            f"for no ACT; on six to ten gates {100 * min(longer):.0f}% to {100 * max(longer):.0f}% against "
            f"{100 * min(base[g] for g in range(6, 11)):.0f}% to {100 * max(base[g] for g in range(6, 11)):.0f}%)") in text
    assert "ACT far better than no ACT on sequences of up to three vectors of up to ten gates" in text
    assert "## 8. Ten gates per vector: where ACT pulls ahead" in text
    # the summary
    assert (f"ACT at τ = 1e-3 ends at {mean[1e-3]:.3f} against the baseline's {mean[None]:.3f}, about {gap / se_gap:.0f} "
            f"standard errors apart") in text and f"these networks ponder at the cap $M = {cap}$" in text


def test_readme_quotes_the_ten_gate_logic_sweep():
    row = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| logic, 3 vectors × **10** gates")]
    assert len(row) == 1
    row = row[0]
    meta, errors, mean, se, gap, se_gap, rho = gates10_numbers()
    opts = meta["shared_options"]
    assert (f"| logic, {opts['max_vectors']} vectors × **{opts['max_gates']}** gates, LSTM {opts['hidden']}, batch "
            f"{opts['batch_size']}, lr 1e-3, 20 000 it., M = {opts['max_ponder']}, {meta['seeds']} seeds × "
            f"{len(meta['taus'])} τ, on fresh seeds after a calibration (`results/logic_gates10`) |") in row
    assert opts["lr"] == 1e-3 and opts["iterations"] == 20000 and meta["first_seed"] == 10
    assert (f"τ = 1e-3 {mean[1e-3]:.3f} ± {se[1e-3]:.3f} against no ACT {mean[None]:.3f} ± {se[None]:.3f}, "
            f"{gap / se_gap:.0f} standard errors of the difference (the claim, fixed before the sweep, asked for two)") in row
    assert (f"τ = 3e-3 {mean[3e-3]:.3f}, τ = 1e-2 {mean[1e-2]:.3f}, τ = 3e-2 {mean[3e-2]:.3f} (about one update)") in row
    per_gate = weighted_ponder("logic_gates10", "tau0.001-")
    assert min(per_gate.values()) > opts["max_ponder"] - 1.1                  # "at the cap ... whatever the gates"
    assert f"τ = 1e-3 ponders at the cap (ρ {rho[1e-3]:.1f}, not 5–6) whatever the number of gates" in row


def pooled(sweep, prefix, column):
    """{difficulty: the column ("error" or "ponder") over the runs whose name starts with prefix,
    each step counted once}."""
    sums = {}
    for r in rows_of(f"{sweep}/difficulty.csv"):
        if r["run"].startswith(prefix):
            c, s = sums.get(int(r["difficulty"]), (0, 0.0))
            sums[int(r["difficulty"])] = (c + int(r["count"]), s + int(r["count"]) * float(r[column]))
    return {d: s / c for d, (c, s) in sums.items()}


def weighted_ponder(sweep, prefix):
    return pooled(sweep, prefix, "ponder")


def pooled_error(sweep, prefix):
    return pooled(sweep, prefix, "error")


def test_notebook_07_quotes_the_addition_sweeps():
    text = markdown("07_")
    errors, ponder = by_tau("addition_long"), by_tau("addition_long", "mean_ponder")
    assert (f"mean ρ about {np.mean(ponder[1e-3]):.1f}, {np.mean(ponder[1e-2]):.1f} and {np.mean(ponder[0.1]):.1f} "
            "for τ = 0.001, 0.01 and 0.1") in text
    early = weighted_ponder("addition_small", "tau0.1-")
    assert f"about {early[1]:.1f} updates on 1-digit numbers and {early[2]:.1f} on 2-digit ones" in text
    assert all(weighted_ponder("addition_small", f"tau{t:g}-")[2] > weighted_ponder("addition_small", f"tau{t:g}-")[1]
               for t in (1e-3, 1e-2, 0.1))                      # "every τ already spent more updates on 2-digit"
    rise = {t: weighted_ponder("addition_long", f"tau{t:g}-") for t in (1e-3, 1e-2, 0.1)}
    rise = {t: p[2] - p[1] for t, p in rise.items()}
    assert f"shrunk to about {rise[0.1]:.1f} updates at τ = 0.1 ({rise[1e-2]:.1f} to {rise[1e-3]:.1f} at smaller τ)" in text
    act = sorted(e for t, v in errors.items() if t is not None for e in v)
    assert f"({pct(act[0])} to {pct(act[-1])} sequence error, still falling)" in text
    assert (f"τ = 0.1: {pct(errors[0.1][0])} and {pct(errors[0.1][1])}, against {pct(errors[None][0])} and "
            f"{pct(errors[None][1])} for the one-update baseline") in text
    assert f"(τ = 0.001: {pct(errors[1e-3][0])} and {pct(errors[1e-3][1])})" in text
    assert f"ends at {100 * errors[0.1][0]:.0f}% error against {100 * errors[None][0]:.0f}%" in text
    # 3 digits: the smaller tau ahead of the baseline by two to three standard errors, 0.1 by about five
    e3 = by_tau("addition_3digit")
    base = np.array(e3[None])
    z = {}
    for t in (1e-3, 1e-2, 0.1):
        e = np.array(e3[t])
        se = np.sqrt(e.var(ddof=1) / len(e) + base.var(ddof=1) / len(base))
        z[t] = (base.mean() - e.mean()) / se
    assert 2 <= min(z[1e-3], z[1e-2]) and max(z[1e-3], z[1e-2]) <= 3 and round(z[0.1]) == 5
    assert "The smaller τ are ahead by two to three standard errors only" in text and "τ = 0.1 by about five" in text
    assert abs(max(e3[1e-2]) - min(e3[None])) < 0.0025 and "one τ = 0.01 network ends level with the best baseline" in text
    meta = json.loads((ROOT / "results" / "addition_3digit" / "sweep.json").read_text())
    assert f"each final error comes from {meta['shared_options']['eval_size']} held-out sequences" in text


def test_notebook_08_quotes_the_sort_sweeps():
    text = markdown("08_")
    early = {t: np.mean(v) for t, v in by_tau("sort_small").items()}
    act = sorted(m for t, m in early.items() if t is not None)
    assert f"the baseline was ahead ({early[None]:.2f} against {act[0]:.2f}–{act[-1]:.2f} for ACT)" in text
    late = {t: np.mean(v) for t, v in by_tau("sort_long").items()}
    assert min(late, key=late.get) is None and f"the baseline's mean is still the lowest ({late[None]:.3f})" in text
    assert max(m - late[None] for m in late.values()) <= 0.014 and "every ACT mean is within 0.014 of it" in text
    ponder = {t: np.mean(v) for t, v in by_tau("sort_long", "mean_ponder").items()}
    assert (f"about {ponder[1e-4]:.1f} at $10^{{-4}}$ and $10^{{-3}}$, {ponder[1e-2]:.1f} at $10^{{-2}}$, "
            "exactly one update at 0.1") in text and f"{ponder[1e-3]:.1f}" == f"{ponder[1e-4]:.1f}"
    assert np.allclose(by_tau("sort_long", "mean_ponder")[0.1], 2.0, atol=0.005)
    seeds = {t: np.mean(v) for t, v in by_tau("sort_seeds").items()}
    assert f"at about {100 * min(seeds.values()):.0f}–{100 * max(seeds.values()):.0f}% error" in text
    assert max(np.mean(v) for v in by_tau("sort_seeds", "mean_ponder").values()) <= 2.4
    assert "mean ρ at most 2.4" in text


def test_notebook_09_quotes_the_committed_characters_runs():
    text = markdown("09_")
    meta = json.loads((ROOT / "results" / "characters_small" / "sweep.json").read_text())
    cap = meta["shared_options"]["max_ponder"]
    small = sorted((int(r["iteration"]), float(r["mean_ponder"])) for r in curves("characters_small")
                   if r["run"] == "tau0.006-seed0")
    assert small[1][0] == 50 and all(p >= cap for it, p in small if it >= 50)
    assert "the τ = 6e-3 network reached the cap of 20 updates per byte within 50 iterations and stayed there" in text
    ponder = {}
    for r in rows_of("characters_small/classes.csv"):
        if r["ponder"]:
            ponder.setdefault(r["run"], {})[r["class"]] = float(r["ponder"])
    p03, p1 = ponder["tau0.03-seed0"], ponder["tau0.1-seed0"]
    assert min(p03["comma"], p03["full stop"], p03["other punctuation"]) > p03["letter"]
    assert "in the committed τ = 0.03 run, do commas and full stops" in text
    assert min(p03, key=p03.get) == "space after a word" and p03["space after a word"] < 2.01
    assert max(p1.values()) - min(p1.values()) < 0.01 and "at τ = 0.1 the differences all but vanish" in text
    for r in runs("characters_small"):
        if r["act"] == "1" and float(r["tau"]) in (0.03, 0.1):
            assert float(r["ponder_first_step"]) > float(r["ponder_later_steps"]) + 0.5
    assert "the most of all, at both τ = 0.03 and τ = 0.1" in text


def test_notebook_10_quotes_the_wide_16_bit_sweep():
    base = by_tau("parity16_wide")[None]
    assert f"(chance 0.5, no ACT {base[0]:.2f}–{base[-1]:.2f})" in markdown("10_")


def test_notebook_05_failing_16_bit_networks_ran_to_the_cap():
    text = markdown("05_")
    meta = json.loads((ROOT / "results" / "parity16_seeds" / "sweep.json").read_text())
    cap = meta["shared_options"]["max_ponder"]
    small = [r for r in runs("parity16_seeds") if r["act"] == "1" and float(r["tau"]) <= 1e-3]
    assert all((float(r["sequence_error"]) > 0.3) == (int(r["max_N"]) == cap) for r in small)
    assert f"Its networks that fail at small τ are the ones whose ponder ran up to the cap $M = {cap}$ on some inputs" in text
    # the summary: the earlier sweep "shows the same", its failures included: they ponder most of all its runs
    failed = sorted(float(r["mean_ponder"]) for r in small if float(r["sequence_error"]) > 0.3)
    assert len(failed) == 3 and sorted(float(r["mean_ponder"]) for r in runs("parity16_seeds"))[-3:] == failed
    assert ("the networks that fail at small τ are those that ponder most. The earlier CPU sweep with six seeds and "
            "$M = 20$ (`results/parity16_seeds`) shows the same.") in text


def test_readme_quotes_the_gpu_parity_sweep():
    row = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "(`results/parity16_gpu`)" in line]
    assert len(row) == 1
    row = row[0]
    meta = json.loads((ROOT / "results" / "parity16_gpu" / "sweep.json").read_text())
    opts = meta["shared_options"]
    assert (opts["bits"], opts["hidden"], opts["lr"], opts["iterations"], meta["seeds"], len(meta["taus"])) == \
        (16, 128, 3e-3, 20000, 4, 8) and "max_ponder" not in opts      # the default cap, M = 100
    assert "NVIDIA H100" in meta["machine"] and round(meta["wall_time_s"]) == 262
    assert ("| parity, 16 bits, H = 128, lr 3e-3, 20 000 it., M = 100, 4 seeds × 8 τ (1e-4 to 0.3), "
            "on one H100 GPU in 262 s (`results/parity16_gpu`) |") in row
    errors = by_tau("parity16_gpu")
    mean = {k: np.mean(v) for k, v in errors.items()}
    assert max(errors[None]) < 0.47 and f"no ACT {100 * mean[None]:.0f}% (all four at chance)" in row
    high = {f"{100 * m:.0f}" for t, m in mean.items() if t is not None and t >= 1e-2}
    assert high == {"47"} and "τ ≥ 1e-2 47% (held to one update)" in row
    assert (f"τ = 3e-3 {100 * mean[3e-3]:.0f}%; τ = 1e-3 {100 * mean[1e-3]:.0f}%; τ = 3e-4 {100 * mean[3e-4]:.0f}%; "
            f"τ = 1e-4 {100 * mean[1e-4]:.1f}%") in row
    small = sorted(errors[1e-4] + errors[3e-4] + errors[1e-3])
    assert (f"{sum(e < 0.2 for e in small)} of the {len(small)} networks with τ ≤ 1e-3 below 20% and "
            f"{sum(e < 0.05 for e in small)} below 5% (best {pct(small[0])})") in row
    failed = [int(r["max_N"]) for r in runs("parity16_gpu")
              if r["act"] == "1" and float(r["tau"]) <= 1e-3 and float(r["sequence_error"]) > 0.2]
    assert max(failed) < 100 and f"(up to {min(failed)}–{max(failed)} updates, below the cap)" in row
    from act_experiments.experiments import parity
    from act_experiments.sweeps.reading import load_sweep
    rise = [c for c in parity.paper_comparison(load_sweep("parity16_gpu")) if c["claim"].startswith("ponder vs bits")]
    assert len(rise) == 1 and not rise[0]["agrees"] and "ponder rises little with the bits (at most about one update), not linearly" in row
    ponder = ponder_per_difficulty("parity16_gpu")
    best = sorted(runs("parity16_gpu"), key=lambda r: float(r["sequence_error"]))[:3]
    assert all(max(ponder[r["run"]].values()) - min(ponder[r["run"]].values()) < 1.25 for r in best)


# ---------------------------------------------------------------------------------------------
# Sort at 8 and 12 numbers: the calibration (results/sort_calibration) in docs/sort.md

SORT_CALIBRATION = {"sort_cal_l8": ("2–8", "1 (default)"), "sort_cal_l12": ("2–12", "1 (default)"),
                    "sort_cal_l8_bias": ("2–8", "−1"), "sort_cal_l12_bias": ("2–12", "−1")}


def test_docs_sort_quotes_its_calibration_table():
    text = (ROOT / "docs" / "sort.md").read_text(encoding="utf-8")
    for name, (numbers, bias) in SORT_CALIBRATION.items():
        folder = f"sort_calibration/{name}"
        meta = json.loads((ROOT / "results" / folder / "sweep.json").read_text())
        opts = meta["shared_options"]
        assert (opts["hidden"], opts["batch_size"], opts["lr"], opts["max_ponder"], opts["iterations"]) == (
            128, 32, 3e-3, 20, 10000)
        assert f"2–{opts['max_length']}" == numbers and opts.get("halting_bias", 1.0) == (-1.0 if "−" in bias else 1.0)
        assert {int(r["seed"]) for r in runs(folder)} == {0}
        act = sorted((float(r["tau"]), float(r["sequence_error"]), float(r["mean_ponder"]))
                     for r in runs(folder) if r["act"] == "1")
        base = [float(r["sequence_error"]) for r in runs(folder) if r["act"] == "0"]
        cells_ = " | ".join(f"{t:.0e}".replace("e-0", "e-") + f": {e:.3f}, {p:.2f}" for t, e, p in act)
        assert (f"| {numbers} | {bias} | {cells_} | {base[0]:.3f} | {round(meta['wall_time_s'])} s |") in text, name
    err = {name: {float(r["tau"]) if r["act"] == "1" else None: float(r["sequence_error"])
                  for r in runs(f"sort_calibration/{name}")} for name in SORT_CALIBRATION}
    assert f"τ = 1e-4 {err['sort_cal_l12'][None] - err['sort_cal_l12'][1e-4]:.3f} ahead of no ACT" in text
    assert f"τ = 1e-4 ended {err['sort_cal_l8_bias'][None] - err['sort_cal_l8_bias'][1e-4]:.3f} below no ACT" in text
    assert max(float(r["mean_ponder"]) for name in ("sort_cal_l8", "sort_cal_l12")
               for r in runs(f"sort_calibration/{name}")) <= 2.6 and "(ρ ≤ 2.6)" in text
    first = [r for r in curves("sort_calibration/sort_cal_l8_bias") if r["iteration"] == "0"]
    assert {round(float(r["mean_ponder"]), 2) for r in first if r["run"].startswith("tau")} == {4.18}
    assert "ρ = 4.18 at iteration 0" in text


# ---------------------------------------------------------------------------------------------
# Sort at 2-8 numbers (results/sort_len8): notebook 08 section 7, docs/sort.md and the README

def len8_numbers():
    """The numbers quoted of results/sort_len8, from its CSVs as stats.table sums them."""
    from act_experiments.sweeps import stats
    from act_experiments.sweeps import reading
    sweep = reading.load_sweep("sort_len8")
    table = {(None if r["key"] == reading.NO_ACT else r["key"]): r for r in stats.table(sweep)}
    mean = {k: r["error"] for k, r in table.items()}
    se = {k: r["error_se"] for k, r in table.items()}
    rho = {k: r["ponder"] for k, r in table.items()}
    gap, se_gap = mean[None] - mean[1e-4], float(np.hypot(se[1e-4], se[None]))
    assert gap < 2 * se_gap                                      # the claim fixed before the sweep fails
    z = {k: (mean[None] - mean[k]) / float(np.hypot(se[k], se[None])) for k in mean if k is not None}
    assert all(abs(v) < 2 for v in z.values())
    return sweep["meta"], mean, se, rho, gap, se_gap, z


def test_notebook_08_quotes_the_eight_number_sort_sweep():
    text = markdown("08_")
    meta, mean, se, rho, gap, se_gap, z = len8_numbers()
    opts = meta["shared_options"]
    assert (opts["max_length"], opts["hidden"], opts["batch_size"], opts["lr"], opts["max_ponder"], opts["halting_bias"],
            opts["iterations"]) == (8, 128, 32, 3e-3, 20, -1.0, 10000)
    assert ("lists of 2 to 8 numbers, an LSTM of 128 units, batches of 32, Adam at $3 \\times 10^{-3}$, the cap $M = 20$, "
            "the halting bias $b_h = -1$ and 10 000 iterations") in text
    assert meta["taus"] == [1e-4, 3e-4, 1e-3, 1e-2] and meta["seeds"] == 4 and meta["baseline"]
    assert meta["runs"] == len(runs("sort_len8")) == 20 and meta["wall_time_s"] < 2 * 3600 and "2 CPUs" in meta["machine"]
    assert (f"20 networks, trained on 2 CPU cores in {round(meta['wall_time_s'])} s (after a resume: it had been stopped "
            "at iteration 140)") in text
    assert sorted({int(r["seed"]) for r in runs("sort_len8")}) == [10, 11, 12, 13] and meta["first_seed"] == 10
    assert "The sweep then ran on seeds 10 to 13, which the calibration never used" in text
    # the calibration
    cal = {r["run"]: r for r in runs("sort_calibration/sort_cal_l8_bias")}
    assert ({k: v for k, v in json.loads((ROOT / "results" / "sort_calibration" / "sort_cal_l8_bias" / "sweep.json")
             .read_text())["shared_options"].items() if k not in ("eval_every", "eval_size")}
            == {k: v for k, v in opts.items() if k not in ("eval_every", "eval_size")})
    assert (f"τ = 1e-4 ended at {float(cal['tau0.0001-seed0']['sequence_error']):.3f} against the baseline's "
            f"{float(cal['noact-seed0']['sequence_error']):.3f}") in text
    l8 = {r["run"]: float(r["sequence_error"]) for r in runs("sort_calibration/sort_cal_l8")}
    assert min(l8["tau0.001-seed0"], l8["tau0.01-seed0"]) > l8["noact-seed0"]
    assert "at 8 numbers both ACT networks ended behind the baseline" in text
    curve = error_curves("sort_calibration/sort_cal_l8_bias")
    assert (f"The calibration's gap ({float(cal['tau0.0001-seed0']['sequence_error']):.3f} against "
            f"{float(cal['noact-seed0']['sequence_error']):.3f}) was one seed at one evaluation") in text
    assert (f"a thousand iterations earlier the same two networks stood at {curve['tau0.0001-seed0'][9000]:.3f} and "
            f"{curve['noact-seed0'][9000]:.3f}") in text
    # the result
    errors = by_tau("sort_len8")
    assert (f"τ = 1e-4 ends at {mean[1e-4]:.3f} ± {se[1e-4]:.3f} (mean ± standard error over its four seeds) and no ACT "
            f"at {mean[None]:.3f} ± {se[None]:.3f}: the difference is {-gap / se_gap:.1f} standard errors of the difference "
            f"({se_gap:.3f}) in the baseline's favour") in text and gap < 0
    assert (f"Its four networks ({errors[1e-4][0]:.3f} to {errors[1e-4][-1]:.3f}) and the four baselines "
            f"({errors[None][0]:.3f} to {errors[None][-1]:.3f}) overlap") in text
    act = sorted(m for k, m in mean.items() if k is not None)
    assert act[0] >= mean[None] and "No other τ does better" in text
    assert f"the four ACT means lie between {act[0]:.3f} and {act[-1]:.3f}, each within two standard errors" in text
    act_k, base_k = pooled_error("sort_len8", "tau0.0001-"), pooled_error("sort_len8", "noact-")
    assert (f"at τ = 1e-4 {100 * act_k[2]:.0f}% of the lists of two are wrong and {100 * act_k[8]:.0f}% of those of eight, "
            f"against {100 * base_k[2]:.0f}% and {100 * base_k[8]:.0f}% for no ACT") in text
    rho_k = weighted_ponder("sort_len8", "tau0.0001-")
    assert all(rho_k[k] > rho_k[k + 1] for k in range(2, 8))
    assert f"falls with the length of the list, from {rho_k[2]:.2f} at two numbers to {rho_k[8]:.2f} at eight" in text
    small = [rho[k] for k in (1e-4, 3e-4, 1e-3)]
    assert 2 <= min(small) - 1 and max(small) <= 3.5
    assert (f"τ = 1e-4, 3e-4 and 1e-3 ponder ρ = {min(small):.2f} to {max(small):.2f}: as ρ = N + R (eq. 10) with "
            f"$0 < R \\le 1$, that is between {min(small) - 1:.1f} and {max(small):.1f} updates per step") in text
    assert f"τ = 1e-2 ponders less (ρ = {rho[1e-2]:.2f}) and ends a little behind ({mean[1e-2]:.3f})" in text
    assert f"τ = 1e-4 ends at {mean[1e-4]:.3f} against the baseline's {mean[None]:.3f}" in text      # the summary


def test_docs_sort_quotes_the_eight_number_sort_sweep():
    text = (ROOT / "docs" / "sort.md").read_text(encoding="utf-8")
    meta, mean, se, rho, gap, se_gap, z = len8_numbers()
    by_seed = {}
    for r in sorted(runs("sort_len8"), key=lambda r: int(r["seed"])):
        key = float(r["tau"]) if r["act"] == "1" else None
        by_seed.setdefault(key, []).append((float(r["sequence_error"]), float(r["mean_ponder"])))
    for key, label in ((1e-4, "1e-4"), (3e-4, "3e-4"), (1e-3, "1e-3"), (1e-2, "1e-2"), (None, "no ACT")):
        seeds = ", ".join(f"{e:.3f}" for e, _ in by_seed[key])
        ponder = "2.0" if key is None else ", ".join(f"{p:.2f}" for _, p in by_seed[key])
        assert f"| {label} | {seeds} | {mean[key]:.3f} ± {se[key]:.3f} | {ponder} |" in text, label
    assert f"{round(meta['wall_time_s'])} s on 2 CPU cores" in text
    assert f"τ = 1e-4 ends {-gap:.4f} *above* no ACT" in text and f"difference is {se_gap:.3f}: {-gap / se_gap:.1f} standard" in text
    assert abs(z[3e-4]) < 0.1 and f"{mean[3e-4]:.3f}" == f"{mean[None]:.3f}" and "τ = 3e-4 ties it to the third decimal" in text
    assert min(z, key=z.get) == 1e-2 and f"τ = 1e-2, the furthest, is {-z[1e-2]:.1f} behind" in text
    small = [rho[k] for k in (1e-4, 3e-4, 1e-3)]
    assert f"ponder ρ = {min(small):.2f}–{max(small):.2f}, which is between" in text
    # the later calibration run at lr 1e-3
    cal = {r["run"]: r for r in runs("sort_calibration/sort_cal_l8_lr1e-3")}
    curve = error_curves("sort_calibration/sort_cal_l8_lr1e-3")
    for run, label in (("tau0.0001-seed0", "τ = 1e-4"), ("tau0.001-seed0", "τ = 1e-3"), ("noact-seed0", "no ACT")):
        rho_end = f"{float(cal[run]['mean_ponder']):.2f}"
        assert f"| {label} | {curve[run][18000]:.3f} | {float(cal[run]['sequence_error']):.3f} | {rho_end} |" in text, run
    d_end = float(cal["noact-seed0"]["sequence_error"]) - float(cal["tau0.0001-seed0"]["sequence_error"])
    d_before = curve["tau0.0001-seed0"][18000] - curve["noact-seed0"][18000]
    assert f"τ = 1e-4 was {d_end:.3f} below no ACT; one evaluation\nearlier it was {d_before:.3f} above" in text
    cal8 = {r["run"]: float(r["sequence_error"]) for r in runs("sort_calibration/sort_cal_l8_bias")}
    assert f"the gap it showed ({cal8['tau0.0001-seed0']:.3f} against {cal8['noact-seed0']:.3f})" in text
    act_rho = [float(cal[run]["mean_ponder"]) for run in ("tau0.0001-seed0", "tau0.001-seed0")]
    assert all(round(r, 1) == 5.6 for r in act_rho) and "(ρ about 5.6, so 4.6 to 5.6 updates" in text
    wall = json.loads((ROOT / "results" / "sort_calibration" / "sort_cal_l8_lr1e-3" / "sweep.json").read_text())["wall_time_s"]
    assert f"It took {round(wall)} s of one core for one seed ({wall / 3600:.1f} hours)" in text
    walls = [json.loads((ROOT / "results" / "sort_calibration" / name / "sweep.json").read_text())["wall_time_s"]
             for name in (*SORT_CALIBRATION, "sort_cal_l8_lr1e-3")]
    assert f"the sort calibration took about {sum(round(w) for w in walls) / 60:.0f} minutes" in text


def test_readme_quotes_the_eight_number_sort_sweep():
    row = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| sort, 2–8 numbers")]
    assert len(row) == 1
    meta, mean, se, rho, gap, se_gap, z = len8_numbers()
    small = [rho[k] for k in (1e-4, 3e-4, 1e-3)]
    assert (f"τ = 1e-4 {mean[1e-4]:.3f} ± {se[1e-4]:.3f} against no ACT {mean[None]:.3f} ± {se[None]:.3f}; τ = 3e-4 "
            f"{mean[3e-4]:.3f}, τ = 1e-3 {mean[1e-3]:.3f}, τ = 1e-2 {mean[1e-2]:.3f}, all within two standard errors; ρ "
            f"{min(small):.2f}–{max(small):.2f} at τ ≤ 1e-3") in row[0]


# ---------------------------------------------------------------------------------------------
# Adaptivity or computation: each control's numbers, wherever the text quotes them

CONTROL_NOTEBOOKS = {"parity": "05_", "logic": "06_", "addition": "07_", "sort": "08_"}


def committed_controls():
    from act_experiments.experiments import controls
    return {task: controls.load_pair(task) for task, c in controls.CONTROLS.items()
            if (ROOT / "results" / c.fixed / "runs.csv").exists()}


def test_every_committed_control_is_quoted_with_its_paired_numbers_and_verdict():
    from act_experiments.experiments import controls
    found = committed_controls()
    assert "logic" in found                       # the first control committed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for task, pair in found.items():
        c, d = pair["control"], controls.paired(pair)
        paired_text = f"{d['mean']:+.3f} ± {d['se']:.3f}"
        fixed = {r["key"]: r for r in controls.ladder(pair)}[results_key(c.F)]
        fixed_text = f"{fixed['error']:.3f} ± {fixed['error_se']:.3f}"
        verdict = f"**The claim {'holds' if d['holds'] else 'fails'}"
        doc = (ROOT / "docs" / f"{task}.md").read_text(encoding="utf-8")
        text = markdown(CONTROL_NOTEBOOKS[task])
        for where, body in ((f"docs/{task}.md", doc), (f"notebook {CONTROL_NOTEBOOKS[task]}", text)):
            assert "ACT − fixed" in body and paired_text in body, (where, paired_text)
            assert fixed_text in body and verdict in body, (where, fixed_text, verdict)
        assert "![" in text and f"../figures/control_{task}.png" in text and "Adaptivity or computation?" in text
        assert (ROOT / "figures" / f"control_{task}.png").exists()
        row = [line for line in readme.splitlines() if f"`results/{c.fixed}`" in line]
        assert len(row) == 1 and paired_text in row[0] and fixed_text in row[0], task
        # the docs' table: every seed's pair
        for seed, a, f, diff in zip(d["seeds"], d["act"], d["fixed"], d["differences"]):
            assert f"| {seed} | {a:.3f} | {f:.3f} | {diff:+.3f} |".replace("-", "−") in doc, (task, seed)


def results_key(F):
    from act_experiments.sweeps.reading import fixed_key
    return fixed_key(F)


# ---------------------------------------------------------------------------------------------
# Adaptivity or computation, measured: every number, p-value and verdict the text quotes

def committed_measured():
    from act_experiments.experiments import measured
    return {task: measured.load(task) for task in measured.committed()}


def test_every_committed_measured_control_is_quoted_with_its_tests_and_verdicts():
    from act_experiments.experiments import measured
    found = committed_measured()
    assert "parity" in found                      # the first measured control committed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for task, m in found.items():
        doc = (ROOT / "docs" / f"{task}.md").read_text(encoding="utf-8")
        text = markdown(CONTROL_NOTEBOOKS[task])
        for against in ("random", "ladder"):
            q = measured.quoted(measured.verdict(m, against))
            for where, body in ((f"docs/{task}.md", doc), (f"notebook {CONTROL_NOTEBOOKS[task]}", text)):
                for key in ("difference", "interval", "t_p", "sign", "sign_p", "claim"):
                    assert q[key] in body, (where, against, key, q[key])
            for row in q["rows"]:
                assert row in doc, (task, against, row)
        q = measured.quoted(measured.verdict(m))
        row = [line for line in readme.splitlines() if f"`results/{m['measured'].random}`" in line]
        assert len(row) == 1 and q["difference"] in row[0] and q["claim"].split()[-1] in row[0], task
        assert f"../figures/control_{task}_measured.png" in text and (ROOT / "figures" / f"control_{task}_measured.png").exists()
        for r in m["probe"]:
            assert f"| {r['seed']} | {r['mean_N']:.2f} | {r['error']:.3f} | {r['shuffled']:.3f} | {r['at_mean']:.3f} |" in doc


def test_the_readme_states_the_first_controls_at_the_strength_of_their_tests():
    """Fixed ahead of ACT on parity and sort was not the registered direction: the README quotes its
    two-sided p-values, and the measured parity control's numbers."""
    from scipy import stats as scipy_stats
    from act_experiments.experiments import controls, measured
    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    for task in ("parity", "sort"):
        d = controls.paired(controls.load_pair(task))
        t_p = scipy_stats.ttest_rel(d["act"], d["fixed"]).pvalue
        n, wins = len(d["seeds"]), sum(x > 0 for x in d["differences"])
        assert wins == n and f"p = {t_p:.3f} ({task}, {n} seeds)" in text, task
        assert f"p = {scipy_stats.binomtest(wins, n, 0.5).pvalue:.3f} ({wins} of {n}" in text, task
        # and where the first control is told: its doc and notebook
        for body in ((ROOT / "docs" / f"{task}.md").read_text(encoding="utf-8"), markdown(CONTROL_NOTEBOOKS[task])):
            body = re.sub(r"\s+", " ", body)
            assert f"two-sided paired t-test gives p = {t_p:.3f}" in body, task
            assert f"p = {scipy_stats.binomtest(wins, n, 0.5).pvalue:.3f} ({wins} of {n})" in body, task
    q = measured.quoted(measured.verdict(measured.load("parity")))
    assert f"ACT − random {q['difference']}, one-sided {q['t_p']}" in text
    addition = measured.load("addition")
    q = measured.quoted(measured.verdict(addition))
    assert f"addition {q['difference']})" in text
    ladders = {task: measured.quoted(measured.verdict(measured.load(task), "ladder")) for task in ("parity", "addition")}
    assert f"refuted on parity ({ladders['parity']['difference']};" in text
    assert f"not shown on addition ({ladders['addition']['difference']}: detected, {ladders['addition']['t_p']}," in text


@pytest.mark.parametrize("task, tau, written, gap", [("parity", 1e-3, "1e-3", 0.31), ("addition", 0.1, "0.1", 0.05)])
def test_measured_facts_in_the_docs_and_readme(task, tau, written, gap):
    from act_experiments.experiments import measured
    from act_experiments.sweeps.stats import mean_se
    m = measured.load(task)
    doc = re.sub(r"\s+", " ", (ROOT / "docs" / f"{task}.md").read_text(encoding="utf-8"))
    act = [r for r in m["act"]["runs"] if r["key"] == tau]
    rnd = {r["seed"]: r for r in m["random"]["runs"]}
    N, R = [r["mean_N"] for r in act], [r["mean_R"] for r in act]
    assert f"a mean of {min(N):.2f} to {max(N):.2f} updates" in doc and f"R of {min(R):.2f} to {max(R):.2f}" in doc
    assert max(abs(r["mean_N"] - rnd[r["seed"]]["mean_N"]) for r in act) <= gap and f"within {gap} of ACT's" in doc
    if task == "parity":
        for seed, (lo, hi) in ((2, (2, 10)), (6, (1, 14))):
            assert measured.N_percentiles(m["act"], f"tau0.001-seed{seed}") == (lo, hi)
        assert "percentile of N: 2–10 and 1–14" in doc
    for F, values in measured.fixed_ladder(m["act"]).items():
        assert "F = {} {:.3f} ± {:.3f}".format(F, *mean_se(list(values.values()))) in doc, F
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert "τ = {} {:.3f} ± {:.3f} at a measured mean N of {:.2f}–{:.2f} (R {:.2f}–{:.2f}".format(
        written, *mean_se([r["sequence_error"] for r in act]), min(N), max(N), min(R), max(R)) in readme
    assert "random schedule of the same N: {:.3f} ± {:.3f}".format(
        *mean_se([r["sequence_error"] for r in rnd.values()])) in readme


def test_the_64_bit_pilot_is_quoted_as_measured():
    doc = re.sub(r"\s+", " ", (ROOT / "docs" / "parity.md").read_text(encoding="utf-8"))
    rows = {r["run"]: r for r in runs("parity64_pilot")}
    for run, what in (("tau0.01-seed0", "for τ = 1e-2"), ("tau0.001-seed0", "for τ = 1e-3"),
                      ("fixed2-seed0", "for F = 2"), ("fixed8-seed0", "for F = 8")):
        assert f"{float(rows[run]['train_time_s']):g} s" in doc and what in doc, run
    assert f"mean N {float(rows['tau0.01-seed0']['mean_N']):.2f}" in doc
    assert f"(N {float(rows['tau0.001-seed0']['mean_N']):.2f})" in doc
    rates = {run: 5000 / float(r["train_time_s"]) for run, r in rows.items()}
    assert 800 <= min(rates[r] for r in ("tau0.01-seed0", "tau0.001-seed0", "fixed2-seed0")) and 350 <= rates["fixed8-seed0"] <= 400


def test_the_64_bit_result_is_quoted_as_committed():
    from act_experiments.experiments import measured, parity64
    data = parity64.read()
    assert [s["name"] for s in data["sweeps"]] == list(parity64.SWEEPS)
    doc = (ROOT / "docs" / "parity.md").read_text(encoding="utf-8")
    for row in parity64.table_rows(data):
        assert row in doc, row
    flat = re.sub(r"\s+", " ", doc)
    states = {True: "holds", False: "fails", None: "cannot be decided"}
    for name, c in parity64.claims(data).items():
        assert f"- ({name}) **{states[c['holds']]}**" in flat, name
    q = measured.quoted(parity64.claims(data)["d"])
    assert f"ACT − random is {q['difference']} ({q['interval']}), one-sided paired t-test {q['t_p']}" in flat
    assert f"ACT lower on {q['sign']}" in flat and q["sign_p"] in flat
    walls = {s["name"]: s["meta"]["wall_time_s"] for s in data["sweeps"]}
    assert (f"`parity64_main` in {walls['parity64_main']:.0f} s, `parity64_random` in {walls['parity64_random']:.0f} s "
            f"and `parity64_rest` in {walls['parity64_rest']:.0f} s") in flat
    assert "../figures/parity64_curves.png" in markdown("05_") and (ROOT / "figures" / "parity64_curves.png").exists()
    readme = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
              if line.startswith("| parity, **64 bits, the paper's size**")]
    assert len(readme) == 1
    solved = sum(s["solved"] for s in data["settings"])
    total = sum(len(s["seeds"]) for s in data["settings"])
    assert f"{solved} of {total} networks reached 98%" in readme[0]
    walls = [json.loads((ROOT / "results" / name / "sweep.json").read_text())["wall_time_s"] for name in parity64.SWEEPS]
    for text in (doc, (ROOT / "docs" / "benchmarks_population.md").read_text(encoding="utf-8")):
        assert f"{sum(walls):,.0f} s, {sum(walls) / 60:.0f} minutes" in re.sub(r"\s+", " ", text)


def test_the_skewed_parity_pilot_is_quoted_as_committed():
    """docs/parity.md's pilot of skewed parity, before the claims: every number from the CSVs."""
    import json
    doc = re.sub(r"\s+", " ", (ROOT / "docs" / "parity.md").read_text(encoding="utf-8"))
    rows = {r["run"]: r for r in runs("skewed_parity16_pilot")}
    act = [r for r in rows.values() if r["act"] == "1"]
    errors, N = [float(r["sequence_error"]) for r in act], [float(r["mean_N"]) for r in act]
    assert f"held-out sequence error of {min(errors):.3f} to {max(errors):.3f}" in doc
    assert f"measured mean N of {min(N):.2f} to {max(N):.2f}" in doc
    ladder = {run: float(rows[run]["sequence_error"]) for run in ("noact-seed0", "fixed2-seed0", "fixed3-seed0", "fixed5-seed0")}
    assert ("no ACT {noact-seed0:.3f}, F = 2 {fixed2-seed0:.3f}, F = 3 {fixed3-seed0:.3f}, F = 5 {fixed5-seed0:.3f}"
            .format_map(ladder) in doc)
    wall = json.loads((ROOT / "results" / "skewed_parity16_pilot" / "sweep.json").read_text())["wall_time_s"]
    assert f"{wall:.0f} s on 2 CPU cores" in doc
    easy, hard = [], []
    with open(ROOT / "results" / "skewed_parity16_pilot" / "difficulty.csv", newline="") as f:
        by_difficulty = list(csv.DictReader(f))
    for r in by_difficulty:
        if r["run"] == "tau0.0003-seed0":
            (easy if int(r["difficulty"]) <= 2 else hard).append(float(r["N"]))
    assert f"took {min(easy):.1f} to {max(easy):.1f} updates on the easy inputs and {min(hard):.1f} to {max(hard):.1f}" in doc


# Notebook 15, when does adapting pay: every number its prose quotes of the committed runs

def test_notebook_15_quotes_the_measured_verdicts_and_the_ladder():
    from act_experiments.experiments import measured
    text = re.sub(r"\s+", " ", markdown("15_"))
    for task in ("parity", "addition"):
        m = measured.load(task)
        for against in ("random", "ladder"):
            q = measured.quoted(measured.verdict(m, against))
            assert q["difference"] in text, (task, against, q["difference"])
    assert "the claim against the random schedule holds" in text and "the claim is refuted" in text
    parity = measured.load("parity")
    stuck = [r for r in parity["act"]["runs"] if r["key"] == 1e-3 and r["mean_N"] > 5 and r["sequence_error"] > 0.4]
    three = measured.fixed_ladder(parity["act"])[3]
    assert len(stuck) == 2 and "two of the eight ACT networks take more than five updates" in text
    assert max(three.values()) < 0.05 and "every fixed network of three updates ends below 0.05 error" in text
    logic = measured.load("logic")
    low, high = (measured.verdict(logic, "ladder", tau=tau) for tau in (1e-3, 1e-2))
    assert low["verdict"] == high["verdict"] == "refuted" and "goes against ACT at both τ" in text
    assert f"ACT lower on {low['wins']} of {len(low['seeds'])} seeds against the ladder" in text and high["wins"] == 0
    drawn = measured.verdict(logic, "random", tau=1e-2)
    assert drawn["verdict"] == "refuted" and drawn["wins"] == 0 and "errs less than ACT on every seed" in text


def test_notebook_15_quotes_the_chains_and_extrapolation_as_committed():
    from act_experiments.experiments import pondernet, universal_transformer as ut
    text = re.sub(r"\s+", " ", markdown("15_"))
    chains = ut.summarise(ut.read_experiment("compute")[0])
    act, depth2 = chains["ACT tau=0.01"], chains["fixed D=2"]
    assert act["seeds"] == 3 and act["sequence_error"][2] == 0
    assert (f"makes {act['mean_N'][0]:.2f} layer applications per position on average and gets every held-out row right "
            f"on all three seeds; fixed depth 2, which makes 2, still errs on {depth2['sequence_error'][0]:.1%} of rows") in text
    from act_experiments.experiments import measured
    q = measured.quoted(ut.random_claim(ut.read_experiment("random")[0]))
    assert f"**The claim holds**: ACT − random depths {q['difference']}, ACT lower on {q['sign']}" in text
    runs_ = [r for r in pondernet.read_comparison(ROOT / "results" / "pondernet8_extrapolation")["runs"] if r["model"] == "act"]
    change = np.array([r["steps_out"] - r["steps_in"] for r in runs_])
    out = [r["error_out"] for r in runs_]
    assert f"err {min(out):.2f} to {max(out):.2f} beyond it" in text
    assert (f"in {int((abs(change) <= 1 / 3).sum())} of the 12 networks, lower in {int((change < 0).sum())} and higher "
            f"in {int((change > 0).sum())}") in text
    first = {r["seed"]: r for r in runs_ if r["knob"] == 1e-3}
    assert all(first[s]["steps_out"] < first[s]["steps_in"] for s in (0, 1))
    assert f"err {first[0]['error_out']:.2f} and {first[1]['error_out']:.2f} there" in text
    assert (f"about {min(first[s]['steps_out'] for s in (0, 1)):.1f} to {max(first[s]['steps_out'] for s in (0, 1)):.1f} "
            f"against {first[0]['steps_in']:.1f}") in text


# The pointer chains' random-depth control: the verdict, every seed and the per-depth errors the text quotes

def test_the_random_depth_control_is_quoted_from_its_csv():
    from act_experiments.experiments import measured, universal_transformer as ut_experiment
    rows, meta = ut_experiment.read_experiment("random")
    claim = ut_experiment.random_claim(rows)
    doc = (ROOT / "docs" / "universal_transformer.md").read_text(encoding="utf-8")
    q = measured.quoted(claim)
    assert claim["seeds"] == list(range(8)) and claim["verdict"] == "holds"
    for key in ("difference", "interval", "t_p", "sign", "sign_p", "claim"):
        assert q[key] in doc, (key, q[key])
    for row, deep_a, deep_r, N_a, N_r in zip(q["rows"], claim["deep"]["ACT tau=0.01"], claim["deep"]["random depths"],
                                             claim["N"]["ACT tau=0.01"], claim["N"]["random depths"]):
        assert f"{row} {deep_a:.3f} | {deep_r:.3f} | {N_a:.2f} | {N_r:.2f} |" in doc, row
    assert f"{meta['wall_time_s']:,.0f} s on one core" in doc
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert (f"ACT − random depths {q['difference']}, one-sided {q['t_p']}, {q['sign'].replace(' seeds', '')} seeds: "
            f"the claim {claim['verdict']}") in readme
    assert max(abs(a - r) for a, r in zip(claim["N"]["ACT tau=0.01"], claim["N"]["random depths"])) < 0.03
    lo, hi, worst = min(claim["other"]), max(claim["other"]), max(claim["act"])
    assert f"erred on {lo:.0%} to {hi:.0%} of the held-out rows, ACT on at most {worst:.1%}" in doc
    s = ut_experiment.summarise(rows)
    random_by_depth = [s["random depths"][f"error_d{k}"][0] for k in ut_experiment.DEPTHS]
    assert max(random_by_depth[:2]) < 0.001 and "fewer than 0.001 of the positions of depth 0 and 1" in doc
    assert (f"on {random_by_depth[2]:.3f} and {random_by_depth[3]:.3f} of those of\ndepth 2 and 3, and on "
            f"{random_by_depth[4]:.3f} and {random_by_depth[5]:.3f} of those of depth 4 and 5; ACT on at most "
            f"{max(s['ACT tau=0.01'][f'error_d{k}'][0] for k in ut_experiment.DEPTHS):.3f} at any depth") in doc.replace("\n  ", "\n")
    # the claim does not rest on seed 1, whose ACT network alone erred
    others = [i for i, seed in enumerate(claim["seeds"]) if seed != 1]
    alone = measured.paired_test([claim["act"][i] for i in others], [claim["other"][i] for i in others],
                                 threshold=ut_experiment.RANDOM_THRESHOLD)
    assert alone["verdict"] == "holds" and "seven other seeds alone give the same verdict" in doc.replace("\n  ", " ")


# Skewed parity, when adapting should pay: every table and number docs/parity.md quotes of the two sweeps

def test_skewed_parity_is_quoted_from_its_sweeps():
    from act_experiments.experiments import skewed
    data = skewed.load()
    doc = (ROOT / "docs" / "parity.md").read_text(encoding="utf-8")
    flat = " ".join(doc.split())
    for line in skewed.markdown_tables(data):
        assert line in doc, line
    for name in ("act", "random"):
        assert f"{data[name]['meta']['wall_time_s']:,.0f} s" in doc
    ladder, random, rank = skewed.claim(data, "ladder"), skewed.claim(data, "random"), skewed.spearman(data)
    assert {v["verdict"] for v in ladder.values()} == {"not shown"} and "ladder read at ACT's measured mean N: not shown at any τ" in flat
    assert {v["verdict"] for v in random.values()} == {"not shown"} and "random schedule of ACT's own N: not shown at any τ" in flat
    assert [tau for tau, r in rank.items() if r["verdict"] == "holds"] == [1e-3] and "holds at τ = 1e-3 only" in flat
    means = sorted(round(v["mean"], 3) for v in ladder.values())
    assert f"lies between {means[-1]:.3f} and {means[0]:.3f}".replace("-", "−") in flat
    means = sorted(round(v["mean"], 3) for v in random.values())
    assert f"The differences, {means[-1]:.3f} to {means[0]:.3f}".replace("-", "−") in flat
    assert f"here by {-means[-1] * 100:.1f} to {-means[0] * 100:.1f} points at every τ" in flat
    assert [tau for tau, v in random.items() if v["t_holm"] < 0.05] == [0.01] and max(v["sign_holm"] for v in random.values()) > 0.05
    # the description: easy inputs all right, the hard tenth's errors and N, pooled over the seeds
    groups = skewed.easy_and_hard(data["act"])
    assert all(g["easy"][0] == 0 for g in groups.values())
    hard = {key: g["hard"] for key, g in groups.items()}
    act_hard = sorted(hard[tau][0] for tau in skewed.TAUS)
    assert (f"ACT errs on {act_hard[0]:.3f} to {act_hard[-1]:.3f} of the hard inputs and F = 2 on {hard['fixed 2'][0]:.3f}, "
            f"against {hard['fixed 3'][0]:.3f} for F = 3, {hard['fixed 5'][0]:.3f} for F = 5 and {hard['no ACT'][0]:.3f} "
            f"for no ACT") in flat
    assert (f"τ = 3e-4 takes {groups[3e-4]['easy'][1]:.2f} updates on the easy inputs and {groups[3e-4]['hard'][1]:.2f} on "
            f"the hard ones (pooled), τ = 1e-2 {groups[1e-2]['easy'][1]:.2f} and {groups[1e-2]['hard'][1]:.2f}") in flat
    assert abs(hard[3e-4][0] - hard["fixed 2"][0]) < 0.03          # "as often as F = 2"
    from act_experiments.experiments import measured
    from act_experiments.sweeps.reading import by_seed
    act_means = sorted(float(np.mean(list(by_seed(data["act"], tau).values()))) for tau in skewed.TAUS)
    F2 = float(np.mean(list(measured.fixed_ladder(data["act"])[2].values())))
    assert f"ACT's mean errors ({act_means[0]:.3f} to {act_means[-1]:.3f} over the four τ, against {F2:.3f})" in flat
    rungs = {F: np.mean(list(e.values())) for F, e in measured.fixed_ladder(data["act"]).items()}
    assert min(rungs, key=rungs.get) == 2 and rungs[3] > rungs[2] and rungs[5] > rungs[2]


def test_the_readme_row_of_skewed_parity_says_what_the_docs_say():
    from act_experiments.experiments import measured, skewed
    data = skewed.load()
    row = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "`results/skewed_parity16`" in line]
    assert len(row) == 1
    hard = {key: g["hard"] for key, g in skewed.easy_and_hard(data["act"]).items()}
    act_hard = sorted(hard[tau][0] for tau in skewed.TAUS)
    for part in (f"ACT errs on {act_hard[0]:.3f}–{act_hard[-1]:.3f} of the hard tenth, F = 2 on {hard['fixed 2'][0]:.3f}",
                 "not shown at any τ", "N rises with the bits at τ = 1e-3 only",
                 "τ = 3e-4 takes {:.2f} updates on easy inputs and {:.2f} on hard ones".format(
                     *(skewed.easy_and_hard(data["act"])[3e-4][g][1] for g in ("easy", "hard"))),
                 "F = 2 {:.3f} ± {:.3f}, the best fixed network".format(
                     *measured.mean_se(list(measured.fixed_ladder(data["act"])[2].values())))):
        assert part in row[0], part
    for against, words in (("ladder", "read at ACT's N"), ("random", "against the random schedule")):
        means = sorted(round(v["mean"], 3) for v in skewed.claim(data, against).values())
        span = f"{means[-1]:.3f} to {means[0]:.3f}".replace("-", "−")
        assert f"{words} {span}" in row[0]


def test_logic_measured_at_both_tau_is_quoted_as_committed():
    """docs/logic.md, notebook 06 and the README on logic's measured control: both τ, both comparisons."""
    from act_experiments.experiments import measured
    from act_experiments.sweeps.reading import by_seed, random_key
    m = measured.load("logic")
    doc = " ".join((ROOT / "docs" / "logic.md").read_text(encoding="utf-8").split())
    notebook = " ".join(markdown("06_").split())
    row = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
           if "`results/logic_gates10_measured_random`" in line]
    assert len(row) == 1
    for tau in (1e-3, 1e-2):
        for against in ("random", "ladder"):
            v = measured.verdict(m, against, tau=tau)
            q = measured.quoted(v)
            assert v["verdict"] == "refuted"
            for key in ("difference", "interval", "t_p", "sign", "sign_p"):
                assert q[key] in doc and q[key] in notebook, (tau, against, key)
            for line in q["rows"]:
                assert line in doc, (tau, against, line)
            assert q["difference"] in row[0]
        N = by_seed(m["act"], tau, "mean_N")
        assert f"{min(N.values()):.1f}–{max(N.values()):.1f}" in row[0]
    # "the random schedule better on every seed" at τ = 1e-2, and the ladder's best rung
    act, drawn = by_seed(m["act"], 1e-2), by_seed(m["random"], random_key(1e-2))
    assert all(drawn[s] < act[s] for s in act) and "the random schedule better on every seed" in row[0]
    from scipy import stats
    v = measured.verdict(m, "random", tau=1e-2)
    two_sided = (f"two-sided, the sign test gives p = {stats.binomtest(len(v['seeds']) - v['wins'], len(v['seeds'])).pvalue:.2g} "
                 f"and the paired t-test p = {stats.ttest_rel(v['act'], v['other']).pvalue:.2g}")
    assert two_sided in doc and two_sided in notebook
    ladder = {F: np.mean(list(e.values())) for F, e in measured.fixed_ladder(m["act"]).items()}
    best = min(ladder, key=ladder.get)
    assert best == 10 and "the ladder's best rung, F = 10, is ahead of all of them" in doc
    assert "17.5 to 19.6 updates" in doc and all(17.5 <= round(n, 1) <= 19.6 for n in by_seed(m["act"], 1e-3, "mean_N").values())


def test_sort_measured_is_quoted_as_committed():
    """docs/sort.md, notebooks 08 and 15 and the README on sort's measured control, beyond the
    registered tests that test_every_committed_measured_control... holds."""
    from act_experiments.experiments import measured
    from act_experiments.sweeps.reading import by_seed, random_key
    from act_experiments.sweeps.stats import mean_se
    m = measured.load("sort")
    doc = " ".join((ROOT / "docs" / "sort.md").read_text(encoding="utf-8").split())
    notebook = " ".join(markdown("08_").split())
    last = " ".join(markdown("15_").split())
    readme = [" ".join(line.split()) for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
              if "`results/sort_len8_measured_random`" in line]
    assert len(readme) == 1
    act, N, R = (by_seed(m["act"], 1e-4, column) for column in ("sequence_error", "mean_N", "mean_R"))
    drawn = by_seed(m["random"], random_key(1e-4), "mean_N")
    assert f"a mean of {min(N.values()):.2f} to {max(N.values()):.2f} updates" in doc
    assert f"R of {min(R.values()):.2f} to {max(R.values()):.2f}" in doc
    assert max(abs(N[s] - drawn[s]) for s in N) <= 0.02 and "within 0.02 of ACT's" in doc
    ladder = measured.fixed_ladder(m["act"])
    means = {F: mean_se(list(e.values())) for F, e in ladder.items()}
    for F, (mean, se) in means.items():
        assert f"F = {F} {mean:.3f} ± {se:.3f}" in doc and f"F = {F} {mean:.3f}" in readme[0], F
    assert max(v[0] for v in means.values()) - min(v[0] for v in means.values()) < 0.005
    assert all("within half a point" in body for body in (doc, notebook, last))
    assert "τ = 1e-4 {:.3f} ± {:.3f} at a measured mean N of {:.2f}–{:.2f} (R {:.2f}–{:.2f})".format(
        *mean_se(list(act.values())), min(N.values()), max(N.values()), min(R.values()), max(R.values())) in readme[0]
    assert "random schedule of the same N: {:.3f} ± {:.3f}".format(
        *mean_se(list(by_seed(m["random"], random_key(1e-4)).values()))) in readme[0]
    # the probe: shuffled more than doubles every error; the rounded mean raises every one
    probe = m["probe"]
    assert all(r["shuffled"] > 2 * r["error"] for r in probe)
    assert all("more than doubles their error on every seed" in body for body in (doc, notebook))
    assert all(r["at_mean"] > r["error"] for r in probe)
    assert "(to {:.2f}–{:.2f})".format(min(r["at_mean"] for r in probe), max(r["at_mean"] for r in probe)) in doc
    # against the random schedule by about three points; the ladder at least as good on six seeds
    v = measured.verdict(m)
    assert f"by {-100 * v['mean']:.1f} points on average" in doc and round(-100 * v["mean"]) == 3
    assert "about three points of sequence error" in notebook
    above = sum(d > 0 for d in measured.verdict(m, "ladder")["differences"])
    assert above == 6 and "on six of the eight seeds" in doc and "above it on six seeds of eight" in last
    for against in ("random", "ladder"):
        assert measured.quoted(measured.verdict(m, against))["difference"] in last


def test_the_16_bit_extrapolation_run_is_quoted_as_committed():
    """docs/pondernet.md on results/pondernet16_extrapolation: the errors, ACT's N beyond the range,
    and what the limits (epsilon, a raised cap) change."""
    from act_experiments.experiments import pondernet
    t = pondernet.read_comparison(ROOT / "results" / "pondernet16_extrapolation")
    doc = " ".join((ROOT / "docs" / "pondernet.md").read_text(encoding="utf-8").split())
    act = [r for r in t["runs"] if r["model"] == "act"]
    ponder = [r for r in t["runs"] if r["model"] == "pondernet"]
    span = lambda rows, col: f"{min(r[col] for r in rows):.3f} to {max(r[col] for r in rows):.3f}"
    assert f"ACT errs {span(act, 'error_in')}" in doc and f"PonderNet {span(ponder, 'error_in')}" in doc
    assert f"both are at chance, {span(act + ponder, 'error_out')}" in doc
    assert f"{sum(t['meta']['train_wall_s'].values()):.0f} s of training" in doc
    fell = sum(r["steps_out"] < r["steps_in"] for r in act)
    assert f"fell for {['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight'][fell]} of its twelve" in doc
    seed3 = next(r for r in act if (r["knob"], r["seed"]) == (1e-3, 3))
    assert f"{seed3['steps_out']:.2f} updates there against {seed3['steps_in']:.2f}" in doc
    limits = t["limits"]
    for where in ("in", "out"):
        means = [np.mean([r["error"] for r in limits if r["model"] == "act" and r["cap"] == 20
                          and r["epsilon"] == e and r["set"] == where]) for e in (0.1, 0.01, 0.001)]
        assert max(means) - min(means) <= 0.001
    assert "by at most 0.001 on either set" in doc
    top = lambda model, cap, eps: max(r["steps"] for r in limits if r["model"] == model and r["cap"] == cap
                                      and r["epsilon"] == eps and r["set"] == "out")
    assert f"from {top('act', 20, 0.001):.2f} to {top('act', 100, 0.001):.2f} at ε = 0.001" in doc
    assert f"PonderNet's from {top('pondernet', 20, None):.2f} to {top('pondernet', 100, None):.2f}" in doc
    assert max(r["error"] for r in limits if r["set"] == "out") < 0.55


def test_the_8_bit_limits_are_quoted_as_committed():
    """docs/pondernet.md on results/pondernet8_extrapolation_limits: epsilon and a raised cap at
    evaluation, on networks trained on 1..4 of 8 non-zero bits."""
    from act_experiments.experiments import pondernet
    t = pondernet.read_comparison(ROOT / "results" / "pondernet8_extrapolation_limits")
    doc = " ".join((ROOT / "docs" / "pondernet.md").read_text(encoding="utf-8").split())
    assert f"{sum(t['meta']['train_wall_s'].values()):.0f} s of training" in doc
    assert f"(error at most {max(r['error_in'] for r in t['runs']):.3f})" in doc
    out = [r["error_out"] for r in t["runs"]]
    assert f"errs {min(out):.3f} to {max(out):.3f} beyond" in doc
    rows = lambda model, eps, cap, where: [r for r in t["limits"]
                                         if (r["model"], r["epsilon"], r["cap"], r["set"]) == (model, eps, cap, where)]
    steps = {e: rows("act", e, 20, "out") for e in (0.1, 0.001)}
    span = lambda rs: f"{min(r['steps'] for r in rs):.2f}–{max(r['steps'] for r in rs):.2f}"
    assert f"(mean N from {span(steps[0.1])} to {span(steps[0.001])})" in doc
    means = [np.mean([r["error"] for r in steps[e]]) for e in (0.1, 0.001)]
    assert f"({means[0]:.3f} and {means[1]:.3f})" in doc and abs(means[0] - means[1]) < 0.005
    for eps in (0.1, 0.01, 0.001):        # the raised cap changes nothing for ACT
        for where in ("in", "out"):
            assert [r["error"] for r in rows("act", eps, 20, where)] == [r["error"] for r in rows("act", eps, 100, where)]
    top = {cap: max(r["steps"] for r in rows("pondernet", None, cap, "out")) for cap in (20, 100)}
    assert f"from {top[20]:.2f} to {top[100]:.2f}" in doc
    same = {cap: np.mean([r["error"] for r in rows("pondernet", None, cap, "out")]) for cap in (20, 100)}
    assert f"same mean error ({same[20]:.3f})" in doc and f"{same[20]:.3f}" == f"{same[100]:.3f}"


def test_the_longer_16_bit_run_is_quoted_as_committed():
    """docs/pondernet.md on results/pondernet16_extrapolation_long: every network's error beyond
    the range and its steps, the counts the text gives, and what the limits change."""
    from act_experiments.experiments import pondernet
    t = pondernet.read_comparison(ROOT / "results" / "pondernet16_extrapolation_long")
    doc = " ".join((ROOT / "docs" / "pondernet.md").read_text(encoding="utf-8").split())
    assert f"{sum(t['meta']['train_wall_s'].values()):.0f} s of training" in doc
    runs = {(r["model"], r["knob"], r["seed"]): r for r in t["runs"]}
    names = {0.001: "10⁻³", 0.01: "10⁻²", 0.1: "10⁻¹"}
    for model, label, sym in (("act", "ACT", "τ"), ("pondernet", "PonderNet", "β")):
        for knob, name in names.items():
            rs = [runs[model, knob, seed] for seed in range(4)]
            row = (f"| {label} | {sym} = {name} | " + ", ".join(f"{r['error_out']:.3f}" for r in rs) + " | "
                   + ", ".join(f"{r['steps_in']:.2f} → {r['steps_out']:.2f}" for r in rs) + " |")
            assert row in doc, row
    learned = [r for (m, k, s), r in runs.items() if m == "act" and k <= 0.01]
    span = lambda rows, col: f"{min(r[col] for r in rows):.3f} to {max(r[col] for r in rows):.3f}"
    assert f"err {span(learned, 'error_in')} on 1..8" in doc and f"all eight err {span(learned, 'error_out')}" in doc
    assert f"does not learn it: {span([r for (m, k, s), r in runs.items() if (m, k) == ('act', 0.1)], 'error_in')}" in doc
    assert sum(r["steps_out"] < r["steps_in"] for r in learned) == 7 and "seven of its eight" in doc
    ponder = [r for (m, _, _), r in runs.items() if m == "pondernet"]
    assert sum(r["error_in"] <= 0.085 for r in ponder) == 9 and "9 of the 12 PonderNets err 0.085 or less" in doc
    assert sum(r["error_out"] < 0.5 for r in ponder) == 9 and sum(r["steps_out"] > r["steps_in"] for r in ponder) == 3
    assert "below 0.5 on 9 of 12 networks, but its steps rise on 3" in doc
    best = sorted(ponder, key=lambda r: r["error_out"])[:3]
    assert [(r["knob"], r["seed"]) for r in best] == [(0.1, 1), (0.01, 1), (0.1, 2)]
    assert all(f"{r['steps_in']:.2f}" == f"{r['steps_out']:.2f}" == "2.00" for r in (best[0], best[2]))
    limits = t["limits"]
    rows = lambda eps, cap: [r for r in limits if (r["model"], r["epsilon"], r["cap"], r["set"]) == ("act", eps, cap, "out")]
    assert len({f"{np.mean([r['error'] for r in rows(e, 20)]):.3f}" for e in (0.1, 0.01, 0.001)}) == 1
    longest = max(rows(0.001, 20), key=lambda r: r["steps"])
    raised = next(r for r in rows(0.001, 100) if (r["knob"], r["seed"]) == (longest["knob"], longest["seed"]))
    assert raised["steps"] == max(r["steps"] for r in rows(0.001, 100)) and abs(raised["error"] - longest["error"]) < 0.01
    assert f"from {longest['steps']:.2f} to {raised['steps']:.2f} mean updates" in doc
    assert f"moving from {longest['error']:.3f} to {raised['error']:.3f}" in doc
