"""Injection modes: pure functions from (question, stimulus, mode) to chat messages.

* ``prefix`` — the stimulus line, a newline, then the question, in one user turn (the paper's
  setting, App. E);
* ``system`` — a "memory about the user" block in the system prompt, as deployed assistants do;
* ``history`` — an earlier user turn stating the fact and a short fixed assistant
  acknowledgement, then the question.

An empty stimulus (``control/no_perturbation``) always yields just the question (plus the given
system prompt, if any), so the no-memory baseline is the same message list in every mode.
"""

from __future__ import annotations

from memlens.errors import MemlensError
from memlens.stimuli.catalogue import Stimulus

INJECTION_MODES = ("prefix", "system", "history")

MEMORY_HEADER = "Memory about the user (saved from earlier conversations):"
"""First line of the memory block in ``system`` mode."""

ACKNOWLEDGEMENT = "Thanks for telling me. I'll keep that in mind."
"""The fixed assistant turn after the disclosure in ``history`` mode."""


def inject(
    question_text: str,
    stimulus: Stimulus | str,
    mode: str = "prefix",
    system_prompt: str | None = None,
) -> list[dict]:
    """Chat messages that put ``stimulus`` into memory and ask ``question_text``.

    ``stimulus`` is a ``Stimulus`` or its text. The stimulus text is used verbatim (whitespace
    noise stays whitespace). Unknown ``mode`` raises ``MemlensError``.

    >>> inject("Tea or coffee?", "I am 19 years old.")
    [{'role': 'user', 'content': 'I am 19 years old.\\nTea or coffee?'}]
    >>> inject("Tea or coffee?", "", mode="history")
    [{'role': 'user', 'content': 'Tea or coffee?'}]
    >>> [m["role"] for m in inject("Tea or coffee?", "I'm deaf.", mode="history")]
    ['user', 'assistant', 'user']
    """
    text = stimulus.text if isinstance(stimulus, Stimulus) else stimulus
    if not isinstance(text, str):
        raise MemlensError(f"stimulus must be a Stimulus or a string, got {type(stimulus).__name__}")
    if mode not in INJECTION_MODES:
        raise MemlensError(f"unknown injection mode {mode!r} (valid: {', '.join(INJECTION_MODES)})")
    question = {"role": "user", "content": question_text}
    if text == "":
        return _with_system(system_prompt, [question])
    if mode == "prefix":
        return _with_system(system_prompt, [{"role": "user", "content": f"{text}\n{question_text}"}])
    if mode == "system":
        block = f"{MEMORY_HEADER}\n- {text}"
        content = f"{system_prompt}\n\n{block}" if system_prompt else block
        return [{"role": "system", "content": content}, question]
    turns = [{"role": "user", "content": text},
             {"role": "assistant", "content": ACKNOWLEDGEMENT}, question]
    return _with_system(system_prompt, turns)


def _with_system(system_prompt: str | None, messages: list[dict]) -> list[dict]:
    if system_prompt:
        return [{"role": "system", "content": system_prompt}, *messages]
    return messages
