"""Model strings, parsed once where they enter into a ``ModelSpec``: backend, name, public base
URL and the public form every id, cache key, manifest, report and message uses.

Grammar: ``embedded``, ``fake``, ``openai:MODEL``, ``openai:MODEL@BASE_URL``,
``anthropic:MODEL[@BASE_URL]``, ``vllm:PATH_OR_ID``, ``hf:PATH_OR_ID``. A base URL may carry
credentials (``http://user:KEY@host/v1``, ``?api_key=KEY``): they stay in the string the caller
holds, which ``get_model`` hands to the backend to talk to the server; a ``ModelSpec`` never
holds them (``memlens.models.public`` scrubs them, here, once per string).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from urllib.parse import urlsplit

from memlens.errors import MemlensError
from memlens.models.public import public_base_url, scrub_credentials

BACKENDS = ("embedded", "fake", "openai", "anthropic", "vllm", "hf")
API_BACKENDS = ("openai", "anthropic")
"""Backends that call a server, and so take a timeout, a retry policy and a base URL."""
_NAMED = ("openai", "anthropic", "vllm", "hf")
"""Backends that need a name after ``backend:``; the others take none."""


def split_model_string(name: str) -> tuple[str, str | None]:
    """``"qwen@http://h/v1"`` -> ``("qwen", "http://h/v1")``: an API backend's name and base URL
    (as given: credentials kept, for talking to the server).

    >>> split_model_string("gpt-4.1-mini"), split_model_string("q@http://127.0.0.1:8/v1")
    (('gpt-4.1-mini', None), ('q', 'http://127.0.0.1:8/v1'))
    """
    index = name.lower().find("@http")
    if index < 0:
        return name, None
    return name[:index], name[index + 1:].rstrip("/")


def api_model_id(backend: str, model_name: str, base_url: str | None) -> str:
    """The model id of an API backend (``openai`` / ``anthropic``) for ``model_name`` at
    ``base_url``: the URL in its public form; Anthropic's optional trailing ``/v1`` is dropped
    (its SDK adds it).

    >>> api_model_id("anthropic", "claude", "http://localhost:9/v1/")
    'anthropic:claude@http://127.0.0.1:9'
    """
    if not base_url:
        return f"{backend}:{model_name}"
    url = public_base_url(base_url)
    if backend == "anthropic":
        query = urlsplit(url).query
        path_end = len(url) - len(query) - (1 if query else 0)
        if url[:path_end].endswith("/v1"):
            url = url[:path_end - 3] + url[path_end:]
    return f"{backend}:{model_name}@{url}"


def parse_model_string(model: str) -> tuple[str, str]:
    """Split a model string into (backend, name); MemlensError (credentials scrubbed) when
    malformed.

    >>> parse_model_string("openai:qwen3-4b@http://127.0.0.1:8000/v1")
    ('openai', 'qwen3-4b@http://127.0.0.1:8000/v1')
    >>> parse_model_string("embedded")
    ('embedded', '')
    >>> parse_model_string("gpt-4@http://u:KEY@h/v1")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: unknown or unavailable model 'gpt-4@http://h/v1': expected one of 'embedded', 'fake', 'openai', 'anthropic', 'vllm', 'hf' (e.g. 'openai:gpt-4.1-mini@http://127.0.0.1:8000/v1')
    """
    backend, _, name = model.strip().partition(":")
    problem = None
    if backend not in BACKENDS:
        problem = "unknown or unavailable model '{}': expected one of " + ", ".join(
            f"'{b}'" for b in BACKENDS) + " (e.g. 'openai:gpt-4.1-mini@http://127.0.0.1:8000/v1')"
    elif backend in _NAMED and not name:
        problem = f"model '{{}}' needs a name after '{backend}:' (e.g. '{backend}:MODEL')"
    elif backend not in _NAMED and name:
        problem = f"model '{{}}': '{backend}' takes no name after ':'"
    if problem:
        raise MemlensError(problem.format(scrub_credentials(model)))
    return backend, name


@dataclass(frozen=True)
class ModelSpec:
    """A model string parsed once (``model_spec``), without its credentials.

    >>> spec = model_spec("openai:qwen@http://u:KEY@LOCALHOST:8000/v1/?api_key=K2")
    >>> spec.backend, spec.name, spec.base_url
    ('openai', 'qwen', 'http://127.0.0.1:8000/v1?api_key=<redacted>')
    >>> str(spec)
    'openai:qwen@http://127.0.0.1:8000/v1?api_key=<redacted>'
    """

    backend: str
    """One of ``BACKENDS``."""
    name: str
    """The model (API backends: without ``@BASE_URL``), path or hub id; "" for embedded/fake."""
    base_url: str | None
    """API backends: the server's base URL in its public form (normalised, no credentials)."""
    public: str
    """What is recorded and shown: an API backend's model id (``api_model_id``), else the string."""

    def __str__(self) -> str:
        return self.public


@functools.lru_cache(maxsize=256)
def model_spec(model: str) -> ModelSpec:
    """Parse ``model`` (the one place a model string's credentials are scrubbed; each distinct
    string is parsed once per process). MemlensError when malformed (``parse_model_string``).

    >>> model_spec("vllm:Qwen/Qwen3-4B")
    ModelSpec(backend='vllm', name='Qwen/Qwen3-4B', base_url=None, public='vllm:Qwen/Qwen3-4B')
    """
    backend, name = parse_model_string(model)
    if backend not in API_BACKENDS:
        return ModelSpec(backend, name, None, scrub_credentials(model.strip()))
    model_name, base_url = split_model_string(name)
    public = api_model_id(backend, model_name, base_url)
    return ModelSpec(backend, model_name, public[len(f"{backend}:{model_name}@"):] or None, public)


def public_model_string(model: str) -> str:
    """The form of a model (or labeler) string to record and show: a model string's
    ``ModelSpec.public``; any other string with its credentials scrubbed. Never raises.

    >>> public_model_string("openai:qwen@http://u:KEY@localhost:8000/v1/")
    'openai:qwen@http://127.0.0.1:8000/v1'
    >>> public_model_string("embedded"), public_model_string("llm:x@http://u:KEY@h")
    ('embedded', 'llm:x@http://h')
    """
    try:
        return model_spec(model).public
    except MemlensError:
        return scrub_credentials(model.strip())


def public_config(config: dict) -> dict:
    """``config`` (a flat settings mapping) with every string value in its public form, for
    manifests and for comparing a resumed run's settings with the stored ones.

    >>> public_config({"model": "openai:m@http://localhost:8/v1/", "seed": 1})
    {'model': 'openai:m@http://127.0.0.1:8/v1', 'seed': 1}
    """
    return {key: public_model_string(value) if isinstance(value, str) else value
            for key, value in config.items()}
