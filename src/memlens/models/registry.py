"""Resolve a model string to a backend instance, importing optional backends lazily."""

from __future__ import annotations

import importlib
import inspect

from memlens.errors import MemlensError
from memlens.models.base import ChatModel

BACKENDS = ("embedded", "fake", "openai", "anthropic", "vllm", "hf")

_CLASSES = {
    "fake": ("memlens.models.fake", "FakeModel"),
    "embedded": ("memlens.models.embedded", "EmbeddedModel"),
    "openai": ("memlens.models.openai_compat", "OpenAIModel"),
    "anthropic": ("memlens.models.anthropic_backend", "AnthropicModel"),
    "vllm": ("memlens.models.vllm_backend", "VLLMModel"),
    "hf": ("memlens.models.hf_backend", "TransformersModel"),
}


def _unknown(model: str) -> MemlensError:
    return MemlensError(
        f"unknown or unavailable model '{model}': expected one of "
        + ", ".join(f"'{b}'" for b in BACKENDS)
        + " (e.g. 'openai:gpt-4.1-mini@http://127.0.0.1:8000/v1')"
    )


def parse_model_string(model: str) -> tuple[str, str]:
    """Split a model string into (backend, name); MemlensError when malformed.

    >>> parse_model_string("openai:qwen3-4b@http://127.0.0.1:8000/v1")
    ('openai', 'qwen3-4b@http://127.0.0.1:8000/v1')
    >>> parse_model_string("embedded")
    ('embedded', '')
    """
    backend, _, name = model.strip().partition(":")
    if backend not in BACKENDS:
        raise _unknown(model)
    if backend in ("openai", "anthropic", "vllm", "hf") and not name:
        raise MemlensError(f"model '{model}' needs a name after '{backend}:' "
                           f"(e.g. '{backend}:MODEL')")
    if backend in ("embedded", "fake") and name:
        raise MemlensError(f"model '{model}': '{backend}' takes no name after ':'")
    return backend, name


def model_id_for(model: str) -> str:
    """The ``model_id`` (cache identity) that ``get_model(model)`` would have, without building
    the backend: no API key, weights or GPU needed (what ``--dry-run`` plans with).

    >>> model_id_for("openai:qwen3-4b@http://127.0.0.1:8000/v1/")
    'openai:qwen3-4b@http://127.0.0.1:8000/v1'
    >>> model_id_for("vllm:Qwen/Qwen3-4B"), model_id_for("embedded")
    ('vllm:Qwen/Qwen3-4B', 'embedded')
    """
    backend, name = parse_model_string(model)
    if backend == "fake":
        return model
    if backend == "embedded":
        return "embedded"
    if backend in ("openai", "anthropic"):
        from memlens.models.openai_compat import split_model_string

        model_name, base_url = split_model_string(name)
        return f"{backend}:{model_name}" + (f"@{base_url.rstrip('/')}" if base_url else "")
    return f"{backend}:{name}"


def get_model(model: str, **options) -> ChatModel:
    """Return the backend for ``model`` (see the package docstring for the syntax).

    ``options`` go to the backend's constructor (e.g. ``api_key_env``, ``timeout_s``,
    ``max_concurrency`` for API backends; ``n_parallel``, ``n_threads`` for ``embedded``).

    >>> get_model("fake").model_id
    'fake'
    >>> get_model("fake", colour="red")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: unknown option 'colour' for the fake backend (accepted: replies, model_id)
    """
    backend, name = parse_model_string(model)
    module_name, class_name = _CLASSES[backend]
    cls = getattr(importlib.import_module(module_name), class_name)
    accepted = [p for p in inspect.signature(cls).parameters if p not in ("self", "model")]
    for option in options:
        if option not in accepted:
            raise MemlensError(f"unknown option '{option}' for the {backend} backend "
                               f"(accepted: {', '.join(accepted)})")
    if backend == "fake":
        return cls(model_id=model, **options)
    if backend == "embedded":
        return cls(**options)
    if backend in ("openai", "anthropic"):  # both take MODEL@BASE_URL
        from memlens.models.openai_compat import split_model_string

        model_name, base_url = split_model_string(name)
        options.setdefault("base_url", base_url)
        return cls(model_name, **options)
    return cls(name, **options)
