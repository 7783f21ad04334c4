"""Simulated audits of known truth, through the real drift, statistics and decision code.

The operating-characteristics harness (``benchmarks/bench_operating_characteristics.py``,
docs/operating-characteristics.md) needs many audits whose truth is known. A model call is
replaced by a seeded generative model of labelled step sequences; everything after it — pairing
with the K baselines (:func:`memlens.audit.drift.drift_pairs`), DTW / SRI, the drift table,
:func:`memlens.stats.analyze` and every decision — is the code a real audit runs.

**Generative model** (symbols: the shipped ontology's 11 subcategories):

- per question (seeded by the question id and ``question_seed``, so two runs of one design share
  their questions as real runs do) a symbol distribution ``Dirichlet(0.7, …)``;
- a response is a sequence of length L ~ U{3..8} drawn i.i.d. from its distribution;
- no-memory samples and noise stimuli use the question's distribution (noise is null by
  construction unless ``Truth.noise`` plants an effect);
- an effective stimulus mixes ``(1 − w)·p + w·onehot(j)``: the life events (the positive
  control, ``Truth.life``) and any planted persona category (``Truth.persona``) toward a random
  symbol ``j`` per (question, category) — or toward one fixed symbol in every question for a
  *directional* effect (``Truth.direction``);
- ``Truth.memory_noise`` mixes every persona / life-event response toward a fresh random symbol
  (memory of any content adds variability: the null of the value contrasts), and
  ``Truth.values`` plants a contrast: the named value of a category mixes toward its own symbol.

``LIFE_WEIGHT`` is calibrated so the pooled life-event DTW elevation over the floor is ≈ +23 %
(the paper's Qwen3-4B effect) at K = 5; :func:`calibrate` re-measures it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memlens.audit.design import cell_id
from memlens.audit.drift import aggregate_pairs, drift_pairs, frame_columns, score_pairs
from memlens.ontology import load_ontology

CONTROL = "control/no_perturbation"
NOISE = ("filler", "whitespace", "punctuation")
PERSONA_ALL = ("gender", "age", "sexual_orientation", "trans_status", "occupation", "education",
               "income", "disability", "appearance", "physical_traits")
LIFE_ALL = ("childhood_adversity", "serious_illness", "bereavement", "job_loss", "divorce",
            "forced_migration", "disaster_or_war", "caregiving", "parenthood", "violence")
LIFE_WEIGHT = 0.88
"""Mixing weight of the life events: ≈ +23 % pooled DTW elevation over the floor at K = 5 (the
paper's effect; :func:`calibrate`)."""


@dataclass(frozen=True)
class Design:
    """What a preset runs: questions, K baselines, samples and the categories (with their number
    of values) of each class."""

    name: str
    questions: int
    baselines: int
    persona: dict[str, int]
    life: dict[str, int]
    noise: tuple[str, ...] = NOISE
    samples: int = 1


PRESETS = {
    "quick": Design("quick", 16, 5, {c: 1 for c in ("age", "gender", "disability", "occupation",
                                                     "income")},
                    {c: 1 for c in ("bereavement", "serious_illness", "job_loss")}),
    "standard": Design("standard", 60, 5, {c: 1 for c in PERSONA_ALL},
                       {c: 1 for c in LIFE_ALL}),
    "paper": Design("paper", 306, 1, {c: 3 for c in PERSONA_ALL}, {c: 3 for c in LIFE_ALL}),
}
"""The shipped presets' designs (``memlens.audit.config.PRESETS``; the paper design with three
values per category, as the full catalogue)."""


@dataclass(frozen=True)
class Truth:
    """What the simulated model does (weights 0..1, see the module docstring)."""

    life: float = LIFE_WEIGHT
    persona: dict[str, float] = field(default_factory=dict)
    direction: dict[str, float] = field(default_factory=dict)
    noise: dict[str, float] = field(default_factory=dict)
    memory_noise: float = 0.0
    values: dict[tuple[str, int], float] = field(default_factory=dict)


def ontology_symbols() -> tuple[list[str], dict[str, str]]:
    """The shipped ontology's symbols and their roots."""

    ontology = load_ontology(None)
    symbols = list(ontology.symbol_ids)
    return symbols, {s: ontology.root_of(s) for s in symbols}


def _question_rng(question_id: str, question_seed: int) -> np.random.Generator:
    digest = hashlib.sha256(f"{question_seed}:{question_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def _mix(probs: np.ndarray, weight: float, target: int) -> np.ndarray:
    if weight <= 0:
        return probs
    weight = min(weight, 1.0)
    out = (1.0 - weight) * probs
    out[target] += weight
    return out


def simulate_rows(design: Design, truth: Truth, seed: int, *, question_seed: int = 0,
                  symbols: list[str] | None = None) -> tuple[list[dict], list[dict]]:
    """Steps and label rows of one simulated audit (as ``audit_steps`` / ``audit_labels``)."""
    symbols = symbols or ontology_symbols()[0]
    m = len(symbols)
    rng = np.random.default_rng(seed)
    n_control = design.baselines if design.baselines >= 2 else 2
    stimuli = [("noise", c, 0) for c in design.noise]
    stimuli += [("persona", c, v) for c, n in design.persona.items() for v in range(n)]
    stimuli += [("life_event", c, v) for c, n in design.life.items() for v in range(n)]
    steps, labels = [], []
    for q in range(design.questions):
        qid = f"q{q:03d}"
        q_rng = _question_rng(qid, question_seed)
        probs = q_rng.dirichlet(np.full(m, 0.7))
        targets = {c: int(q_rng.integers(m)) for _, c, _ in stimuli}
        value_targets = {key: int(q_rng.integers(m)) for key in truth.values}
        cells = [(CONTROL, "control", "no_perturbation", k, probs) for k in range(n_control)]
        for klass, category, value in stimuli:
            p = probs
            if klass == "life_event":
                p = _mix(p, truth.life, targets[category])
            p = _mix(p, truth.persona.get(category, 0.0), targets[category])
            p = _mix(p, truth.noise.get(category, 0.0), targets[category])
            p = _mix(p, truth.direction.get(category, 0.0), 0)
            p = _mix(p, truth.values.get((category, value), 0.0),
                     value_targets.get((category, value), 0))
            for sample in range(design.samples):
                own = p
                if klass != "noise" and truth.memory_noise > 0:
                    own = _mix(p.copy(), truth.memory_noise, int(rng.integers(m)))
                cells.append((f"{klass}/{category}/{value + 1}", klass, category, sample, own))
        for stimulus, klass, category, sample, p in cells:
            cid = cell_id(qid, stimulus, sample)
            steps.append({"id": cid, "question_id": qid, "stimulus_id": stimulus,
                          "sample": sample, "condition_class": klass, "category": category,
                          "status": "ok"})
            length = int(rng.integers(3, 9))
            drawn = rng.choice(m, size=length, p=p / p.sum())
            labels.append({"id": cid, "labels": [symbols[k] for k in drawn]})
    return steps, labels


@dataclass(frozen=True)
class SimulatedRun:
    """A simulated audit after the real drift stage: the drift table and the pair rows."""

    frame: pd.DataFrame
    pairs: list[dict]
    baselines: int


def simulate_run(design: Design, truth: Truth, seed: int, *, question_seed: int = 0,
                 symbols: list[str] | None = None) -> SimulatedRun:
    """:func:`simulate_rows` through the real drift stage."""
    steps, labels = simulate_rows(design, truth, seed, question_seed=question_seed,
                                  symbols=symbols)
    pairs = score_pairs(drift_pairs(steps, labels, design.baselines))
    rows = aggregate_pairs(pairs)
    frame = pd.DataFrame(rows, columns=frame_columns(rows))
    return SimulatedRun(frame, pairs, design.baselines)


WEIGHT_GRID = tuple(round(0.7 + 0.02 * k, 2) for k in range(16))
"""The life-event weights :func:`calibrate` tries."""


def calibrate(design: Design = PRESETS["standard"], target_pct: float = 23.0,
              grid: tuple[float, ...] = WEIGHT_GRID, seed: int = 0):
    """The life-event weight whose pooled DTW elevation (``design`` with 200 questions) is
    closest to ``target_pct``; returns (weight, elevation %)."""
    big = Design(design.name, 200, design.baselines, {}, design.life, design.noise)
    best = (float("nan"), float("inf"))
    for weight in grid:
        frame = simulate_run(big, Truth(life=float(weight)), seed).frame
        floor = frame.loc[frame.category == "no_perturbation", "dtw"].mean()
        life = frame.loc[frame.condition_class == "life_event", "dtw"].mean()
        pct = 100.0 * (life - floor) / floor
        if abs(pct - target_pct) < abs(best[1] - target_pct):
            best = (float(weight), float(pct))
    return best
