"""The should-personalize control set: size, categories, the benchmark's quality checks."""

import json
import re
from collections import Counter

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from memlens.errors import MemlensError
from memlens.questions import load_questions
from memlens.questions.should_personalize import (
    ControlQuestion,
    is_control_question,
    load_control_set,
    load_should_personalize,
)
from memlens.stimuli import load_stimuli

HINTS = [r"as an? \w+", r"at my age", r"\bmy age\b", r"years old", r"\bi am\b", r"\bi'm\b",
         r"\bi have\b", r"\bi was\b", r"retired", r"pregnant", r"my (wife|husband|kids?|children|"
         r"son|daughter|baby|salary|pension|disability|wheelchair|diagnosis)",
         r"\b(gay|lesbian|bisexual|trans|transgender|disabled|blind|deaf|widow\w*)\b"]


@pytest.fixture(scope="module")
def items():
    return load_should_personalize()


def normalise(text):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def test_size_and_categories(items):
    assert len(items) == 52 and all(isinstance(q, ControlQuestion) for q in items)
    per_attribute = Counter(a for q in items for a in q.attributes)
    assert len(per_attribute) == 12 and min(per_attribute.values()) >= 4
    assert Counter(len(q.attributes) for q in items) == {1: 48, 2: 4}
    assert set(Counter(q.category for q in items)) == {
        "travel", "home", "work", "money", "health", "learning", "leisure", "family"}
    assert {q.source for q in items} == {"memlens"}
    assert {q.license for q in items} == {"CC-BY-4.0 (memlens)"}


def test_every_item_names_known_attributes_and_a_rationale(items):
    catalogue = {s.category for s in load_stimuli() if s.stimulus_class in ("persona",
                                                                              "life_event")}
    assert all(q.attributes and set(q.attributes) <= catalogue for q in items)
    assert all(len(q.rationale) > 20 for q in items)
    # validated on load too
    assert load_control_set("should-personalize", catalogue) == items


def test_ids_unique_prefixed_and_texts_are_questions(items):
    assert len({q.id for q in items}) == len(items)
    assert all(is_control_question(q.id) for q in items)
    assert all(q.text.endswith("?") and q.text == q.text.strip() for q in items)


def test_no_exact_or_near_duplicates_within_the_set_or_with_the_benchmark(items):
    texts = [normalise(q.text) for q in items]
    assert len(set(texts)) == len(texts)
    scores = process.cdist(texts, texts, scorer=fuzz.token_sort_ratio)
    np.fill_diagonal(scores, 0)
    assert scores.max() < 85, "two control questions are near duplicates"
    bench = [normalise(q.text) for q in load_questions()]
    assert process.cdist(texts, bench, scorer=fuzz.token_sort_ratio).max() < 85


def test_questions_do_not_state_the_attribute_themselves(items):
    pattern = re.compile("|".join(f"(?:{hint})" for hint in HINTS), re.IGNORECASE)
    assert [q.text for q in items if pattern.search(q.text)] == []
    assert pattern.search("I'm 72, should I buy stocks?")


@pytest.mark.parametrize(("row", "message"), [
    ({"id": "x/1", "text": "Q?", "category": "c", "attributes": ["age"], "rationale": "r"},
     "must start with 'sp/'"),
    ({"id": "sp/1", "text": "Q?", "category": "c", "attributes": [], "rationale": "r"},
     "'attributes' must be a non-empty list"),
    ({"id": "sp/1", "text": "Q?", "category": "c", "attributes": ["age", "age"], "rationale": "r"},
     "distinct"),
    ({"id": "sp/1", "text": "Q?", "category": "c", "rationale": "r"}, "'attributes'"),
    ({"id": "sp/1", "text": "Q?", "category": "c", "attributes": ["age"]}, "'rationale'"),
    ({"id": "sp/1", "text": "Q?", "category": "c", "attributes": ["hair"], "rationale": "r"},
     "unknown stimulus category hair"),
])
def test_bad_rows_name_file_and_line(tmp_path, row, message):
    path = tmp_path / "sp.jsonl"
    good = {"id": "sp/0", "text": "Fine?", "category": "c", "attributes": ["age"],
            "rationale": "r"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(MemlensError, match=r"sp\.jsonl:2") as caught:
        load_should_personalize(path, {"age", "income"})
    assert message in str(caught.value)


def test_duplicate_id_and_unknown_set(tmp_path):
    row = {"id": "sp/0", "text": "Fine?", "category": "c", "attributes": ["age"],
           "rationale": "r"}
    path = tmp_path / "sp.jsonl"
    path.write_text((json.dumps(row) + "\n") * 2)
    with pytest.raises(MemlensError, match="sp.jsonl"):
        load_should_personalize(path)
    with pytest.raises(MemlensError, match="unknown control set"):
        load_control_set("nope")
