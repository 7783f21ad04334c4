"""The paired comparison of two runs' direction profiles (``compare.json`` ``direction``):
hand-computed Δ net_pp, the interval's level under the null, a planted shift, and the
interpretability rules (too few questions; persona rows of a run whose instrument is not valid)."""

import numpy as np
import pandas as pd
import pytest

from memlens.audit.compare import compare_frames
from memlens.report.compare import direction_html, direction_lines
from memlens.rowkeys import join_key
from memlens.stats.direction import direction_profile, paired_direction

ROOT = {"a": "A", "b": "B", "c": "B"}
SYMBOLS = ["a", "b", "c"]


def pair_rows(rows):
    """(response, question, category, class, baseline, compared) -> a direction input frame."""
    return pd.DataFrame([{"response_id": r, "question_id": q, "category": c,
                          "condition_class": k, "baseline_symbols": list(b),
                          "compared_symbols": list(x)} for r, q, c, k, b, x in rows])


def hand_runs():
    # every baseline is "abcc" (a 25 %, b 25 %, c 50 %) and every floor sample repeats it
    floor = [(f"f{i}", f"q{i}", "no_perturbation", "control", "abcc", "abcc") for i in (1, 2, 3)]
    age_a = {"q1": "abcc", "q2": "bbcc", "q3": "cccc"}
    age_b = {"q1": "aacc", "q2": "abcc", "q3": "accc"}  # one more "a" step on every question
    runs = []
    for compared in (age_a, age_b):
        runs.append(pair_rows(floor + [(f"r{q}", q, "age", "persona", "abcc", seq)
                                       for q, seq in compared.items()]))
    return runs


def test_delta_hand_computed_when_b_adds_one_symbol_step_on_every_question():
    run_a, run_b = hand_runs()
    table = paired_direction(run_a, run_b, SYMBOLS, ROOT, n_bootstrap=300, seed=3)
    sym = table[table["level"] == "symbol"].set_index("symbol")
    # A: Δa per question (0, -.25, -.25), B: (+.25, 0, 0); the floor moves nothing
    assert sym.loc["a", "a"] == pytest.approx(-50 / 3)
    assert sym.loc["a", "b"] == pytest.approx(25 / 3)
    assert sym.loc["a", "delta"] == pytest.approx(25.0)
    # b: B − A per question (-25, -25, 0); c: (0, 0, -25)
    assert sym.loc["b", "delta"] == pytest.approx(-50 / 3)
    assert sym.loc["c", "delta"] == pytest.approx(-25 / 3)
    # +25 on every question: every replicate is +25, the interval is [25, 25]
    assert sym.loc["a", "delta_ci"] == pytest.approx([25.0, 25.0])
    assert sym.loc["a", "delta_p"] == pytest.approx(2 / 301)
    root = table[table["level"] == "root"].set_index("symbol")
    assert root["delta"].to_dict() == pytest.approx({"A": 25.0, "B": -25.0})
    assert root.loc["B", "delta_ci"] == pytest.approx([-25.0, -25.0])
    # 3 questions < MIN_QUESTIONS: nothing here is interpretable
    assert (table["n_questions"] == 3).all() and not table["interpretable"].any()
    # each run's side is that run's own direction profile
    for run, column in ((run_a, "a"), (run_b, "b")):
        profile = direction_profile(run, SYMBOLS, ROOT, n_bootstrap=100)
        merged = table.merge(profile, on=["category", "level", "symbol"])
        assert merged[column].tolist() == pytest.approx(merged["net_pp"].tolist())


def test_only_shared_questions_and_categories_are_compared():
    run_a, run_b = hand_runs()
    extra = pair_rows([("f9", "q9", "no_perturbation", "control", "ab", "ab"),
                       ("r9", "q9", "age", "persona", "ab", "aa"),
                       ("g1", "q1", "gender", "persona", "ab", "bb")])
    table = paired_direction(pd.concat([run_a, extra]), run_b, SYMBOLS, ROOT, n_bootstrap=200)
    assert set(table["category"]) == {"age"}  # gender is in A only
    assert table.set_index(["level", "symbol"]).loc[("symbol", "a"), "delta"] == pytest.approx(25)
    no_floor = run_b[run_b["category"] != "no_perturbation"]
    assert paired_direction(run_a, no_floor, SYMBOLS, ROOT, n_bootstrap=200).empty


def simulated_run(seed, n_questions=30, shift=0.0, length=8):
    """Question q's symbols are drawn from its own distribution (the same in every run: the
    question effect); ``age`` responses lean to "b" in every run and, by ``shift``, to "a"."""
    question_rng = np.random.default_rng(12345)
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(n_questions):
        p = question_rng.dirichlet([2.0, 2.0, 2.0])
        lean = {"no_perturbation": p, "filler": p,
                "age": 0.8 * p + 0.2 * np.array([0.0, 1.0, 0.0])}
        lean["age"] = (1 - shift) * lean["age"] + shift * np.array([1.0, 0.0, 0.0])
        for category, klass in (("no_perturbation", "control"), ("filler", "noise"),
                                ("age", "persona")):
            baseline = rng.choice(SYMBOLS, size=length, p=p)
            compared = rng.choice(SYMBOLS, size=length, p=lean[category])
            rows.append((f"{category}{q}", f"q{q}", category, klass, baseline, compared))
    return pair_rows(rows)


