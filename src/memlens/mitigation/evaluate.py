"""Evaluate base and post-trained models like the paper's Table 2 (§5.2, App. I.3).

For every model on the held-out split of a reference data set (``prompt`` with an irrelevant
stimulus, ``reference`` o*(x)): generate (T = 0.7, top-p 0.98, top-k 50, App. I.3), split and
label the steps, and report

* **DTW** — mean DTW(ô(y), o*(x)) (lower is better; a response without steps counts as 1);
* **Diversity** — mean ``lexical_diversity`` of the ``<answer>`` block (App. I.3: a missing answer
  block scores 0);
* **Helpfulness** (1–5) and **NonDistraction** (share with d = 0) from a judge, when given,
  over valid judge replies only (invalid ones are counted, like the paper's exclusions);
* capability through lm-evaluation-harness for local ``hf:`` models (``lm_eval_adapter``).

Writes ``table.csv``, ``table.md``, ``eval_report.json`` and the drift-versus-capability figure.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.fileio import atomic_path, atomic_write_text
from memlens.metrics import dtw, lexical_diversity
from memlens.mitigation.judging import SCORE_SCHEMA, ask_scores, score_messages

COLUMNS = ["model", "MMLU", "GSM8K", "IF(strict)", "IF(loose)", "DTW", "Diversity",
           "Helpfulness", "NonDistraction", "n", "no_steps", "failed", "judge_invalid"]


@dataclass
class EvalConfig:
    """What to evaluate and how."""

    models: list[str]
    data: str
    labeler: str = "embedded"
    judge: str | None = None
    lm_eval_tasks: list[str] = field(default_factory=list)
    lm_eval_limit: int | None = None
    limit: int | None = None
    seed: int = 0
    max_tokens: int = 1024
    temperature: float = 0.7
    top_p: float = 0.98
    top_k: int = 50


EVAL_RUNTIME_ONLY = frozenset({"models", "data", "lm_eval_tasks", "lm_eval_limit"})
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
    from memlens.mitigation.datasets_io import load_training_data

    _, test = load_training_data(data, ("prompt", "reference"))
    if len(test) == 0:
        raise MemlensError(f"{data}: the held-out split is empty")
    rows = test.to_list()
    return rows[:limit] if limit else rows


def generate(model, rows: list[dict], config: EvalConfig, store, progress: bool) -> list:
    """One response (or ``ModelCallError``) per held-out row."""
    from memlens.engine import run_requests
    from memlens.models import ChatRequest, GenerationParams
    from memlens.rowkeys import derive_seed as sample_seed

    requests = []
    for index, row in enumerate(rows):
        params = GenerationParams(
            temperature=config.temperature, top_p=config.top_p, top_k=config.top_k,
            max_tokens=config.max_tokens,
            seed=sample_seed(config.seed, str(row.get("question_id", index)), "eval", 0))
        requests.append(ChatRequest(tuple(row["prompt"]), params, tag="mitigate/eval"))
    return run_requests(model, requests, store, progress=progress, desc=model.model_id)


def drift_and_diversity(texts: list[str | None], rows: list[dict], labeler) -> dict:
    """Mean DTW to the references, mean lexical diversity, and the no-step count."""
    from memlens.mitigation.rewards import parse_reference
    from memlens.ontology.schema import symbol_sequence
    from memlens.steps import split_steps

    answered = [i for i, text in enumerate(texts) if text is not None]
    steps = [[s.text for s in split_steps(texts[i]).steps] for i in answered]
    labels = labeler.label(steps) if steps else []
    drifts = [dtw(symbol_sequence(lab), parse_reference(rows[i]["reference"], "reference", i))
              for i, lab in zip(answered, labels, strict=True)]
    diversity = [lexical_diversity(texts[i], require_answer_tag=True) for i in answered]
    return {"DTW": float(np.mean(drifts)) if drifts else float("nan"),
            "Diversity": float(np.mean(diversity)) if diversity else float("nan"),
            "no_steps": sum(not s for s in steps), "per_response_dtw": drifts}


def judge_scores(judge, texts: list[str | None], rows: list[dict], store, seed: int,
                 progress: bool) -> dict:
    """Mean helpfulness and non-distraction over valid judge replies (an invalid reply is
    repaired once); invalid ones and failed calls counted."""
    from memlens.models import ChatRequest, GenerationParams

    params = GenerationParams(temperature=0.0, max_tokens=200, seed=seed, json_schema=SCORE_SCHEMA)
    asked = [i for i, text in enumerate(texts) if text]
    requests = [ChatRequest(tuple(score_messages(_user_text(rows[i]), rows[i].get("stimulus", ""),
                                                 texts[i])), params, tag="mitigate/judge")
                for i in asked]
    scores = [c.value for c in ask_scores(judge, requests, store, progress=progress)] \
        if requests else []
    valid = [s for s in scores if s is not None]
    return {"Helpfulness": float(np.mean([s.helpfulness for s in valid])) if valid else None,
            "NonDistraction": float(np.mean([1 - s.distracted for s in valid])) if valid
            else None, "judge_invalid": len(scores) - len(valid)}


def _user_text(row: dict) -> str:
    return "\n".join(m["content"] for m in row["prompt"] if m.get("role") == "user")


def evaluate_models(config: EvalConfig, out: Path, *, progress: bool = True,
                    models: dict | None = None, labeler=None):
    """Evaluate every model; returns the table (pandas DataFrame, one row per model)."""
    import pandas as pd

    from memlens.mitigation.labeling import build_labeler
    from memlens.models import ChatResponse, get_model
    from memlens.runmanifest import content_sha256, open_run_manifest
    from memlens.store import RunStore

    rows = _with_stimulus_text(held_out_rows(config.data, config.limit))
    labeler = labeler or build_labeler(config.labeler)
    out.mkdir(parents=True, exist_ok=True)
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
            result = {"model": name, "n": len(rows), "failed": texts.count(None)}
            result.update(drift_and_diversity(texts, rows, labeler))
            if judge is not None:
                result.update(judge_scores(judge, texts, rows, store, config.seed, progress))
            if config.lm_eval_tasks:
                result.update(capability(name, config))
            table.append(result)
    frame = pd.DataFrame(table).reindex(columns=COLUMNS)
    write_outputs(frame, table, config, out)
    return frame


def capability(model_string: str, config: EvalConfig) -> dict:
    """lm-eval capability scores for a local ``hf:PATH`` model (others: not measured)."""
    if not model_string.startswith("hf:"):
        return {}
    from memlens.mitigation.lm_eval_adapter import run_capability

    return run_capability(model_string[3:], config.lm_eval_tasks, limit=config.lm_eval_limit)


def _with_stimulus_text(rows: list[dict]) -> list[dict]:
    from memlens.stimuli import load_stimuli

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


def write_outputs(frame, results: list[dict], config: EvalConfig, out: Path) -> None:
    """``table.csv``, ``table.md``, ``eval_report.json`` and the figure (PNG + SVG)."""
    from memlens.report.mitigation_figures import drift_capability_figure

    with atomic_path(out / "table.csv") as temporary:
        frame.to_csv(temporary, index=False)
    atomic_write_text(out / "table.md", markdown_table(frame) + "\n")
    report = {"config": config_record(config), "results": results}
    atomic_write_text(out / "eval_report.json", json.dumps(report, indent=2, default=str))
    drift_capability_figure(frame, out / "drift_vs_capability")
