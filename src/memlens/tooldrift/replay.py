"""``--replay-memories DIR``: Setting 2 from what a framework retrieved in the published dataset.

``DIR`` is laid out like the MemDrift dataset; ``DIR/memories/<framework>/<dim>.json`` lists
entries (keyed by ``bias_dimension`` / ``domain`` / ``scenario_num``, usually the whole entry)
with ``biased_retrieved_memory`` and ``neutral_retrieved_memory``: what that framework returned
for the professional query. Accepted forms of each field: a list of strings, a list of objects
with the text under ``memory`` / ``text`` / ``content`` (and an optional numeric ``score``), or
one string (one retrieved block; empty = nothing retrieved). Anything else is refused with the
file, the entry and the field.

The replay injects base memory + those texts, exactly as a live framework's answer, records
every item in ``tooldrift_retrieval`` (framework ``replay:<name>``, source attributed as for a
live run, with the ``conversations/`` turns when the data set has them) and runs only the
entries that have replayed memories. No framework is installed or run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlens.errors import MemlensError
from memlens.rowkeys import join_key
from memlens.tooldrift.frameworks import retrieval_flags, source_of
from memlens.tooldrift.loader import Dataset, read_json_list
from memlens.tooldrift.schema import Entry, entry_id

FIELDS = {"biased": "biased_retrieved_memory", "neutral": "neutral_retrieved_memory"}
TEXT_KEYS = ("memory", "text", "content")


def parse_retrieved(value: Any, where: str, field: str) -> list[dict]:
    """``[{"text", "score"}]`` from the ``field`` of one entry (see the module docstring).

    >>> parse_retrieved(["a", {"memory": "b", "score": 0.5}], "m.json: entry 0", "f")
    [{'text': 'a', 'score': None}, {'text': 'b', 'score': 0.5}]
    >>> parse_retrieved("", "m.json: entry 0", "f")
    []
    >>> parse_retrieved([{"score": 1}], "m.json: entry 0", "biased_retrieved_memory")
    Traceback (most recent call last):
    memlens.errors.MemlensError: m.json: entry 0: field 'biased_retrieved_memory[0]' must be a string or an object with a non-empty 'memory', 'text' or 'content' string
    """
    if isinstance(value, str):
        return [{"text": value, "score": None}] if value.strip() else []
    if not isinstance(value, list):
        raise MemlensError(f"{where}: field '{field}' must be a list of retrieved memories or a "
                           f"string, got {type(value).__name__}")
    items = []
    for position, item in enumerate(value):
        at = f"{where}: field '{field}[{position}]'"
        if isinstance(item, str):
            if item.strip():
                items.append({"text": item, "score": None})
            continue
        text = next((item[key] for key in TEXT_KEYS if isinstance(item, dict)
                     and isinstance(item.get(key), str) and item[key].strip()), None)
        if text is None:
            raise MemlensError(f"{at} must be a string or an object with a non-empty "
                               "'memory', 'text' or 'content' string")
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise MemlensError(f"{at}: 'score' must be a number, got {score!r}")
        items.append({"text": text, "score": None if score is None else float(score)})
    return items


def read_replay(root: Path, framework: str, entries: dict[str, Entry]) -> dict[str, dict]:
    """entry id -> {"biased": items, "neutral": items} from ``root/memories/<framework>/``."""
    folder = Path(root) / "memories" / framework
    if not folder.is_dir():
        available = sorted(p.name for p in (Path(root) / "memories").glob("*") if p.is_dir())
        raise MemlensError(f"--replay-memories {root}: no folder memories/{framework}/ "
                           f"(available: {', '.join(available) or 'none'})")
    files = sorted(p for p in folder.glob("*.json") if p.is_file())
    if not files:
        raise MemlensError(f"{folder}: no retrieved-memory files (*.json)")
    replay: dict[str, dict] = {}
    for path in files:
        for index, raw in enumerate(read_json_list(path)):
            where = f"{path}: entry {index}"
            if not isinstance(raw, dict):
                raise MemlensError(f"{where}: must be a JSON object")
            for name in ("bias_dimension", "domain", "scenario_num"):
                if not isinstance(raw.get(name), str) or not raw[name].strip():
                    raise MemlensError(f"{where}: field '{name}' must be a non-empty string")
            key = entry_id(raw["bias_dimension"], raw["domain"], raw["scenario_num"])
            where = f"{where} ({key})"
            if key not in entries:
                raise MemlensError(f"{where}: entry is not in the data set's scenarios/")
            if key in replay:
                raise MemlensError(f"{where}: duplicate entry in memories/{framework}/")
            replay[key] = {}
            for condition, name in FIELDS.items():
                if name not in raw:
                    raise MemlensError(f"{where}: field '{name}' is missing")
                replay[key][condition] = parse_retrieved(raw[name], where, name)
    if not replay:
        raise MemlensError(f"{folder}: the files list no entries")
    return replay


class ReplayMemory:
    """A ``MemorySource`` that replays published retrievals (no framework runs)."""

    def __init__(self, framework: str, replay: dict[str, dict]):
        self.name = f"replay:{framework}"
        self.replay = replay
        self.entry_ids = frozenset(replay)
        """Only these entries are run (the runner's ``select_entries(only=...)``)."""
        self.records: list[dict] = []

    @classmethod
    def load(cls, root: str | Path, framework: str | None, dataset: Dataset) -> ReplayMemory:
        """Read and validate ``root/memories/<framework>/`` against ``dataset``'s entries."""
        if not framework:
            raise MemlensError("--replay-memories needs --framework NAME (whose memories/<NAME>/ "
                               "to replay)")
        return cls(framework, read_replay(Path(root), framework, dataset.entries))

    def memories(self, entry: Entry, condition: str) -> list[str]:
        """Base memory verbatim, then the texts the framework retrieved in the dataset."""
        if condition == "base":
            return entry.memories("base")
        items = self.replay[entry.id][condition]
        for rank, item in enumerate(items):
            self.records.append({"id": join_key(entry.id, condition, rank), "entry_id": entry.id,
                                 "condition": condition, "framework": self.name, "rank": rank,
                                 "text": item["text"], "score": item["score"],
                                 "source": source_of(item["text"], entry)})
        if not items:
            self.records.append({"id": f"{join_key(entry.id, condition)}|none",
                                 "entry_id": entry.id, "condition": condition,
                                 "framework": self.name, "rank": None, "text": None,
                                 "score": None, "source": None})
        return [entry.base_user_memory, *(item["text"] for item in items)]

    def retrieval_of(self, entry_id: str, condition: str) -> tuple[bool, bool] | None:
        """(any memory retrieved, a biased memory retrieved) for one query."""
        return retrieval_flags(self.records, entry_id, condition)

    def close(self) -> None:
        """Nothing to release."""
