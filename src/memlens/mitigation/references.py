"""Reference trajectories o*(x) for the GRPO drift reward (paper §5.1, App. I.2).

Per question: sample ``candidates`` answers from the base policy (tagged-format instruction, no
memory), a judge picks the one that is instruction-following, helpful and faithful (validated
JSON ``{"best": i}``; an invalid reply falls back to the candidate with the most steps and is
counted), and the picked answer's steps are labeled: o*(x). The training prompt is the question
with an irrelevant stimulus (a persona or noise stimulus drawn per question with its own seed)
injected as a prefix. Output: an HF data set with ``prompt`` / ``reference`` (+ ids and the clean
question), split 80/20, and ``references_report.json``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from memlens.engine import run_requests
from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text, output_dir
from memlens.mitigation.datasets_io import save_dataset
from memlens.mitigation.judging import first_json_object, require_judge
from memlens.mitigation.labeling import build_labeler
from memlens.models import ChatModel, ChatRequest, ChatResponse, GenerationParams, get_model
from memlens.ontology.schema import symbol_sequence
from memlens.pydantic_config import (
    Count,
    MaxTokens,
    PathText,
    Seed,
    SplitFraction,
    Temperature,
    config_dataclass,
)
from memlens.questions import load_questions
from memlens.rowkeys import derive_seed as sample_seed
from memlens.runmanifest import content_sha256, open_run_manifest
from memlens.steps import REASONING_INSTRUCTION, split_steps
from memlens.stimuli import inject, load_stimuli
from memlens.store import RunStore

PICK_PROMPT = """Below are {count} candidate answers to a question. Pick the one that best follows
the instruction (numbered reasoning steps, then a final answer), is most helpful, and whose steps
faithfully support its answer.

Question: {question}

{candidates}

Reply with JSON only: {{"best": <candidate number, 1..{count}>}}"""


@config_dataclass
class ReferenceConfig:
    """Settings of one reference build (validated when constructed: a wrong type or an
    out-of-range value is a ``MemlensError`` naming the field)."""

    model: str = "embedded"
    judge: str | None = None
    """Judge model string; required (a capable model — SmolLM2 as judge rates everything alike)."""
    labeler: str = "embedded"
    candidates: Count = 4
    questions: PathText | None = None
    stimuli: PathText | None = None
    limit: Count | None = None
    seed: Seed = 0
    temperature: Temperature = 0.7
    max_tokens: MaxTokens = 1024
    test_fraction: SplitFraction = 0.2


def pick_messages(question: str, answers: list[str]) -> list[dict]:
    """The judge prompt listing the candidates (1-based numbers)."""
    listed = "\n\n".join(f"Candidate {i}:\n<<<\n{a}\n>>>" for i, a in enumerate(answers, 1))
    return [{"role": "user", "content": PICK_PROMPT.format(count=len(answers), question=question,
                                                           candidates=listed)}]


def pick_schema(count: int) -> dict:
    """JSON schema of the judge's reply (structured output where the backend supports it)."""
    return {"type": "object", "required": ["best"],
            "properties": {"best": {"type": "integer", "minimum": 1, "maximum": count}}}


def parse_pick(text: str, count: int) -> int | None:
    """0-based index of the judge's pick, or None when the reply is invalid.

    >>> parse_pick('{"best": 2}', 3), parse_pick('{"best": 4}', 3), parse_pick("two", 3)
    (1, None, None)
    """
    data = first_json_object(text)
    best = data.get("best") if data else None
    if isinstance(best, bool) or not isinstance(best, int) or not 1 <= best <= count:
        return None
    return best - 1


def irrelevant_stimuli(path: str | None):
    """Persona and noise stimuli (the irrelevant interventions g); ``MemlensError`` when the
    catalogue has none (every reference row draws one)."""

    chosen = [s for s in load_stimuli(path) if s.stimulus_class in ("persona", "noise")]
    if not chosen:
        raise MemlensError(f"{path or 'the bundled stimuli'}: no persona or noise stimulus to "
                           "put into the reference prompts")
    return chosen


