"""Resolve a model string to a backend instance, importing optional backends lazily."""

from __future__ import annotations

from memlens.errors import MemlensError
from memlens.models.base import ChatModel

BACKENDS = ("embedded", "fake", "openai", "anthropic", "vllm", "hf")


def get_model(model: str, **options) -> ChatModel:
    """Return the backend for ``model`` (see the package docstring for the syntax).

    >>> get_model("fake").model_id
    'fake'
    """
    backend, _, name = model.partition(":")
    if backend == "fake":
        from memlens.models.fake import FakeModel

        return FakeModel(model_id=model, **options)
    raise MemlensError(
        f"unknown or unavailable model '{model}': expected one of "
        + ", ".join(f"'{b}'" for b in BACKENDS) + " (e.g. 'openai:gpt-4.1-mini@http://127.0.0.1:8000/v1')"
    )
