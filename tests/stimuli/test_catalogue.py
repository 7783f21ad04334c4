"""The bundled stimulus catalogue, user-file validation and seeded selection."""

import json
import re

import pytest

from memlens.errors import MemlensError
from memlens.stimuli import STIMULUS_CLASSES, Stimulus, load_stimuli, select_stimuli

PERSONA_CATEGORIES = {"gender", "age", "sexual_orientation", "trans_status", "occupation",
                      "education", "income", "disability", "appearance", "physical_traits"}
FILLER_WORDS = {"um", "uh", "so", "well", "okay", "hmm", "like", "yeah", "er", "anyway"}


@pytest.fixture(scope="module")
def bundled():
    return load_stimuli()


def by_class(stimuli, name):
    return [s for s in stimuli if s.stimulus_class == name]


def test_bundled_structure(bundled):
    assert [s.id for s in by_class(bundled, "control")] == ["control/no_perturbation"]
    assert by_class(bundled, "control")[0].text == ""
    noise = by_class(bundled, "noise")
    assert {s.category for s in noise} == {"filler", "whitespace", "punctuation"}
    assert all(sum(s.category == c for s in noise) >= 3 for c in ("filler", "whitespace", "punctuation"))
    persona = by_class(bundled, "persona")
    assert {s.category for s in persona} == PERSONA_CATEGORIES
    assert all(sum(s.category == c for s in persona) >= 4 for c in PERSONA_CATEGORIES)
    life = by_class(bundled, "life_event")
    categories = {s.category for s in life}
    assert len(categories) == 10
    assert {"childhood_adversity", "serious_illness", "bereavement", "job_loss"} <= categories
    assert all(sum(s.category == c for s in life) == 3 for c in categories)
    assert len({s.id for s in bundled}) == len(bundled) == 93


def test_ids_follow_class_and_category(bundled):
    for s in bundled:
        parts = s.id.split("/")
        assert parts[0] == s.stimulus_class
        if s.stimulus_class != "control":
            assert parts[1] == s.category and len(parts) == 3


def test_noise_has_no_propositional_content(bundled):
    for s in by_class(bundled, "noise"):
        if s.category == "whitespace":
            assert s.text and not s.text.strip()
        elif s.category == "punctuation":
            assert s.text.strip() and not re.search(r"\w", s.text)
        else:
            assert set(re.findall(r"[a-z]+", s.text.lower())) <= FILLER_WORDS


def test_persona_single_line_and_life_events_multi_sentence(bundled):
    for s in by_class(bundled, "persona"):
        assert "\n" not in s.text and s.text.startswith(("I ", "I'm ", "My ", "People "))
        assert len(re.findall(r"[.!?]", s.text)) == 1
    for s in by_class(bundled, "life_event"):
        assert len(re.findall(r"[.!?](?:\s|$)", s.text)) >= 2


def write_rows(tmp_path, rows):
    path = tmp_path / "stimuli.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


GOOD = {"id": "persona/age/x", "class": "persona", "category": "age", "text": "I am 30."}


def test_user_file_round_trip(tmp_path):
    path = write_rows(tmp_path, [GOOD, {**GOOD, "id": "control/none", "class": "control",
                                        "category": "no_perturbation", "text": ""}])
    assert load_stimuli(path) == [Stimulus("persona/age/x", "persona", "age", "I am 30."),
                                  Stimulus("control/none", "control", "no_perturbation", "")]


@pytest.mark.parametrize("second, pattern", [
    ({**GOOD, "id": "b", "class": "persona_x"}, r":2: field 'class': unknown class 'persona_x'"),
    ({**GOOD}, r":2: field 'id': duplicate id 'persona/age/x' \(first on line 1\)"),
    ({"id": "b", "class": "noise", "text": "..."}, r":2: field 'category' is missing"),
    ({**GOOD, "id": "b", "text": 3}, r":2: field 'text' must be a string"),
    ('{"id": "b", "class": ', r":2: invalid JSON \(Expecting value\)"),
    ('["a", "b"]', r":2: expected a JSON object"),
])
def test_user_file_errors_name_line_and_field(tmp_path, second, pattern):
    path = write_rows(tmp_path, [GOOD, second])
    with pytest.raises(MemlensError, match=re.escape(str(path)) + pattern):
        load_stimuli(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(MemlensError, match="not found"):
        load_stimuli(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(MemlensError, match="no stimuli found"):
        load_stimuli(tmp_path / "empty.jsonl")


def test_select_by_class_and_category(bundled):
    noise = select_stimuli(bundled, classes=["noise"])
    assert len(noise) == 12 and all(s.stimulus_class == "noise" for s in noise)
    picked = select_stimuli(bundled, categories=["age", "no_perturbation"])
    assert [s.id for s in picked][:2] == ["control/no_perturbation", "persona/age/young_adult"]
    assert len(picked) == 6


def test_select_per_category_is_seeded(bundled):
    first = select_stimuli(bundled, classes=["persona"], per_category=2, seed=3)
    again = select_stimuli(bundled, classes=["persona"], per_category=2, seed=3)
    assert first == again and len(first) == 20
    assert all(sum(s.category == c for s in first) == 2 for c in PERSONA_CATEGORIES)
    draws = {tuple(s.id for s in select_stimuli(bundled, classes=["persona"], per_category=1,
                                                 seed=seed)) for seed in range(5)}
    assert len(draws) > 1
    order = [s.id for s in bundled]
    assert [order.index(s.id) for s in first] == sorted(order.index(s.id) for s in first)


def test_select_unknown_names_list_valid_ones(bundled):
    with pytest.raises(MemlensError, match=r"unknown stimulus category 'agee' \(valid: .*age,"):
        select_stimuli(bundled, categories=["agee"])
    with pytest.raises(MemlensError, match="unknown stimulus class 'persona_cues'"):
        select_stimuli(bundled, classes=["persona_cues"])
    with pytest.raises(MemlensError, match="per_category must be at least 1"):
        select_stimuli(bundled, per_category=0)
    assert set(STIMULUS_CLASSES) == {s.stimulus_class for s in bundled}
