"""Reasoning steps: split a response into ordered steps with character spans."""

from memlens.steps.instruction import REASONING_INSTRUCTION
from memlens.steps.parse import METHODS, Step, StepSplit, extract_answer, split_steps

__all__ = ["METHODS", "REASONING_INSTRUCTION", "Step", "StepSplit", "extract_answer", "split_steps"]
