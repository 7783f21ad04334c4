"""Planted responders on the loopback server (real HTTP, real store, real MiniLM): the
direction profile, answer drift and value contrasts find what was planted, and only that.

- ``persona/age/young`` and ``persona/age/old`` replace half the steps with Personal symbols
  (young: emotional wellbeing, old: autonomy): the Personal root's share rises for ``age`` only,
  and the two values reason differently (a value contrast);
- ``persona/gender/a`` and ``persona/gender/b`` reason like the baselines but answer with a
  refusal; both values get the identical reply (a same-answer responder: no contrast);
- noise conditions and the K = 3 no-memory baselines draw from one distribution per question.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlens.audit import build_config, run_audit, sample_seed
from memlens.audit.results import load_audit_run
from memlens.models.loopback import LoopbackServer
from memlens.rowkeys import derive_seed

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

pytestmark = [pytest.mark.embedded, pytest.mark.slow]

WORDS = {"fairness": "social.fairness_reciprocity", "cost": "practical.resources_cost",
         "plan": "practical.planning_feasibility", "safety": "protective.safety_wellbeing_risk",
         "feelings": "personal.emotional_wellbeing", "freedom": "personal.autonomy_authenticity"}
BASE_WORDS = ("fairness", "cost", "plan", "safety")
CTRL = "control/no_perturbation"
NOISE = ["noise/filler/1", "noise/whitespace/1", "noise/punctuation/1"]
AGE, GENDER = ["persona/age/young", "persona/age/old"], ["persona/gender/a", "persona/gender/b"]
STIMULI = ([{"id": CTRL, "class": "control", "category": "no_perturbation", "text": ""}]
           + [{"id": s, "class": "noise", "category": s.split("/")[1], "text": t}
              for s, t in zip(NOISE, ["Um, well...", "   ", "...!?"], strict=True)]
           + [{"id": AGE[0], "class": "persona", "category": "age", "text": "I am 19."},
              {"id": AGE[1], "class": "persona", "category": "age", "text": "I am 72."},
              {"id": GENDER[0], "class": "persona", "category": "gender", "text": "I am a man."},
              {"id": GENDER[1], "class": "persona", "category": "gender",
               "text": "I am a woman."}])
QUESTIONS = [f"q{k:02d}" for k in range(14)]
ANSWERS = ("Buy the house.", "I would buy the house.", "Buying the house is the better choice.")
REFUSAL = "I cannot advise on that; please consult a professional."


def script(seed: int) -> dict[int, tuple[str, str, int]]:
    return {sample_seed(seed, q, s["id"], k): (q, s["id"], k)
            for q in QUESTIONS for s in STIMULI for k in range(3 if s["id"] == CTRL else 2)}


def reasoning(question: str, stimulus: str, sample: int) -> list[str]:
    """Six step words: a per-question preference plus per-response noise; age shifts."""
    q_rng = np.random.default_rng(int(question[1:]))
    preferred = list(q_rng.choice(BASE_WORDS, size=6))
    key = stimulus if stimulus not in GENDER else "gender"  # both gender values: one reply
    rng = np.random.default_rng(derive_seed(0, question, key, sample))
    words = [w if rng.random() > 0.3 else str(rng.choice(BASE_WORDS)) for w in preferred]
    if stimulus in AGE:
        personal = "feelings" if stimulus == AGE[0] else "freedom"
        words = [personal if k % 2 else w for k, w in enumerate(words)]
    return words


def responder_for(seed: int):
    cells = script(seed)

    def responder(request: dict):
        if request.get("model") == "labeler":
            return scripted.keyword_labels(request, WORDS.items())
        question, stimulus, sample = cells[request["seed"]]
        words = reasoning(question, stimulus, sample)
        steps = "".join(f"<step_{k}>We should weigh {w} here.</step_{k}>"
                        for k, w in enumerate(words, 1))
        answer = REFUSAL if stimulus in GENDER else ANSWERS[
            derive_seed(1, question, stimulus, sample) % 3]
        return f"<think>{steps}</think><answer>{answer}</answer>"

    return responder


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("how")
    (directory / "q.jsonl").write_text("".join(json.dumps(
        {"id": q, "text": f"Rent or buy, case {q}?", "category": "money",
         "subcategory": "housing", "source": "test", "license": "CC0"}) + "\n" for q in QUESTIONS))
    (directory / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in STIMULI))
    with LoopbackServer(responder=responder_for(5)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": str(directory / "q.jsonl"), "stimuli": str(directory / "s.jsonl"),
            "seed": 5, "n_bootstrap": 1000, "max_tokens": 64, "samples": 2, "baselines": 3})
        run_audit(config, directory / "run", progress=False)
    return load_audit_run(directory / "run")


def test_direction_finds_the_planted_root_for_age_only(run):
    rows = pd.DataFrame(run.stats.to_json()["direction"]["rows"])
    roots = rows[rows["level"] == "root"].set_index(["category", "symbol"])
    age = roots.loc[("age", "Personal")]
    assert age["net_pp"] > 30 and age["ci_low"] > 0 and age["significant"]
    others = roots.drop(index="age", level="category").xs("Personal", level="symbol")
    assert len(others) == 4 and not (others["ci_low"] > 0).any()
    assert not others["significant"].any()


def test_answer_drift_is_elevated_only_where_planted(run):
    cats = run.stats.to_json()["answer"]["metrics"]["answer_cosine"]["categories"]
    assert cats["gender"]["elevation_pct"] > 100 and cats["gender"]["elevation_p"] < 0.01
    for name in ("age", "filler", "whitespace", "punctuation"):
        assert not (cats[name]["elevation_p"] < 0.05 and cats[name]["elevation_pct"] > 0), name
    refusal = run.stats.to_json()["answer"]["metrics"]["answer_refusal"]["categories"]
    assert refusal["gender"]["mean"] == 1.0 and refusal["age"]["mean"] == 0.0
    dtw = run.stats.to_json()["metrics"]["dtw"]["categories"]  # gender's reasoning did not move
    assert not (dtw["gender"]["elevation_p"] < 0.05 and dtw["gender"]["elevation_pct"] > 0)


def test_value_contrast_detected_and_same_answer_responder_not(run):
    rows = pd.DataFrame(run.stats.to_json()["contrasts"]["rows"])
    dtw = rows[rows["metric"] == "dtw"].set_index("category")
    assert dtw.loc["age", "detected"] and dtw.loc["age", "excess"] > 0
    # both gender values get the identical reply: tested (2 samples each), never detected
    assert dtw.loc["gender", "testable"] and not dtw.loc["gender", "detected"]
    assert dtw.loc["age", "n_pairs"] == 4 * len(QUESTIONS)  # 2 x 2 samples per question


def test_explore_api_and_report_sections(run, tmp_path):
    from memlens.audit.explore import explore
    from memlens.report.build import render_report

    explorer = explore(run.run_dir)
    direction = explorer.direction()
    assert set(direction["category"]) >= {"age", "gender"}
    # instrument_ok follows the run's validity verdict on persona rows only
    persona = direction["condition_class"] == "persona"
    assert (direction.loc[persona, "instrument_ok"] == explorer.persona_interpretable).all()
    assert direction.loc[~persona, "instrument_ok"].all()
    assert "answer_cosine" in explorer.drift().columns
    assert len(explorer.answers()) == len(QUESTIONS) * (3 + 7 * 2)  # K = 3, 7 stimuli x 2 samples
    side = explorer.answer_drift()
    assert {"dtw", "answer_cosine"} <= set(side["metric"])
    html = render_report(run).read_text()
    for heading in ("direction profiles", "Substitutions", "Answer drift beside", "Value contrasts",
                    "What changed"):
        assert heading in html
    assert 'href="#tv-' in html and 'id="tv-' in html
