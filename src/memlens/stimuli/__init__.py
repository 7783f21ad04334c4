"""Memory stimuli: the bundled catalogue (control, noise, persona, life events) and the pure
injection modes that turn (question, stimulus) into chat messages."""

from memlens.stimuli.catalogue import (
    STIMULUS_CLASSES,
    Stimulus,
    load_stimuli,
    select_stimuli,
)
from memlens.stimuli.inject import (
    ACKNOWLEDGEMENT,
    HISTORY_PREFIX,
    INJECTION_MODES,
    MEMORY_HEADER,
    MemoryTemplate,
    inject,
)

__all__ = [
    "ACKNOWLEDGEMENT",
    "HISTORY_PREFIX",
    "INJECTION_MODES",
    "MEMORY_HEADER",
    "MemoryTemplate",
    "STIMULUS_CLASSES",
    "Stimulus",
    "inject",
    "load_stimuli",
    "select_stimuli",
]
