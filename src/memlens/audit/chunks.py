"""Incremental stage state of a chunked audit: read the stage tables once, then let every chunk
touch only its own questions.

``run_audit`` processes whole questions in chunks (generate -> steps -> labels -> drift). The
stages used to re-read the whole ``audit_steps``, ``audit_labels`` and ``audit_drift_pairs``
tables on every chunk — quadratic work at paper size (28,000 responses: ~2 s per read, ~28
chunks). ``StageRows`` holds those tables in memory, loaded once, and is updated as each chunk
writes; ``drift_chunk`` pairs and scores one chunk's questions. Drift rows never pair responses
of different questions, so a chunk's drift depends only on its own rows — which is also what
lets ``run_chunks`` label and score chunk i while later chunks are still being generated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.audit.design import Cell
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
from memlens.audit.generate import (
    STEPS_TABLE,
    StepsRow,
    build_request,
    pending_cells,
    run_generation,
    store_steps,
)
from memlens.audit.labels import LABELS_TABLE, LabelsRow, pending_label_rows, run_labeling
from memlens.audit.orthogonality import FLAG
from memlens.engine import run_requests
from memlens.engine.progress import overall_progress
from memlens.engine.slots import shared_slots, slots_first
from memlens.metrics.warmup import warm_up_kernels
from memlens.ontology.labelers import is_embedded


@dataclass
class StageRows:
    """In-memory copy of the steps, labels and drift-pair tables, indexed for chunk lookups.

    Only one thread uses it: in an overlapped run (``run_chunks``) the generation thread just
    hands its outcomes over, and the labeling thread splits, stores and records them.
    """

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
        "load": 0.0, "generate": 0.0, "label": 0.0, "drift": 0.0, "chunks": 0.0,
        "overlapped": 0.0, "cpu_generate": 0.0, "cpu_label": 0.0, "cpu_chunks": 0.0})
    """Wall seconds each stage was busy, summed over chunks; ``chunks``: wall seconds of the
    whole chunk loop (after ``load``); ``overlapped``: how much of the stages' busy time ran
    alongside another stage (generate + label + drift - chunks; 0 when sequential).
    ``cpu_generate`` / ``cpu_label``: CPU seconds of the thread running that stage (its event
    loop included, the store-writer thread not); ``cpu_chunks``: process CPU seconds (every
    thread) of the whole loop."""
    peak_in_flight: int = 0
    """Most model calls in flight at once across the stages (overlapped runs; 0 otherwise)."""


def question_chunks(cells: list[Cell], size: int) -> list[list[Cell]]:
    """Consecutive whole questions, about ``size`` cells per chunk (at least one question).

    >>> from types import SimpleNamespace as NS
    >>> cells = [Cell(NS(id=q), NS(id="s", stimulus_class="noise"), 0) for q in "aabbbc"]
    >>> [[c.question.id for c in chunk] for chunk in question_chunks(cells, 3)]
    [['a', 'a', 'b', 'b', 'b'], ['c']]
    """
    chunks: list[list[Cell]] = []
    current: list[Cell] = []
    for cell in cells:
        if current and len(current) >= size and cell.question.id != current[-1].question.id:
            chunks.append(current)
            current = []
        current.append(cell)
    if current:
        chunks.append(current)
    return chunks


def run_chunks(cells, config, store, make_model, make_labeler, *, size: int,
               progress: bool = True, excluded=frozenset(), overlap: bool = True) -> ChunkTotals:
    """generate -> steps -> labels -> drift per chunk of whole questions (``question_chunks``),
    each chunk's work proportional to the chunk: the stage tables are read once
    (``StageRows.load``). One overall progress bar (generation calls + labelled responses, with
    an ETA across chunks and stages) sits above the generation bar.

    With ``overlap`` (the default, when there are several chunks) one engine run generates every
    pending cell on a helper thread, without stopping at chunk boundaries, while this thread
    splits, stores, labels and drift-scores each chunk as soon as its last call has finished
    (in chunk order). The stages share ``config.concurrency`` slots
    (``memlens.engine.slots.shared_slots``): at most that many calls are in flight in all
    (without ``--concurrency`` each stage keeps its backend's own bound); labeler calls are
    served first and generation fills the slots left, so labels never fall far behind and a
    labeler chunk boundary leaves no slot idle. Only this thread touches ``StageRows`` and
    writes stage rows (the store serialises them with the engine's writer threads), so an
    interrupted run keeps every finished row: every finished call is in the request cache,
    every fully generated chunk processed so far has its steps, labels and drift rows, and the
    same call resumes. On Ctrl-C or an error, generation stops launching calls, what finished
    is stored and the error is re-raised; a generation error (e.g. ``RunStopped``) is raised
    after the chunks generated before it are labelled. ``overlap=False`` runs the stages
    strictly one after another per chunk (the reference the overlapped run must equal).
    """
    import time

    totals = ChunkTotals()
    clock = time.perf_counter()
    state = StageRows.load(store)
    questions = list(dict.fromkeys(cell.question.id for cell in cells))
    to_generate = len(pending_cells(cells, store, state.steps))
    if to_generate:
        warm_up_kernels()  # numba compiles the drift kernels while the model generates
    to_label = len(pending_label_rows(store, state.steps_of(questions), state.labels))
    totals.seconds["load"] = time.perf_counter() - clock
    chunks = question_chunks(cells, size)
    clock, cpu = time.perf_counter(), time.process_time()
    with overall_progress(to_generate + to_label + to_generate, desc="audit",
                          enabled=progress) as overall:
        stages = _Stages(config, store, make_model, make_labeler, state, totals, overall,
                         excluded, progress)
        if overlap and len(chunks) > 1:
            _overlapped(stages, chunks, config.concurrency)
        else:
            for part in chunks:
                stages.label_and_drift(stages.generate(part), progress=progress)
    totals.seconds["chunks"] = time.perf_counter() - clock
    totals.seconds["cpu_chunks"] = time.process_time() - cpu
    busy = sum(totals.seconds[key] for key in ("generate", "label", "drift"))
    totals.seconds["overlapped"] = max(0.0, busy - totals.seconds["chunks"])
    return totals


def _overlapped(stages: _Stages, chunks, width: int | None) -> None:
    """One engine run generates every pending cell, chunk after chunk, on a helper thread; this
    thread labels and drift-scores each chunk as soon as its last call has finished, in chunk
    order. Generation never waits for a chunk boundary, and its calls fill the slots the
    labeler leaves idle at its own chunk boundaries. ``width`` (``--concurrency``) slots are
    shared by both stages; without it each stage keeps its backend's own bound."""
    import contextvars
    import threading
    import time
    from contextlib import nullcontext

    config, state, totals = stages.config, stages.state, stages.totals
    todos = [pending_cells(part, stages.store, state.steps) for part in chunks]
    flat = [(index, cell) for index, todo in enumerate(todos) for cell in todo]
    remaining = [len(todo) for todo in todos]
    outcomes: list = [None] * len(flat)
    finished = [threading.Event() for _ in chunks]
    for index, count in enumerate(remaining):
        if not count:
            finished[index].set()
    stop, failure, ended = threading.Event(), [], threading.Event()
    spent = {"generate": 0.0, "cpu_generate": 0.0}  # the generation thread's, added after join

    def on_outcome(position: int, outcome) -> None:  # on the generation thread's event loop
        index = flat[position][0]
        outcomes[position] = outcome
        remaining[index] -= 1
        if not remaining[index]:
            finished[index].set()

    def generate() -> None:
        clock, cpu = time.perf_counter(), time.thread_time()
        try:
            model = stages.make_model()
            run_requests(model, [build_request(cell, config) for _, cell in flat], stages.store,
                         concurrency=config.concurrency, progress=stages.progress,
                         desc="generate", on_outcome=on_outcome, stop=stop)
        except BaseException as error:  # handed to the labeling side, which re-raises it
            failure.append(error)
        finally:
            spent.update(generate=time.perf_counter() - clock,
                         cpu_generate=time.thread_time() - cpu)
            ended.set()

    with shared_slots(width) if width else nullcontext() as slots:
        context = contextvars.copy_context()  # the overall bar and the shared slots
        helper = threading.Thread(target=context.run, args=(generate,),
                                  name="memlens-generate", daemon=True)
        if flat:
            helper.start()
        else:
            ended.set()
        offsets = [0]
        for todo in todos:
            offsets.append(offsets[-1] + len(todo))
        try:
            for index, part in enumerate(chunks):
                while not finished[index].wait(0.25):
                    if ended.is_set() and not finished[index].is_set():
                        raise failure[0] if failure else RuntimeError("generation ended early")
                stages.store_steps(part, todos[index],
                                   outcomes[offsets[index]:offsets[index + 1]])
                with slots_first():  # labels first: generation fills the slots left
                    stages.label_and_drift(list(dict.fromkeys(cell.question.id
                                                              for cell in part)),
                                           progress=False)
        except BaseException:
            stop.set()  # no new call; the calls in flight finish and are stored, then it ends
            raise
        finally:
            if flat:
                helper.join()
            for key, value in spent.items():
                totals.seconds[key] += value
            totals.peak_in_flight = slots.peak if slots is not None else 0
    if failure:
        raise failure[0]


class _Stages:
    """One chunk's generate and label + drift steps, adding counts and times to ``totals``."""

    def __init__(self, config, store, make_model, make_labeler, state: StageRows,
                 totals: ChunkTotals, overall, excluded, progress: bool):
        self.config, self.store, self.state, self.totals = config, store, state, totals
        self.make_model, self.make_labeler = make_model, make_labeler
        self.overall, self.excluded, self.progress = overall, excluded, progress

    def generate(self, part) -> list[str]:
        """Generate the chunk's pending cells and store their steps; the chunk's question ids."""
        import time

        clock, cpu = time.perf_counter(), time.thread_time()
        # one engine run per chunk and stage (an LLM labeler's batch is the chunk; its calls
        # are cached as they finish): one fresh event loop / HTTP client per chunk and stage
        generated = run_generation(part, self.config, self.store, self.make_model,
                                   progress=self.progress, state=self.state,
                                   chunk=max(1, len(part)))
        for key, value in generated.items():
            self.totals.calls[key] += value
        unusable = sum(self.state.steps[cell.id].get("status") != "ok" for cell in part
                       if cell.id in self.state.steps)
        self.overall.grow(-min(unusable, generated["pending"]))  # no labels for those
        self.totals.seconds["generate"] += time.perf_counter() - clock
        self.totals.seconds["cpu_generate"] += time.thread_time() - cpu
        return list(dict.fromkeys(cell.question.id for cell in part))

    def store_steps(self, part, todo, outcomes) -> None:
        """The steps rows of a chunk whose ``todo`` cells were generated elsewhere (overlapped
        runs): split, stored, recorded, counted as ``run_generation`` counts them."""
        import time

        clock, cpu = time.perf_counter(), time.thread_time()
        rows = store_steps(todo, outcomes, self.store, self.state)
        failed = sum(row["status"] == "failed_call" for row in rows)
        for key, value in (("cells", len(part)), ("pending", len(todo)), ("failed", failed)):
            self.totals.calls[key] += value
        self.overall.grow(-min(len(rows), sum(row["status"] != "ok" for row in rows)))
        self.totals.seconds["generate"] += time.perf_counter() - clock
        self.totals.seconds["cpu_generate"] += time.thread_time() - cpu

    def label_and_drift(self, ids: list[str], *, progress: bool) -> None:
        """Label the chunk's responses, then pair and score its drift rows (all stored)."""
        import time

        config, totals = self.config, self.totals
        clock, cpu = time.perf_counter(), time.thread_time()
        batch = config.label_batch if is_embedded(config.labeler) else \
            max(config.label_batch, len(self.state.steps_of(ids)))
        labelled = run_labeling(self.store, self.make_labeler, batch=batch, progress=progress,
                                state=self.state, questions=ids)
        for key, value in labelled.items():
            totals.labels[key] = totals.labels.get(key, 0) + value
        now = time.perf_counter()
        totals.seconds["label"] += now - clock
        totals.seconds["cpu_label"] += time.thread_time() - cpu
        self.overall.set_stage("drift")
        for key, value in drift_chunk(self.store, self.state, ids, config.baselines,
                                      self.excluded).items():
            totals.drift[key] = totals.drift.get(key, 0) + value
        totals.seconds["drift"] += time.perf_counter() - now
