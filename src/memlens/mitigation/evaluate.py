"""Evaluate base and post-trained models like the paper's Table 2 (§5.2, App. I.3).

For every model on the held-out split of a reference data set (``prompt`` with an irrelevant
stimulus, ``reference`` o*(x)): generate (T = 0.7, top-p 0.98, top-k 50, App. I.3), split and
label the steps, and report

* **DTW** — mean DTW(ô(y), o*(x)) (lower is better; a response without steps counts as 1);
* **Diversity** — mean ``lexical_diversity`` of the ``<answer>`` block (App. I.3: a missing answer
  block scores 0);
* **Helpfulness** (1–5) and **NonDistraction** (share with d = 0) from a judge, when given,
  over valid judge replies only (invalid ones are counted, like the paper's exclusions);
* capability through lm-evaluation-harness's own model adapters for ``hf:``, ``vllm:`` and
  OpenAI-compatible models (``lm_eval_adapter``), on the user's local task data (seeded
  ``--lm-eval-limit`` subsets); the shipped sample is a smoke test and never a score.

Every cell states its n and a 95 % interval: a seeded percentile bootstrap over responses for
DTW, diversity and helpfulness, Wilson for proportions (non-distraction, capability). A cell
with fewer than ``MIN_N`` items is flagged. Each model is named with the fingerprint of its
weights (``memlens.models.fingerprint``). Writes ``table.csv`` (numbers, CI bounds and n as
columns), ``table.md``, ``eval_report.json`` and the drift-versus-capability figure.
"""

from __future__ import annotations

import json
from dataclasses import asdict, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from memlens.engine import run_requests
from memlens.errors import MemlensError
from memlens.fileio import atomic_path, atomic_write_text, output_dir
from memlens.metrics import dtw, lexical_diversity
from memlens.mitigation.datasets_io import load_training_data
from memlens.mitigation.judging import SCORE_SCHEMA, ask_scores, score_messages
from memlens.mitigation.labeling import build_labeler
from memlens.mitigation.lm_eval_adapter import run_capability
from memlens.mitigation.rewards import parse_reference
from memlens.models import ChatRequest, ChatResponse, GenerationParams, get_model
from memlens.models.fingerprint import model_fingerprint
from memlens.numfmt import number
from memlens.ontology.gold import wilson_interval
from memlens.ontology.schema import symbol_sequence
from memlens.pydantic_config import (
    Count,
    MaxTokens,
    PathText,
    Seed,
    Temperature,
    TopP,
    config_dataclass,
)
from memlens.rowkeys import derive_seed as sample_seed
from memlens.runmanifest import content_sha256, open_run_manifest
from memlens.stats.bootstrap import bootstrap_mean
from memlens.steps import split_steps
from memlens.stimuli import load_stimuli
from memlens.store import RunStore

COLUMNS = ["model", "MMLU", "GSM8K", "IF(strict)", "IF(loose)", "DTW", "Diversity",
           "Helpfulness", "NonDistraction", "n", "no_steps", "failed", "judge_invalid"]
CAPABILITY = ("MMLU", "GSM8K", "IF(strict)", "IF(loose)")
MEASURED = ("DTW", "Diversity", "Helpfulness", "NonDistraction", *CAPABILITY)
"""Cells with an n and an interval (``<name>_n``, ``<name>_lo``, ``<name>_hi`` columns)."""
MIN_N = 10
"""A cell over fewer items than this is flagged as not interpretable."""
N_BOOTSTRAP = 2000


@config_dataclass
class EvalConfig:
    """What to evaluate and how (validated when constructed: a wrong type or an out-of-range
    value is a ``MemlensError`` naming the field)."""

    models: Annotated[list[str], Field(min_length=1)]
    data: Any
    """The held-out data: a path (text) or an in-memory data set (see ``held_out_rows``)."""
    labeler: str = "embedded"
    judge: str | None = None
    lm_eval_tasks: list[str] = field(default_factory=list)
    lm_eval_limit: Count | None = None
    """Seeded subset of this many items per capability task (None: all items)."""
    lm_eval_data: PathText | None = None
    """Folder with the local task data (see ``lm_eval_adapter``); None: smoke test only."""
    lm_eval_files: dict[str, PathText] = field(default_factory=dict)
    """``{task: path}`` overriding ``lm_eval_data`` per task."""
    lm_eval_max_tokens: MaxTokens = 256
    limit: Count | None = None
    seed: Seed = 0
    max_tokens: MaxTokens = 1024
    temperature: Temperature = 0.7
    top_p: TopP = 0.98
    top_k: Count = 50


