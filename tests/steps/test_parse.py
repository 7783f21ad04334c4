"""split_steps: tagged format and fallbacks, exact spans, and real embedded-model replies."""

import json
import re
from pathlib import Path

import pytest

from memlens.steps import REASONING_INSTRUCTION, extract_answer, split_steps

FIXTURE = Path(__file__).parent / "fixtures" / "embedded_replies.json"


def texts(split):
    return [step.text for step in split.steps]


def assert_spans(text, split):
    for number, step in enumerate(split.steps, start=1):
        assert step.index == number
        assert text[step.start:step.end] == step.text and step.text == step.text.strip()
    starts = [step.start for step in split.steps]
    assert starts == sorted(starts)


def test_tagged_full_format():
    text = ("<think><step_1>Compare costs.</step_1>\n<step_2> Consider time. </step_2></think>"
            "<answer>Rent.</answer>")
    split = split_steps(text)
    assert split.method == "tagged" and split.answer == "Rent."
    assert texts(split) == ["Compare costs.", "Consider time."]
    assert_spans(text, split)


def test_tagged_missing_closing_tags_and_own_think_block():
    text = ("<think>Okay, the user wants steps. Let me plan.</think>\n"
            "<think><step_1>Money first.<step_2>Then time.</think><answer>Buy")
    split = split_steps(text)
    assert split.method == "tagged"
    assert texts(split) == ["Money first.", "Then time."]
    assert split.answer == "Buy"
    assert_spans(text, split)


def test_tagged_variants_and_empty_steps():
    text = "<STEP1>One.</step1><step 2></step 2><step_3>Three.</step_3>"
    assert texts(split_steps(text)) == ["One.", "Three."]
    assert split_steps("<step_1> </step_1>Just prose here.").method == "sentence"


def test_numbered_and_bulleted_lists_keep_surrounding_prose():
    text = ("Here is how I see it:\n\n1. Cost matters.\n2) Time matters\n   a lot.\n"
            "- A bullet.\n• Another.\nStep 5: Decide.\n\nIn short, rent.")
    split = split_steps(text)
    assert split.method == "list"
    assert texts(split) == ["Here is how I see it:", "Cost matters.", "Time matters\n   a lot.",
                            "A bullet.", "Another.", "Decide.", "In short, rent."]
    assert_spans(text, split)


def test_single_list_item_is_not_a_list():
    assert split_steps("1. Only one item. Then a sentence.").method == "sentence"


def test_paragraphs_and_answer_excluded():
    text = "First, costs.\n\n  \nSecond, time.\n\n<answer>Rent</answer>"
    split = split_steps(text)
    assert split.method == "paragraph" and texts(split) == ["First, costs.", "Second, time."]
    assert split.answer == "Rent"
    assert_spans(text, split)


def test_sentences():
    text = 'It depends. Is money tight? "Then rent!" Otherwise buy'
    split = split_steps(text)
    assert split.method == "sentence"
    assert texts(split) == ["It depends.", "Is money tight?", '"Then rent!"', "Otherwise buy"]
    assert_spans(text, split)


@pytest.mark.parametrize("text", ["", "   \n\t ", "<think></think><answer>yes</answer>", None])
def test_empty_responses_have_no_steps(text):
    split = split_steps(text)
    assert split.method == "none" and split.steps == []


def test_extract_answer_takes_last_block():
    assert extract_answer("<answer>a</answer> then <answer> b </answer>") == "b"
    assert extract_answer("") is None
    assert "<step_1>" in REASONING_INSTRUCTION and "<answer>" in REASONING_INSTRUCTION


def test_real_embedded_model_replies():
    """SmolLM2-135M ignores the tags (even when asked) and writes paragraphs; one reply has a
    numbered list. Expected counts were read off the fixture by hand."""
    fixture = json.loads(FIXTURE.read_text())
    assert fixture["settings"]["seed"] == 1234 and len(fixture["replies"]) == 5
    results = [split_steps(reply["text"]) for reply in fixture["replies"]]
    assert [(r.method, len(r.steps)) for r in results] == [
        ("paragraph", 4), ("paragraph", 3), ("paragraph", 4), ("paragraph", 5), ("list", 6)]
    for reply, split in zip(fixture["replies"], results, strict=True):
        assert_spans(reply["text"], split)
        assert _uncovered(reply["text"], split) == set(), "text outside steps beyond list markers"
    listed = results[4]
    assert listed.steps[2].text.startswith("**First reasoning step**:")
    assert listed.steps[-1].text.startswith("The answer is provided by the last reasoning step")


def _uncovered(text, split):
    """Non-whitespace characters not in any step, other than list markers such as ``1.``."""
    covered = {i for step in split.steps for i in range(step.start, step.end)}
    markers = {i for m in re.finditer(r"(?m)^\d+\.", text) for i in range(*m.span())}
    return {i for i, char in enumerate(text) if not char.isspace()} - covered - markers
