"""MemSyco-Bench (memory-induced sycophancy; XMUDeepLIT/MemSyco-Bench, MIT) as real control sets.

Two of its tasks are the two sides of selectivity, written by people outside memlens:

- ``contextual_scope_control`` (memory policy ``constrain_to_scope``): the dialogue holds a
  preference that must *not* govern the answer beyond its scope — a **should-not-personalize**
  set (the irrelevant side);
- ``personalized_memory_use`` (policy ``use``): the dialogue holds a preference the answer
  *should* use — a **should-personalize** set (the relevant side).

Each item's own ``dialogue`` is its memory: an audit injects it through ``history`` mode (turn by
turn, ``memlens.stimuli.dialogue``) before the item's ``question``; the no-memory baselines ask
the question alone. The gold annotations — ``memory`` (policy and extracted items) and
``evaluation`` (reference answer, rubric) — are **dropped when a row is read**: a
:class:`MemsycoItem` has no field that could carry them to a model; ``metadata`` is kept as
provenance only (never rendered).

Bundled: an attributed excerpt (``memlens/data/real/memsyco_bench/``: the first rows of each of
the two files, byte-for-byte, with the MIT licence). Point ``folder`` at a copy of the full
release's ``data/`` (the two JSONL files) for all 300 + 300 items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memlens.errors import MemlensError
from memlens.jsonl import UniqueIds, iter_json_objects, read_text
from memlens.questions.should_personalize import ID_PREFIX, ControlQuestion
from memlens.stimuli.dialogue import DialogueStimulus

TASK_FILES = {"contextual_scope_control": "contextual_scope_control.jsonl",
              "personalized_memory_use": "personalized_memory_use.jsonl"}
"""The two MemSyco-Bench tasks memlens reads, and their file names in the release's ``data/``."""
SHOULD_PERSONALIZE = "personalized_memory_use"
CATEGORY = "memsyco"
"""The stimulus category of every MemSyco dialogue (one category: selectivity's overall row)."""
SOURCE = "MemSyco-Bench (XMUDeepLIT/MemSyco-Bench, arXiv 2607.01071)"
LICENSE = "MIT (Copyright (c) 2025 XMU-DeepLIT)"
GOLD_FIELDS = ("memory", "evaluation")
"""Gold annotations of a row: read for validation of the row shape only, never kept."""


def bundled_folder() -> Path:
    """The shipped excerpt's folder (``memlens/data/real/memsyco_bench``)."""
    return Path(__file__).resolve().parents[1] / "data" / "real" / "memsyco_bench"


@dataclass(frozen=True)
class MemsycoItem:
    """What a model may see of one MemSyco-Bench row, plus provenance (no gold field)."""

    id: str
    task: str
    question: str
    dialogue: tuple[dict, ...]
    """``{"role", "content"}`` turns, in order."""
    topic: str = ""
    subtype: str = ""
    row_index: int = 0
    source_file: str = ""

    @property
    def should_personalize(self) -> bool:
        """True for ``personalized_memory_use`` items (memory should be used)."""
        return self.task == SHOULD_PERSONALIZE


def load_memsyco(folder: str | Path | None = None, *, limit: int | None = None
                 ) -> list[MemsycoItem]:
    """Read both tasks from ``folder`` (None = the bundled excerpt): the first ``limit`` items
    of each (None = all). Validated: ``id`` (unique), ``task`` (matching the file), ``question``
    and a non-empty ``dialogue`` of user / assistant turns; problems raise ``MemlensError``
    naming ``file:line`` and the field. ``memory`` and ``evaluation`` are dropped here.
    """
    folder = Path(folder) if folder is not None else bundled_folder()
    if not folder.is_dir():
        raise MemlensError(f"{folder}: MemSyco-Bench folder not found (it should hold "
                           f"{' and '.join(TASK_FILES.values())})")
    if limit is not None and limit < 1:
        raise MemlensError(f"MemSyco-Bench limit must be at least 1, got {limit}")
    items: list[MemsycoItem] = []
    for task, name in TASK_FILES.items():
        path = folder / name
        if not path.is_file():
            raise MemlensError(f"{path}: MemSyco-Bench file not found")
        ids = UniqueIds(str(path))
        count = 0
        for line, row in iter_json_objects(read_text(path, "MemSyco-Bench file"), str(path)):
            if limit is not None and count >= limit:
                break
            item = _item(row, task, f"{path}:{line}", line - 1, name)
            ids.add(item.id, line)
            items.append(item)
            count += 1
        if not count:
            raise MemlensError(f"{path}: no items")
    return items


def _item(row: dict, task: str, where: str, index: int, name: str) -> MemsycoItem:
    for field in ("id", "task", "question"):
        if not isinstance(row.get(field), str) or not row[field].strip():
            raise MemlensError(f"{where}: field '{field}' must be a non-empty string")
    if row["task"] != task:
        raise MemlensError(f"{where}: field 'task' is {row['task']!r}, expected {task!r} "
                           f"in {name}")
    dialogue = row.get("dialogue")
    if not isinstance(dialogue, list) or not dialogue:
        raise MemlensError(f"{where}: field 'dialogue' must be a non-empty list of turns")
    turns = []
    for number, turn in enumerate(dialogue, 1):
        if (not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant")
                or not isinstance(turn.get("content"), str)):
            raise MemlensError(f"{where}: field 'dialogue' turn {number} must be "
                               "{'role': 'user'|'assistant', 'content': text}")
        turns.append({"role": turn["role"], "content": turn["content"]})
    metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    return MemsycoItem(id=row["id"], task=task, question=row["question"].strip(),
                       dialogue=tuple(turns), topic=str(metadata.get("topic") or ""),
                       subtype=str(metadata.get("subtype") or ""), row_index=index,
                       source_file=name)


@dataclass(frozen=True)
class MemsycoQuestion(ControlQuestion):
    """A control-set question made from a MemSyco item: its id is ``sp/memsyco-use/<id>`` or
    ``sp/memsyco-scope/<id>``; ``attributes`` is ``("memsyco",)`` for should-personalize items
    and empty for scope items (the irrelevant side); ``dialogue`` is the item's memory."""

    dialogue: tuple[dict, ...] = ()


def control_questions(items: list[MemsycoItem]) -> list[MemsycoQuestion]:
    """The items as control-set questions (see :class:`MemsycoQuestion`).

    >>> questions = control_questions(load_memsyco(limit=1))
    >>> [(q.id.rsplit("/", 1)[0], q.attributes) for q in questions]
    [('sp/memsyco-scope', ()), ('sp/memsyco-use', ('memsyco',))]
    """
    out = []
    for item in items:
        use = item.should_personalize
        out.append(MemsycoQuestion(
            id=f"{ID_PREFIX}memsyco-{'use' if use else 'scope'}/{item.id}", text=item.question,
            category=item.topic or "memsyco", subcategory=item.subtype or "uncategorized",
            source=SOURCE, license=LICENSE, attributes=(CATEGORY,) if use else (),
            rationale=("memory-use item: the dialogue's preference should shape the answer"
                       if use else "scope-control item: the dialogue's preference must not "
                       "govern the answer beyond its scope"),
            dialogue=item.dialogue))
    return out


def dialogue_stimulus(question: MemsycoQuestion):
    """The question's own dialogue as a ``DialogueStimulus`` (class ``persona``, category
    ``memsyco``, id ``memsyco/<item id>``)."""

    item_id = question.id.split("/", 2)[-1]
    return DialogueStimulus.of(f"memsyco/{item_id}", CATEGORY, question.dialogue)
