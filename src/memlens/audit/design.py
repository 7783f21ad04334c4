"""The audit design: which questions meet which stimuli, how many samples, with which seeds.

One *cell* is (question, stimulus, sample). Its id ``question_id|stimulus_id|sample`` keys every
stage table, so each stage can tell what is already done.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from memlens.errors import MemlensError

NO_PERTURBATION = "no_perturbation"


def cell_id(question_id: str, stimulus_id: str, sample: int) -> str:
    """The key of one generation cell.

    >>> cell_id("q1", "persona/age/young", 0)
    'q1|persona/age/young|0'
    """
    return f"{question_id}|{stimulus_id}|{sample}"


def sample_seed(seed: int, question_id: str, stimulus_id: str, sample: int) -> int:
    """A 31-bit sampling seed derived only from (master seed, question, condition, sample).

    Stable across runs, processes and Python versions (sha256, not ``hash``).

    >>> sample_seed(0, "q1", "control/no_perturbation", 0) == sample_seed(0, "q1", "control/no_perturbation", 0)
    True
    >>> sample_seed(0, "q1", "control/no_perturbation", 0) != sample_seed(0, "q1", "control/no_perturbation", 1)
    True
    """
    digest = hashlib.sha256(f"{seed}|{question_id}|{stimulus_id}|{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


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


def design_cells(questions: list, stimuli: list, samples: int) -> list[Cell]:
    """All cells: every question x every stimulus x ``samples``, plus one extra no-memory sample.

    The no-memory condition gets ``samples + 1`` samples: sample 0 is the baseline every other
    response is compared with; samples 1..n give the noise floor (``control`` drift rows).
    Order: question by question, no-memory first, so an interrupted run has whole questions.
    """
    control = control_stimulus(stimuli)
    others = [s for s in stimuli if s.id != control.id and s.stimulus_class != "control"]
    cells: list[Cell] = []
    for question in questions:
        cells.extend(Cell(question, control, k) for k in range(samples + 1))
        for stimulus in others:
            cells.extend(Cell(question, stimulus, k) for k in range(samples))
    return cells