EVAL_RUNTIME_ONLY = frozenset({"models", "data", "lm_eval_tasks", "lm_eval_limit", "lm_eval_data",
                               "lm_eval_files", "lm_eval_max_tokens"})
"""Settings a resumed evaluation may change: each model's rows are generated and scored on
their own (the table lists the models asked for now), the held-out rows are compared by content,
and lm-eval scores are not stored in the run directory (recomputed every run)."""


def config_record(config: EvalConfig) -> dict:
    """The config as JSON-ready data (an in-memory data set is named by its type)."""
    data = config.data
    record = asdict(EvalConfig(**{**vars(config), "data": ""}))
    record["data"] = str(data) if isinstance(data, str | Path) else type(data).__name__
    return record


def held_out_rows(data, limit: int | None) -> list[dict]:
    """The held-out (test) rows of a reference data set, as dicts."""
    _, test = load_training_data(data, ("prompt", "reference"))
    if len(test) == 0:
        raise MemlensError(f"{data}: the held-out split is empty")
    rows = test.to_list()
    return rows[:limit] if limit else rows


def generate(model, rows: list[dict], config: EvalConfig, store, progress: bool) -> list:
    """One response (or ``ModelCallError``) per held-out row."""
    requests = []
    for index, row in enumerate(rows):
        params = GenerationParams(
            temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
            max_tokens=config.max_tokens,
            seed=sample_seed(config.seed, str(row.get("question_id", index)), "eval", 0))
        requests.append(ChatRequest(tuple(row["prompt"]), params, tag="mitigate/eval"))
    return run_requests(model, requests, store, progress=progress, desc=model.model_id)


def mean_interval(values, seed: int, n_bootstrap: int = N_BOOTSTRAP) -> dict:
    """Mean of ``values`` with a seeded 95 % percentile-bootstrap interval and its n; the
    interval is None below 2 values (no spread to resample).

    >>> mean_interval([1.0, 1.0, 1.0], 0)
    {'mean': 1.0, 'lo': 1.0, 'hi': 1.0, 'n': 3}
    >>> mean_interval([], 0)["mean"] is None
    True
    """
    mean = bootstrap_mean([v for v in values if v is not None], seed=seed,
                          n_bootstrap=n_bootstrap)
    spread = mean.n >= 2
    return {"mean": mean.estimate, "lo": mean.ci_low if spread else None,
            "hi": mean.ci_high if spread else None, "n": mean.n}


def proportion_interval(hits: int, n: int) -> dict:
    """A proportion with its Wilson 95 % interval and n.

    >>> {k: round(v, 3) for k, v in proportion_interval(8, 10).items()}
    {'mean': 0.8, 'lo': 0.49, 'hi': 0.943, 'n': 10}
    """
    if n == 0:
        return {"mean": None, "lo": None, "hi": None, "n": 0}

    low, high = wilson_interval(hits, n)
    return {"mean": hits / n, "lo": float(low), "hi": float(high), "n": n}


def _cell(result: dict, name: str, summary: dict) -> None:
    result[name] = summary["mean"] if summary["mean"] is not None else float("nan")
    result[f"{name}_lo"], result[f"{name}_hi"] = summary["lo"], summary["hi"]
    result[f"{name}_n"] = summary["n"]


def drift_and_diversity(texts: list[str | None], rows: list[dict], labeler, seed: int = 0) -> dict:
    """Mean DTW to the references and mean lexical diversity, each with a bootstrap interval
    and its n (``DTW_lo`` / ``DTW_hi`` / ``DTW_n``, …), and the no-step count."""
    answered = [i for i, text in enumerate(texts) if text is not None]
    steps = [[s.text for s in split_steps(texts[i]).steps] for i in answered]
    labels = labeler.label(steps) if steps else []
    drifts = [dtw(symbol_sequence(lab), parse_reference(rows[i]["reference"], "reference", i))
              for i, lab in zip(answered, labels, strict=True)]
    diversity = [lexical_diversity(texts[i], require_answer_tag=True) for i in answered]
    result: dict = {"no_steps": sum(not s for s in steps), "per_response_dtw": drifts}
    _cell(result, "DTW", mean_interval(drifts, seed))
    _cell(result, "Diversity", mean_interval(diversity, seed + 1))
    return result


