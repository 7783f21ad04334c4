"""Δ interpretability (the documented rule), retrieval rates, no-call rates and the
retrieval-vs-model attribution, on hand-computed cases and through the runner."""

import importlib.util
import json
import math

import numpy as np
import pytest
from test_frameworks import StubClient
from tooldrift_fakes import DATA, drifting_agent

from memlens.models import FakeModel
from memlens.report.tooldrift import format_table, render_html
from memlens.tooldrift.frameworks import FrameworkMemory, open_memory
from memlens.tooldrift.interpret import InterpretRule, verdict
from memlens.tooldrift.rubric_metric import ScenarioScore
from memlens.tooldrift.runner import MEMORY_TABLE, RunConfig, run_tooldrift
from memlens.tooldrift.stats import attribution, proportion


def query(condition, retrieved_biased, same=False, entry="e"):
    return {"entry_id": entry, "condition": condition, "same_as_base": same,
            "retrieved_any": retrieved_biased, "retrieved_biased": retrieved_biased}


@pytest.mark.parametrize(("hits", "n", "interpretable"), [
    (2, 4, True),    # needed max(2, ceil(1.0)) = 2
    (1, 4, False),
    (2, 10, False),  # needed max(2, ceil(2.5)) = 3
    (3, 10, True),
    (8, 35, False),  # needed ceil(8.75) = 9
    (9, 35, True),
])
def test_biased_retrieval_rule_thresholds(hits, n, interpretable):
    queries = [query("biased", i < hits) for i in range(n)] + [query("neutral", False)]
    result = verdict(n, queries, InterpretRule())
    assert result.interpretable is interpretable
    if not interpretable:
        assert result.reasons[0].code == "biased_rarely_retrieved"
        assert f"{hits} of {n}" in result.reasons[0].text


def test_verbatim_memory_and_missing_pairs():
    verbatim = [{"entry_id": "e", "condition": c, "same_as_base": c == "base",
                 "retrieved_any": None, "retrieved_biased": None} for c in ("base", "biased")]
    assert verdict(3, verbatim, InterpretRule()).interpretable is True
    empty = verdict(0, None, InterpretRule())
    assert [r.code for r in empty.reasons] == ["no_pairs"]
    same = [query("neutral", False, same=True), query("biased", False, same=True)]
    assert [r.code for r in verdict(1, same, InterpretRule()).reasons] == [
        "prompts_equal_base", "biased_rarely_retrieved"]


def test_wilson_matches_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for k, n in ((0, 7), (3, 10), (35, 35), (1, 2)):
        low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
        assert proportion(k, n).ci95 == pytest.approx((low, high), abs=1e-9)
    assert proportion(0, 0).to_dict() == {"k": 0, "n": 0, "rate": None, "ci95": None}


def scores_and_queries(rates, retrieved):
    scores = [ScenarioScore(f"s{i}", {"neutral": n, "biased": b}, {}, None)
              for i, (n, b) in enumerate(rates)]
    queries = {f"s{i}": [query("biased", flag, entry=f"s{i}")] for i, flag in enumerate(retrieved)}
    return scores, queries


def test_attribution_hand_computed_and_decomposition():
    rates = [(0.0, 1.0), (0.0, 0.5), (0.5, 0.5), (0.0, 0.0), (0.25, 0.0), (0.0, None)]
    retrieved = [True, True, False, False, False, True]
    scores, queries = scores_and_queries(rates, retrieved)
    result = attribution(scores, queries, seed=3, n_bootstrap=2000)
    assert result.p_biased_retrieved.k == 3 and result.p_biased_retrieved.n == 6
    given = result.delta_given_retrieved
    assert given.n == 2 and given.estimate == pytest.approx(0.75)  # (1 + 0.5) / 2
    assert given.ci95[0] >= 0.5 - 1e-12 and given.ci95[1] <= 1.0 + 1e-12
    other = result.delta_given_not_retrieved
    assert other.n == 3 and other.estimate == pytest.approx(-0.25 / 3)
    assert result.difference.estimate == pytest.approx(0.75 + 0.25 / 3)
    parts = result.decomposition
    w = parts.weight_retrieved
    assert w == pytest.approx(2 / 5)
    assert parts.delta_paired == pytest.approx(w * 0.75 + (1 - w) * (-0.25 / 3))
    again = attribution(scores, queries, seed=3, n_bootstrap=2000)
    assert again == result  # seeded


def test_attribution_ci_matches_a_per_replicate_loop():
    rng = np.random.default_rng(0)
    rates = [(float(a), float(b)) for a, b in rng.uniform(0, 1, (12, 2))]
    retrieved = [bool(x) for x in rng.integers(0, 2, 12)]
    scores, queries = scores_and_queries(rates, retrieved)
    result = attribution(scores, queries, seed=0, n_bootstrap=4000)
    d = np.array([b - n for n, b in rates])
    flags = np.array(retrieved)
    loop = []
    draw = np.random.default_rng(11)
    for _ in range(4000):  # an independent naive bootstrap: same estimand, other draws
        idx = draw.integers(0, 12, 12)
        chosen = d[idx][flags[idx]]
        if chosen.size:
            loop.append(chosen.mean())
    low, high = np.quantile(loop, [0.025, 0.975])
    ci = result.delta_given_retrieved.ci95
    assert ci[0] == pytest.approx(low, abs=0.04) and ci[1] == pytest.approx(high, abs=0.04)


