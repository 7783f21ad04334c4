"""The audit design: which questions meet which stimuli, how many samples, with which seeds.

One *cell* is (question, stimulus, sample). Its id ``question_id|stimulus_id|sample`` keys every
stage table, so each stage can tell what is already done; the parts are escaped
(``memlens.rowkeys.join_key``), so ids containing ``|`` cannot collide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlens.errors import MemlensError
from memlens.rowkeys import derive_seed, join_key

NO_PERTURBATION = "no_perturbation"


def cell_id(question_id: str, stimulus_id: str, sample: int) -> str:
    """The key of one generation cell.

    >>> cell_id("q1", "persona/age/young", 0)
    'q1|persona/age/young|0'
    """
    return join_key(question_id, stimulus_id, sample)


def sample_seed(seed: int, question_id: str, stimulus_id: str, sample: int) -> int:
    """A 31-bit sampling seed derived only from (master seed, question, condition, sample).

    Stable across runs, processes and Python versions (sha256, not ``hash``).

    >>> sample_seed(0, "q1", "control/no_perturbation", 0) == sample_seed(0, "q1", "control/no_perturbation", 0)
    True
    >>> sample_seed(0, "q1", "control/no_perturbation", 0) != sample_seed(0, "q1", "control/no_perturbation", 1)
    True
    """
    return derive_seed(seed, question_id, stimulus_id, sample)


@dataclass(frozen=True)
class Cell:
    """One response to generate: a question under one stimulus, one sample."""

    question: Any
    """A ``memlens.questions.Question``."""
    stimulus: Any
    """A ``memlens.stimuli.Stimulus`` (``control/no_perturbation`` for no memory)."""
    sample: int

    @property
    def id(self) -> str:
        """``question_id|stimulus_id|sample``."""
        return cell_id(self.question.id, self.stimulus.id, self.sample)

    @property
    def is_control(self) -> bool:
        """True for the no-memory condition."""
        return self.stimulus.stimulus_class == "control"


def control_stimulus(stimuli: list) -> Any:
    """The no-memory stimulus of a catalogue (class ``control``, category ``no_perturbation``)."""
    for stimulus in stimuli:
        if stimulus.stimulus_class == "control" and stimulus.category == NO_PERTURBATION:
            return stimulus
    raise MemlensError("the stimuli catalogue has no control/no_perturbation stimulus; "
                       "the noise floor needs it")


def control_samples(samples: int, baselines: int) -> int:
    """How many no-memory samples a question gets.

    ``baselines`` = K ≥ 2: exactly K (every one is a baseline, the floor comes from their pairs).
    K = 1 is the paper's design: one baseline plus ``samples`` extra no-memory samples whose drift
    from it is the floor.

    >>> control_samples(1, 1), control_samples(3, 1), control_samples(1, 5)
    (2, 4, 5)
    """
    return baselines if baselines >= 2 else samples + 1


def design_cells(questions: list, stimuli: list, samples: int, baselines: int = 1) -> list[Cell]:
    """All cells: every question x every stimulus x ``samples``, plus the no-memory samples.

    The no-memory condition gets :func:`control_samples` samples; samples ``0..K-1`` are the
    baselines every response is compared with (``memlens.audit.drift``). Order: question by
    question, no-memory first, so an interrupted run has whole questions.
    """
    if baselines < 1:
        raise MemlensError(f"baselines must be at least 1 (got {baselines})")
    control = control_stimulus(stimuli)
    others = [s for s in stimuli if s.id != control.id and s.stimulus_class != "control"]
    cells: list[Cell] = []
    for question in questions:
        cells.extend(Cell(question, control, k) for k in range(control_samples(samples, baselines)))
        for stimulus in others:
            cells.extend(Cell(question, stimulus, k) for k in range(samples))
    return cells


def control_set_cells(questions: list, stimuli: list, samples: int,
                      baselines: int = 1) -> list[Cell]:
    """Cells of a should-personalize control set (``memlens.questions.should_personalize``):
    per question its no-memory samples (as in :func:`design_cells`) and every persona /
    life-event stimulus of a category the question depends on (``question.attributes``). The
    irrelevant side of selectivity comes from the benchmark cells, so nothing else is needed.
    A question none of whose attributes has a stimulus is left out.

    >>> from types import SimpleNamespace as NS
    >>> stimuli = [NS(id="c", stimulus_class="control", category=NO_PERTURBATION),
    ...            NS(id="p/age/1", stimulus_class="persona", category="age"),
    ...            NS(id="p/income/1", stimulus_class="persona", category="income")]
    >>> q = NS(id="sp/age/1", attributes=("age",))
    >>> [cell.id for cell in control_set_cells([q], stimuli, 1, 2)]
    ['sp/age/1|c|0', 'sp/age/1|c|1', 'sp/age/1|p/age/1|0']
    """
    if baselines < 1:
        raise MemlensError(f"baselines must be at least 1 (got {baselines})")
    control = control_stimulus(stimuli)
    cells: list[Cell] = []
    for question in questions:
        wanted = set(question.attributes)
        relevant = [s for s in stimuli if s.category in wanted
                    and s.stimulus_class in ("persona", "life_event")]
        if not relevant:
            continue
        cells.extend(Cell(question, control, k) for k in range(control_samples(samples, baselines)))
        for stimulus in relevant:
            cells.extend(Cell(question, stimulus, k) for k in range(samples))
    return cells


def memory_set_cells(questions: list, sets: list, samples: int) -> list[Cell]:
    """Every question × memory set (``memlens.stimuli.memory_sets``) × ``samples``; their
    baselines are the questions' own no-memory samples of :func:`design_cells`.

    >>> from types import SimpleNamespace as NS
    >>> [c.id for c in memory_set_cells([NS(id="q")], [NS(id="set/neutral")], 2)]
    ['q|set/neutral|0', 'q|set/neutral|1']
    """
    return [Cell(question, memory_set, k) for question in questions for memory_set in sets
            for k in range(samples)]
