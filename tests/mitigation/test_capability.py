"""Capability on local task data: seeded subsets, n and Wilson intervals, smoke tests never a
score, bad data named by file and line, nltk punkt_tab from a package, and lm-eval's own
``local-chat-completions`` adapter against memlens's loopback server (real HTTP) through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memlens.errors import MemlensError
from memlens.mitigation.lm_eval_adapter import (
    CapabilityCell,
    TaskInput,
    cells_from_output,
    load_task_items,
    seeded_subset,
    task_inputs,
)

FIXTURE = Path(__file__).parent / "data" / "lm_eval_fixture"


def test_fixture_has_at_least_100_items_per_task_in_lm_eval_format():
    for task, name in (("mmlu", "mmlu_redux"), ("gsm8k", "gsm8k"), ("ifeval", "ifeval")):
        assert len(load_task_items(task, FIXTURE / f"{name}.jsonl")) >= 100


def test_seeded_subsets_are_reproducible_sized_and_differ_by_seed():
    first = task_inputs(["gsm8k"], data=FIXTURE, limit=10, seed=0)[0]
    again = task_inputs(["gsm8k"], data=FIXTURE, limit=10, seed=0)[0]
    other = task_inputs(["gsm8k"], data=FIXTURE, limit=10, seed=1)[0]
    assert (len(first.items), first.total, first.smoke) == (10, 120, False)
    assert first.items == again.items and first.items != other.items
    assert "seeded subset 10 of 120" in first.source
    assert len({json.dumps(i) for i in first.items}) == 10  # without replacement
    assert seeded_subset([1, 2, 3], None, 0) == [1, 2, 3]


def test_shipped_items_are_a_smoke_test_never_a_score():
    given = task_inputs(["mmlu"])[0]
    assert given.smoke and "smoke test" in given.source
    output = {"results": {"memlens_mmlu": {"exact_match,default": 1.0}},
              "n-samples": {"memlens_mmlu": {"effective": 4}}}
    cell = cells_from_output(output, [given])["MMLU"]
    assert cell.score is None and cell.n == 4 and cell.smoke
    assert cell.display() == "smoke test (n=4), not a score"


def test_wilson_interval_of_a_capability_cell_is_hand_computed():
    output = {"results": {"memlens_ifeval": {"prompt_level_strict_acc,none": 0.0,
                                             "prompt_level_loose_acc,none": 1.0}},
              "n-samples": {"memlens_ifeval": {"effective": 5}}}
    cells = cells_from_output(output, [TaskInput("ifeval", [{}] * 5, 5, "f", False)])
    # Wilson, k = 0, n = 5, z = 1.96: upper = z² / (n + z²) = 3.8415 / 8.8415 = 0.4345
    assert cells["IF(strict)"].ci_low == 0.0
    assert cells["IF(strict)"].ci_high == pytest.approx(0.4345, abs=1e-4)
    assert cells["IF(loose)"].ci_low == pytest.approx(1 - 0.4345, abs=1e-4)
    assert isinstance(cells["IF(loose)"], CapabilityCell) and cells["IF(loose)"].k == 5


@pytest.mark.parametrize(("task", "line", "message"), [
    ("mmlu", '{"question": "q", "choices": ["a", "b"], "answer": 0}', "list of 4 options"),
    ("mmlu", '{"question": "q", "choices": ["a", "b", "c", "d"], "answer": 4}', "index 0-3"),
    ("gsm8k", '{"question": "q", "answer": "7"}', "#### <number>"),
    ("ifeval", '{"key": 1, "prompt": "p", "instruction_id_list": ["a"], "kwargs": []}',
     "same length"),
    ("gsm8k", '{"question": "q"}', "lacks answer"),
])
def test_bad_records_are_named_by_file_and_line(tmp_path, task, line, message):
    good = {"mmlu": '{"question": "q", "choices": ["a", "b", "c", "d"], "answer": 1}',
            "gsm8k": '{"question": "q", "answer": "#### 7"}',
            "ifeval": '{"key": 1, "prompt": "p", "instruction_id_list": [], "kwargs": []}'}[task]
    path = tmp_path / f"{task}.jsonl"
    path.write_text(good + "\n" + line + "\n")
    with pytest.raises(MemlensError, match=rf"{re.escape(str(path))}: line 2: .*{re.escape(message)}"):
        load_task_items(task, path)


def test_missing_task_file_and_datasets_folder(tmp_path):
    with pytest.raises(MemlensError, match="no data for task 'ifeval'.*ifeval.jsonl"):
        task_inputs(["ifeval"], data=tmp_path)
    datasets = pytest.importorskip("datasets")
    rows = [{"question": f"q{i}", "answer": f"#### {i}"} for i in range(5)]
    datasets.DatasetDict(test=datasets.Dataset.from_list(rows)).save_to_disk(str(tmp_path / "gsm8k"))
    given = task_inputs(["gsm8k"], data=tmp_path, limit=3)[0]
    assert len(given.items) == 3 and given.total == 5 and set(given.items[0]) == {"question",
                                                                                   "answer"}


def test_punkt_tab_from_the_package_loads_in_nltk(tmp_path, monkeypatch):
    pytest.importorskip("punkt")
    import nltk
    from nltk.tokenize.punkt import PunktTokenizer

    from memlens.mitigation.nltk_data import HOW_TO, installed_punkt_tab, write_punkt_tab

    root = write_punkt_tab(tmp_path)
    monkeypatch.setattr(nltk.data, "path", [str(root)])  # only our folder: found through nltk
    assert installed_punkt_tab() == root / "tokenizers" / "punkt_tab" / "english"
    text = "Mr. Smith went to Washington. He arrived at 5 p.m. on Monday. It rained."
    assert PunktTokenizer("english").tokenize(text) == [
        "Mr. Smith went to Washington.", "He arrived at 5 p.m. on Monday.", "It rained."]
    monkeypatch.setitem(__import__("sys").modules, "punkt.data", None)
    with pytest.raises(MemlensError, match="NLTK_DATA") as error:
        write_punkt_tab(tmp_path / "other")
    assert str(error.value) == HOW_TO


def _responder(request: dict) -> str:
    """Scripted OpenAI-compatible model: right on 'A + B' questions only, one plain lowercase
    English sentence for the rest (capability); JSON scores when asked to judge; a tagged answer
    to held-out prompts."""
    text = request["messages"][-1]["content"]
    if "You are grading" in text:
        return json.dumps({"helpfulness": 4, "distracted": 0, "acknowledges_irrelevance": 1})
    match = re.search(r"What is (\d+) \+ (\d+)\?", text)
    if match:
        right = str(int(match[1]) + int(match[2]))
        options = re.findall(r"^([ABCD])\. (.*)$", text, re.M)
        return next(letter for letter, option in options if option.strip() == right)
    if "split the rent" in text:
        return "<think><step_1>Split it fairly.</step_1></think><answer>Share it</answer>"
    return PLAIN


PLAIN = "the weather is nice today and i like to walk in the park with my friends"
"""14 lowercase English words, no comma, one sentence."""


@pytest.mark.slow
def test_api_backend_capability_via_lm_evals_own_adapter_through_the_cli(tmp_path, capsys,
                                                                      monkeypatch):
    pytest.importorskip("lm_eval")
    pytest.importorskip("tenacity")
    pytest.importorskip("punkt")
    datasets = pytest.importorskip("datasets")
    from langdetect import DetectorFactory

    from memlens.cli.main import main
    from memlens.models.loopback import LoopbackServer

    # IFEval's case checks call langdetect, which is random unless seeded
    monkeypatch.setattr(DetectorFactory, "seed", 0)

    rows = [{"prompt": [{"role": "user", "content": f"I love chess.\nQ{i}: split the rent?"}],
             "reference": ["social.fairness_reciprocity"], "question_id": f"q{i}",
             "stimulus_id": "persona/x"} for i in range(12)]
    datasets.DatasetDict(train=datasets.Dataset.from_list(rows[:2]),
                         test=datasets.Dataset.from_list(rows)).save_to_disk(str(tmp_path / "ho"))
    with LoopbackServer(responder=_responder) as server:
        code = main(["mitigate", "eval", "--models", f"openai:smollm2@{server.base_url}",
                     "--data", str(tmp_path / "ho"), "--labeler", "keyword",
                     "--judge", f"openai:judge@{server.base_url}",
                     "--lm-eval", "mmlu,gsm8k,ifeval", "--lm-eval-data", str(FIXTURE),
                     "--lm-eval-limit", "12", "--lm-eval-max-tokens", "16",
                     "--out", str(tmp_path / "eval"), "--no-progress"])
        bodies = [r.body for r in server.requests if r.body]
    assert code == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "eval" / "eval_report.json").read_text())["results"][0]
    subsets = {t.task: t.items for t in task_inputs(["mmlu", "gsm8k", "ifeval"], data=FIXTURE,
                                                     limit=12, seed=0)}
    # hand count: the scripted model is right exactly on the "+" questions of the subset
    plus = sum(" + " in item["question"] for item in subsets["mmlu"])
    # PLAIN keeps: no comma (recipe 0), lowercase (1), < N words (4; N >= 15), lowercase and no
    # comma (9); fails capitals, >= N words, bullets, end phrase, keywords, >= 3 sentences
    kept = sum((item["key"] - 1000) % 10 in (0, 1, 4, 9) for item in subsets["ifeval"])
    capability = report["capability"]
    assert (capability["MMLU"]["k"], capability["MMLU"]["n"]) == (plus, 12)
    assert (capability["GSM8K"]["k"], capability["GSM8K"]["n"]) == (0, 12)
    assert (capability["IF(strict)"]["k"], capability["IF(strict)"]["n"]) == (kept, 12)
    assert report["NonDistraction"] == 1.0 and report["Helpfulness"] == 4.0
    assert report["Helpfulness_n"] == 12 and report["fingerprint"] is None  # an API model
    # the requests were lm-eval's chat-completions payloads, the model name passed through
    lm_eval_calls = [b for b in bodies if b.get("seed") == 1234]
    assert len(lm_eval_calls) == 36 and {b["model"] for b in lm_eval_calls} == {"smollm2"}
    assert f"{plus / 12:.3f} [" in printed and "n=12" in printed
    assert "seeded subset 12 of 120" in (tmp_path / "eval" / "table.md").read_text()
