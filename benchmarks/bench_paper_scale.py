"""A paper-size audit against the loopback server: stage times, CPU per call, engine overhead at
a fixed model latency, calls in flight at --concurrency 128 / 256, and the cost of the old
whole-store re-reads — before and after, in one run.

The model and the LLM labeler are served by one loopback server in a *child process* (so its
CPU is not counted as the client's): generation replies are tagged steps (4-8 steps of ~20 words
whose keywords a scripted labeler maps to ontology symbols; memory shifts some steps), labeler
replies are the JSON the real LLM labeler expects, computed from the real ~3,100-token prompt.

Parts (all by default):

1. **audit** — ``run_audit`` on the ``paper`` preset (306 questions x 93 stimuli = 28,764
   generation calls and as many labeler calls, B = 10,000) at ``--latency`` per call and
   ``--concurrency``; prints wall time per stage, client CPU per call, and the engine overhead:
   1 - (model time at full concurrency, calls x latency / concurrency) / (stage wall time).
2. **reread** — on copies of the finished run, the chunk loop of the old pipeline (git
   ``44879a5``: every chunk re-reads steps, labels and pairs) against the new one (one read);
   nothing is called, so this is pure store-reading cost.
3. **inflight** — calls in flight seen by the server at --concurrency 128 and 256, with the
   backend's old silent bound of 32 ("before") and with the flag honoured ("after").
4. **overlap** — the chunk loop alone (``run_chunks``, no statistics) on fresh run directories:
   strictly sequential stages in chunks of 32 waves (as before), overlapped stages (generation
   runs on while finished chunks are labelled; chunks of ``chunk_size``), and sequential
   stages in the overlapped run's chunks (what one chunk boundary costs when nothing overlaps
   it), alternating ``--repeats`` times; engine overhead of each against the same model time,
   and the ratios. With few questions the 32-wave run is a single chunk (no boundary to hide).

Engine overhead = 1 - (calls x latency / concurrency) / (wall seconds of the chunk loop, drift
included). (Before overlapping it was measured against generate + label seconds, which now
overlap and so count some seconds twice.)

Usage: python benchmarks/bench_paper_scale.py [--questions 306] [--latency 1.0]
       [--concurrency 128] [--bootstrap 10000] [--parts audit,reread,inflight,overlap]
       [--repeats 1] [--keep DIR]
A reduced run: --questions 20 --bootstrap 1000 (about 1,900 calls per stage).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KEYWORDS = ("fairness", "cost", "plan", "safety", "feelings", "duty", "family", "health")
FILLER = ("so I would look at this carefully and compare what each option means over the next "
          "few years before deciding")
ANSWERS = ("It depends on your situation.", "Renting is the safer choice for now.",
           "Buying makes sense if you stay long.", "I would wait a little.")


# -- the server (child process) -------------------------------------------------------------
def _keyword(step: str) -> str:
    return next((word for word in KEYWORDS if word in step), KEYWORDS[0])


def responder(symbol_of: dict[str, str]):
    """Generation by seed (a question's base sequence, shifted by memory); labeling by keyword."""

    def reply(request: dict):
        messages = request.get("messages") or []
        if request.get("model") == "labeler":
            user = messages[-1]["content"]
            steps = re.findall(r"^Step (\d+): (.*)$", user, flags=re.M)
            return json.dumps({"labels": [{"step": int(n), "label": symbol_of[_keyword(text)]}
                                          for n, text in steps]})
        # the question sits right before the tagged-steps instruction; memory comes before it
        question = str(messages[-1].get("content", "")).split("Think through the question")[0]
        base_rng = random.Random(question.strip()[-150:])
        base = [base_rng.choice(KEYWORDS) for _ in range(base_rng.randint(4, 8))]
        rng = random.Random(request.get("seed"))
        shift = 0.2
        steps = [word if rng.random() > shift else rng.choice(KEYWORDS) for word in base]
        body = "".join(f"<step_{k}>We should weigh {word} here, {FILLER}.</step_{k}>"
                       for k, word in enumerate(steps, 1))
        return f"<think>{body}</think><answer>{rng.choice(ANSWERS)}</answer>"

    return reply


def serve(status_file: str, latency: float) -> None:
    """Child: serve until stdin closes; write the in-flight count every 20 ms to status_file."""
    from memlens.models.loopback import LoopbackServer
    from memlens.ontology import load_ontology

    symbols = load_ontology().symbol_ids
    symbol_of = {word: symbols[i * 5 % len(symbols)] for i, word in enumerate(KEYWORDS)}
    server = LoopbackServer(responder=responder(symbol_of), latency_s=latency,
                            record_requests=False).start()
    print(server.port, flush=True)
    stop = threading.Event()

    def sample() -> None:
        with open(status_file, "w") as out:
            while not stop.wait(0.02):
                out.write(f"{time.time():.3f} {server.in_flight} {server.received}\n")
                out.flush()

    threading.Thread(target=sample, daemon=True).start()
    sys.stdin.read()
    stop.set()
    server.stop()


class Server:
    """The loopback server in a child process, with its in-flight samples."""

    def __init__(self, latency: float):
        self.status = tempfile.NamedTemporaryFile(suffix=".inflight", delete=False).name
        self.child = subprocess.Popen([sys.executable, __file__, "--serve", self.status,
                                       "--latency", str(latency)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.port = int(self.child.stdout.readline())
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def in_flight(self, start: float, end: float) -> dict:
        """Peak and mean of the samples taken between two ``time.time()`` moments."""
        values = []
        for line in Path(self.status).read_text().splitlines():
            moment, flying, _ = line.split()
            if start <= float(moment) <= end:
                values.append(int(flying))
        busy = [v for v in values if v > 0]
        return {"peak": max(values, default=0), "samples": len(values),
                "mean_busy": sum(busy) / len(busy) if busy else 0.0}

    def close(self) -> None:
        self.child.stdin.close()
        self.child.wait(timeout=30)
        Path(self.status).unlink(missing_ok=True)


# -- parts ----------------------------------------------------------------------------------
def paper_config(url: str, questions: int, bootstrap: int, concurrency: int):
    from memlens.audit import build_config

    return build_config({"preset": "paper", "model": f"openai:paper@{url}",
                         "labeler": f"openai:labeler@{url}", "n_questions": questions,
                         "n_bootstrap": bootstrap, "concurrency": concurrency,
                         "max_tokens": 512})


def part_audit(server: Server, args, run_dir: Path) -> dict:
    from memlens.audit import run_audit

    config = paper_config(server.url, args.questions, args.bootstrap, args.concurrency)
    cpu0, wall0, t0 = time.process_time(), time.perf_counter(), time.time()
    result = run_audit(config, run_dir, progress=args.progress)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    s = result.seconds
    calls = result.calls["pending"] + result.labels.get("responses", 0)
    model_time = calls * args.latency / args.concurrency
    stage_wall = s["chunks"]  # the loop's wall (generate and label overlap: not their sum)
    return {
        "generation_calls": result.calls["pending"], "labeler_calls":
            result.labels.get("responses", 0), "failed": result.calls["failed"],
        "labels_failed": result.labels.get("failed", 0),
        "seconds": {key: round(value, 2) for key, value in s.items()
                    if not key.startswith("cpu_")},
        # after the chunk loop (its stages overlap: their busy times do not add up to its wall)
        "answers_and_flags_s": round(s["stages"] - s["load"] - s["chunks"], 2),
        "stats_and_quality_s": round(s["total"] - s["stages"], 2), "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "cpu_ms_per_call": {stage: round(1000 * s[f"cpu_{stage}"] / max(n, 1), 3)
                            for stage, n in (("generate", result.calls["pending"]),
                                             ("label", result.labels.get("responses", 0)))},
        "model_time_s": round(model_time, 2),
        "engine_overhead_share": round(1 - model_time / stage_wall, 4) if stage_wall else None,
        "in_flight": server.in_flight(t0, time.time()),
        "stats_error": result.stats_error,
        "loadavg": _loadavg(),
    }


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else ""


def part_overlap(server: Server, args) -> dict:
    """The chunk loop, sequential vs overlapped, on fresh run directories (no cache hits)."""
    from functools import cache

    from memlens.audit.chunks import question_chunks, run_chunks
    from memlens.audit.pipeline import chunk_size, labeler_options, plan_cells
    from memlens.models import get_model
    from memlens.ontology import get_labeler, load_ontology
    from memlens.store import RunStore

    config = paper_config(server.url, args.questions, args.bootstrap, args.concurrency)
    cells, _ = plan_cells(config)
    # name: (cells per chunk, overlapped); "sequential_small" has the overlapped run's chunks,
    # so (its wall - sequential's) / (its extra chunks) is what one chunk boundary costs
    variants = {"sequential": (max(64, 32 * args.concurrency), False),
                "overlapped": (chunk_size(config), True),
                "sequential_small": (chunk_size(config), False)}
    runs: dict[str, list] = {name: [] for name in variants}
    first = [cell for cell in cells if cell.question.id == cells[0].question.id]
    schedule = [("warm-up", first)]  # imports, JIT and the labeler's setup: paid by neither
    for repeat in range(args.repeats):
        order = list(variants) if repeat % 2 == 0 else list(variants)[::-1]
        schedule += [(name, cells) for name in order]
    for name, todo in schedule:
        run_dir = Path(tempfile.mkdtemp()) / "run"
        make_model = cache(lambda: get_model(config.model))
        t0 = time.time()
        with RunStore(run_dir) as store:
            make_labeler = cache(lambda store=store: get_labeler(
                config.labeler, ontology=load_ontology(config.ontology), store=store,
                **labeler_options(config)))
            totals = run_chunks(todo, config, store, make_model, make_labeler,
                                size=variants.get(name, (64, True))[0],
                                progress=args.progress,
                                overlap=variants.get(name, (64, True))[1])
        shutil.rmtree(run_dir.parent)
        if name == "warm-up":
            continue
        calls = totals.calls["pending"] + totals.labels.get("responses", 0)
        model_time = calls * args.latency / args.concurrency
        seconds = totals.seconds
        runs[name].append({
            "calls": calls, "chunk_cells": variants[name][0], "chunks":
                len(question_chunks(cells, variants[name][0])), "model_time_s": round(model_time, 2),
            "seconds": {key: round(value, 2) for key, value in seconds.items()},
            "engine_overhead_share": round(1 - model_time / seconds["chunks"], 4),
            "peak_in_flight_server": server.in_flight(t0, time.time())["peak"],
            "peak_in_flight_slots": totals.peak_in_flight, "loadavg": _loadavg()})
    best = {name: min(run["seconds"]["chunks"] for run in found) for name, found in runs.items()}
    extra = runs["sequential_small"][0]["chunks"] - runs["sequential"][0]["chunks"]
    return {**runs, "best_chunks_s": best,
            "overlapped_over_sequential_wall": round(best["overlapped"] / best["sequential"], 4),
            "overlapped_over_sequential_small_wall":
                round(best["overlapped"] / best["sequential_small"], 4),
            "sequential_s_per_chunk_boundary":
                round((best["sequential_small"] - best["sequential"]) / extra, 2) if extra else None,
            "best_overhead_share": {name: round(1 - runs[name][0]["model_time_s"] / best[name], 4)
                                    for name in runs}}


def _old_pipeline():
    """The pipeline module of commit 44879a5 (every chunk re-reads the whole store)."""
    import importlib.util

    source = subprocess.run(["git", "show", "44879a5:src/memlens/audit/pipeline.py"],
                            capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[1]).stdout
    path = Path(tempfile.mkdtemp()) / "old_pipeline.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("memlens_old_pipeline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def part_reread(server: Server, args, finished: Path) -> dict:
    """The chunk loops on copies of a finished run (no calls): old re-reads vs one read."""
    from memlens.audit.chunks import question_chunks, run_chunks
    from memlens.audit.pipeline import plan_cells
    from memlens.store import RunStore

    config = paper_config(server.url, args.questions, args.bootstrap, args.concurrency)
    cells, _ = plan_cells(config)
    chunk = max(64, 8 * args.concurrency)  # the old chunk size, for both
    out = {"chunks": len(question_chunks(cells, chunk)), "cells": len(cells)}
    old = _old_pipeline()
    for name in ("old", "new"):
        copy = Path(tempfile.mkdtemp()) / "run"
        shutil.copytree(finished, copy)
        with RunStore(copy) as store:
            never = lambda: (_ for _ in ()).throw(AssertionError("a finished run called a model"))  # noqa: E731
            start = time.perf_counter()
            if name == "old":
                for part in question_chunks(cells, chunk):
                    old.run_generation(part, config, store, never, progress=False)
                    old.run_labeling(store, never, batch=config.label_batch, progress=False)
                    old.run_drift(store, config.baselines)
            else:
                run_chunks(cells, config, store, never, never, size=chunk, progress=False)
            out[f"{name}_s"] = round(time.perf_counter() - start, 2)
        shutil.rmtree(copy.parent)
    out["speedup"] = round(out["old_s"] / out["new_s"], 1) if out["new_s"] else None
    return out


def part_inflight(server: Server, args) -> dict:
    """Server-side calls in flight for a stream of generation calls, old bound vs honoured."""
    from memlens.engine import run_requests
    from memlens.models import ChatRequest, GenerationParams
    from memlens.models.openai_compat import OpenAIModel

    out = {}
    for concurrency in (128, 256):
        n = concurrency * args.waves
        for name in ("before", "after"):
            model = OpenAIModel("paper", server.url)
            if name == "before":  # the backend's silent default bound, never raised
                model.use_concurrency = lambda _width: None
            requests = [ChatRequest(({"role": "user", "content": f"Q{concurrency}{name}{i}"},),
                                    GenerationParams(max_tokens=64, seed=i)) for i in range(n)]
            t0, start = time.time(), time.perf_counter()
            run_requests(model, requests, concurrency=concurrency, progress=False)
            wall = time.perf_counter() - start
            out[f"{concurrency}_{name}"] = {
                **server.in_flight(t0, time.time()), "calls": n, "wall_s": round(wall, 2),
                "calls_per_s": round(n / wall, 1),
                "ideal_calls_per_s": round(concurrency / args.latency, 1)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=306)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--waves", type=int, default=6, help="inflight: calls = waves x C")
    parser.add_argument("--parts", default="audit,reread,inflight,overlap")
    parser.add_argument("--repeats", type=int, default=1, help="overlap: runs of each variant")
    parser.add_argument("--keep", help="run directory to keep (default: a temporary one)")
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency)
        return
    os.environ.setdefault("OPENAI_API_KEY", "sk-loopback-bench")
    parts = set(args.parts.split(","))
    run_dir = Path(args.keep or tempfile.mkdtemp()) / "paper"
    server = Server(args.latency)
    results: dict = {"questions": args.questions, "latency_s": args.latency,
                     "concurrency": args.concurrency, "bootstrap": args.bootstrap}
    try:
        if "audit" in parts:
            results["audit"] = part_audit(server, args, run_dir)
            print(json.dumps({"audit": results["audit"]}, indent=1), flush=True)
        if "reread" in parts:
            results["reread"] = part_reread(server, args, run_dir)
            print(json.dumps({"reread": results["reread"]}, indent=1), flush=True)
        if "overlap" in parts:
            results["overlap"] = part_overlap(server, args)
            print(json.dumps({"overlap": results["overlap"]}, indent=1), flush=True)
        if "inflight" in parts:
            results["inflight"] = part_inflight(server, args)
            print(json.dumps({"inflight": results["inflight"]}, indent=1), flush=True)
    finally:
        server.close()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
