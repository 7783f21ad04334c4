"""Benchmark (c): embedded tokens/s through memlens vs bare llama.cpp (an ``xllamacpp.Server``
driven directly), threads x slots x copies, quiet and loaded, and what the automatic choice picks.

Run by hand: ``python benchmarks/bench_embedded.py [--requests 8] [--max-tokens 64]
[--threads 1,2] [--slots 1,2,4,8] [--replicas 1,2] [--phases quiet,loaded]``. Each configuration
answers the same seeded requests from ``slots x copies`` threads at once (continuous batching
within a copy), bare and through ``EmbeddedModel`` alternately; several copies are measured at
1 thread and 1 slot each (the automatic choice: one per core); "loaded" adds one busy-looping
process (another job on one core).
Prints tokens/s and ratios against the baseline measured in the same run (bare, 1 thread, 1
slot, same phase): absolute numbers swing with whatever else runs; read the ratios.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

PROMPTS = [
    "Explain step by step how to choose between renting and buying a home.",
    "What are the trade-offs of working remotely versus in an office?",
    "Describe how you would plan a week of healthy meals on a budget.",
    "Should a small team adopt a new tool mid-project? Give reasons.",
    "Compare learning a language with an app versus with a tutor.",
    "How should someone decide whether to lend money to a friend?",
    "What matters most when choosing a neighbourhood to live in?",
    "Give advice on balancing volunteering with a full-time job.",
]


def bare_server(n_parallel: int, n_threads: int, ctx_per_slot: int = 2048):
    """A plain xllamacpp server on the same GGUF, set up by hand (the baseline)."""
    import xllamacpp

    from memlens.models.embedded import gguf_path

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.n_parallel = n_parallel
    params.cont_batching = True
    params.n_ctx = ctx_per_slot * n_parallel
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.verbosity = 0
    return xllamacpp.Server(params)


def run_bare(servers, prompts: list[str], max_tokens: int, workers: int) -> tuple[int, float]:
    """``servers``: one server or a list of copies, each answering one request at a time."""
    import queue

    free: queue.SimpleQueue = queue.SimpleQueue()
    for server in servers if isinstance(servers, list) else [servers] * workers:
        free.put(server)

    def one(index_prompt):
        index, prompt = index_prompt
        server = free.get()
        result = server.handle_chat_completions({
            "messages": [{"role": "user", "content": prompt}], "temperature": 0.7,
            "top_p": 0.98, "top_k": 50, "seed": index, "max_tokens": max_tokens,
            "cache_prompt": False})
        free.put(server)
        return result["usage"]["completion_tokens"]

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        tokens = sum(pool.map(one, enumerate(prompts)))
    return tokens, time.perf_counter() - started


def run_memlens(model, prompts: list[str], max_tokens: int, workers: int) -> tuple[int, float]:
    from memlens.models import GenerationParams

    def one(index_prompt):
        index, prompt = index_prompt
        params = GenerationParams(max_tokens=max_tokens, seed=index)
        return model.complete([{"role": "user", "content": prompt}], params).completion_tokens

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        tokens = sum(pool.map(one, enumerate(prompts)))
    return tokens, time.perf_counter() - started


def python_overhead(server, prompt: str, max_tokens: int) -> tuple[float, float]:
    """Microseconds memlens spends around one call, and the seconds of that call itself."""
    from memlens.models import GenerationParams
    from memlens.models.embedded import build_request, parse_result

    messages, params = [{"role": "user", "content": prompt}], GenerationParams(max_tokens=max_tokens)
    started = time.perf_counter()
    result = server.handle_chat_completions(build_request(messages, params))
    request_s = time.perf_counter() - started
    repeats = 20_000
    started = time.perf_counter()
    for _ in range(repeats):
        parse_result(result, params)
        build_request(messages, params)
    return (time.perf_counter() - started) / repeats * 1e6, request_s


def median_rate(runs: list[tuple[int, float]]) -> float:
    """Median tokens/s over repeated runs."""
    rates = sorted(tokens / seconds for tokens, seconds in runs)
    return rates[len(rates) // 2]


def burner(stop) -> None:
    """Busy-loop until ``stop`` is set: one core's worth of other work."""
    while not stop.is_set():
        sum(range(10_000))


