"""CALLS rows: one recorded tool call per (entry, condition, k), read from / written to JSONL.

Row fields: ``entry_id`` (``<dim>/<domain>/<scenario_num>``), ``condition`` (base | neutral |
biased), ``k`` (0-based), ``status`` (ok | no_call | invalid), ``arguments`` (object or null).
Extra fields (``error``, ``violations``, ``text``, ...) are kept and ignored by the scorer.
"""

from __future__ import annotations

import json
from pathlib import Path

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.jsonl import iter_json_objects, read_text
from memlens.tooldrift.schema import CONDITIONS

STATUSES = ("ok", "no_call", "invalid")


def validate_call_row(row: object, where: str) -> dict:
    """Check one CALLS row and return it; errors name ``where`` and the field.

    >>> validate_call_row({"entry_id": "a/b/c", "condition": "base", "k": 0, "status": "ok",
    ...                    "arguments": None}, "calls.jsonl:1")
    Traceback (most recent call last):
    memlens.errors.MemlensError: calls.jsonl:1: field 'arguments' must be an object when status is 'ok'
    """
    if not isinstance(row, dict):
        raise MemlensError(f"{where}: must be a JSON object")
    entry = row.get("entry_id")
    if not isinstance(entry, str) or entry.count("/") != 2:
        raise MemlensError(f"{where}: field 'entry_id' must look like "
                           f"'<bias_dimension>/<domain>/<scenario_num>', got {entry!r}")
    if row.get("condition") not in CONDITIONS:
        raise MemlensError(f"{where}: field 'condition' must be one of {', '.join(CONDITIONS)}, "
                           f"got {row.get('condition')!r}")
    k = row.get("k")
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise MemlensError(f"{where}: field 'k' must be a non-negative integer, got {k!r}")
    if row.get("status") not in STATUSES:
        raise MemlensError(f"{where}: field 'status' must be one of {', '.join(STATUSES)}, "
                           f"got {row.get('status')!r}")
    arguments = row.get("arguments")
    if row["status"] == "ok" and not isinstance(arguments, dict):
        raise MemlensError(f"{where}: field 'arguments' must be an object when status is 'ok'")
    if arguments is not None and not isinstance(arguments, dict):
        raise MemlensError(f"{where}: field 'arguments' must be an object or null")
    return row


def read_calls(path: str | Path) -> list[dict]:
    """Read and validate a CALLS JSONL file; duplicate (entry, condition, k) rows are refused."""
    label = str(Path(path))
    rows, first_line = [], {}
    for number, row in iter_json_objects(read_text(path, "calls file"), label):
        where = f"{label}:{number}"
        validate_call_row(row, where)
        key = (row["entry_id"], row["condition"], row["k"])
        if key in first_line:
            raise MemlensError(f"{where}: duplicate row for {key} (first on line "
                               f"{first_line[key]})")
        first_line[key] = number
        rows.append(row)
    if not rows:
        raise MemlensError(f"{label}: no call rows")
    return rows


def write_calls(rows: list[dict], path: str | Path) -> Path:
    """Write CALLS rows as JSONL (sorted by entry, condition, k)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    order = {condition: i for i, condition in enumerate(CONDITIONS)}
    ordered = sorted(rows, key=lambda r: (r["entry_id"], order[r["condition"]], r["k"]))
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ordered))
    return path
