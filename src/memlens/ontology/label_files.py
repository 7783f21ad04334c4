"""Steps and label files (JSON lines): reading with line-numbered errors, grouping, writing.

A steps file has one step per line: ``{"id": ..., "text": ...}``, optionally ``"response_id"``
(steps sharing it, in file order, form one response — the LLM labeler labels them in one call).
A labels file keeps ``id`` (and any other input fields) and adds ``label`` and ``root``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, iter_json_objects, read_text
from memlens.ontology.schema import Ontology


def read_jsonl(path: str | Path, required: tuple[str, ...],
               what: str = "JSON-lines file") -> list[dict]:
    """Rows of a JSON-lines file; each must be an object with string ``required`` fields and a
    unique ``id``. Blank lines are skipped. Errors name the file (as ``what``) and line."""
    label = str(Path(path))
    expected = "a JSON object with fields " + ", ".join(required)
    rows, ids = [], UniqueIds(label)
    for number, row in iter_json_objects(read_text(path, what), label, expected):
        for name in required:
            if name not in row:
                raise MemlensError(f"{label}:{number}: missing field '{name}'")
            allowed = str | int if name == "id" else str  # ids may be numbers, text may not
            if not isinstance(row[name], allowed) or isinstance(row[name], bool):
                raise MemlensError(f"{label}:{number}: field '{name}' must be a string")
        row["id"] = str(row["id"])
        ids.add(row["id"], number)
        rows.append(row)
    if not rows:
        raise MemlensError(f"{label}: no rows")
    return rows


def read_steps(path: str | Path) -> list[dict]:
    """Rows with ``id`` and ``text`` (see the module docstring)."""
    rows = read_jsonl(path, ("id", "text"), "steps file")
    for row in rows:
        row["text"] = str(row["text"])
    return rows


def read_labels(path: str | Path, ontology: Ontology | None = None) -> list[dict]:
    """Rows with ``id`` and ``label``; with ``ontology``, labels must be its ids or ``unlabeled``
    and ``root`` is filled in when missing."""
    rows = read_jsonl(path, ("id", "label"), "labels file")
    if ontology is not None:
        known = set(ontology.symbol_ids) | {"unlabeled"}
        for row in rows:
            if row["label"] not in known:
                raise MemlensError(f"{path}: row id '{row['id']}' has unknown label "
                                   f"'{row['label']}' for ontology {ontology.name}")
            row.setdefault("root", ontology.root_of(row["label"]))
    return rows


def group_responses(rows: list[dict]) -> list[list[int]]:
    """Row indexes grouped into responses by ``response_id`` (first-seen order); rows without
    one are responses of their own.

    >>> group_responses([{"response_id": "r"}, {}, {"response_id": "r"}])
    [[0, 2], [1]]
    """
    groups: dict[object, list[int]] = {}
    for index, row in enumerate(rows):
        key = ("response", str(row["response_id"])) if "response_id" in row else ("row", index)
        groups.setdefault(key, []).append(index)
    return list(groups.values())


def label_rows(labeler, rows: list[dict], ontology: Ontology) -> list[dict]:
    """Label step rows; each output row is the input row plus ``label`` and ``root``."""
    groups = group_responses(rows)
    labels = labeler.label([[rows[index]["text"] for index in group] for group in groups])
    out: list[dict | None] = [None] * len(rows)
    for group, symbols in zip(groups, labels, strict=True):
        for index, symbol in zip(group, symbols, strict=True):
            out[index] = {**rows[index], "label": symbol, "root": ontology.root_of(symbol)}
    return out  # type: ignore[return-value]  # every row belongs to one group


def write_jsonl(path: str | Path, rows: list[dict]) -> Path:
    """Write rows as JSON lines (UTF-8), creating parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def audit_sample(rows: list[dict], n: int, seed: int = 0) -> list[dict]:
    """A seeded random sample of ``n`` label rows (all rows when fewer), in file order."""
    if n < 1:
        raise MemlensError(f"--n must be at least 1, got {n}")
    chosen = np.random.default_rng(seed).choice(len(rows), size=min(n, len(rows)), replace=False)
    return [rows[index] for index in sorted(chosen)]


def write_audit_csv(path: str | Path, rows: list[dict]) -> Path:
    """CSV for human audit: id, text, label, root, and empty ``human_label`` / ``verdict`` /
    ``note`` columns (verdict: agree | disagree | ambiguous, as in App. C.5)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text", "label", "root", "human_label", "verdict", "note"])
        for row in rows:
            writer.writerow([row["id"], row.get("text", ""), row["label"], row.get("root", ""),
                             "", "", ""])
    return path
