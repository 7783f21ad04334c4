"""Injection modes: pure functions from (question, stimulus, mode, template) to chat messages.

* ``prefix`` — the stimulus line, a newline, then the question, in one user turn (the paper's
  setting, App. E); the no-memory control is the question alone, exactly as in the paper;
* ``system`` — a memory block in the system prompt, as deployed assistants do:
  ``{header}\\n- {memory}``;
* ``history`` — an earlier user turn ``{history_prefix}{memory}``, a fixed assistant
  acknowledgement, then the question; a ``DialogueStimulus`` (``memlens.stimuli.dialogue``) is
  a whole earlier conversation, injected turn by turn instead.

**Matched scaffolding.** In ``system`` and ``history`` mode every condition — the no-memory
control included — goes through the same template; conditions differ only in the memory text,
which is empty for the control (the block keeps its header and an empty item; the earlier turn
keeps its prefix and the acknowledgement). So the scaffolding itself can never look like drift:
a noise stimulus is compared with a control that has the same header, turns and wording.
The template is user-settable (:class:`MemoryTemplate`) so an audit can mirror a product's own
memory format.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlens.errors import MemlensError
from memlens.stimuli.catalogue import Stimulus

INJECTION_MODES = ("prefix", "system", "history")

MEMORY_HEADER = "Memory about the user (saved from earlier conversations):"
"""Default first line of the memory block in ``system`` mode."""

HISTORY_PREFIX = "Please remember this about me: "
"""Default text before the memory in ``history`` mode's earlier user turn."""

ACKNOWLEDGEMENT = "Thanks for telling me. I'll keep that in mind."
"""Default fixed assistant turn after the disclosure in ``history`` mode."""


@dataclass(frozen=True)
class MemoryTemplate:
    """How memory is rendered in ``system`` and ``history`` mode (``prefix`` is the paper's)."""

    header: str = MEMORY_HEADER
    history_prefix: str = HISTORY_PREFIX
    acknowledgement: str = ACKNOWLEDGEMENT


def inject(
    question_text: str,
    stimulus: Stimulus | str,
    mode: str = "prefix",
    system_prompt: str | None = None,
    template: MemoryTemplate | None = None,
) -> list[dict]:
    """Chat messages that put ``stimulus`` into memory and ask ``question_text``.

    ``stimulus`` is a ``Stimulus`` or its text (empty for the no-memory control). The text is
    used verbatim (whitespace noise stays whitespace). Unknown ``mode`` raises ``MemlensError``.

    >>> inject("Tea or coffee?", "I am 19 years old.")
    [{'role': 'user', 'content': 'I am 19 years old.\\nTea or coffee?'}]
    >>> inject("Tea or coffee?", "")
    [{'role': 'user', 'content': 'Tea or coffee?'}]
    >>> inject("Tea or coffee?", "", mode="system")[0]["content"]
    'Memory about the user (saved from earlier conversations):\\n- '
    >>> [m["content"] for m in inject("Tea or coffee?", "", mode="history")][:1]
    ['Please remember this about me: ']
    >>> [m["role"] for m in inject("Tea or coffee?", "I'm deaf.", mode="history")]
    ['user', 'assistant', 'user']
    """
    facts = getattr(stimulus, "facts", None)  # a memory set: one line (system: item) per fact
    if facts is not None:
        text = ("\n- " if mode == "system" else "\n").join(facts)
    else:
        text = stimulus.text if isinstance(stimulus, Stimulus) else stimulus
    if not isinstance(text, str):
        raise MemlensError(f"stimulus must be a Stimulus or a string, got {type(stimulus).__name__}")
    if mode not in INJECTION_MODES:
        raise MemlensError(f"unknown injection mode {mode!r} (valid: {', '.join(INJECTION_MODES)})")
    template = template or MemoryTemplate()
    question = {"role": "user", "content": question_text}
    if mode == "prefix":
        content = f"{text}\n{question_text}" if text else question_text
        return _with_system(system_prompt, [{"role": "user", "content": content}])
    if mode == "system":
        block = f"{template.header}\n- {text}"
        content = f"{system_prompt}\n\n{block}" if system_prompt else block
        return [{"role": "system", "content": content}, question]
    earlier = getattr(stimulus, "messages", None)  # a whole earlier dialogue (DialogueStimulus)
    if callable(earlier):
        return _with_system(system_prompt, [*earlier(template.acknowledgement), question])
    turns = [{"role": "user", "content": f"{template.history_prefix}{text}"},
             {"role": "assistant", "content": template.acknowledgement}, question]
    return _with_system(system_prompt, turns)


def _with_system(system_prompt: str | None, messages: list[dict]) -> list[dict]:
    if system_prompt:
        return [{"role": "system", "content": system_prompt}, *messages]
    return messages
