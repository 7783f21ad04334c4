"""Memory stimuli: the bundled catalogue (control, noise, persona, life events) and the pure
injection modes that turn (question, stimulus) into chat messages."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "ACKNOWLEDGEMENT": "inject",
    "HISTORY_PREFIX": "inject",
    "INJECTION_MODES": "inject",
    "MEMORY_HEADER": "inject",
    "MemoryTemplate": "inject",
    "MessageTemplate": "templates",
    "STIMULUS_CLASSES": "catalogue",
    "Stimulus": "catalogue",
    "among_neutral_sets": "memory_sets",
    "combination_sets": "memory_sets",
    "inject": "inject",
    "load_stimuli": "catalogue",
    "load_template": "templates",
    "select_stimuli": "catalogue",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
