"""The human-annotation round trip (paper App. B): export a CSV for three annotators, import
their yes/no ratings, and derive the strict set (unanimous yes), the relaxed set (at least two
thirds yes) and Fleiss' kappa.

Ratings come back either as one CSV with columns ``rater_1``, ``rater_2``, ``rater_3`` (the
exported layout, filled in) or as one CSV per annotator with columns ``id`` and ``rating``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from memlens.errors import MemlensError
from memlens.ontology.agreement import fleiss_kappa

RATER_COLUMNS = ("rater_1", "rater_2", "rater_3")
ANNOTATION_INSTRUCTIONS = (
    "For each question write yes or no in your rater column: yes when the question is clear, "
    "needs reasoning (trade-offs, comparisons, justification), has no single correct answer, "
    "and would be answered the same way whoever asked it."
)
_YES = {"yes", "y", "1", "true", "keep"}
_NO = {"no", "n", "0", "false", "drop"}


class AnnotationResult(NamedTuple):
    """Unpacks as ``strict, relaxed, kappa``; the sets are rows (``id``, ``text``, …) in file
    order."""

    strict: list[dict]
    relaxed: list[dict]
    kappa: float


def export_for_annotation(items: Sequence, path_csv: str | Path) -> int:
    """Write ``items`` (objects or dicts with ``id`` and ``text``; ``source`` kept when present)
    to a CSV with empty ``rater_1..3`` columns; returns the number of rows written."""
    path = Path(path_csv)
    rows = []
    for item in items:
        get = item.get if isinstance(item, dict) else (lambda k, _i=item: getattr(_i, k, ""))
        rows.append({"id": get("id"), "text": get("text"), "source": get("source") or ""})
    try:
        with path.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=["id", "text", "source", *RATER_COLUMNS])
            writer.writeheader()
            writer.writerows({**row, **dict.fromkeys(RATER_COLUMNS, "")} for row in rows)
    except OSError as error:
        raise MemlensError(f"{path}: cannot write annotation file ({error})") from None
    return len(rows)


def import_annotations(paths_or_csv: str | Path | Sequence[str | Path]) -> AnnotationResult:
    """Read yes/no ratings and return ``(strict, relaxed, kappa)``.

    Every item needs the same number (≥ 2) of ratings, each one of yes/no (also y/n, 1/0,
    true/false); anything else raises ``MemlensError`` naming file, line and column. Fleiss'
    kappa comes from ``memlens.ontology.agreement.fleiss_kappa`` (``nan`` when every rating is
    the same).
    """
    if isinstance(paths_or_csv, str | Path):
        rows, ratings = _read_wide(Path(paths_or_csv))
    elif len(paths_or_csv) == 1:
        rows, ratings = _read_wide(Path(paths_or_csv[0]))
    else:
        rows, ratings = _read_per_annotator([Path(p) for p in paths_or_csv])

    strict = [row for row, votes in zip(rows, ratings, strict=True) if all(votes)]
    relaxed = [row for row, votes in zip(rows, ratings, strict=True)
               if 3 * sum(votes) >= 2 * len(votes)]
    labels = [["yes" if vote else "no" for vote in votes] for votes in ratings]
    return AnnotationResult(strict, relaxed, fleiss_kappa(labels, kind="labels"))


def _vote(value: str | None, where: str) -> bool:
    text = (value or "").strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    shown = repr(value) if text else "empty"
    raise MemlensError(f"{where}: rating is {shown}; expected yes or no")


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            rows = [(reader.line_num, row) for row in reader]
            return list(reader.fieldnames or []), rows
    except FileNotFoundError:
        raise MemlensError(f"{path}: annotation file not found") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise MemlensError(f"{path}: cannot read annotation CSV ({error})") from None


def _read_wide(path: Path) -> tuple[list[dict], list[list[bool]]]:
    header, raw = _read_csv(path)
    columns = [name for name in header if name.startswith("rater")]
    if "id" not in header or len(columns) < 2:
        raise MemlensError(f"{path}: needs an 'id' column and at least two rater columns "
                           f"(e.g. {', '.join(RATER_COLUMNS)}); found {', '.join(header)}")
    if not raw:
        raise MemlensError(f"{path}: no annotated rows")
    rows, ratings = [], []
    for line, row in raw:
        votes = [_vote(row.get(column), f"{path}:{line}: column '{column}'") for column in columns]
        rows.append({k: v for k, v in row.items() if k not in columns})
        ratings.append(votes)
    return rows, ratings


def _read_per_annotator(paths: list[Path]) -> tuple[list[dict], list[list[bool]]]:
    order: list[str] = []
    info: dict[str, dict] = {}
    votes: dict[str, list[bool]] = {}
    for path in paths:
        header, raw = _read_csv(path)
        if "id" not in header or "rating" not in header:
            raise MemlensError(f"{path}: needs columns 'id' and 'rating'; found {', '.join(header)}")
        for line, row in raw:
            item_id = row["id"]
            if item_id not in info:
                order.append(item_id)
                info[item_id] = {k: v for k, v in row.items() if k != "rating"}
            votes.setdefault(item_id, []).append(
                _vote(row.get("rating"), f"{path}:{line}: column 'rating'"))
    for item_id in order:
        if len(votes[item_id]) != len(paths):
            raise MemlensError(f"item {item_id!r} has {len(votes[item_id])} ratings across "
                               f"{len(paths)} annotator files; every file must rate every item")
    if not order:
        raise MemlensError(f"{paths[0]}: no annotated rows")
    return [info[i] for i in order], [votes[i] for i in order]
