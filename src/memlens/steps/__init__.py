"""Reasoning steps: split a response into ordered steps with character spans."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "INSTRUCTIONS": "instruction",
    "LIST_INSTRUCTION": "instruction",
    "METHODS": "parse",
    "REASONING_INSTRUCTION": "instruction",
    "Step": "parse",
    "StepSplit": "parse",
    "extract_answer": "parse",
    "split_steps": "parse",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
