#!/usr/bin/env python
"""Serve the embedded SmolLM2-135M-Instruct over llama.cpp's own OpenAI-compatible HTTP server.

    python scripts/serve_embedded.py --port 8765 [--threads 1] [--slots 1]

Then any OpenAI-compatible client — memlens (``openai:smollm2@http://127.0.0.1:8765/v1``) and
lm-eval's ``local-chat-completions`` adapter (what ``memlens mitigate eval --lm-eval`` uses for
``openai:`` models) — reaches the embedded model. Listens on 127.0.0.1 only; stop with Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--ctx-per-slot", type=int, default=4096)
    args = parser.parse_args(argv)
    import xllamacpp

    from memlens.models.embedded import gguf_path

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf_path())
    params.n_parallel = args.slots
    params.cont_batching = True
    params.n_ctx = args.ctx_per_slot * args.slots
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.port = args.port
    params.hostnames = ["127.0.0.1"]
    params.verbosity = 0
    server = xllamacpp.Server(params)
    print(f"serving {gguf_path().name} on http://127.0.0.1:{args.port}/v1", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
