"""Speed of the tool-drift pipeline, as ratios against baselines measured in the same run.

1. Runner overhead: ``run_tooldrift`` (engine + run store + parsing + scoring; the report is the
   CLI's, after the run) with an instant fake agent, against calling the same fake agent in a
   bare loop.
2. Scoring: ``summarize`` (rubric metric + vectorised scenario bootstrap) on a synthetic
   105-entry × 3 conditions × k=5 CALLS set, against a per-replicate Python-loop bootstrap of the
   same per-scenario rates (the naive baseline).
3. The typed summary: ``to_dict`` / ``from_dict`` against the ``json.dumps`` / ``json.loads``
   that write and read ``tooldrift.json``.

    python benchmarks/bench_tooldrift.py [--bootstrap 10000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np

from memlens.models import FakeModel, GenerationParams
from memlens.models.fake import tool_reply
from memlens.tooldrift import ToolDriftSummary, load_dataset
from memlens.tooldrift.runner import RunConfig, build_messages, run_tooldrift
from memlens.tooldrift.schema import parse_rubric
from memlens.tooldrift.summary import summarize

DATA = load_dataset()


def agent(messages, params):
    entry = next(e for e in DATA.entries.values() if e.user_prompt == messages[-1]["content"])
    return tool_reply(entry.tool_name, json.dumps({"x": 1}))


def bench_runner(k: int) -> None:
    start = time.perf_counter()
    model = FakeModel(agent)
    for entry in DATA.entries.values():
        for condition in ("base", "neutral", "biased"):
            for _ in range(k):
                model.complete(build_messages(entry, entry.memories(condition), False),
                               GenerationParams())
    bare = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as run_dir:
        start = time.perf_counter()
        run_tooldrift(FakeModel(agent), DATA, run_dir, RunConfig(k=k, n_bootstrap=1000),
                      progress=False)
        full = time.perf_counter() - start
    calls = len(DATA.entries) * 3 * k
    print(f"runner: {calls} calls; bare loop {bare:.3f} s, run_tooldrift {full:.3f} s "
          f"(ratio {full / bare:.1f}x, {1000 * (full - bare) / calls:.2f} ms overhead per call)")


def synthetic_rows(n_entries: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    rubrics, rows = {}, []
    for index in range(n_entries):
        rubric = parse_rubric({"bias_dimension": "speed_impatience", "domain": f"d{index % 7}",
                               "scenario_num": f"scenario_{index}", "tool": "t", "params": {
                                   "mode": {"kind": "enum", "order": ["a", "b", "c"]},
                                   "flag": {"kind": "boolean", "degraded": False},
                                   "n": {"kind": "numeric", "degraded": "lower"}}}, "synthetic", index)
        rubrics[rubric.id] = rubric
        for condition in ("base", "neutral", "biased"):
            for sample in range(k):
                rows.append({"entry_id": rubric.id, "condition": condition, "k": sample,
                             "status": "ok", "arguments": {
                                 "mode": str(rng.choice(["a", "b", "c"])),
                                 "flag": bool(rng.integers(2)), "n": int(rng.integers(10))}})
    return rows, rubrics


def loop_bootstrap(biased: np.ndarray, neutral: np.ndarray, n_bootstrap: int, seed: int):
    rng = np.random.default_rng(seed)
    deltas = []
    for _ in range(n_bootstrap):
        draw = rng.integers(0, biased.size, biased.size)
        deltas.append(biased[draw].mean() - neutral[draw].mean())
    return np.percentile(deltas, [2.5, 97.5])


def bench_scoring(n_bootstrap: int) -> None:
    rows, rubrics = synthetic_rows(105, 5, seed=0)
    start = time.perf_counter()
    summary = summarize(rows, rubrics, n_bootstrap=n_bootstrap)
    vectorised = time.perf_counter() - start
    biased = np.array([s.r_biased for s in summary.scenarios])
    neutral = np.array([s.r_neutral for s in summary.scenarios])
    start = time.perf_counter()
    loop_ci = loop_bootstrap(biased, neutral, n_bootstrap, seed=0)
    one_loop = time.perf_counter() - start
    # summarize bootstraps 1 overall + 1 dimension + 7 domains = 9 groups x 2 statistics
    naive = one_loop * 18
    print(f"scoring: {len(rows)} rows, B={n_bootstrap}: summarize {vectorised:.3f} s; "
          f"loop bootstrap baseline {one_loop:.3f} s per statistic, ~{naive:.2f} s for the same "
          f"18 statistics (ratio {naive / vectorised:.1f}x); overall delta CI "
          f"{list(summary.overall.ci.delta)} vs loop {loop_ci.round(4).tolist()}")


def bench_summary_io(n_bootstrap: int, repeat: int = 20) -> None:
    """The typed summary's cost: ``to_dict`` against the ``json.dumps`` that writes it, and
    ``from_dict`` against the ``json.loads`` that reads it (same summary, same run)."""
    rows, rubrics = synthetic_rows(105, 5, seed=0)
    summary = summarize(rows, rubrics, n_bootstrap=n_bootstrap)

    def best(action) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            action()
            times.append(time.perf_counter() - start)
        return min(times)

    data = summary.to_dict()
    text = json.dumps(data, indent=2, ensure_ascii=False)
    to_dict, dumps = best(summary.to_dict), best(lambda: json.dumps(data, indent=2,
                                                                      ensure_ascii=False))
    loads = best(lambda: json.loads(text))
    from_dict = best(lambda: ToolDriftSummary.from_dict(data))
    print(f"summary I/O: {len(text) / 1e6:.2f} MB tooldrift.json; to_dict {1000 * to_dict:.1f} ms "
          f"vs json.dumps {1000 * dumps:.1f} ms (ratio {to_dict / dumps:.2f}); from_dict "
          f"{1000 * from_dict:.1f} ms vs json.loads {1000 * loads:.1f} ms "
          f"(ratio {from_dict / loads:.2f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=5)
    args = parser.parse_args()
    bench_runner(args.k)
    bench_scoring(args.bootstrap)
    bench_summary_io(args.bootstrap)
