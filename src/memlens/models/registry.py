"""Resolve a model string to a backend instance, importing optional backends lazily."""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import inspect
import math

from memlens.errors import MemlensError
from memlens.models.base import ChatModel
from memlens.models.fingerprint import embedded_fingerprint, fingerprint_model, with_fingerprint
from memlens.models.modelstring import (
    API_BACKENDS,
    model_spec,
    parse_model_string,
    split_model_string,
)
from memlens.models.retry import RetryPolicy

_CLASSES = {
    "fake": ("memlens.models.fake", "FakeModel"),
    "embedded": ("memlens.models.embedded", "EmbeddedModel"),
    "openai": ("memlens.models.openai_compat", "OpenAIModel"),
    "anthropic": ("memlens.models.anthropic_backend", "AnthropicModel"),
    "vllm": ("memlens.models.vllm_backend", "VLLMModel"),
    "hf": ("memlens.models.hf_backend", "TransformersModel"),
}


def model_id_for(model: str) -> str:
    """The ``model_id`` (cache identity) that ``get_model(model)`` would have, without building
    the backend: no API key, weights or GPU needed (what ``--dry-run`` plans with).

    >>> model_id_for("openai:qwen3-4b@http://127.0.0.1:8000/v1/")
    'openai:qwen3-4b@http://127.0.0.1:8000/v1'
    >>> model_id_for("vllm:Qwen/Qwen3-4B")  # not in the local cache: no fingerprint
    'vllm:Qwen/Qwen3-4B'
    >>> model_id_for("embedded").partition("#")[0]  # + '#fp=' and 12 hex of the GGUF file
    'embedded'
    """
    spec = model_spec(model)
    backend, name = spec.backend, spec.name
    if backend == "fake":
        return model
    if backend in API_BACKENDS:
        return spec.public  # normalised, without URL credentials

    if backend == "embedded":
        return with_fingerprint("embedded", embedded_fingerprint())
    return with_fingerprint(f"{backend}:{name}", fingerprint_model(name))


def get_model(model: str, **options) -> ChatModel:
    """Return the backend for ``model`` (see the package docstring for the syntax).

    ``options`` go to the backend's constructor (e.g. ``api_key_env``, ``timeout_s``,
    ``max_concurrency`` for API backends; ``n_parallel``, ``n_threads``, ``n_replicas`` for ``embedded``).

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
        for option, value in (_EMBEDDED_SETTINGS.get() or {}).items():  # explicit options win
            options.setdefault(option, value)
        return cls(**options)
    if backend in API_BACKENDS:  # both take MODEL@BASE_URL
        model_name, base_url = split_model_string(name)  # the URL as given: it may log in
        options.setdefault("base_url", base_url)
        for option, value in (_CALL_SETTINGS.get() or {}).items():  # explicit options win
            options.setdefault(option, value)
        return cls(model_name, **options)
    return cls(name, **options)


_CALL_SETTINGS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "memlens_call_settings", default=None)


def check_call_limits(timeout_s: float | None, attempts: int | None) -> None:
    """MemlensError unless ``timeout_s`` is a finite number > 0 and ``attempts`` an integer >= 1
    (None: the backend default).

    >>> check_call_limits(0.5, 2)
    >>> check_call_limits(float("nan"), None)
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: timeout must be a finite number of seconds > 0, got nan
    """
    if timeout_s is not None and (isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float)
                                  or not math.isfinite(timeout_s) or timeout_s <= 0):
        raise MemlensError(f"timeout must be a finite number of seconds > 0, got {timeout_s!r}")
    if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int)
                                 or attempts < 1):
        raise MemlensError(f"attempts must be an integer >= 1, got {attempts!r}")


def api_options(model: str, timeout_s: float | None = None, attempts: int | None = None) -> dict:
    """``get_model`` options setting the per-attempt timeout and the attempts of an API model;
    {} for local backends (and for None values: the backend defaults, 120 s and 6 attempts).

    >>> api_options("embedded", 5, 2)
    {}
    >>> api_options("openai:m@http://127.0.0.1:8/v1", 5, 2)["retry"].max_attempts
    2
    """
    check_call_limits(timeout_s, attempts)
    if model.strip().partition(":")[0] not in API_BACKENDS:
        return {}
    options: dict = {}
    if timeout_s is not None:
        options["timeout_s"] = float(timeout_s)
    if attempts is not None:
        options["retry"] = RetryPolicy(max_attempts=attempts)
    return options


@contextlib.contextmanager
def call_settings(timeout_s: float | None = None, attempts: int | None = None):
    """Within this block, API models built by ``get_model`` without their own ``timeout_s`` /
    ``retry`` use these (how the CLI's ``--timeout`` / ``--attempts`` reach models that library
    code builds from model strings).

    >>> with call_settings(timeout_s=3):
    ...     _CALL_SETTINGS.get()
    {'timeout_s': 3.0}
    """
    token = _CALL_SETTINGS.set(api_options("openai:x", timeout_s, attempts))
    try:
        yield
    finally:
        _CALL_SETTINGS.reset(token)


_EMBEDDED_SETTINGS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "memlens_embedded_settings", default=None)


def embedded_overrides() -> dict:
    """The ``n_threads`` / ``n_parallel`` / ``n_replicas`` set by the enclosing
    ``embedded_settings`` block (empty outside one).

    >>> with embedded_settings(n_replicas=1):
    ...     embedded_overrides()
    {'n_replicas': 1}
    """
    return dict(_EMBEDDED_SETTINGS.get() or {})


@contextlib.contextmanager
def embedded_settings(n_threads: int | None = None, n_parallel: int | None = None,
                      n_replicas: int | None = None):
    """Within this block, ``embedded`` models built by ``get_model`` without their own
    ``n_threads`` / ``n_parallel`` / ``n_replicas`` use these (the CLI's ``--threads`` /
    ``--parallel`` / ``--replicas``); None
    keeps the automatic choice (``memlens.models.embedded.machine_settings``).

    >>> with embedded_settings(n_threads=1):
    ...     _EMBEDDED_SETTINGS.get()
    {'n_threads': 1}
    """
    settings = {name: value for name, value in (("n_threads", n_threads),
                                                 ("n_parallel", n_parallel),
                                                 ("n_replicas", n_replicas))
                if value is not None}
    token = _EMBEDDED_SETTINGS.set(settings)
    try:
        yield
    finally:
        _EMBEDDED_SETTINGS.reset(token)
