"""Split a reasoning response into ordered steps with exact character spans (SPEC §1.4).

Order of attempts:

1. ``tagged`` — ``<step_1>…</step_1>`` blocks (inside an optional ``<think>``); a missing
   closing tag ends the step at the next step tag, ``</think>``, ``<answer>`` or the end;
2. ``list`` — at least two numbered (``1.``, ``2)``, ``(3)``, ``Step 4:``) or bulleted
   (``-``, ``*``, ``•``) items; each item is a step, and so is each paragraph of prose around
   the list (nothing is dropped);
3. ``paragraph`` — at least two blank-line-separated blocks;
4. ``sentence`` — sentences ending in ``.``, ``!`` or ``?`` (or the end of the text);
5. ``none`` — nothing but whitespace (and tags): zero steps, recorded by the caller.

The ``<answer>`` block is never a step; ``extract_answer`` returns it. Fallbacks run on a copy
of the text in which the answer block and ``<think>`` tags are blanked out with spaces, so every
span still indexes the original text and ``text[step.start:step.end] == step.text``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

METHODS = ("tagged", "list", "paragraph", "sentence", "none")

_STEP_OPEN = re.compile(r"<step[_ ]?(\d+)\s*>", re.IGNORECASE)
_STEP_CLOSE = re.compile(r"</step(?:[_ ]?\d+)?\s*>", re.IGNORECASE)
_BOUNDARY = re.compile(r"<step[_ ]?\d+\s*>|</think\s*>|<answer\s*>", re.IGNORECASE)
_ANSWER = re.compile(r"<answer\s*>(.*?)(?:</answer\s*>|$)", re.IGNORECASE | re.DOTALL)
_THINK_TAG = re.compile(r"</?think\s*>", re.IGNORECASE)
_ANY_STEP_TAG = re.compile(r"</?step(?:[_ ]?\d+)?\s*>", re.IGNORECASE)
_LIST_MARKER = re.compile(
    r"[ \t]*(?:\d{1,3}[.)]|\(\d{1,3}\)|[-*•+]|step\s*\d{1,3}\s*[:.)-])[ \t]+(?=\S)", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE = re.compile(r"\S.*?(?:[.!?]+(?=[\"')\]]*(?:\s|$))[\"')\]]*|$)", re.DOTALL)


@dataclass(frozen=True)
class Step:
    """One reasoning step: position in the response, its text and its span in the response."""

    index: int
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class StepSplit:
    """The steps of one response and how they were found (one of ``METHODS``)."""

    steps: list[Step]
    method: str
    answer: str | None = field(default=None)
    """The ``<answer>`` content when present (stripped), else None."""


def extract_answer(text: str) -> str | None:
    """The content of the last ``<answer>`` block (closing tag optional), stripped; else None.

    >>> extract_answer("<think><step_1>a</step_1></think><answer> Rent. </answer>")
    'Rent.'
    >>> extract_answer("no tags") is None
    True
    """
    matches = list(_ANSWER.finditer(text or ""))
    return matches[-1].group(1).strip() if matches else None


def split_steps(text: str) -> StepSplit:
    """Split ``text`` into steps (see the module docstring for the order of methods).

    >>> split = split_steps("<think><step_1>Costs.</step_1><step_2>Time.</think><answer>A</answer>")
    >>> split.method, [s.text for s in split.steps], split.answer
    ('tagged', ['Costs.', 'Time.'], 'A')
    >>> split_steps("1. Money matters.\\n2. So does time.").method
    'list'
    >>> split_steps("   ").method
    'none'
    """
    text = text or ""
    answer = extract_answer(text)
    tagged = _tagged_steps(text)
    if tagged:
        return StepSplit(_numbered(text, tagged), "tagged", answer)
    region = _mask(text)
    for method, finder in (("list", _list_spans), ("paragraph", _paragraph_spans),
                           ("sentence", _sentence_spans)):
        spans = finder(region)
        if spans:
            return StepSplit(_numbered(text, spans), method, answer)
    return StepSplit([], "none", answer)


def _numbered(text: str, spans: list[tuple[int, int]]) -> list[Step]:
    return [Step(index, text[start:end], start, end)
            for index, (start, end) in enumerate(spans, start=1)]


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Shrink [start, end) to exclude surrounding whitespace; None when nothing is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _tagged_steps(text: str) -> list[tuple[int, int]]:
    spans = []
    for opening in _STEP_OPEN.finditer(text):
        start = opening.end()
        boundary = _BOUNDARY.search(text, start)
        limit = boundary.start() if boundary else len(text)
        closing = _STEP_CLOSE.search(text, start, limit)
        end = closing.start() if closing else limit
        span = _trim(text, start, end)
        if span:
            spans.append(span)
    return spans


def _mask(text: str) -> str:
    """Blank out the answer block and think / stray step tags, keeping every offset."""
    def blank(match: re.Match) -> str:
        return re.sub(r"\S", " ", match.group(0))

    masked = _ANSWER.sub(blank, text)
    masked = _THINK_TAG.sub(blank, masked)
    return _ANY_STEP_TAG.sub(blank, masked)


def _paragraph_blocks(region: str) -> list[tuple[int, int]]:
    blocks, position = [], 0
    for gap in _BLANK_LINE.finditer(region):
        blocks.append((position, gap.start()))
        position = gap.end()
    blocks.append((position, len(region)))
    return [span for start, end in blocks if (span := _trim(region, start, end))]


def _paragraph_spans(region: str) -> list[tuple[int, int]]:
    blocks = _paragraph_blocks(region)
    return blocks if len(blocks) >= 2 else []


def _list_spans(region: str) -> list[tuple[int, int]]:
    """Items start at a marker at a line start and run to the next item or blank line; prose
    outside items becomes one step per paragraph."""
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", region)]
    items = [(pos, m.end()) for pos in line_starts if (m := _LIST_MARKER.match(region, pos))]
    if len(items) < 2:
        return []
    spans, position = [], 0
    for index, (line_start, content_start) in enumerate(items):
        spans += _paragraph_blocks_between(region, position, line_start)
        next_item = items[index + 1][0] if index + 1 < len(items) else len(region)
        gap = _BLANK_LINE.search(region, content_start, next_item)
        end = gap.start() if gap else next_item
        if span := _trim(region, content_start, end):
            spans.append(span)
        position = end
    spans += _paragraph_blocks_between(region, position, len(region))
    return spans


def _paragraph_blocks_between(region: str, start: int, end: int) -> list[tuple[int, int]]:
    return [(start + s, start + e) for s, e in _paragraph_blocks(region[start:end])]


def _sentence_spans(region: str) -> list[tuple[int, int]]:
    return [span for m in _SENTENCE.finditer(region) if (span := _trim(region, *m.span()))]
