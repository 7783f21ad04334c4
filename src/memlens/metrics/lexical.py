"""Lexical diversity of a model's final answer (paper App. I.3).

The answer is the text inside the last ``<answer>…</answer>`` block (an unclosed ``<answer>`` runs
to the end of the text). Tokens are the word tokens (``\\w+``) of the lowercased answer that are
entirely alphabetic (``str.isalpha``; so "it's" gives "it" and "s", "3rd" and "x_1" are dropped).
With ``T`` the alphabetic tokens and ``U`` the distinct ones:

    D = |U| / |T|,   L = min(1, |T| / 5),   LexDiv = sigmoid(8 · (D·L − 0.2)).

A missing, empty or letter-free answer scores 0.
"""

from __future__ import annotations

import math
import re

from memlens.errors import MemlensError

_WORD = re.compile(r"\w+")


def extract_answer(text: str, tag: str = "answer") -> str | None:
    """Return the content of the last ``<tag>…</tag>`` block, or None when there is none.

    >>> extract_answer("<think>x</think><answer> Paris </answer>")
    ' Paris '
    >>> extract_answer("no tags") is None
    True
    """
    opening = f"<{tag}>"
    start = text.lower().rfind(opening)
    if start < 0:
        return None
    content = text[start + len(opening):]
    end = content.lower().find(f"</{tag}>")
    return content if end < 0 else content[:end]


def alphabetic_tokens(text: str) -> list[str]:
    """The lowercased word tokens of ``text`` made only of letters.

    >>> alphabetic_tokens("It's 3rd-rate: Ça VA!")
    ['it', 's', 'rate', 'ça', 'va']
    """
    return [token for token in _WORD.findall(text.lower()) if token.isalpha()]


def lexical_diversity(text: str | None, *, answer_tag: str | None = "answer",
                      require_answer_tag: bool = False) -> float:
    """Lexical diversity score in (0, 1) of an answer; 0.0 when missing, empty or letter-free.

    With ``answer_tag`` (default ``"answer"``) and a ``<answer>…</answer>`` block in ``text``,
    only the block is scored; text without the tag is scored whole, unless
    ``require_answer_tag=True`` (the paper's rule for raw responses: no answer block → 0).
    ``answer_tag=None`` always scores the whole text.

    >>> round(lexical_diversity("the cat sat on the mat"), 6)  # D = 5/6, L = 1
    0.993736
    >>> round(lexical_diversity("<answer>yes yes</answer>"), 6)  # D = 1/2, L = 2/5
    0.5
    >>> lexical_diversity("<answer>42!</answer>"), lexical_diversity(None)
    (0.0, 0.0)
    """
    if text is None:
        return 0.0
    if not isinstance(text, str):
        raise MemlensError(f"lexical_diversity: expected a str answer, got {type(text).__name__}")
    answer: str | None = text
    if answer_tag is not None:
        answer = extract_answer(text, answer_tag)
        if answer is None:
            answer = None if require_answer_tag else text
    if not answer:
        return 0.0
    tokens = alphabetic_tokens(answer)
    if not tokens:
        return 0.0
    diversity = len(set(tokens)) / len(tokens)
    length_factor = min(1.0, len(tokens) / 5)
    return 1.0 / (1.0 + math.exp(-8.0 * (diversity * length_factor - 0.2)))