def judge_scores(judge, texts: list[str | None], rows: list[dict], store, seed: int,
                 progress: bool) -> dict:
    """Mean helpfulness (bootstrap interval) and non-distraction (Wilson) over valid judge
    replies (an invalid reply is repaired once); invalid ones and failed calls counted."""
    params = GenerationParams(temperature=0.0, max_tokens=200, seed=seed, json_schema=SCORE_SCHEMA)
    asked = [i for i, text in enumerate(texts) if text]
    requests = [ChatRequest(tuple(score_messages(_user_text(rows[i]), rows[i].get("stimulus", ""),
                                                 texts[i])), params, tag="mitigate/judge")
                for i in asked]
    scores = [c.value for c in ask_scores(judge, requests, store, progress=progress)] \
        if requests else []
    valid = [s for s in scores if s is not None]
    result: dict = {"judge_invalid": len(scores) - len(valid)}
    _cell(result, "Helpfulness", mean_interval([s.helpfulness for s in valid], seed + 2))
    _cell(result, "NonDistraction",
          proportion_interval(sum(1 - s.distracted for s in valid), len(valid)))
    for name in ("Helpfulness", "NonDistraction"):
        if result[f"{name}_n"] == 0:
            result[name] = None
    return result


def _user_text(row: dict) -> str:
    return "\n".join(m["content"] for m in row["prompt"] if m.get("role") == "user")


def weights_record(name: str, model) -> dict:
    """The evaluated model's identity: its cache id and the fingerprint of its weights."""
    found = getattr(model, "fingerprint", None)
    record = found.to_dict() if hasattr(found, "to_dict") else model_fingerprint(name)
    return {"model_id": getattr(model, "model_id", name),
            "fingerprint": record["short"] if record else None, "fingerprint_record": record}


def evaluate_models(config: EvalConfig, out: Path, *, progress: bool = True,
                    models: dict | None = None, labeler=None):
    """Evaluate every model; returns the table (pandas DataFrame, one row per model)."""
    import pandas as pd

    rows = _with_stimulus_text(held_out_rows(config.data, config.limit))
    labeler = labeler or build_labeler(config.labeler)
    output_dir(out, "--out folder")
    table = []
    with RunStore(out) as store:
        open_run_manifest(store, "mitigate_eval", config_record(config),
                          runtime_only=EVAL_RUNTIME_ONLY,
                          inputs={"held_out_sha256": content_sha256(rows)})
        judge = (models or {}).get("judge") or (get_model(config.judge) if config.judge else None)
        for name in config.models:
            model = (models or {}).get(name) or get_model(name)
            outcomes = generate(model, rows, config, store, progress)
            texts = [o.text or "" if isinstance(o, ChatResponse) else None for o in outcomes]
            result = {"model": name, **weights_record(name, model), "n": len(rows),
                      "failed": texts.count(None)}
            result.update(drift_and_diversity(texts, rows, labeler, config.seed))
            if judge is not None:
                result.update(judge_scores(judge, texts, rows, store, config.seed, progress))
            if config.lm_eval_tasks:
                result.update(capability(name, config, model))
            table.append(result)
    frame = pd.DataFrame(table).reindex(columns=frame_columns())
    write_outputs(frame, table, config, out)
    return frame


def frame_columns() -> list[str]:
    """``COLUMNS`` plus the weights' fingerprint and every measured cell's interval and n."""
    extra = ["fingerprint"] + [f"{name}_{part}" for name in MEASURED for part in ("lo", "hi", "n")]
    return COLUMNS + extra + ["capability_source"]


