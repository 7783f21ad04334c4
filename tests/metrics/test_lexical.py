"""Lexical diversity (paper App. I.3), hand-computed."""

import math

import pytest

from memlens.errors import MemlensError
from memlens.metrics import lexical_diversity
from memlens.metrics.lexical import alphabetic_tokens, extract_answer


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_all_distinct_long_answer():
    # 6 distinct tokens: D = 1, L = 1 -> sigmoid(8 * 0.8)
    assert lexical_diversity("Paris is the capital of France.") == pytest.approx(sigmoid(6.4))


def test_repeats_lower_the_score():
    # the cat sat on the mat: |T| = 6, |U| = 5
    assert lexical_diversity("the cat sat on the mat") == pytest.approx(sigmoid(8 * (5 / 6 - 0.2)))
    # ten times the same word: D = 1/10, L = 1
    assert lexical_diversity("no " * 10) == pytest.approx(sigmoid(8 * (0.1 - 0.2)))


def test_short_answers_are_scaled_down():
    assert lexical_diversity("Yes") == pytest.approx(sigmoid(8 * (1 * 1 / 5 - 0.2)))  # = 0.5
    assert lexical_diversity("yes YES") == pytest.approx(sigmoid(8 * (0.5 * 2 / 5 - 0.2)))
    assert lexical_diversity("red green blue white") == pytest.approx(sigmoid(8 * (0.8 - 0.2)))


def test_case_folding_and_non_alphabetic_tokens():
    # "Dog dog DOG 42 x_1 3rd": alphabetic tokens dog dog dog -> D = 1/3, L = 3/5
    assert lexical_diversity("Dog dog DOG 42 x_1 3rd") == pytest.approx(sigmoid(8 * (0.2 - 0.2)))
    assert alphabetic_tokens("Don't stop-now, 2024!") == ["don", "t", "stop", "now"]


@pytest.mark.parametrize("text", [None, "", "   ", "42 + 7 = 49", "<answer></answer>",
                                  "<answer> 3.14 </answer>"])
def test_missing_empty_or_letter_free_scores_zero(text):
    assert lexical_diversity(text) == 0.0


def test_only_the_answer_block_is_scored():
    text = "<think>the the the the the the</think><answer>Blue sky above all</answer>"
    assert lexical_diversity(text) == pytest.approx(sigmoid(8 * (0.8 - 0.2)))
    # the last answer block counts; an unclosed block runs to the end
    assert extract_answer("<answer>a</answer> <answer>b c") == "b c"
    assert lexical_diversity("x <ANSWER>one two</ANSWER>") == pytest.approx(sigmoid(8 * (0.4 - 0.2)))


def test_missing_answer_tag():
    assert lexical_diversity("plain words only here") == pytest.approx(sigmoid(8 * (0.8 - 0.2)))
    assert lexical_diversity("plain words only here", require_answer_tag=True) == 0.0
    assert lexical_diversity("<answer>x</answer> y", answer_tag=None) == pytest.approx(
        sigmoid(8 * (3 / 4 * 4 / 5 - 0.2)))  # tokens: answer x answer y


def test_non_string_is_a_clear_error():
    with pytest.raises(MemlensError, match="expected a str"):
        lexical_diversity(["a list"])
