"""Read a MemDrift directory in the published layout (or memlens' bundled sample).

Layout (every part but ``scenarios/`` optional)::

    scenarios/<dim>.json                   entries (the card's schema)
    rubrics/all_params/<dim>.json          rubrics (memlens' format, see schema.py)
    conversations/<dim>.json               + biased_conversation
    conversations/<dim>_neutral.json       + neutral_conversation
    memories/<framework>/<dim>.json        + biased_retrieved_memory / neutral_retrieved_memory
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError
from memlens.jsonl import parse_json, read_text
from memlens.tooldrift.schema import (
    Entry,
    Rubric,
    check_rubric_against_entry,
    entry_id,
    parse_entry,
    parse_rubric,
)


@dataclass
class Dataset:
    """Entries and rubrics keyed by entry id (``<dim>/<domain>/<scenario_num>``)."""

    root: Path
    entries: dict[str, Entry]
    rubrics: dict[str, Rubric] = field(default_factory=dict)


def bundled_path() -> Path:
    """Folder of memlens' own sample set (35 entries, every dimension × domain, with rubrics)."""
    return Path(str(resources.files("memlens") / "data" / "tooldrift"))


def read_json_list(path: Path) -> list:
    """Parse ``path`` as a JSON list, with a clear error naming the file and line."""
    value = parse_json(read_text(path, "JSON file"), str(path))
    if not isinstance(value, list):
        raise MemlensError(f"{path}: must hold a JSON list of entries, got {type(value).__name__}")
    return value


def _json_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.is_file())


def load_entries(scenarios_dir: Path) -> dict[str, Entry]:
    """All entries of ``scenarios/*.json``; duplicate ids are refused."""
    files = _json_files(scenarios_dir)
    if not files:
        raise MemlensError(f"{scenarios_dir}: no scenario files (*.json) found")
    entries: dict[str, Entry] = {}
    for path in files:
        for index, raw in enumerate(read_json_list(path)):
            entry = parse_entry(raw, str(path), index)
            if entry.id in entries:
                raise MemlensError(f"{path}: entry {index}: duplicate entry id '{entry.id}'")
            entries[entry.id] = entry
    return entries


def resolve_rubrics_dir(path: Path) -> Path:
    """Accept the layout's ``rubrics/`` folder (holding ``all_params/``) or ``all_params/`` itself."""
    path = Path(path)
    if (path / "all_params").is_dir():
        return path / "all_params"
    if path.is_dir() and _json_files(path):
        return path
    raise MemlensError(f"{path}: not a rubrics folder (expected 'all_params/<dim>.json' inside, "
                       "or the all_params folder itself)")


def load_rubrics(path: Path, adapter=None) -> dict[str, Rubric]:
    """All rubrics under ``path`` (see ``resolve_rubrics_dir``).

    ``adapter`` is the adapter point for other rubric formats: a callable taking one raw record
    (and returning a record in memlens' format) applied before validation.
    """
    rubrics: dict[str, Rubric] = {}
    for file in _json_files(resolve_rubrics_dir(path)):
        for index, raw in enumerate(read_json_list(file)):
            rubric = parse_rubric(adapter(raw) if adapter else raw, str(file), index)
            if rubric.id in rubrics:
                raise MemlensError(f"{file}: entry {index}: duplicate rubric id '{rubric.id}'")
            rubrics[rubric.id] = rubric
    return rubrics


def _merge_extras(entries: dict[str, Entry], path: Path, fields: tuple[str, ...],
                  framework: str | None = None) -> None:
    for index, raw in enumerate(read_json_list(path)):
        where = f"{path}: entry {index}"
        if not isinstance(raw, dict):
            raise MemlensError(f"{where}: must be a JSON object")
        try:
            key = entry_id(raw["bias_dimension"], raw["domain"], raw["scenario_num"])
        except KeyError as error:
            raise MemlensError(f"{where}: missing field {error}") from error
        if key not in entries:
            raise MemlensError(f"{where}: entry '{key}' is not in scenarios/")
        added = {name: raw[name] for name in fields if name in raw}
        extras = dict(entries[key].extras)
        if framework is None:
            extras.update(added)
        else:  # several frameworks retrieve for the same entry: keep them apart
            extras["retrieved"] = {**extras.get("retrieved", {}), framework: added}
        entries[key] = replace(entries[key], extras=extras)


def _validate_conversation(entry: Entry, name: str, source: str) -> None:
    items: Any = entry.extras.get(name)
    if items is None:
        return
    where = f"{source}: entry {entry.id}: field '{name}'"
    if not isinstance(items, list):
        raise MemlensError(f"{where} must be a list")
    for position, item in enumerate(items):
        turns = item.get("conversation") if isinstance(item, dict) else None
        if not isinstance(turns, list) or not all(
            isinstance(t, dict) and t.get("role") in ("user", "assistant")
            and isinstance(t.get("content"), str) for t in turns
        ):
            raise MemlensError(f"{where}[{position}].conversation must be a list of "
                               "{role: user|assistant, content} turns")


def load_dataset(path: str | Path | None = None, *, rubrics_adapter=None) -> Dataset:
    """Load and validate a MemDrift directory (None = the bundled sample).

    >>> data = load_dataset()
    >>> len(data.entries), len(data.rubrics)
    (35, 35)
    """
    root = bundled_path() if path is None else Path(path)
    if not (root / "scenarios").is_dir():
        raise MemlensError(f"{root}: not a MemDrift folder (no 'scenarios/' inside)")
    entries = load_entries(root / "scenarios")
    conversations = root / "conversations"
    if conversations.is_dir():
        for file in _json_files(conversations):
            _merge_extras(entries, file, ("biased_conversation", "neutral_conversation"))
        for entry in entries.values():
            for name in ("biased_conversation", "neutral_conversation"):
                _validate_conversation(entry, name, str(conversations))
    memories = root / "memories"
    if memories.is_dir():
        for folder in sorted(p for p in memories.iterdir() if p.is_dir()):
            for file in _json_files(folder):
                _merge_extras(entries, file, ("biased_retrieved_memory", "neutral_retrieved_memory"),
                              framework=folder.name)
    rubrics: dict[str, Rubric] = {}
    if (root / "rubrics").is_dir():
        rubrics = load_rubrics(root / "rubrics", adapter=rubrics_adapter)
        for rubric in rubrics.values():
            if rubric.id not in entries:
                raise MemlensError(f"{root / 'rubrics'}: rubric '{rubric.id}' has no entry in scenarios/")
            check_rubric_against_entry(rubric, entries[rubric.id], str(root / "rubrics"))
    return Dataset(root=root, entries=entries, rubrics=rubrics)
