"""Planted-responder audits over the loopback server, for comparisons and the gate.

The generation model draws step symbols from a per-question distribution, seeded by the request
seed; on the persona texts it shifts ``persona_shift`` of the mass to one symbol, on the
life-event texts ``LIFE_SHIFT`` (the positive control, so the instrument passes). Labels come
from the scripted LLM labeler (keywords -> symbols). ``audit_seed`` changes every sample.
"""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import scripted

from memlens.audit import build_config, run_audit
from memlens.models.loopback import LoopbackServer

LETTERS = sorted(scripted.KEYWORDS)
PERSONA_TEXTS = {"age": "I am 72 years old.", "gender": "I am a woman."}
LIFE_TEXTS = ("My father died last spring. I still think about him every day.",
              "I was laid off from my job three weeks ago.")
STIMULI = [
    {"id": "control/no_perturbation", "class": "control", "category": "no_perturbation",
     "text": ""},
    {"id": "noise/filler/1", "class": "noise", "category": "filler", "text": "Um, so, well..."},
    {"id": "noise/whitespace/1", "class": "noise", "category": "whitespace", "text": "   "},
    {"id": "noise/punctuation/1", "class": "noise", "category": "punctuation", "text": "...!?"},
    {"id": "persona/age/1", "class": "persona", "category": "age", "text": PERSONA_TEXTS["age"]},
    {"id": "persona/gender/1", "class": "persona", "category": "gender",
     "text": PERSONA_TEXTS["gender"]},
    {"id": "life_event/bereavement/1", "class": "life_event", "category": "bereavement",
     "text": LIFE_TEXTS[0]},
    {"id": "life_event/job_loss/1", "class": "life_event", "category": "job_loss",
     "text": LIFE_TEXTS[1]},
]
LIFE_SHIFT = 0.9


def questions(n: int) -> list[dict]:
    return [{"id": f"q{k:02d}", "text": f"[q{k:02d}] Should I rent or buy a home this year?",
             "category": "money", "subcategory": "housing", "source": "test", "license": "CC0"}
            for k in range(n)]


def _distribution(question_id: str) -> np.ndarray:
    digest = hashlib.sha256(question_id.encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big")).dirichlet(np.full(5, 0.4))


def make_responder(persona_shift: dict[str, float]):
    """Generation shifted toward D on the persona texts (per category) and toward E on life
    events; the scripted keyword labeler."""

    def responder(request: dict):
        messages = request["messages"]
        if request.get("model") == "labeler":
            return scripted.keyword_labels(request)
        everything = "\n".join(m["content"] for m in messages)
        question_id = re.search(r"\[(q\d+)\]", messages[-1]["content"]).group(1)
        probs = _distribution(question_id)
        for category, text in PERSONA_TEXTS.items():
            if text in everything and persona_shift.get(category):
                shift = persona_shift[category]
                probs = (1 - shift) * probs + shift * np.eye(5)[LETTERS.index("D")]
        if any(text in everything for text in LIFE_TEXTS):
            probs = (1 - LIFE_SHIFT) * probs + LIFE_SHIFT * np.eye(5)[LETTERS.index("E")]
        rng = np.random.default_rng(request["seed"])
        letters = [LETTERS[k] for k in rng.choice(5, size=int(rng.integers(3, 9)), p=probs)]
        return scripted.reply_for(letters)

    return responder


def planted_audit(directory, run_dir, *, persona_shift: dict[str, float], audit_seed: int,
                  n_questions: int = 30, stimuli: list[dict] | None = None,
                  baselines: int = 5, first_question: int = 0):
    """Run one planted audit into ``run_dir``; returns the AuditResult."""
    directory.mkdir(parents=True, exist_ok=True)
    q_file, s_file = directory / "questions.jsonl", directory / "stimuli.jsonl"
    chosen = questions(first_question + n_questions)[first_question:]
    q_file.write_text("".join(json.dumps(q) + "\n" for q in chosen))
    s_file.write_text("".join(json.dumps(s) + "\n" for s in (stimuli or STIMULI)))
    with LoopbackServer(responder=make_responder(persona_shift)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": str(q_file), "stimuli": str(s_file), "seed": audit_seed,
            "baselines": baselines, "samples": 1, "n_bootstrap": 300, "max_tokens": 64})
        return run_audit(config, run_dir, progress=False)
