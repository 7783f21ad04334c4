"""How fast a backend generates, as far as is known before a run starts: measured for the
embedded model, stated assumptions for the others. What a run's estimated time (``--dry-run``,
and the confirmation a long run asks for) is computed from.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlens.models.embedded import machine_settings
from memlens.models.keys import is_local_url
from memlens.models.modelstring import split_model_string
from memlens.models.registry import embedded_overrides

EMBEDDED_TOKENS_PER_S = 50.0
"""The embedded model, one copy at one thread, in the units of :meth:`Throughput.seconds` (the
cap of completion tokens plus a tenth of the prompt tokens, per wall second): the quick audit
(256 calls, ≤ 160 tokens, ≈ 32 k prompt tokens: 44 k units) took 876 s end to end on an idle
2-core machine. Loaded cores are slower (up to ≈ 8× when other work holds both)."""
EMBEDDED_SECOND_THREAD = 1.5
"""Speed-up of a second thread on a free core (llama.cpp 2 threads vs 1, one sequence, idle 2
cores: ≈ 72-88 vs ≈ 50-60 tok/s, shared/notes)."""
EMBEDDED_COPY_EFFICIENCY = 0.8
"""Each further copy of the model (``--replicas``) adds this share of one copy's rate: the quick
audit took 414 s with two copies in a fresh clone (load 1.1-2.3) against 876 s with one (2.1×);
``benchmarks/bench_embedded.py`` gave 1.2-1.7× with other jobs on the cores (docs/models.md)."""
API_TOKENS_PER_S_PER_CALL = 50.0
"""Assumed: one call of a hosted API streams ≈ 50 tokens/s; calls in flight add up."""
LOCAL_SERVER_TOKENS_PER_S = 40.0
"""Assumed: a server on this machine (127.x / localhost) is as fast as the embedded model in
total, however many calls are in flight (llama.cpp on CPU, one slot)."""
OTHER_TOKENS_PER_S = {"vllm": 1000.0, "hf": 10.0, "fake": float("inf")}
"""Assumed totals: vLLM on a GPU; transformers on CPU (SmolLM2 de-quantised: ≈ 12 tok/s on 2
loaded cores); the scripted fake model costs nothing."""
PROMPT_SPEEDUP = 10.0
"""Prompt tokens are read ≈ 10× faster than completion tokens are written."""


@dataclass(frozen=True)
class Throughput:
    """Completion tokens per second a backend produces in total, and where the figure comes
    from (shown next to every estimate)."""

    tokens_per_s: float
    source: str

    def seconds(self, completion_tokens: int, prompt_tokens: int = 0) -> float:
        """Estimated wall time of this many tokens.

        >>> Throughput(40.0, "x").seconds(4000, 4000)
        110.0
        """
        if self.tokens_per_s == float("inf"):
            return 0.0
        return (completion_tokens + prompt_tokens / PROMPT_SPEEDUP) / self.tokens_per_s


def expected_throughput(model: str, concurrency: int | None = None,
                        threads: int | None = None, replicas: int | None = None) -> Throughput:
    """What ``model`` (a model string) is expected to produce; ``concurrency`` is the calls in
    flight of an API backend (None: its default), ``threads`` / ``replicas`` the embedded
    model's threads per copy and copies (None: the ``--threads`` / ``--replicas`` in force, else
    what it would choose now).

    >>> expected_throughput("openai:gpt-4.1-mini", 10).tokens_per_s
    500.0
    >>> expected_throughput("openai:m@http://127.0.0.1:8080/v1", 32).tokens_per_s
    40.0
    >>> expected_throughput("embedded", threads=1, replicas=1).source
    'embedded model, 1 copy at 1 thread: 50 tokens/s (measured: quick audit, idle 2 cores)'
    >>> expected_throughput("embedded", threads=1, replicas=2).tokens_per_s
    90.0
    """
    backend = model.strip().partition(":")[0]
    if backend == "embedded":
        chosen = {"n_threads": threads, "n_replicas": replicas}
        overrides = {**embedded_overrides(), **{k: v for k, v in chosen.items() if v is not None}}
        threads, _, replicas = machine_settings(overrides.get("n_threads"), 1,
                                                overrides.get("n_replicas"))
        one = EMBEDDED_TOKENS_PER_S * (EMBEDDED_SECOND_THREAD if threads >= 2 else 1.0)
        rate = one * (1 + EMBEDDED_COPY_EFFICIENCY * (replicas - 1))
        copies = "copy" if replicas == 1 else "copies"
        plural = "s" if threads != 1 else ""
        return Throughput(rate, f"embedded model, {replicas} {copies} at {threads} thread{plural}: "
                                f"{rate:.0f} tokens/s (measured: quick audit, idle 2 cores)")
    if backend in ("openai", "anthropic"):
        _, base_url = split_model_string(model.partition(":")[2])
        if base_url is not None and is_local_url(base_url):
            return Throughput(LOCAL_SERVER_TOKENS_PER_S,
                              f"a server on this machine: {LOCAL_SERVER_TOKENS_PER_S:.0f} "
                              "tokens/s assumed")
        calls = concurrency or (32 if backend == "openai" else 16)
        rate = API_TOKENS_PER_S_PER_CALL * calls
        return Throughput(rate, f"{calls} calls in flight x {API_TOKENS_PER_S_PER_CALL:.0f} "
                                "tokens/s each, assumed")
    rate = OTHER_TOKENS_PER_S.get(backend, LOCAL_SERVER_TOKENS_PER_S)
    if rate == float("inf"):
        return Throughput(rate, f"{backend}: scripted replies, no model time")
    return Throughput(rate, f"{backend}: {rate:g} tokens/s assumed")


def format_duration(seconds: float) -> str:
    """``"~18 min"``, ``"~2.5 h"``, ``"~17 days"``.

    >>> format_duration(40), format_duration(1092), format_duration(9000), format_duration(1.5e6)
    ('< 1 min', '~18 min', '~2.5 h', '~17 days')
    """
    if seconds < 60:
        return "< 1 min"
    if seconds < 5400:
        return f"~{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"~{seconds / 3600:.1f} h"
    return f"~{seconds / 86400:.0f} days"
