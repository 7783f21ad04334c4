"""Runner benchmarks (run by hand: ``python benchmarks/bench_runner.py [--calls 2000]``).

(a) Throughput of ``run_requests`` against the loopback OpenAI-compatible server (a separate
    process, so client CPU is measured alone) at a fixed latency and concurrency, as a fraction
    of the bound concurrency / latency, with client CPU per call; the baseline, measured in the
    same run, is a bare ``AsyncOpenAI`` loop with the same semaphore and no store.
(b) Resuming a finished run of N cached requests: model calls made (must be 0) and seconds,
    against a baseline of just computing the N cache keys.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time

from memlens.engine import run_requests
from memlens.models import ChatRequest, ChatResponse, FakeModel, GenerationParams, get_model
from memlens.store import RunStore


def _requests(count: int, prefix: str) -> list[ChatRequest]:
    return [ChatRequest(({"role": "system", "content": "Answer step by step."},
                         {"role": "user", "content": f"{prefix} question {i}: what is {i} + {i}?"}),
                        GenerationParams(max_tokens=64)) for i in range(count)]


def _start_server(latency_s: float) -> tuple[subprocess.Popen, str]:
    server = subprocess.Popen([sys.executable, "-m", "memlens.models.loopback", "--port", "0",
                               "--latency", str(latency_s)], stdout=subprocess.PIPE, text=True)
    line = server.stdout.readline()  # "serving on http://127.0.0.1:PORT/v1 (Ctrl-C to stop)"
    return server, line.split()[2]


def _measure(run) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _bare_openai(base_url: str, requests: list[ChatRequest], concurrency: int) -> None:
    import openai

    async def main() -> None:
        client = openai.AsyncOpenAI(api_key="memlens-local-no-key", base_url=base_url,
                                    max_retries=0)
        semaphore = asyncio.Semaphore(concurrency)

        async def one(request: ChatRequest) -> None:
            async with semaphore:
                await client.chat.completions.create(model="bench", messages=list(request.messages),
                                                     max_tokens=64)

        await asyncio.gather(*(one(request) for request in requests))
        await client.close()

    asyncio.run(main())


class SleepModel:
    """An async backend with no HTTP: isolates the runner's and the store's own cost."""

    model_id = "sleep"
    supports_tools = False

    def __init__(self, latency_s: float):
        self.latency_s = latency_s

    async def acomplete(self, messages, params):
        await asyncio.sleep(self.latency_s)
        return ChatResponse("x" * 200, 30, 40)

    def complete(self, messages, params):  # pragma: no cover - the runner uses acomplete
        raise NotImplementedError


def bench_throughput(calls: int, latency_s: float, concurrency: int) -> None:
    """(a) loopback throughput vs the concurrency / latency bound, and client CPU per call."""
    bound = concurrency / latency_s
    server, base_url = _start_server(latency_s)
    try:
        _bare_openai(base_url, _requests(concurrency, "warm-up"), concurrency)
        bare_wall, bare_cpu = _measure(
            lambda: _bare_openai(base_url, _requests(calls, "bare"), concurrency))
        with tempfile.TemporaryDirectory() as run_dir, RunStore(run_dir) as store:
            model = get_model(f"openai:bench@{base_url}", max_concurrency=concurrency)
            requests = _requests(calls, "memlens")
            wall, cpu = _measure(lambda: run_requests(model, requests, store,
                                                      concurrency=concurrency, progress=False))
            stored = store.usage()["responses"]
    finally:
        server.terminate()
        server.wait()
    with tempfile.TemporaryDirectory() as run_dir, RunStore(run_dir) as store:
        alone_wall, alone_cpu = _measure(lambda: run_requests(
            SleepModel(latency_s), _requests(calls, "alone"), store, concurrency=concurrency,
            progress=False))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"(a) {calls} calls, latency {latency_s * 1000:.0f} ms, concurrency {concurrency}: "
          f"bound {bound:.0f} calls/s")
    for name, seconds, cpu_s in (("bare AsyncOpenAI", bare_wall, bare_cpu),
                                 ("memlens run_requests + store", wall, cpu),
                                 ("runner + store, no HTTP", alone_wall, alone_cpu)):
        print(f"    {name:30s} {calls / seconds:7.1f} calls/s = {calls / seconds / bound:.3f} "
              f"of bound; client CPU {cpu_s / calls * 1000:.2f} ms/call")
    print(f"    memlens / bare throughput ratio {bare_wall / wall:.3f}; stored {stored} responses")


def bench_resume(count: int) -> None:
    """(b) resume of a finished run: calls made and seconds."""
    requests = _requests(count, "resume")
    model = FakeModel(lambda messages, params: ChatResponse("cached answer " * 20, 30, 40))
    with tempfile.TemporaryDirectory() as run_dir:
        with RunStore(run_dir) as store:
            run_requests(model, requests, store, progress=False)
        model.calls.clear()
        keys_s, _ = _measure(lambda: [request.cache_key(model.model_id) for request in requests])
        with RunStore(run_dir) as store:
            resume_s, _ = _measure(lambda: run_requests(model, requests, store, progress=False))
        size_mb = os.path.getsize(os.path.join(run_dir, "memlens.sqlite")) / 1e6
    print(f"(b) resume of {count} cached requests: {len(model.calls)} calls, {resume_s:.3f} s "
          f"(cache keys alone {keys_s:.3f} s, ratio {resume_s / keys_s:.2f}); store {size_mb:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--resume-count", type=int, default=10_000)
    args = parser.parse_args()
    bench_throughput(args.calls, args.latency, args.concurrency)
    bench_resume(args.resume_count)


if __name__ == "__main__":
    main()
