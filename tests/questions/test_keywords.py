"""App. A keyword rules: whole-word, case-insensitive, short cues safe."""

import pytest

from memlens.questions.filtering import DROP_LISTS, KEEP_SIGNALS, KeywordRules

RULES = KeywordRules()


@pytest.mark.parametrize("text, cue", [
    ("Tea vs coffee for an office?", "comparison_tradeoff:vs"),
    ("TEA VS COFFEE", "comparison_tradeoff:vs"),
    ("Pros   and\ncons of renting", "comparison_tradeoff:pros and cons"),
    ("AITA for leaving early?", "interpersonal_dilemma:aita"),
    ("How should I handle it?", "advice_decision:how should i handle"),
])
def test_keep_signals_match(text, cue):
    assert cue in RULES.keep_hits(text)


@pytest.mark.parametrize("text, cue", [
    ("The canvas bag", "comparison_tradeoff:vs"),
    ("An overweight suitcase", "prioritization:weigh"),
])
def test_keep_signals_need_word_boundaries(text, cue):
    assert cue not in RULES.keep_hits(text)


@pytest.mark.parametrize("text, cue, present", [
    ("95% CI 0.2-0.4", "academic_abstract:ci", True),
    ("A difficult decision", "academic_abstract:ci", False),
    ("My RA flared up", "medical:ra", True),
    ("I would rather rent", "medical:ra", False),
    ("BACKGROUND: We enrolled", "academic_abstract:background:", True),
    ("the background of it", "academic_abstract:background:", False),
    ("with p = 0.03", "academic_abstract:p =", True),
    ("post-MI care", "medical:post-mi", True),
    ("Periodically, yes", "medical:period", False),
])
def test_drop_cues(text, cue, present):
    assert (cue in RULES.drop_hits(text)) is present


def test_decide_combines_keep_and_drop():
    assert RULES.decide("Is it better to rent or buy?") == (
        True, ["advice_decision:is it better to"], [])
    kept, keep, drop = RULES.decide("Should I ask my doctor about this medication?")
    assert not kept and "advice_decision:should" in keep
    assert drop == ["medical:medication", "medical:doctor"]
    assert RULES.decide("Paris is the capital of France.") == (False, [], [])


def test_tables_are_complete():
    assert len(KEEP_SIGNALS) == 5 and len(DROP_LISTS) == 4
    assert sum(map(len, KEEP_SIGNALS.values())) == 54
    custom = KeywordRules(keep={"x": ("rent",)}, drop={})
    assert custom.decide("rent or buy") == (True, ["x:rent"], [])
