"""MemSyco-Bench as a real control set: memory-use items (relevant) against scope-control items
(irrelevant), each item's own dialogue injected through ``history`` mode; planted responders
behind the loopback server get their selectivity verdicts, and no gold annotation (``memory``,
``evaluation``) ever reaches the model."""

import json
import sys
from pathlib import Path

import pytest

from memlens.audit import build_config, run_audit
from memlens.audit.pipeline import drift_frame
from memlens.errors import MemlensError
from memlens.models.loopback import LoopbackServer
from memlens.questions.memsyco import bundled_folder, control_questions, load_memsyco
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

ROWS = [json.loads(line) for name in ("contextual_scope_control.jsonl",
                                      "personalized_memory_use.jsonl")
        for line in (bundled_folder() / name).read_text().splitlines()]
USE_QUESTIONS = {row["question"].strip() for row in ROWS
                 if row["task"] == "personalized_memory_use"}


def gold_strings(row: dict) -> set[str]:
    """Every string of a row's gold fields that the visible fields do not contain anyway."""
    visible = row["question"] + "\n".join(turn["content"] for turn in row["dialogue"])
    found: set[str] = set()

    def walk(value):
        if isinstance(value, str):
            if len(value) > 12 and value not in visible:
                found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(row["memory"])
    walk(row["evaluation"])
    return found


def planted(rule: str, seen: list):
    """Generation: drift ("EEDDE") when a dialogue precedes the question and the rule says so;
    records every request."""
    labeler = scripted.make_responder(0)

    def responder(request: dict):
        seen.append(request)
        if request.get("model") == "labeler":
            return labeler(request)
        has_memory = len(request["messages"]) > 3  # the dialogue's turns, not the scaffold
        relevant = request["messages"][-1]["content"].split("\n\n")[0] in USE_QUESTIONS
        drift = has_memory and (rule == "all" or (rule == "relevant" and relevant))
        return scripted.reply_for("EEDDE" if drift else "ABCD")

    return responder


def audit(tmp_path, rule: str, seen: list):
    questions, stimuli = scripted.write_inputs(tmp_path)
    with LoopbackServer(responder=planted(rule, seen)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 5, "n_bootstrap": 500, "max_tokens": 64,
            "baselines": 2, "mode": "history", "control_set": "memsyco"})
        result = run_audit(config, tmp_path / rule, progress=False)
    return result


def test_loader_keeps_no_gold_field():
    items = load_memsyco()
    assert [i.task for i in items].count("contextual_scope_control") == 6
    assert [i.task for i in items].count("personalized_memory_use") == 6
    item = items[0]
    assert not hasattr(item, "memory") and not hasattr(item, "evaluation")
    row = ROWS[0]
    assert item.id == row["id"] and item.question == row["question"].strip()
    assert list(item.dialogue) == row["dialogue"]
    gold = gold_strings(row)
    assert gold  # the test below has something to look for
    assert not any(text in repr(item) for text in gold)
    questions = control_questions(items)
    assert sum(bool(q.attributes) for q in questions) == 6
    assert not any(text in repr(questions) for row in ROWS for text in gold_strings(row))


def test_loader_errors_name_file_line_and_field(tmp_path):
    (tmp_path / "contextual_scope_control.jsonl").write_text(
        json.dumps({"id": "a", "task": "contextual_scope_control", "question": "Q?",
                    "dialogue": [{"role": "system", "content": "x"}]}) + "\n")
    (tmp_path / "personalized_memory_use.jsonl").write_text("")
    with pytest.raises(MemlensError, match=r"contextual_scope_control.jsonl:1: field 'dialogue' "
                                           r"turn 1"):
        load_memsyco(tmp_path)
    with pytest.raises(MemlensError, match="MemSyco-Bench folder not found"):
        load_memsyco(tmp_path / "nope")


@pytest.mark.parametrize(("rule", "verdict"), [("relevant", "selective"),
                                               ("all", "over-sensitive")])
def test_memsyco_selectivity_and_gold_never_reaches_the_model(tmp_path, rule, verdict):
    seen: list = []
    result = audit(tmp_path, rule, seen)
    sel = result.selectivity
    entry = sel.categories["memsyco"]
    assert entry.relevant.n == 6 and entry.irrelevant.n == 6
    assert entry.verdict == verdict, entry
    if rule == "relevant":
        assert entry.irrelevant.estimate == 0 and entry.relevant.estimate > 0.5
    generation = [r for r in seen if r.get("model") == "planted"]
    # every item: 2 baselines + 1 response under its dialogue; the benchmark's 4 x 8 too
    dialogues = [r for r in generation if len(r["messages"]) > 3]
    assert len(dialogues) == 12
    row = next(r for r in ROWS if r["task"] == "personalized_memory_use")
    request = next(r for r in dialogues if r["messages"][-1]["content"].startswith(
        row["question"].strip()))
    # history mode: the dialogue's turns verbatim, then the question
    assert request["messages"][:len(row["dialogue"])] == row["dialogue"]
    sent = json.dumps(seen)
    for source in ROWS:
        for text in gold_strings(source):
            assert json.dumps(text)[1:-1] not in sent, (source["id"], text[:60])
    with RunStore(tmp_path / rule) as store:
        frame = drift_frame(store)
        inputs = store.read_manifest()["audit"]["inputs"]
    assert not frame["question_id"].str.startswith("sp/").any()
    assert inputs["control_set"] == "memsyco" and inputs["control_questions"] == 12


def test_memsyco_needs_history_mode(tmp_path):
    from memlens.audit.control_set import control_cells
    from memlens.stimuli import load_stimuli

    config = build_config({"model": "fake", "control_set": "memsyco", "mode": "prefix"})
    with pytest.raises(MemlensError, match="use --mode history"):
        control_cells(config, load_stimuli())
