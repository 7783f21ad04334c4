"""Benchmark (c): embedded tokens/s through memlens vs bare xllamacpp, and the slots sweep.

Run by hand: ``python benchmarks/bench_embedded.py [--requests 8] [--max-tokens 96]``.
Prints ratios against the baseline measured in the same run. Keep runs short on a shared machine:
absolute numbers swing with whatever else runs; ratios within one run are what to read.
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


def run_bare(server, prompts: list[str], max_tokens: int, workers: int) -> tuple[int, float]:
    def one(index_prompt):
        index, prompt = index_prompt
        result = server.handle_chat_completions({
            "messages": [{"role": "user", "content": prompt}], "temperature": 0.7,
            "top_p": 0.98, "top_k": 50, "seed": index, "max_tokens": max_tokens})
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="repeats; the median is shown")
    parser.add_argument("--slots", default="1,2,4,8")
    parser.add_argument("--overhead-threads", type=int, default=1)
    parser.add_argument("--threads", default="1,2",
                        help="thread counts; 2 collapses when other work shares the 2 cores")
    args = parser.parse_args()
    from memlens.models.embedded import EmbeddedModel

    prompts = (PROMPTS * (args.requests // len(PROMPTS) + 1))[: args.requests]
    print(f"{args.requests} requests x max {args.max_tokens} tokens, median of {args.rounds} "
          "rounds; tok/s = completion tokens / wall s")
    threads = args.overhead_threads
    print(f"\n[overhead] one slot, sequential, {threads} thread(s), bare and memlens interleaved")
    bare = bare_server(1, threads)
    model = EmbeddedModel(n_parallel=1, n_threads=threads, ctx_per_slot=2048)
    run_bare(bare, prompts[:1], 8, 1)  # warm-up
    run_memlens(model, prompts[:1], 8, 1)
    # Alternate bare / memlens request by request (order swapped each time) so that changes in
    # machine load hit both sides alike; sum tokens and seconds per side.
    totals = {"bare": [0, 0.0], "memlens": [0, 0.0]}
    for round_index in range(args.rounds):
        for index, prompt in enumerate(prompts):
            order = ["bare", "memlens"] if (round_index + index) % 2 == 0 else ["memlens", "bare"]
            for which in order:
                runner = run_bare if which == "bare" else run_memlens
                tokens, seconds = runner(bare if which == "bare" else model, [prompt],
                                         args.max_tokens, 1)
                totals[which][0] += tokens
                totals[which][1] += seconds
    bare_rate = totals["bare"][0] / totals["bare"][1]
    memlens_rate = totals["memlens"][0] / totals["memlens"][1]
    print(f"  bare xllamacpp : {bare_rate:7.1f} tok/s  ({totals['bare'][0]} tokens)")
    print(f"  memlens        : {memlens_rate:7.1f} tok/s  ({totals['memlens'][0]} tokens)"
          f"   ratio memlens/bare = {memlens_rate / bare_rate:.2f}")
    per_call_us, request_s = python_overhead(bare, prompts[0], args.max_tokens)
    print(f"  memlens Python work per call (build request + parse reply): {per_call_us:.0f} us "
          f"= {per_call_us / 1e6 / request_s:.4%} of one {args.max_tokens}-token request")
    del bare
    print("\n[slots sweep] memlens, requests submitted from n_parallel threads; configs "
          "interleaved within each round so load changes hit them alike")
    configs = [(int(t), int(s)) for t in args.threads.split(",") for s in args.slots.split(",")]
    models = {c: EmbeddedModel(n_parallel=c[1], n_threads=c[0], ctx_per_slot=2048) for c in configs}
    runs: dict[tuple[int, int], list[tuple[int, float]]] = {c: [] for c in configs}
    for config, model in models.items():
        run_memlens(model, prompts[: config[1]], 8, config[1])  # warm-up
    for _ in range(args.rounds):
        for config, model in models.items():
            runs[config].append(run_memlens(model, prompts, args.max_tokens, config[1]))
    baseline = median_rate(runs[configs[0]])
    for (threads, slots), config_runs in runs.items():
        rate = median_rate(config_runs)
        print(f"  threads={threads} slots={slots}: {rate:7.1f} tok/s, x{rate / baseline:.2f} "
              f"vs threads={configs[0][0]} slots={configs[0][1]}")


if __name__ == "__main__":
    main()
