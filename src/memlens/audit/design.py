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
