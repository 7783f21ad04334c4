"""A memory stimulus that is a whole earlier conversation (e.g. a MemSyco-Bench dialogue).

``history`` mode injects its turns verbatim as the earlier part of the chat (an
acknowledgement closes a dialogue that ends on a user turn, so the roles alternate before the
question); ``prefix`` and ``system`` mode carry its :func:`transcript` as the memory text.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlens.errors import MemlensError
from memlens.stimuli.catalogue import Stimulus

ROLES = ("user", "assistant")


def transcript(turns) -> str:
    """The dialogue as text, one ``role: content`` line per turn.

    >>> transcript((("user", "I run at dawn."), ("assistant", "Noted.")))
    'user: I run at dawn.\\nassistant: Noted.'
    """
    return "\n".join(f"{role}: {content}" for role, content in turns)


@dataclass(frozen=True)
class DialogueStimulus(Stimulus):
    """A :class:`Stimulus` whose memory is an earlier conversation: ``turns`` are
    ``(role, content)`` pairs (roles ``user`` / ``assistant``); ``text`` is their transcript."""

    turns: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, stimulus_id: str, category: str, turns, stimulus_class: str = "persona"
           ) -> DialogueStimulus:
        """Build one from ``[{"role", "content"}]`` turns, validated (``MemlensError``)."""
        pairs = []
        for number, turn in enumerate(turns, 1):
            if not isinstance(turn, dict) or turn.get("role") not in ROLES \
                    or not isinstance(turn.get("content"), str):
                raise MemlensError(f"{stimulus_id}: dialogue turn {number} must be "
                                   "{'role': 'user'|'assistant', 'content': text}")
            pairs.append((turn["role"], turn["content"]))
        if not pairs:
            raise MemlensError(f"{stimulus_id}: the dialogue has no turns")
        return cls(stimulus_id, stimulus_class, category, transcript(pairs), tuple(pairs))

    def messages(self, acknowledgement: str) -> list[dict]:
        """The turns as chat messages, closed by ``acknowledgement`` if the last is the user's."""
        out = [{"role": role, "content": content} for role, content in self.turns]
        if out and out[-1]["role"] == "user":
            out.append({"role": "assistant", "content": acknowledgement})
        return out
