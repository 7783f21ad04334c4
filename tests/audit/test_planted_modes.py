"""Planted drift through real HTTP in all three injection modes, on a model whose reasoning
changes with the memory SCAFFOLDING itself (the header line of ``system`` mode, the earlier
turn and acknowledgement of ``history`` mode).

The loopback model draws its step symbols, seeded by the request's seed, from a per-question
distribution; when it sees the scaffolding it switches to a *different* distribution (the
scaffolding is content). Matched scaffolding (every condition, the no-memory control included,
goes through the same template) must keep that from looking like drift: specificity must not
fail. On top of that the *planted* model drifts for real on one persona text and on the
life-event texts (shifted toward one symbol); the *null* model does not drift at all.
"""

import hashlib
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from memlens.audit import build_config, run_audit
from memlens.models.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

LETTERS = sorted(scripted.KEYWORDS)  # A..E, each labelled by its keyword
PLANTED_TEXT = "I am 72 years old."
LIFE_TEXTS = ("My father died last spring. I still think about him every day.",
              "I was laid off from my job three weeks ago.")
STIMULI = [
    {"id": "control/no_perturbation", "class": "control", "category": "no_perturbation",
     "text": ""},
    {"id": "noise/filler/1", "class": "noise", "category": "filler", "text": "Um, so, well..."},
    {"id": "noise/whitespace/1", "class": "noise", "category": "whitespace", "text": "   "},
    {"id": "noise/punctuation/1", "class": "noise", "category": "punctuation", "text": "...!?"},
    {"id": "persona/age/1", "class": "persona", "category": "age", "text": PLANTED_TEXT},
    {"id": "persona/gender/1", "class": "persona", "category": "gender", "text": "I am a woman."},
    {"id": "life_event/bereavement/1", "class": "life_event", "category": "bereavement",
     "text": LIFE_TEXTS[0]},
    {"id": "life_event/job_loss/1", "class": "life_event", "category": "job_loss",
     "text": LIFE_TEXTS[1]},
]
N_QUESTIONS = 30
QUESTIONS = [{"id": f"q{k:02d}", "text": f"[q{k:02d}] Should I rent or buy a home this year?",
              "category": "money", "subcategory": "housing", "source": "test", "license": "CC0"}
             for k in range(N_QUESTIONS)]
HEADER = "Memory about the user"
SHIFT = 0.9  # planted drift: this share of the mass moves to one symbol


def _distribution(question_id: str, scaffolded: bool) -> np.ndarray:
    """The question's symbol distribution; a different one when the scaffolding is present."""
    digest = hashlib.sha256(f"{question_id}|{scaffolded}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big")).dirichlet(np.ones(5))


def make_responder(planted: bool, seen: list):
    """Generation: header-/turn-sensitive, seeded by the request seed, drifting on the planted
    texts when ``planted``; appends whether it saw the scaffolding to ``seen``. Labeling:
    keywords -> symbols (the scripted LLM labeler)."""

    def responder(request: dict):
        messages = request["messages"]
        if request.get("model") == "labeler":
            return scripted.keyword_labels(request)
        everything = "\n".join(m["content"] for m in messages)
        question_id = re.search(r"\[(q\d+)\]", messages[-1]["content"]).group(1)
        scaffolded = any(m["role"] == "assistant" for m in messages) or any(
            m["role"] == "system" and HEADER in m["content"] for m in messages)
        seen.append(scaffolded)
        probs = _distribution(question_id, scaffolded)
        if planted and PLANTED_TEXT in everything:
            probs = (1 - SHIFT) * probs + SHIFT * np.eye(5)[LETTERS.index("D")]
        if planted and any(text in everything for text in LIFE_TEXTS):
            probs = (1 - SHIFT) * probs + SHIFT * np.eye(5)[LETTERS.index("E")]
        rng = np.random.default_rng(request["seed"])
        letters = [LETTERS[k] for k in rng.choice(5, size=int(rng.integers(3, 9)), p=probs)]
        return scripted.reply_for(letters)

    return responder


