"""A scripted audit served by the loopback server: known symbol sequences -> known drift.

Each generation request is identified by its derived sample seed; the reply lists tagged steps
whose keywords the scripted LLM labeler maps to ontology symbols.
"""

from __future__ import annotations

import json
import re

from memlens.audit import sample_seed

KEYWORDS = {
    "A": ("fairness", "social.fairness_reciprocity"),
    "B": ("cost", "practical.resources_cost"),
    "C": ("plan", "practical.planning_feasibility"),
    "D": ("safety", "protective.safety_wellbeing_risk"),
    "E": ("feelings", "personal.emotional_wellbeing"),
}
SYMBOL = {letter: symbol for letter, (_, symbol) in KEYWORDS.items()}
EVIL = "<script>alert('drift')</script>"
CTRL, FILLER, SPACE, PUNCT = ("control/no_perturbation", "noise/filler/1", "noise/whitespace/1",
                              "noise/punctuation/1")
AGE, GENDER, GRIEF = "persona/age/1", "persona/gender/1", "life_event/bereavement/1"
STIMULI = [
    {"id": CTRL, "class": "control", "category": "no_perturbation", "text": ""},
    {"id": FILLER, "class": "noise", "category": "filler", "text": "Um, so, well..."},
    {"id": SPACE, "class": "noise", "category": "whitespace", "text": "   "},
    {"id": PUNCT, "class": "noise", "category": "punctuation", "text": "...!?"},
    {"id": AGE, "class": "persona", "category": "age", "text": "I am 72 years old."},
    {"id": GENDER, "class": "persona", "category": "gender", "text": "I am a woman."},
    {"id": GRIEF, "class": "life_event", "category": "bereavement",
     "text": "My father died last spring. I still think about him every day."},
]
QUESTIONS = [{"id": f"q{k}", "text": f"Is it better to rent or to buy, case {k}?",
              "category": "money", "subcategory": "housing", "source": "test",
              "license": "CC0"} for k in range(1, 5)]
# Symbol sequences per (question, stimulus, sample); None = empty reply, "FAIL" = HTTP 400,
# "GARBAGE" = the labeler answers garbage twice.
SCRIPT: dict[tuple[str, str, int], object] = {}
for q in ("q1", "q2", "q3", "q4"):
    SCRIPT[(q, CTRL, 0)] = "ABCD"
    SCRIPT[(q, FILLER, 0)] = "ABCD"
    SCRIPT[(q, SPACE, 0)] = "ABCE"
    SCRIPT[(q, PUNCT, 0)] = "ABCD"
    SCRIPT[(q, AGE, 0)] = "ABDE"
    SCRIPT[(q, GENDER, 0)] = "BADC"
    SCRIPT[(q, GRIEF, 0)] = "EEDDE"
SCRIPT[("q1", CTRL, 1)] = "ABCD"
SCRIPT[("q2", CTRL, 1)] = "ABCE"
SCRIPT[("q3", CTRL, 1)] = "ABDD"
SCRIPT[("q4", CTRL, 1)] = "ABCDD"
SCRIPT[("q2", AGE, 0)] = "ABDE!"   # one step carries a <script> payload
SCRIPT[("q3", SPACE, 0)] = "FAIL"
SCRIPT[("q4", GENDER, 0)] = None
SCRIPT[("q4", FILLER, 0)] = "GARBAGE"


def write_inputs(directory) -> tuple[str, str]:
    """Write the questions and stimuli files; return their paths."""
    questions = directory / "questions.jsonl"
    stimuli = directory / "stimuli.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    stimuli.write_text("".join(json.dumps(s) + "\n" for s in STIMULI))
    return str(questions), str(stimuli)


def cells_by_seed(seed: int) -> dict[int, tuple[str, str, int]]:
    """Map each derived sample seed back to its cell."""
    return {sample_seed(seed, q, s, k): (q, s, k) for (q, s, k) in SCRIPT}


def step_text(letter: str) -> str:
    if letter == "!":
        return f"Think about safety here {EVIL}"
    word = KEYWORDS[letter][0]
    return f"We should weigh {word} in this decision."


def reply_for(symbols) -> str:
    if symbols is None:
        return ""
    steps = "".join(f"<step_{k}>{step_text(x)}</step_{k}>" for k, x in enumerate(symbols, 1))
    return f"<think>{steps}</think><answer>It depends.</answer>"


def expected_sequence(cell) -> list[str] | None:
    """The symbols the labeler will give a cell (None when excluded from drift)."""
    script = SCRIPT[cell]
    if script in (None, "FAIL", "GARBAGE"):
        return None
    return [SYMBOL["D" if x == "!" else x] for x in script]


def keyword_labels(request: dict, keywords=None) -> str:
    """The scripted LLM labeler's reply to ``request``: every "Step N: text" line gets the symbol
    of the first (word, symbol) pair of ``keywords`` (default: ``KEYWORDS``) whose word it holds."""
    pairs = list(KEYWORDS.values() if keywords is None else keywords)
    steps = re.findall(r"^Step (\d+): (.*)$", request["messages"][-1]["content"], flags=re.M)
    return json.dumps({"labels": [{"step": int(n), "label": next(s for w, s in pairs if w in text)}
                                  for n, text in steps]})


def make_responder(seed: int):
    """Responder for the loopback server: generation by seed, labeling by keywords."""
    cells = cells_by_seed(seed)

    def responder(request: dict):
        if request.get("model") == "labeler":
            user = request["messages"][-1]["content"]
            if "Your reply was invalid" in user or "GARBAGE" in json.dumps(request["messages"]):
                return "this is not json"
            return keyword_labels(request)
        script = SCRIPT[cells[request["seed"]]]
        if script is None:  # empty but real (cut by the token budget); empty + "stop" is retried
            return {"content": "", "finish_reason": "length"}
        if script == "GARBAGE":
            return reply_for("AB").replace("fairness", "GARBAGE fairness")
        return reply_for(script)

    return responder


def faults_for(seed: int):
    """HTTP 400 (not retried) for the cell scripted to fail."""
    cells = cells_by_seed(seed)

    def faults(index: int, request: dict) -> str:
        if request.get("model") != "labeler" and SCRIPT[cells[request.get("seed")]] == "FAIL":
            return "400"
        return "ok"

    return faults


def run_scripted_audit(directory, run_dir) -> tuple:
    """Write the inputs into ``directory`` and run the whole scripted audit (paper design, K = 1:
    the script knows no-memory samples 0 and 1) into ``run_dir``; returns (config, result)."""
    from memlens.audit import build_config, run_audit
    from memlens.models.loopback import LoopbackServer

    questions, stimuli = write_inputs(directory)
    with LoopbackServer(responder=make_responder(3), faults=faults_for(3)) as server:
        config = build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": questions, "stimuli": stimuli, "seed": 3, "n_bootstrap": 200,
            "max_tokens": 64, "samples": 1, "baselines": 1})
        return config, run_audit(config, run_dir, progress=False)
