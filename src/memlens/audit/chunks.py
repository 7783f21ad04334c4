"""Incremental stage state of a chunked audit: read the stage tables once, then let every chunk
touch only its own questions.

``run_audit`` processes whole questions in chunks (generate -> steps -> labels -> drift). The
stages used to re-read the whole ``audit_steps``, ``audit_labels`` and ``audit_drift_pairs``
tables on every chunk — quadratic work at paper size (28,000 responses: ~2 s per read, ~28
chunks). ``StageRows`` holds those tables in memory, loaded once, and is updated as each chunk
writes; ``drift_chunk`` pairs and scores one chunk's questions. Drift rows never pair responses
of different questions, so a chunk's drift depends only on its own rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.audit.drift import (
    DRIFT_TABLE,
    PAIRS_TABLE,
    DriftPairs,
    DriftRow,
    PairRow,
    aggregate_pairs,
    drift_pairs,
    score_pairs,
)
from memlens.audit.generate import STEPS_TABLE, StepsRow
from memlens.audit.labels import LABELS_TABLE, LabelsRow

FLAG = "excluded_orthogonality"  # memlens.audit.orthogonality.FLAG (no import: no cycle)


@dataclass
class StageRows:
    """In-memory copy of the steps, labels and drift-pair tables, indexed for chunk lookups."""

    steps: dict[str, StepsRow] = field(default_factory=dict)
    labels: dict[str, LabelsRow] = field(default_factory=dict)
    pairs: dict[str, PairRow] = field(default_factory=dict)
    _steps_by_question: dict[str, list[str]] = field(default_factory=dict)
    _pairs_by_question: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def load(cls, store) -> StageRows:
        """One read of each table (a resumed run starts from what is stored)."""
        state = cls(labels={row["id"]: row for row in store.rows(LABELS_TABLE)})
        state.add_steps(store.rows(STEPS_TABLE))
        state.add_pairs(store.rows(PAIRS_TABLE))
        return state

    def add_steps(self, rows: list[StepsRow]) -> None:
        """Record steps rows just stored (new or replacing)."""
        for row in rows:
            if row["id"] not in self.steps:
                self._steps_by_question.setdefault(row["question_id"], []).append(row["id"])
            self.steps[row["id"]] = row

    def add_labels(self, rows: list[LabelsRow]) -> None:
        """Record labels rows just stored."""
        self.labels.update((row["id"], row) for row in rows)

    def add_pairs(self, rows: list[PairRow]) -> None:
        """Record pair rows just stored."""
        for row in rows:
            self.pairs[row["id"]] = row
            self._pairs_by_question.setdefault(row["question_id"], set()).add(row["id"])

    def steps_of(self, questions) -> list[StepsRow]:
        """The steps rows of these questions."""
        return [self.steps[key] for question in questions
                for key in self._steps_by_question.get(question, ())]

    def pairs_of(self, questions) -> dict[str, PairRow]:
        """The stored pair rows of these questions, by id."""
        return {key: self.pairs[key] for question in questions
                for key in self._pairs_by_question.get(question, ())}

    def replace_pairs(self, rows: list[PairRow]) -> None:
        """Forget every pair row and record ``rows`` (after the tables were rebuilt)."""
        self.pairs, self._pairs_by_question = {}, {}
        self.add_pairs(rows)


def drift_chunk(store, state: StageRows, questions, baselines: int = 1,
                excluded: set[tuple[str, str]] | frozenset = frozenset()) -> dict[str, int]:
    """``memlens.audit.drift.run_drift`` for one chunk's ``questions``, from ``state``.

    Pairs whose stored row was scored from the same two sequences are reused; the others are
    scored and stored, and the drift rows of the responses they touch rebuilt (flagged when
    their (question, stimulus) is in ``excluded``). A stored pair that no longer exists (e.g. a
    re-labelled baseline) rebuilds both tables, as ``run_drift`` does: every other question's
    pairs are kept as stored, this chunk's are rescored. Counts are this chunk's; they add up
    over chunks to ``run_drift``'s.
    """
    steps = state.steps_of(questions)
    labels = [state.labels[row["id"]] for row in steps if row["id"] in state.labels]
    pairs = drift_pairs(steps, labels, baselines)
    stored = state.pairs_of(questions)
    todo_index = [i for i, row in enumerate(pairs.rows)
                  if not _still_valid(stored.get(row["id"]), pairs, i)]
    current = {row["id"] for row in pairs.rows}
    if set(stored) - current:
        scored = score_pairs(pairs)
        kept = [row for key, row in state.pairs.items() if key not in stored]
        store.delete_table(PAIRS_TABLE)
        store.delete_table(DRIFT_TABLE)
        every = kept + scored
        store.put_rows(PAIRS_TABLE, every)
        store.put_rows(DRIFT_TABLE, _flagged(aggregate_pairs(every), excluded))
        state.replace_pairs(every)
    else:
        scored = score_pairs(DriftPairs(rows=[pairs.rows[i] for i in todo_index],
                                        baselines=[pairs.baselines[i] for i in todo_index],
                                        compared=[pairs.compared[i] for i in todo_index]))
        if scored:
            store.put_rows(PAIRS_TABLE, scored)
            state.add_pairs(scored)
            touched = {row["response_id"] for row in scored}
            chunk_pairs = [row for row in state.pairs_of(questions).values()
                           if row["response_id"] in touched]
            store.put_rows(DRIFT_TABLE, _flagged(aggregate_pairs(chunk_pairs), excluded))
    return {"pairs": len(pairs.rows), "responses": len({row["response_id"] for row in pairs.rows}),
            "scored": len(scored), "excluded_responses": pairs.excluded_responses,
            "questions_without_baseline": len(pairs.questions_without_baseline)}


def _flagged(rows: list[DriftRow], excluded) -> list[DriftRow]:
    if excluded:
        for row in rows:
            row[FLAG] = (row["question_id"], row["stimulus_id"]) in excluded
    return rows


def _still_valid(stored: dict | None, pairs: DriftPairs, i: int) -> bool:
    """A stored pair row is reused only if it was scored from the same two sequences."""
    return (stored is not None and stored.get("baseline_symbols") == pairs.baselines[i]
            and stored.get("compared_symbols") == pairs.compared[i])


@dataclass
class ChunkTotals:
    """What the chunk loop did: generation, labeling and drift counts, seconds per stage."""

    calls: dict[str, int] = field(default_factory=lambda: {"cells": 0, "pending": 0,
                                                           "failed": 0})
    labels: dict[str, int] = field(default_factory=dict)
    drift: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=lambda: {
        "load": 0.0, "generate": 0.0, "label": 0.0, "drift": 0.0,
        "cpu_generate": 0.0, "cpu_label": 0.0})
    """Wall seconds per stage, and ``cpu_*``: process CPU seconds (every thread) per stage."""


def run_chunks(cells, config, store, make_model, make_labeler, *, size: int,
               progress: bool = True, excluded=frozenset()) -> ChunkTotals:
    """generate -> steps -> labels -> drift per chunk of whole questions (``question_chunks``),
    each chunk's work proportional to the chunk: the stage tables are read once
    (``StageRows.load``). One overall progress bar (generation calls + labelled responses, with
    an ETA across chunks and stages) sits above the per-stage bars."""
    import time

    from memlens.audit.generate import pending_cells, run_generation
    from memlens.audit.labels import pending_label_rows, run_labeling
    from memlens.audit.pipeline import question_chunks
    from memlens.engine.progress import overall_progress

    totals = ChunkTotals()
    clock = time.perf_counter()
    state = StageRows.load(store)
    questions = list(dict.fromkeys(cell.question.id for cell in cells))
    to_generate = len(pending_cells(cells, store, state.steps))
    to_label = len(pending_label_rows(store, state.steps_of(questions), state.labels))
    totals.seconds["load"] = time.perf_counter() - clock
    with overall_progress(to_generate + to_label + to_generate, desc="audit",
                          enabled=progress) as overall:
        for part in question_chunks(cells, size):
            ids = list(dict.fromkeys(cell.question.id for cell in part))
            clock, cpu = time.perf_counter(), time.process_time()
            # one engine run per chunk and stage (an LLM labeler's batch is the chunk; its calls
            # are cached as they finish): one partly filled wave and one fresh event loop /
            # HTTP client per chunk and stage
            generated = run_generation(part, config, store, make_model, progress=progress,
                                       state=state, chunk=max(1, len(part)))
            for key, value in generated.items():
                totals.calls[key] += value
            unusable = sum(state.steps[cell.id].get("status") != "ok" for cell in part
                           if cell.id in state.steps)
            overall.grow(-min(unusable, generated["pending"]))  # no labels for those
            now, cpu_now = time.perf_counter(), time.process_time()
            totals.seconds["generate"] += now - clock
            totals.seconds["cpu_generate"] += cpu_now - cpu
            batch = config.label_batch if config.labeler == "embedded" else \
                max(config.label_batch, len(part))
            labelled = run_labeling(store, make_labeler, batch=batch,
                                    progress=progress, state=state, questions=ids)
            for key, value in labelled.items():
                totals.labels[key] = totals.labels.get(key, 0) + value
            clock, now = now, time.perf_counter()
            totals.seconds["label"] += now - clock
            totals.seconds["cpu_label"] += time.process_time() - cpu_now
            overall.set_stage("drift")
            for key, value in drift_chunk(store, state, ids, config.baselines,
                                          excluded).items():
                totals.drift[key] = totals.drift.get(key, 0) + value
            totals.seconds["drift"] += time.perf_counter() - now
    return totals
