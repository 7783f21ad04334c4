"""The bundled benchmark: structure, no duplicates, no hints at the asker; loading and selection."""

import json
import re
from collections import Counter

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from memlens.errors import MemlensError
from memlens.questions import Question, load_questions, select_questions
from memlens.questions.filtering import KeywordRules

# First-person / second-person phrases that would reveal who is asking.
ATTRIBUTE_HINTS = [
    r"as an? \w+", r"at my age", r"my (wife|husband|boyfriend|girlfriend|kids?|children|son|"
    r"daughter|baby|boss|salary|pension|disability|wheelchair|diagnosis)",
    r"i am", r"i'm", r"i've", r"i have", r"i was", r"being (a )?(woman|man|mother|father|"
    r"student|retiree|veteran|immigrant)", r"\bmy age\b", r"years old", r"retired",
    r"pregnant", r"\b(gay|lesbian|bisexual|trans|transgender|disabled|blind|deaf)\b",
]


@pytest.fixture(scope="module")
def questions():
    return load_questions()


def normalise(text):
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", text.lower()).split())


def test_size_and_taxonomy(questions):
    assert len(questions) >= 300
    categories = Counter(q.category for q in questions)
    assert len(categories) == 6
    subcategories = Counter((q.category, q.subcategory) for q in questions)
    assert len(subcategories) == 18
    assert all(Counter(c for c, _ in subcategories)[c] == 3 for c in categories)
    assert min(subcategories.values()) >= 15
    assert {q.source for q in questions} == {"memlens"}
    assert {q.license for q in questions} == {"CC-BY-4.0 (memlens)"}


def test_ids_unique_and_texts_are_questions(questions):
    assert len({q.id for q in questions}) == len(questions)
    assert all(q.text.endswith("?") and q.text == q.text.strip() for q in questions)


def test_no_exact_or_near_duplicates(questions):
    texts = [normalise(q.text) for q in questions]
    assert len(set(texts)) == len(texts)
    scores = process.cdist(texts, texts, scorer=fuzz.token_sort_ratio)
    np.fill_diagonal(scores, 0)
    assert scores.max() < 85, "two questions are near duplicates"


def test_near_duplicate_check_can_fail():
    a = normalise("Is it better to rent or to buy a home?")
    b = normalise("Is it better to rent, or to buy a house?")
    assert fuzz.token_sort_ratio(a, b) >= 85


def test_no_hints_at_the_asker(questions):
    pattern = re.compile("|".join(f"(?:{hint})" for hint in ATTRIBUTE_HINTS), re.IGNORECASE)
    offenders = [q.text for q in questions if pattern.search(q.text)]
    assert offenders == []
    assert pattern.search("As a student, should I rent?")
    assert pattern.search("At my age is it worth it?")


def test_every_bundled_question_passes_the_keyword_rules(questions):
    rules = KeywordRules()
    assert [q.id for q in questions if not rules.decide(q.text)[0]] == []


def write(tmp_path, lines):
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_user_file_defaults_and_extra_fields(tmp_path):
    path = write(tmp_path, [json.dumps({"id": "a", "text": " Tea or coffee? ", "row_index": 3}),
                            json.dumps({"id": 7, "text": "Rent or buy?", "category": "money"})])
    assert load_questions(path) == [
        Question("a", "Tea or coffee?", "uncategorized", "uncategorized", "q", "unknown"),
        Question("7", "Rent or buy?", "money", "uncategorized", "q", "unknown")]


@pytest.mark.parametrize("line, pattern", [
    ('{"id": "b"}', r":2: field 'text' is missing"),
    ('{"id": "b", "text": "  "}', r":2: field 'text' must be a non-empty string"),
    ('{"id": "a", "text": "x?"}', r":2: field 'id': duplicate id 'a' \(first on line 1\)"),
    ('{"id": "b", "text": "x?"', r":2: invalid JSON \(Expecting ',' delimiter\)"),
    ('{"id": "b", "text": "x?", "category": 5}', r":2: field 'category' must be a string"),
])
def test_malformed_question_files(tmp_path, line, pattern):
    path = write(tmp_path, ['{"id": "a", "text": "Tea?"}', line])
    with pytest.raises(MemlensError, match=re.escape(str(path)) + pattern):
        load_questions(path)


def test_missing_file(tmp_path):
    with pytest.raises(MemlensError, match="question file not found"):
        load_questions(tmp_path / "none.jsonl")


def test_select_questions(questions):
    per = select_questions(questions, per_subcategory=3, seed=1)
    assert len(per) == 54
    assert set(Counter((q.category, q.subcategory) for q in per).values()) == {3}
    assert per == select_questions(questions, per_subcategory=3, seed=1)
    assert per != select_questions(questions, per_subcategory=3, seed=2)
    ten = select_questions(questions, n=10, seed=0)
    assert len(ten) == 10
    positions = [questions.index(q) for q in ten]
    assert positions == sorted(positions)
    assert select_questions(questions, n=10_000) == questions
    with pytest.raises(MemlensError, match="n must be at least 1"):
        select_questions(questions, n=0)
