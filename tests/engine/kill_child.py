"""Child process of the kill / resume tests: runs N requests against a slow fake backend that
appends the prompt of every call it *starts* to a log (a call started is a call paid).

Usage: python kill_child.py RUN_DIR LOG N LATENCY_S CONCURRENCY MODE(async|threads)
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from memlens.engine import run_requests
from memlens.models import ChatRequest, ChatResponse, GenerationParams
from memlens.store import RunStore


class PaidModel:
    """Logs each call at its start, then answers after ``latency_s``."""

    model_id = "paid-fake"
    supports_tools = False

    def __init__(self, log_path: str, latency_s: float, concurrency: int):
        self._log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.latency_s = latency_s
        self.max_concurrency = concurrency

    def _paid(self, messages) -> str:
        prompt = messages[-1]["content"]
        os.write(self._log, (prompt + "\n").encode())  # one atomic append per call
        return prompt

    async def acomplete(self, messages, params):
        prompt = self._paid(messages)
        await asyncio.sleep(self.latency_s)
        return ChatResponse("re: " + prompt, completion_tokens=2)


class PaidSyncModel(PaidModel):
    def complete(self, messages, params):
        prompt = self._paid(messages)
        time.sleep(self.latency_s)
        return ChatResponse("re: " + prompt, completion_tokens=2)


def requests(count: int) -> list[ChatRequest]:
    """The run's requests: q0 … q{count-1}, each asked twice (duplicates must be merged)."""
    return [ChatRequest(({"role": "user", "content": f"q{i % count}"},),
                        GenerationParams(max_tokens=16)) for i in range(2 * count)]


def main(argv: list[str]) -> int:
    run_dir, log, count, latency, concurrency, mode = argv
    model_type = PaidModel if mode == "async" else PaidSyncModel
    model = model_type(log, float(latency), int(concurrency))
    try:
        with RunStore(run_dir) as store:
            results = run_requests(model, requests(int(count)), store, progress=False)
    except KeyboardInterrupt:
        return 130
    print(sum(result.text.startswith("re: ") for result in results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