def test_setting_1_has_no_attribution():
    scores, _ = scores_and_queries([(0.0, 1.0)], [True])
    assert attribution(scores, None).applicable is False


def test_cut_off_above_every_similarity_is_not_interpretable(tmp_path):
    # every stub score is <= 1, so a 1.5 cut-off retrieves nothing: the neutral and biased
    # prompts equal the base prompt and Δ is 0 by construction
    memory = FrameworkMemory("stub", StubClient(), threshold=1.5)
    summary = run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                            RunConfig(k=1, limit=4, setting=2, framework="stub", n_bootstrap=50),
                            memory, progress=False)
    assert summary.overall.delta == 0.0
    verdict_ = summary.overall.interpretation
    assert verdict_.interpretable is False
    assert [r.code for r in verdict_.reasons] == ["prompts_equal_base", "biased_rarely_retrieved"]
    assert summary.overall.retrieval.biased.biased.k == 0
    assert summary.overall.retrieval.biased.any.n == 4
    assert all(not g.interpretation.interpretable for g in summary.by_dimension.values())
    table = format_table(summary)
    overall = table.splitlines()[2]
    assert "not interpretable: all 8 prompts = base" in overall
    assert "all 8 neutral and biased prompts equal the base prompt" in render_html(summary)
    assert "0/4 [0.00, 0.49]" in overall
    assert "+0.000" not in "\n".join(table.splitlines()[:-2])  # the table itself
    assert "[4 of them with every prompt = base: Δ 0 by construction]" in table
    page = render_html(summary)
    assert "not interpretable" in page
    saved = json.loads((tmp_path / "tooldrift.json").read_text())
    assert saved["interpretation"]["interpretable"] is False
    from memlens.store import RunStore

    with RunStore(tmp_path, read_only=True) as store:
        rows = store.rows(MEMORY_TABLE)
    assert len(rows) == 12 and all(r["same_as_base"] for r in rows)


def test_retrieval_rates_and_attribution_through_the_runner(tmp_path):
    memory = FrameworkMemory("stub", StubClient(), threshold=0.0, limit=2)
    summary = run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                            RunConfig(k=1, limit=3, setting=2, framework="stub", n_bootstrap=50),
                            memory, progress=False)
    rates = summary.overall.retrieval
    assert rates.biased.biased.k == 3 and rates.neutral.biased.k == 0
    assert rates.neutral.any.k == 3
    assert summary.overall.interpretation.interpretable is True
    assert summary.attribution.delta_given_retrieved.to_dict() == {
        "n": 3, "estimate": 1.0, "ci95": [1.0, 1.0], "bootstrap_p": pytest.approx(2 / 51)}
    assert "attribution: P(biased memory retrieved) = 3/3" in format_table(summary)


@pytest.mark.slow
@pytest.mark.embedded
@pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="mem0ai not installed")
def test_real_mem0_cut_off_above_every_similarity(tmp_path):
    memory = open_memory("mem0", tmp_path / "memory", threshold=0.99, top_k=3)
    summary = run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path / "run",
                            RunConfig(k=1, limit=2, setting=2, framework="mem0", n_bootstrap=50),
                            memory, progress=False)
    assert summary.overall.retrieval.biased.any.to_dict() == {
        "k": 0, "n": 2, "rate": 0.0, "ci95": pytest.approx([0.0, 0.6576], abs=1e-4)}
    assert summary.overall.interpretation.interpretable is False
    assert "not interpretable" in format_table(summary).splitlines()[2]
    assert not math.isnan(summary.overall.r_neutral)


def test_fail_on_uninterpretable_exits_5_and_still_writes(tmp_path, capsys):
    from memlens.cli.main import main

    args = ["tooldrift", "run", "--model", "fake", "--k", "1", "--limit", "2", "--bootstrap",
            "20", "--out", str(tmp_path / "run")]
    assert main(args) == 0  # the fake model answers in prose: no call, no pair, no Δ
    out = capsys.readouterr().out
    assert "not interpretable: no scenario with both rates" in out
    assert main([*args, "--fail-on-uninterpretable"]) == 5
    assert "Δ not interpretable for" in capsys.readouterr().out
    saved = json.loads((tmp_path / "run" / "tooldrift.json").read_text())
    assert saved["no_call"] == {"k": 6, "n": 6, "rate": 1.0, "ci95": pytest.approx(
        [0.6097, 1.0], abs=1e-4), "by_condition": saved["no_call"]["by_condition"]}


def test_help_documents_exit_5(capsys):
    from memlens.cli.main import main

    with pytest.raises(SystemExit):
        main(["tooldrift", "run", "--help"])
    assert "exit 5" in capsys.readouterr().out