def audit(tmp_path_factory, mode: str, planted: bool) -> tuple[dict, list[bool]]:
    """Run the audit against the loopback model; returns the statistics and, per generation
    request, whether the model saw the scaffolding."""
    directory = tmp_path_factory.mktemp(f"{mode}_{'planted' if planted else 'null'}")
    questions, stimuli = directory / "questions.jsonl", directory / "stimuli.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    stimuli.write_text("".join(json.dumps(s) + "\n" for s in STIMULI))
    seen: list[bool] = []
    with LoopbackServer(responder=make_responder(planted, seen)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": str(questions), "stimuli": str(stimuli), "seed": 11, "mode": mode,
            "baselines": 5, "samples": 1, "n_bootstrap": 300, "max_tokens": 64})
        result = run_audit(config, directory / "run", progress=False)
    assert result.stats_error is None
    assert len(seen) == N_QUESTIONS * (5 + len(STIMULI) - 1)
    return result.stats.to_json(), seen


def matched_audit(tmp_path_factory, mode: str, planted: bool) -> dict:
    """The audit's statistics, after checking that the scaffolding reached the model in every
    condition, the no-memory control included (system / history), or never (prefix)."""
    stats, seen = audit(tmp_path_factory, mode, planted)
    assert set(seen) == ({False} if mode == "prefix" else {True})
    return stats


@pytest.fixture(scope="module", params=["prefix", "system", "history"])
def planted_stats(request, tmp_path_factory):
    return matched_audit(tmp_path_factory, request.param, planted=True)


@pytest.fixture(scope="module", params=["prefix", "system", "history"])
def null_stats(request, tmp_path_factory):
    return matched_audit(tmp_path_factory, request.param, planted=False)


def statuses(stats: dict) -> dict[str, str]:
    return {c["name"]: c["status"] for c in stats["validity"]["checks"] if c["metric"] == "dtw"}


def test_planted_drift_is_found_and_scaffolding_is_not(planted_stats):
    status = statuses(planted_stats)
    assert status["specificity"] != "fail", planted_stats["validity"]["explanation"]
    assert status["sensitivity"] == "pass", planted_stats["validity"]["explanation"]
    dtw = planted_stats["metrics"]["dtw"]
    assert dtw["classes"]["life_event"]["elevation_pct"] > 0
    assert dtw["categories"]["age"]["d_rel_ci"][0] > 0
    assert dtw["categories"]["age"]["d_rel_q"] <= 0.05
    # the un-planted persona text stays indistinguishable from noise
    assert dtw["categories"]["gender"]["d_rel_q"] > 0.05


def test_null_model_has_no_persona_finding(null_stats):
    status = statuses(null_stats)
    assert status["specificity"] != "fail", null_stats["validity"]["explanation"]
    assert status["sensitivity"] != "pass"
    categories = null_stats["metrics"]["dtw"]["categories"]
    persona = {n: c["d_rel_q"] for n, c in categories.items() if c["condition_class"] == "persona"}
    assert set(persona) == {"age", "gender"}
    assert all(q > 0.05 for q in persona.values()), persona


def test_unmatched_scaffolding_would_fail_specificity(tmp_path_factory, monkeypatch):
    """Negative control: the model really is scaffolding-sensitive. With the old, unmatched
    template (the no-memory control sent without the memory block) the same null model fails
    specificity and even 'passes' sensitivity — the scaffolding alone looks like drift."""
    from memlens.audit import generate

    matched = generate.inject

    def unmatched(question_text, stimulus, mode="prefix", system_prompt=None, template=None):
        if not stimulus.text:
            return [{"role": "user", "content": question_text}]
        return matched(question_text, stimulus, mode=mode, system_prompt=system_prompt,
                       template=template)

    monkeypatch.setattr(generate, "inject", unmatched)  # where build_request looks it up
    stats, seen = audit(tmp_path_factory, "system", planted=False)
    assert sum(seen) == N_QUESTIONS * (len(STIMULI) - 1)  # all but the 5 controls per question
    assert statuses(stats) == {"specificity": "fail", "sensitivity": "pass"}
