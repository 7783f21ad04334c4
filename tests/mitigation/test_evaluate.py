"""Evaluation: hand-computed held-out DTW, lexical diversity and judge scores for two scripted
models; outputs written; lm-eval wrapper configs and a real lm-eval run on the tiny model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("datasets")

from memlens.cli.main import main  # noqa: E402
from memlens.metrics import lexical_diversity  # noqa: E402
from memlens.mitigation.evaluate import EvalConfig, evaluate_models  # noqa: E402
from memlens.models import FakeModel  # noqa: E402
from memlens.ontology import get_labeler  # noqa: E402

REFERENCE = ["social.fairness_reciprocity", "practical.resources_cost"]
TUNED = ("<think><step_1>Split it into a fair share.</step_1><step_2>Budget the money.</step_2>"
         "</think><answer>Share the rent fairly with your roommate</answer>")
BASE = "Stay safe and avoid the risk."


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@pytest.fixture
def held_out():
    from datasets import Dataset, DatasetDict

    rows = [{"prompt": [{"role": "user", "content": f"I love chess.\nQ{i}: split the rent?"}],
             "reference": REFERENCE, "question_id": f"q{i}", "stimulus_id": "persona/x"}
            for i in range(3)]
    return DatasetDict(train=Dataset.from_list(rows[:1]), test=Dataset.from_list(rows))


def judge_model() -> FakeModel:
    def reply(messages, params):
        prompt = messages[0]["content"]  # the repair turn keeps the same first prompt
        if "<step_1>" in prompt:
            if "Q2" in prompt:
                return "garbage"
            return json.dumps({"helpfulness": 5, "distracted": 0, "acknowledges_irrelevance": 1})
        return json.dumps({"helpfulness": 2, "distracted": 1, "acknowledges_irrelevance": 0})

    return FakeModel(reply)


def test_table_values_are_hand_computed(tmp_path, held_out):
    config = EvalConfig(models=["base", "tuned"], data="unused", judge="fake")
    models = {"base": FakeModel([BASE], model_id="base"),
              "tuned": FakeModel([TUNED], model_id="tuned"), "judge": judge_model()}
    config.data = held_out
    table = evaluate_models(config, tmp_path, progress=False, models=models,
                            labeler=get_labeler("keyword"))
    base, tuned = table.to_dict("records")
    # base: one step labeled safety vs 2-step reference → DTW raw 2 / max(1, 2) = 1.0;
    # no <answer> block → diversity 0 (App. I.3)
    assert (base["DTW"], base["Diversity"], base["n"], base["no_steps"]) == (1.0, 0.0, 3, 0)
    assert (base["Helpfulness"], base["NonDistraction"], base["judge_invalid"]) == (2.0, 0.0, 0)
    # tuned: labels equal the reference → 0; answer has 7 distinct words → sigmoid(8·0.8)
    assert tuned["DTW"] == 0.0
    assert tuned["Diversity"] == pytest.approx(sigmoid(6.4), abs=1e-12)
    assert (tuned["Helpfulness"], tuned["NonDistraction"], tuned["judge_invalid"]) == (5.0, 1.0, 1)
    assert math.isnan(tuned["MMLU"])  # capability not requested
    for name in ("table.csv", "table.md", "eval_report.json"):  # the figure: report/ (CLI)
        assert (tmp_path / name).stat().st_size > 0
    # every cell with its interval and n, flagged below 10 items; capability not requested
    # (all three base responses have DTW 1.0 → the bootstrap interval is [1, 1]); NonDistraction
    # of tuned: 2 of 2 valid replies → Wilson [0.342, 1]; base 0 of 3: upper 3.8415 / 6.8415 = 0.561
    table_md = (tmp_path / "table.md").read_text()
    flag = "(n<10: not interpretable)"
    assert (f"| base | no fingerprint (API / unknown) | 1.000 [1.000, 1.000] n=3 {flag} | "
            f"0.000 [0.000, 0.000] n=3 {flag} | 2.000 [2.000, 2.000] n=3 {flag} | "
            f"0.000 [0.000, 0.561] n=3 {flag} | not measured |") in table_md
    assert f"| 1.000 [0.342, 1.000] n=2 {flag} |" in table_md
    assert (base["DTW_lo"], base["DTW_hi"], base["DTW_n"]) == (1.0, 1.0, 3)
    assert tuned["NonDistraction_n"] == 2 and tuned["Helpfulness_n"] == 2


@pytest.mark.parametrize(("text", "expected"), [
    ("<answer>go go go go go</answer>", sigmoid(8 * (1 / 5 - 0.2))),   # repeats: D = 1/5, L = 1
    ("<answer>yes</answer>", sigmoid(8 * (1 * 1 / 5 - 0.2))),         # short: D = 1, L = 1/5
    ("<answer>a b c d e f</answer>", sigmoid(8 * 0.8)),               # D = 1, L = 1
    ("<answer>42 + 7 = 49!</answer>", 0.0),                          # no letters
    ("<answer></answer>", 0.0),                                       # empty
])
def test_lexical_diversity_hand_computed(text, expected):
    assert lexical_diversity(text, require_answer_tag=True) == pytest.approx(expected, abs=1e-12)


def test_missing_answer_block_scores_zero_in_evaluation():
    assert lexical_diversity("a rich varied answer text", require_answer_tag=True) == 0.0


def test_eval_cli_bad_model_and_data(tmp_path, capsys):
    assert main(["mitigate", "eval", "--models", "nonsense:x", "--data",
                 str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "training data not found" in capsys.readouterr().err


def test_lm_eval_wrapper_configs(tmp_path):
    pytest.importorskip("lm_eval")
    from memlens.mitigation.lm_eval_adapter import sample_file, write_task_configs

    names = write_task_configs(tmp_path, ["mmlu", "gsm8k", "ifeval"])
    assert names == ["memlens_mmlu", "memlens_gsm8k", "memlens_ifeval"]
    text = (tmp_path / "memlens_ifeval.yaml").read_text()
    assert "ifeval/ifeval.yaml" in text and str(sample_file("ifeval")) in text
    assert "test_split: train" in text
    assert sum(1 for _ in sample_file("mmlu").open()) == 4


@pytest.mark.slow
def test_lm_eval_runs_on_the_tiny_model(tmp_path):
    pytest.importorskip("lm_eval")
    import torch
    from tests.mitigation.tiny_model import build_tiny_model

    from memlens.mitigation.lm_eval_adapter import run_capability

    torch.set_num_threads(1)
    model = build_tiny_model(tmp_path / "tiny")
    fixture = Path(__file__).parent / "data" / "lm_eval_fixture"
    cells = run_capability(f"hf:{model}", ["mmlu", "gsm8k"], data=fixture, limit=2,
                           max_gen_toks=8)
    # an untrained model answers nothing right; the cells still carry n and a Wilson interval
    # (k = 0, n = 2: upper bound z² / (n + z²) = 3.8415 / 5.8415 = 0.658)
    for name in ("MMLU", "GSM8K"):
        assert (cells[name].score, cells[name].n, cells[name].k) == (0.0, 2, 0)
        assert cells[name].ci_high == pytest.approx(0.6576, abs=1e-4)
    smoke = run_capability(str(model), ["mmlu"], limit=2, max_gen_toks=8)  # the shipped items
    assert smoke["MMLU"].smoke and smoke["MMLU"].score is None


def test_resume_under_other_settings_is_refused(tmp_path, held_out):
    from memlens.errors import MemlensError

    def run(**changes):
        config = EvalConfig(**{"models": ["base"], "data": held_out, **changes})
        model = FakeModel([BASE], model_id="base")
        evaluate_models(config, tmp_path, progress=False,
                        models={"base": model, "tuned": FakeModel([TUNED], model_id="tuned")},
                        labeler=get_labeler("keyword"))
        return model

    run()
    with pytest.raises(MemlensError, match=r"mitigate_eval run with different settings "
                                           r"\(temperature\)"):
        run(temperature=0.2)
    with pytest.raises(MemlensError, match=r"\(limit, held_out content\)"):
        run(limit=2)  # fewer held-out rows: another design
    # another model next to the stored one, and lm-eval settings (not stored): a resume
    assert run(models=["base", "tuned"], lm_eval_limit=5).calls == []
