"""Export run-store records to Parquet, CSV or JSONL (chosen by the file extension)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError
from memlens.fileio import atomic_path, atomic_write_text

FORMATS = (".parquet", ".csv", ".jsonl")
_JSON_COLUMNS = ("messages", "params", "value")


def flatten_records(records: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    """Decode the store's JSON columns; ``responses`` get ``text``, ``finish_reason`` and
    ``tool_calls`` columns in place of the raw ``response`` JSON.

    >>> flatten_records([{"key": "k", "params": '{"t": 0}', "response":
    ...     '{"text": "hi", "finish_reason": "stop", "tool_calls": []}'}], "responses")
    [{'key': 'k', 'params': {'t': 0}, 'text': 'hi', 'finish_reason': 'stop', 'tool_calls': []}]
    """
    flat = []
    for record in records:
        record = dict(record)
        for name in _JSON_COLUMNS:
            if isinstance(record.get(name), str) and table in ("responses", "failures", "manifest"):
                record[name] = json.loads(record[name])
        if table == "responses" and "response" in record:
            response = json.loads(record.pop("response"))
            record["text"] = response.get("text", "")
            record["finish_reason"] = response.get("finish_reason", "")
            record["tool_calls"] = response.get("tool_calls", [])
        flat.append(record)
    return flat


def write_records(records: list[dict[str, Any]], path: Path, table: str) -> int:
    """Write ``records`` of ``table`` to ``path``; returns the row count.

    Nested values (lists, dicts) stay nested in JSONL and become JSON text in CSV / Parquet.
    The file is written atomically (``memlens.fileio``): an interrupted or failed export
    leaves no half-written file and keeps an earlier export intact.
    """
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise MemlensError(f"cannot export to '{path}': the extension must be one of "
                           + ", ".join(FORMATS))
    if not path.parent.is_dir():
        raise MemlensError(f"cannot export to '{path}': directory {path.parent} does not exist")
    flat = flatten_records(records, table)
    if suffix == ".jsonl":
        atomic_write_text(path, "".join(json.dumps(record, ensure_ascii=False, default=str) + "\n"
                                        for record in flat))
    else:
        with atomic_path(path) as temporary:
            _write_table(flat, temporary, suffix)
    return len(flat)


def _write_table(flat: list[dict[str, Any]], path: Path, suffix: str) -> None:
    import pandas as pd

    frame = pd.DataFrame.from_records(
        [{name: _scalar(value) for name, value in record.items()} for record in flat])
    if suffix == ".csv":
        frame.to_csv(path, index=False)
        return
    try:
        frame.to_parquet(path, index=False)
    except (TypeError, ValueError, ImportError) as error:
        if isinstance(error, ImportError):
            raise MemlensError("Parquet export needs pyarrow: pip install pyarrow") from None
        # a column mixing types (e.g. ints and strings) — store such columns as text
        for name in frame.select_dtypes(include="object").columns:
            frame[name] = frame[name].map(lambda value: value if value is None else str(value))
        frame.to_parquet(path, index=False)


def _scalar(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value