def capability(model_string: str, config: EvalConfig, model=None) -> dict:
    """lm-eval capability cells of one model through lm-eval's own adapter for its backend
    (``hf:``, ``vllm:``, ``openai:…@URL``); others are marked not measured."""
    cells = run_capability(model_string, config.lm_eval_tasks, data=config.lm_eval_data,
                           files=config.lm_eval_files or None, limit=config.lm_eval_limit,
                           seed=config.seed, max_gen_toks=config.lm_eval_max_tokens)
    result: dict = {"capability": {label: cell.to_dict() for label, cell in cells.items()}}
    for label, cell in cells.items():
        result[label] = cell.score if cell.score is not None else float("nan")
        result[f"{label}_lo"], result[f"{label}_hi"] = cell.ci_low, cell.ci_high
        result[f"{label}_n"] = cell.n
    result["capability_source"] = "; ".join(sorted({cell.source for cell in cells.values()
                                                     if cell.source})) or None
    return result


def _with_stimulus_text(rows: list[dict]) -> list[dict]:
    texts = {s.id: s.text for s in load_stimuli()}
    return [{**row, "stimulus": texts.get(row.get("stimulus_id", ""), "")} for row in rows]


def markdown_table(frame) -> str:
    """A Markdown table (no extra dependency); NaN / None shown as ``–``.

    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame([{"model": "m", "DTW": 0.25, "n": 3}])))
    | model | DTW | n |
    |---|---|---|
    | m | 0.250 | 3 |
    """
    def cell(value) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return "–"
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |"
              for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def cell_text(result: dict, name: str) -> str:
    """``0.250 [0.100, 0.400] n=12`` for one measured cell; why there is no number otherwise;
    cells over fewer than ``MIN_N`` items end in ``(n<10: not interpretable)``.

    >>> cell_text({"DTW": 0.25, "DTW_lo": 0.1, "DTW_hi": 0.4, "DTW_n": 12}, "DTW")
    '0.250 [0.100, 0.400] n=12'
    >>> cell_text({"DTW": 0.5, "DTW_lo": None, "DTW_hi": None, "DTW_n": 1}, "DTW")
    '0.500 [no interval] n=1 (n<10: not interpretable)'
    """
    capability = (result.get("capability") or {}).get(name)
    if capability is not None and capability.get("score") is None:
        if capability.get("smoke"):
            return f"smoke test (n={capability['n']}), not a score"
        return capability.get("note") or "not measured"
    value, n = result.get(name), result.get(f"{name}_n") or 0
    if value is None or (isinstance(value, float) and np.isnan(value)) or not n:
        return "not measured"
    low, high = result.get(f"{name}_lo"), result.get(f"{name}_hi")
    interval = (f"[{number(low)}, {number(high)}]" if low is not None and high is not None
                else "[no interval]")
    flag = f" (n<{MIN_N}: not interpretable)" if n < MIN_N else ""
    return f"{number(value)} {interval} n={n}{flag}"


def display_table(results: list[dict]) -> str:
    """Table 2 as Markdown: each model with its weights' fingerprint, every cell with its 95 %
    interval and n, then the counts."""
    names = ["DTW", "Diversity", "Helpfulness", "NonDistraction", *CAPABILITY]
    lines = ["| model | weights | " + " | ".join(names) + " | responses / failed / no steps / "
             "judge invalid |", "|" + "---|" * (len(names) + 3)]
    for result in results:
        weights = result.get("fingerprint") or "no fingerprint (API / unknown)"
        counts = (f"{result.get('n')} / {result.get('failed')} / {result.get('no_steps')} / "
                  f"{result.get('judge_invalid', 'no judge')}")
        lines.append(f"| {result['model']} | {weights} | "
                     + " | ".join(cell_text(result, name) for name in names) + f" | {counts} |")
    sources = sorted({r["capability_source"] for r in results if r.get("capability_source")})
    lines.append("")
    lines.append("95 % intervals: percentile bootstrap over responses (DTW, Diversity, "
                 "Helpfulness; seeded), Wilson (NonDistraction, capability). DTW: lower is "
                 "better.")
    if sources:
        lines.append("Capability data: " + "; ".join(sources) + ".")
    return "\n".join(lines)


def write_outputs(frame, results: list[dict], config: EvalConfig, out: Path) -> None:
    """``table.csv``, ``table.md`` and ``eval_report.json`` (the CLI draws the figure after it,
    ``memlens.report.mitigation_figures``)."""
    with atomic_path(out / "table.csv") as temporary:
        frame.to_csv(temporary, index=False)
    atomic_write_text(out / "table.md", display_table(results) + "\n")
    report = {"config": config_record(config), "results": results}
    atomic_write_text(out / "eval_report.json", json.dumps(report, indent=2, default=str))