def test_null_intervals_exclude_zero_about_five_percent_of_the_time():
    excluded = tested = 0
    for rep in range(100):
        table = paired_direction(simulated_run(2 * rep), simulated_run(2 * rep + 1), SYMBOLS,
                                 ROOT, n_bootstrap=400, seed=rep)
        sym = table[(table["level"] == "symbol") & (table["category"] == "age")]
        low, high = np.array(sym["delta_ci"].tolist()).T
        excluded += int(((low > 0) | (high < 0)).sum())
        tested += len(sym)
        assert sym["interpretable"].all()
    rate = excluded / tested
    assert tested == 300
    assert rate <= 0.10, rate


def test_planted_shift_is_detected():
    table = paired_direction(simulated_run(1), simulated_run(2, shift=0.5), SYMBOLS, ROOT,
                             n_bootstrap=1000, seed=0)
    row = table.set_index(["category", "level", "symbol"]).loc[("age", "symbol", "a")]
    assert row["delta"] > 20  # about 0.5 × (1 − share of a) ≈ 33 pp planted
    assert row["delta_ci"][0] > 0 and row["delta_q"] <= 0.05 and row["interpretable"]
    root = table.set_index(["category", "level", "symbol"]).loc[("age", "root", "A")]
    assert root["delta_ci"][0] > 0 and root["delta_q"] <= 0.05


# --- through compare_frames: the design restriction and the validity rule -----------------------

STIMULI = [("control", "no_perturbation", "control/no_perturbation", 1),
           ("noise", "filler", "noise/filler/1", 0), ("persona", "age", "persona/age/1", 0),
           ("life_event", "bereavement", "life_event/bereavement/1", 0)]
SOCIAL, PRACTICAL = "social.relationships_care", "practical.resources_cost"
VALID = {"verdict": "pass", "persona_interpretable": True, "explanation": "ok"}
INVALID = {"verdict": "fail", "persona_interpretable": False, "explanation": "sensitivity failed"}


def audit_like(questions, seed, extra_practical=0):
    """A drift frame and its pair rows (real ontology symbols); ``age`` gets
    ``extra_practical`` more practical steps of 4."""
    rng = np.random.default_rng(seed)
    rows, pairs = [], []
    for q in questions:
        for klass, category, stimulus, sample in STIMULI:
            rows.append({"question_id": q, "condition_class": klass, "category": category,
                         "stimulus_id": stimulus, "sample": sample,
                         "dtw": 0.3 + rng.normal(0, 0.05), "n_baselines": 1})
            n_practical = int(rng.integers(0, 3)) + (extra_practical if category == "age" else 0)
            pairs.append({"response_id": join_key(q, stimulus, sample), "baseline_id": f"{q}|b",
                          "question_id": q, "category": category, "condition_class": klass,
                          "stimulus_id": stimulus, "sample": sample,
                          "baseline_symbols": [SOCIAL, SOCIAL, PRACTICAL, PRACTICAL],
                          "compared_symbols": [PRACTICAL] * n_practical
                          + [SOCIAL] * (4 - n_practical)})
    return pd.DataFrame(rows), pairs


QS = [f"q{i}" for i in range(12)]


def compare(a, b, validity=(VALID, VALID)):
    (frame_a, pairs_a), (frame_b, pairs_b) = a, b
    return compare_frames(frame_a, frame_b, baselines=(1, 1), validity=validity,
                          n_bootstrap=300, pairs=(pairs_a, pairs_b))


def test_persona_rows_are_not_interpretable_when_a_run_is_not_valid():
    a, b = audit_like(QS, 0), audit_like(QS, 1, extra_practical=1)
    valid = compare(a, b)["direction"]["rows"]
    assert all(r["interpretable"] for r in valid)  # 12 shared questions, both instruments pass
    invalid = compare(a, b, validity=(VALID, INVALID))["direction"]["rows"]
    persona = [r for r in invalid if r["condition_class"] == "persona"]
    assert persona and not any(r["interpretable"] for r in persona)
    assert all(r["interpretable"] for r in invalid if r["condition_class"] != "persona")
    # same numbers either way: the rule only marks rows
    assert [r["delta"] for r in invalid] == [r["delta"] for r in valid]
    lines = "\n".join(direction_lines(compare(a, b, validity=(VALID, INVALID))["direction"]))
    assert "not interpretable (instrument not valid)" in lines


def test_direction_uses_the_shared_design_only_and_renders_escaped():
    a = audit_like(QS, 0)
    b = audit_like(QS[4:] + ["q90"], 1, extra_practical=2)
    result = compare(a, b)
    assert result["format_version"] == 2 and result["design"]["status"] == "restricted"
    rows = {(r["category"], r["level"], r["symbol"]): r for r in result["direction"]["rows"]}
    assert {c for c, _, _ in rows} == {"filler", "age", "bereavement"}
    assert all(r["n_questions"] == 8 for r in rows.values())
    assert result["direction"]["n_bootstrap"] == 300
    practical = rows["age", "root", "Practical"]
    # B's age responses carry two more practical steps of four on every question: +50 pp
    # beyond what the runs' own noise gives; significant rows come first in the table
    assert practical["delta"] > 30 and practical["delta_q"] <= 0.05
    lines = direction_lines(result["direction"])
    assert lines[3].split()[:3] == ["age", "persona", "root"] and lines[3].endswith("*")
    evil = {**result["direction"], "rows": [{**practical, "category": "<script>x</script>"}]}
    html = direction_html(evil)
    assert "<script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    # without pair rows in a run there is no direction entry
    assert "direction" not in compare_frames(a[0], b[0], baselines=(1, 1),
                                             validity=(VALID, VALID), n_bootstrap=300,
                                             pairs=(a[1], None))