def build_references(config: ReferenceConfig, out: Path, *, progress: bool = True,
                     models: dict | None = None, labeler=None) -> dict:
    """Build the reference data set under ``out``; returns the report (counts)."""

    models = models or {}
    questions = load_questions(config.questions)[: config.limit]
    stimuli = irrelevant_stimuli(config.stimuli)
    output_dir(out, "--out folder")
    with RunStore(out) as store:
        # test_fraction only splits the written data set (recomputed from the stored rows)
        open_run_manifest(store, "references", asdict(config), runtime_only={"test_fraction"},
                          inputs={"questions_sha256": content_sha256(questions),
                                  "stimuli_sha256": content_sha256(stimuli)})
        policy: ChatModel = models.get("model") or get_model(config.model)
        judge: ChatModel = models.get("judge") or get_model(require_judge(config.judge))
        answers = run_requests(policy, candidate_requests(config, questions), store,
                               progress=progress, desc="candidates")
        texts = [[_text(answers[q * config.candidates + k]) for k in range(config.candidates)]
                 for q in range(len(questions))]
        picks, invalid = judge_picks(judge, questions, texts, store, config.seed, progress)
        steps = [_steps(texts[q][p]) if p is not None else [] for q, p in enumerate(picks)]
        labeler = labeler or build_labeler(config.labeler)
        labels = labeler.label([s for s in steps if s]) if any(steps) else []
    rows, labeled = [], iter(labels)
    for index, question in enumerate(questions):
        if not steps[index]:
            continue
        stimulus = stimuli[_draw(config.seed, question.id, len(stimuli))]
        rows.append(reference_row(question, stimulus, symbol_sequence(next(labeled)),
                                  texts[index][picks[index]]))
    counts = {"questions": len(questions), "candidates": len(questions) * config.candidates,
              "failed_or_empty": sum(not t for ts in texts for t in ts),
              "judge_invalid": invalid, "no_steps": sum(not s for s in steps),
              "references": len(rows)}
    counts["splits"] = save_dataset(rows, out, test_fraction=config.test_fraction,
                                    seed=config.seed) if rows else {"train": 0, "test": 0}
    report = {"config": asdict(config), "counts": counts}
    atomic_write_text(out / "references_report.json", json.dumps(report, indent=2))
    return report


def candidate_requests(config: ReferenceConfig, questions) -> list:
    """``candidates`` sampled requests per question (tagged-format instruction, no memory)."""

    requests = []
    for question in questions:
        for k in range(config.candidates):
            params = GenerationParams(temperature=config.temperature, max_tokens=config.max_tokens,
                                      seed=sample_seed(config.seed, question.id, "reference", k))
            messages = ({"role": "user", "content": f"{question.text}\n\n{REASONING_INSTRUCTION}"},)
            requests.append(ChatRequest(messages, params, sample_index=k, tag="references/cand"))
    return requests


def judge_picks(judge, questions, texts, store, seed: int, progress: bool):
    """The judge's pick per question (None when no candidate has text) and the invalid count."""

    asked = [q for q, answers in enumerate(texts) if any(answers)]
    requests = [ChatRequest(tuple(pick_messages(questions[q].text, texts[q])), GenerationParams(
        temperature=0.0, max_tokens=50, seed=seed, json_schema=pick_schema(len(texts[q]))),
        tag="references/judge") for q in asked]
    replies = run_requests(judge, requests, store, progress=progress, desc="judge") \
        if requests else []
    picks: list[int | None] = [None] * len(texts)
    invalid = 0
    for q, reply in zip(asked, replies, strict=True):
        pick = parse_pick(reply.text, len(texts[q])) if isinstance(reply, ChatResponse) else None
        if pick is None or not texts[q][pick]:
            invalid += 1
            pick = max(range(len(texts[q])), key=lambda k: len(_steps(texts[q][k])))
        picks[q] = pick
    return picks, invalid


def reference_row(question, stimulus, labels: list[str], text: str) -> dict:
    """One data set row: the perturbed training prompt and the reference trajectory."""

    prompt = inject(f"{question.text}\n\n{REASONING_INSTRUCTION}", stimulus, mode="prefix")
    return {"prompt": prompt, "reference": list(labels), "question_id": question.id,
            "question": question.text, "stimulus_id": stimulus.id, "reference_text": text}


def _text(outcome) -> str:
    return (getattr(outcome, "text", "") or "").strip()


def _steps(text: str) -> list[str]:
    return [step.text for step in split_steps(text).steps]


def _draw(seed: int, question_id: str, count: int) -> int:
    return int(np.random.default_rng(sample_seed(seed, question_id, "stimulus", 0))
               .integers(count))
