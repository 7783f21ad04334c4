"""Export run-store records to Parquet, CSV or JSONL (chosen by the file extension)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError, missing_extra
from memlens.fileio import atomic_path, atomic_write_text, output_dir, write_error

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


# -- Hugging Face datasets and whole-run exports --------------------------------------------

ALL_FORMATS = ("parquet", "csv", "jsonl", "hf")
"""What ``export_run`` writes: a file per table and format, ``hf`` = ``save_to_disk`` folder."""


def to_dataset(records: list[dict[str, Any]], table: str):
    """The records of ``table`` as a ``datasets.Dataset`` (needs ``datasets``: the ``train``
    extra). Nested values stay nested (``messages`` a list of dicts, ``steps`` a list of
    strings) where Arrow can type them; a column whose rows disagree in type is stored as JSON
    text instead. Keys missing in some rows become None.
    """
    try:
        import datasets
    except ImportError:
        raise missing_extra("datasets", "train") from None
    flat = flatten_records(records, table)
    names = list(dict.fromkeys(name for record in flat for name in record))
    columns = {name: [record.get(name) for record in flat] for name in names}
    try:
        return datasets.Dataset.from_dict(columns)
    except (TypeError, ValueError, OverflowError):  # pyarrow's ArrowInvalid / ArrowTypeError
        pass
    import pyarrow as pa

    fixed = {}
    for name, values in columns.items():
        try:
            pa.array(values)
            fixed[name] = values
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            fixed[name] = [None if value is None else
                           json.dumps(value, ensure_ascii=False, default=str)
                           if isinstance(value, (dict, list, tuple)) else str(value)
                           for value in values]
    return datasets.Dataset.from_dict(fixed)


def save_dataset(records: list[dict[str, Any]], path: Path, table: str) -> int:
    """``to_dataset(...).save_to_disk(path)`` written into a temporary folder beside ``path``
    and renamed into place (an existing folder is replaced only once the new one is complete).
    Returns the row count; load it back with ``datasets.load_from_disk(path)``."""
    import shutil
    import tempfile

    path = Path(path)
    if not path.parent.is_dir():
        raise MemlensError(f"cannot export to '{path}': directory {path.parent} does not exist")
    if path.exists() and not path.is_dir():
        raise MemlensError(f"cannot export to '{path}': a file of that name exists")
    dataset = to_dataset(records, table)
    try:
        temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
        try:
            dataset.save_to_disk(str(temporary / "data"))
            if path.exists():
                shutil.rmtree(path)
            (temporary / "data").rename(path)
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
    except OSError as error:
        raise write_error(path, error) from None
    return len(dataset)


def export_table(store, table: str, path: str | Path, fmt: str | None = None) -> int:
    """Write one table: ``fmt`` in :data:`ALL_FORMATS`, or None to follow ``path``'s extension."""
    path = Path(path)
    if fmt is None:
        return write_records(store.records(table), path, table)
    if fmt not in ALL_FORMATS:
        raise MemlensError(f"unknown export format {fmt!r} (choose from {', '.join(ALL_FORMATS)})")
    if fmt == "hf":
        return save_dataset(store.records(table), path, table)
    if path.suffix.lower() != f".{fmt}":
        raise MemlensError(f"cannot export to '{path}' as {fmt}: the file must end in .{fmt}")
    return write_records(store.records(table), path, table)


def export_run(store, out_dir: str | Path, formats: tuple[str, ...] = ALL_FORMATS,
               tables: list[str] | None = None) -> dict[str, int]:
    """Every table of the run (``responses``, ``failures``, ``manifest`` and each stage table,
    or just ``tables``) in every format, into ``out_dir`` (created): ``<table>.<ext>`` files and
    ``<table>/`` dataset folders for ``hf``. Returns rows per table."""
    out_dir = Path(out_dir)
    unknown = [fmt for fmt in formats if fmt not in ALL_FORMATS]
    if unknown or not formats:
        raise MemlensError(f"unknown export format(s) {', '.join(unknown) or '(none)'} "
                           f"(choose from {', '.join(ALL_FORMATS)})")
    if out_dir.exists() and not out_dir.is_dir():
        raise MemlensError(f"cannot export to '{out_dir}': it is a file, not a directory")
    output_dir(out_dir, "export folder")
    names = tables if tables is not None else ["responses", "failures", "manifest",
                                                *store.tables()]
    counts = {}
    for table in names:
        records = store.records(table)
        for fmt in formats:
            if fmt == "hf":
                save_dataset(records, out_dir / table, table)
            else:
                write_records(records, out_dir / f"{table}.{fmt}", table)
        counts[table] = len(records)
    return counts
