"""The should-personalize control set: questions where a user attribute *should* change the
reasoning (a wheelchair user asking about hiking routes, a retiree about pension choices).

Bundled data: ``memlens/data/questions/should_personalize.jsonl`` — 52 questions written for
memlens (CC-BY-4.0): 4 per attribute for 12 stimulus categories, plus 4 depending on two
attributes. Each row names the stimulus categories it depends on (``attributes``) and why
(``rationale``). Ids start with ``sp/`` so an audit keeps these rows apart from the benchmark's
(they feed the selectivity statistics, never the persona-indifferent drift statistics).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, bundled_or_file, iter_json_objects
from memlens.questions.benchmark import Question

CONTROL_SETS = ("should-personalize",)
"""Names accepted by ``--control-set``."""
ID_PREFIX = "sp/"
"""Every control-set question id starts with this."""


@dataclass(frozen=True)
class ControlQuestion(Question):
    """A should-personalize question: a ``Question`` plus the attributes it depends on."""

    attributes: tuple[str, ...] = ()
    """Stimulus categories (e.g. ``disability``) whose memory *should* change the reasoning."""
    rationale: str = ""
    """Why the attributes matter, in one sentence."""


def is_control_question(question_id: str) -> bool:
    """True for a control-set question id.

    >>> is_control_question("sp/age/1"), is_control_question("mlq-001")
    (True, False)
    """
    return str(question_id).startswith(ID_PREFIX)


def load_should_personalize(path: str | Path | None = None,
                            known_categories: set[str] | None = None) -> list[ControlQuestion]:
    """Read a should-personalize set (JSONL; None = the bundled one), validated: ``id`` (starting
    ``sp/``, unique), ``text``, ``category``, ``attributes`` (a non-empty list of distinct
    strings, each in ``known_categories`` when given) and ``rationale`` are required.

    >>> questions = load_should_personalize()
    >>> len(questions), questions[0].attributes
    (52, ('disability',))
    """
    label, text = bundled_or_file(path, "questions/should_personalize.jsonl", "control-set file")
    ids = UniqueIds(label)
    out: list[ControlQuestion] = []
    expected = "a JSON object with id, text, category, attributes and rationale"
    for line_number, row in iter_json_objects(text, label, expected):
        question = _parse(row, f"{label}:{line_number}", known_categories)
        ids.add(question.id, line_number)
        out.append(question)
    if not out:
        raise MemlensError(f"{label}: no questions found")
    return out


def _parse(row: dict, where: str, known: set[str] | None) -> ControlQuestion:
    for name in ("id", "text", "category", "rationale"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise MemlensError(f"{where}: field '{name}' must be a non-empty string")
    if not row["id"].startswith(ID_PREFIX):
        raise MemlensError(f"{where}: field 'id' must start with {ID_PREFIX!r}")
    attributes = row.get("attributes")
    if (not isinstance(attributes, list) or not attributes
            or not all(isinstance(a, str) and a.strip() for a in attributes)
            or len(set(attributes)) != len(attributes)):
        raise MemlensError(f"{where}: field 'attributes' must be a non-empty list of distinct "
                           "stimulus categories")
    if known is not None and set(attributes) - known:
        raise MemlensError(f"{where}: field 'attributes': unknown stimulus categor"
                           f"{'ies' if len(set(attributes) - known) > 1 else 'y'} "
                           f"{', '.join(sorted(set(attributes) - known))} "
                           f"(valid: {', '.join(sorted(known))})")
    values = {name: row.get(name) or default for name, default in (
        ("subcategory", "uncategorized"), ("source", "memlens"),
        ("license", "CC-BY-4.0 (memlens)"))}
    return ControlQuestion(id=row["id"], text=row["text"].strip(), category=row["category"],
                           attributes=tuple(attributes), rationale=row["rationale"].strip(),
                           **{k: str(v) for k, v in values.items()})


def load_control_set(name: str, known_categories: set[str] | None = None
                     ) -> list[ControlQuestion]:
    """A control set by name (:data:`CONTROL_SETS`)."""
    if name not in CONTROL_SETS:
        raise MemlensError(f"unknown control set {name!r} (choose from {', '.join(CONTROL_SETS)})")
    return load_should_personalize(None, known_categories)