def sweep(configs, prompts, max_tokens, rounds):
    """tokens/s per (threads, slots, side) for one phase, configurations interleaved per round."""
    from memlens.models.embedded import EmbeddedModel

    runs: dict = {}
    for threads, slots, copies in configs:
        bare = [bare_server(slots, threads) for _ in range(copies)]
        model = EmbeddedModel(n_parallel=slots, n_threads=threads, ctx_per_slot=2048,
                              n_replicas=copies)
        run_bare(bare[0], prompts[:1], 4, 1)  # warm-up
        for _ in range(rounds):
            for side in ("bare", "memlens"):
                runner, target = (run_bare, bare) if side == "bare" else (run_memlens, model)
                runs.setdefault((threads, slots, copies, side), []).append(
                    runner(target, prompts, max_tokens, slots * copies))
        del bare, model
        from memlens.models.embedded import release_servers

        release_servers()
    return {key: median_rate(value) for key, value in runs.items()}


def main() -> None:
    import multiprocessing
    import os

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1, help="repeats; the median is shown")
    parser.add_argument("--slots", default="1,2,4,8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--replicas", default="1,2",
                        help="copies of the model (those above 1 at 1 thread, 1 slot each)")
    parser.add_argument("--phases", default="quiet,loaded")
    parser.add_argument("--overhead", action="store_true",
                        help="also measure memlens' Python work per call")
    args = parser.parse_args()
    from memlens.models.cpu import auto_replicas, auto_threads, available_cores, current_load

    prompts = (PROMPTS * (args.requests // len(PROMPTS) + 1))[: args.requests]
    configs = [(int(t), int(s), 1) for t in args.threads.split(",") for s in args.slots.split(",")]
    configs += [(1, 1, int(r)) for r in args.replicas.split(",") if int(r) > 1]
    print(f"{args.requests} requests x max {args.max_tokens} tokens, median of {args.rounds} "
          f"round(s); tok/s = completion tokens / wall s; {available_cores()} cores")
    for phase in args.phases.split(","):
        stop = multiprocessing.Event()
        workers = ([multiprocessing.Process(target=burner, args=(stop,))]
                   if phase == "loaded" else [])
        for worker in workers:
            worker.start()
        try:
            if workers:
                time.sleep(5)  # let the load average see it
            load = os.getloadavg()[0]
            threads, copies = auto_threads(), auto_replicas()
            print(f"\n[{phase}] load average {load:.2f} at start; automatic choice: "
                  f"{copies} cop{'y' if copies == 1 else 'ies'}"
                  + (f" at {threads} thread(s)" if copies == 1 else " at 1 thread"))
            rates = sweep(configs, prompts, args.max_tokens, args.rounds)
            print(f"  load average {current_load():.2f} at end")
        finally:
            stop.set()
            for worker in workers:
                worker.join()
        baseline = rates[(1, 1, 1, "bare")]
        print(f"  baseline: bare llama.cpp, 1 thread, 1 slot, 1 copy = {baseline:.1f} tok/s")
        print("  threads slots copies   bare tok/s  x baseline   memlens tok/s  x baseline  "
              "memlens/bare")
        for threads, slots, copies in configs:
            bare = rates[(threads, slots, copies, "bare")]
            ours = rates[(threads, slots, copies, "memlens")]
            print(f"  {threads:7d} {slots:5d} {copies:6d} {bare:12.1f} {bare / baseline:11.2f} "
                  f"{ours:15.1f} {ours / baseline:11.2f} {ours / bare:13.2f}")
    if args.overhead:
        bare = bare_server(1, 1)
        per_call_us, request_s = python_overhead(bare, prompts[0], args.max_tokens)
        print(f"\nmemlens Python work per call (build request + parse reply): {per_call_us:.0f} "
              f"us = {per_call_us / 1e6 / request_s:.4%} of one {args.max_tokens}-token request")


if __name__ == "__main__":
    main()
