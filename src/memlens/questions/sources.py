"""Loaders for candidate questions from any source: JSONL, CSV, or a local Hugging Face
``datasets`` copy (``save_to_disk`` folder or a folder ``load_dataset`` understands).

Every candidate keeps its provenance: the ``source`` name and the original ``row_index``.
Nothing is downloaded: the HF loader reads local copies only.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from memlens.errors import MemlensError, missing_extra
from memlens.jsonl import iter_json_objects, read_text

TEXT_FIELD_GUESSES = ("text", "question", "prompt", "title", "input", "Question", "dilemma")
"""Columns tried, in order, when no ``text_field`` is given."""


@dataclass(frozen=True)
class Candidate:
    """A candidate question before filtering, with where it came from."""

    id: str
    text: str
    source: str
    row_index: int
    """0-based index of the row in the source (data rows only, header excluded)."""
    category: str = "uncategorized"
    license: str = "unknown"
    extra: dict = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict:
        """JSON-serialisable form (loadable by ``load_questions``); ``extra`` provenance (e.g. a
        source preset's ``preset`` / ``dataset`` / ``dataset_url``) is added after the core keys."""
        core = {"id": self.id, "text": self.text, "category": self.category,
                "subcategory": "uncategorized", "source": self.source, "license": self.license,
                "row_index": self.row_index}
        return {**core, **{k: v for k, v in self.extra.items() if k not in core}}


def load_candidates(
    path: str | Path,
    text_field: str | None = None,
    source: str | None = None,
    split: str | None = None,
    license: str = "unknown",
) -> list[Candidate]:
    """Read candidates from ``path``: ``.jsonl`` / ``.csv`` by extension, a folder as a local
    HF dataset. ``text_field`` names the column holding the question (default: the first of
    ``TEXT_FIELD_GUESSES`` present). Rows with an empty text are skipped (their index is kept for
    the others). Problems raise ``MemlensError`` naming the file, line and field.
    """
    path = Path(path)
    source = source or path.stem
    rows, label = read_rows(path, split)
    candidates = []
    column = None
    for index, (where, row) in enumerate(rows):
        if column is None:
            column = _pick_text_field(row, text_field, label)
        value = row.get(column)
        if value is None:
            raise MemlensError(f"{where}: field '{column}' is missing")
        if not isinstance(value, str):
            raise MemlensError(f"{where}: field '{column}' must be text, got "
                               f"{type(value).__name__}")
        if not value.strip():
            continue
        category = row.get("category")
        candidates.append(Candidate(
            id=f"{source}:{index}", text=" ".join(value.split()), source=source,
            row_index=index, license=license,
            category=category if isinstance(category, str) and category else "uncategorized",
        ))
    return candidates


def read_rows(path: str | Path, split: str | None = None) -> tuple[list[tuple[str, dict]], str]:
    """Raw rows of a candidate file as ``(where, row)`` pairs plus a label for messages:
    ``.jsonl`` / ``.csv`` by extension, a folder as a local HF dataset (``split`` chooses)."""
    path = Path(path)
    if path.is_dir():
        return _hf_rows(path, split), str(path)
    if not path.exists():
        raise MemlensError(f"{path}: candidate file not found")
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return _jsonl_rows(path), str(path)
    if path.suffix.lower() in (".csv", ".tsv"):
        return _csv_rows(path), str(path)
    raise MemlensError(f"{path}: unsupported candidate file type {path.suffix!r} "
                       "(use .jsonl, .csv or a local datasets folder)")


def _pick_text_field(row: dict, text_field: str | None, label: str) -> str:
    if text_field is not None:
        if text_field not in row:
            raise MemlensError(f"{label}: text field {text_field!r} not found "
                               f"(columns: {', '.join(map(str, row))})")
        return text_field
    for guess in TEXT_FIELD_GUESSES:
        if guess in row:
            return guess
    raise MemlensError(f"{label}: no text column found among {', '.join(map(str, row))}; "
                       "name it with --text-field")


def _jsonl_rows(path: Path) -> list[tuple[str, dict]]:
    return [(f"{path}:{number}", row)
            for number, row in iter_json_objects(read_text(path, "candidate file"), str(path))]


def _csv_rows(path: Path) -> list[tuple[str, dict]]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            rows = []
            for row in reader:
                if None in row:
                    raise MemlensError(f"{path}:{reader.line_num}: more cells than header columns")
                rows.append((f"{path}:{reader.line_num}", row))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise MemlensError(f"{path}: cannot read CSV ({error})") from None
    return rows


def _hf_rows(path: Path, split: str | None) -> list[tuple[str, dict]]:
    try:
        import datasets
    except ImportError:
        raise missing_extra("datasets", "train") from None
    try:
        if (path / "dataset_dict.json").exists() or (path / "state.json").exists():
            data = datasets.load_from_disk(str(path))
        else:
            data = datasets.load_dataset(str(path))
    except Exception as error:  # datasets raises many types for a bad folder
        raise MemlensError(f"{path}: cannot read as a local datasets copy ({error})") from None
    if isinstance(data, datasets.DatasetDict):
        names = list(data)
        chosen = split or ("train" if "train" in names else names[0] if len(names) == 1 else None)
        if chosen not in data:
            raise MemlensError(f"{path}: choose a split with --split (available: {', '.join(names)})")
        data = data[chosen]
    return [(f"{path} row {index}", dict(row)) for index, row in enumerate(data)]
