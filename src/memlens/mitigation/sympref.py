"""The SymPreference builder: persona-robust DPO pairs (paper §5.1, App. I.1).

Per question x: 3 personas p drawn without replacement; prompt z = [s_cot; p; x] with s_cot the
reasoning instruction as the system message; 2 × 5 candidates (with / without s_cot, T = 1.0,
top-p 0.95); a judge scores h, d, a (validated JSON, invalid replies recorded); chosen iff h = 5,
d = 0, a = 1; rejected iff h < 5 and (d = 1 or a = 0). Per prompt (x, p), ``pairs_per_prompt``
pairs are kept from chosen × rejected (default 1: the first chosen — instructed arm first — with
the least helpful rejected; 0 keeps every pair; the paper does not state its number). Both sides
are rewritten into the tagged format. Optionally mixed with a general preference set. Every call
goes through ``run_requests`` with the run store in ``out``, so a re-run resumes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from memlens.engine import run_requests
from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text, output_dir
from memlens.mitigation.datasets_io import save_dataset
from memlens.mitigation.judging import (
    SCORE_SCHEMA,
    JudgeScore,
    ask_scores,
    require_judge,
    score_messages,
    verdict,
)
from memlens.mitigation.mixing import mix_general, read_general
from memlens.mitigation.personas import Persona, load_personas, sample_personas
from memlens.mitigation.rewrite import finish_rewrite, rewrite_messages
from memlens.models import ChatRequest, ChatResponse, GenerationParams, ModelCallError, get_model
from memlens.pydantic_config import (
    Count,
    CountOrZero,
    MaxTokens,
    PathText,
    Seed,
    SplitFraction,
    Temperature,
    TopP,
    UnitFraction,
    config_dataclass,
)
from memlens.questions import load_questions
from memlens.rowkeys import derive_seed, join_key
from memlens.runmanifest import content_sha256, open_run_manifest
from memlens.steps import REASONING_INSTRUCTION
from memlens.store import RunStore


@config_dataclass
class SymPrefConfig:
    """Settings of one SymPreference build (paper defaults; validated when constructed: a wrong
    type or an out-of-range value is a ``MemlensError`` naming the field)."""

    model: str = "embedded"
    judge: str | None = None
    """Judge model string; required (a capable model — SmolLM2 as judge rates everything alike)."""
    rewriter: str | None = None
    """Rewriter model string; None = the judge."""
    personas: PathText | None = None
    personas_per_question: Count = 3
    samples_per_arm: Count = 5
    temperature: Temperature = 1.0
    top_p: TopP = 0.95
    pairs_per_prompt: CountOrZero = 1
    """Pairs kept per prompt; 0 keeps every chosen × rejected pair."""
    questions: PathText | None = None
    limit: Count | None = None
    seed: Seed = 0
    max_tokens: MaxTokens = 1024
    mix: PathText | None = None
    mix_fraction: UnitFraction = 0.5
    """Share of general preference rows in the mixed set (``mix_general`` needs it below 1)."""
    max_length_difference: CountOrZero = 20
    test_fraction: SplitFraction = 0.2


SYMPREF_RUNTIME_ONLY = frozenset({"mix", "mix_fraction", "max_length_difference",
                                  "test_fraction"})
"""Settings a resumed build may change: they shape the written data set from the stored rows
(mixing, train/test split), never what is generated, judged or rewritten."""


def prompt_messages(persona: Persona, question: str, with_instruction: bool) -> list[dict]:
    """z = [s_cot; p; x]: s_cot as the system message (when asked), then persona and question.

    >>> prompt_messages(Persona("a", "age", "I'm 82."), "Move?", False)
    [{'role': 'user', 'content': "I'm 82.\\n\\nMove?"}]
    """

    user = {"role": "user", "content": f"{persona.text}\n\n{question}"}
    return [{"role": "system", "content": REASONING_INSTRUCTION}, user] if with_instruction \
        else [user]


def _seed(seed: int, *parts: object) -> int:
    return derive_seed(seed, *parts)


def candidate_plan(config: SymPrefConfig, questions, personas: list[Persona]) -> list[dict]:
    """One entry per candidate: ids, arm, sample index and its chat request."""

    plan = []
    for question in questions:
        chosen = sample_personas(personas, config.personas_per_question,
                                 _seed(config.seed, question.id, "personas", 0))
        for persona in chosen:
            for arm in ("instructed", "plain"):
                for sample in range(config.samples_per_arm):
                    params = GenerationParams(
                        temperature=config.temperature, top_p=config.top_p, top_k=None,
                        max_tokens=config.max_tokens,
                        seed=_seed(config.seed, question.id, persona.id, arm, sample))
                    messages = prompt_messages(persona, question.text, arm == "instructed")
                    plan.append({
                        "id": join_key(question.id, persona.id, arm, sample),
                        "prompt_id": join_key(question.id, persona.id), "question_id": question.id,
                        "question": question.text, "persona_id": persona.id,
                        "persona": persona.text, "arm": arm, "sample": sample,
                        "request": ChatRequest(tuple(messages), params, sample_index=sample,
                                               tag="sympref/candidate")})
    return plan


def judge_candidates(plan: list[dict], outcomes: list, judge, store, seed: int,
                     progress: bool) -> list[dict]:
    """Score every answered candidate (an invalid judge reply is repaired once); returns
    storable rows with text, scores and verdict."""

    params = GenerationParams(temperature=0.0, max_tokens=200, seed=seed, json_schema=SCORE_SCHEMA)
    rows, requests = [], []
    for entry, outcome in zip(plan, outcomes, strict=True):
        row = {k: v for k, v in entry.items() if k != "request"}
        if isinstance(outcome, ModelCallError) or not (outcome.text or "").strip():
            row.update(text="", verdict="failed_call" if isinstance(outcome, ModelCallError)
                       else "empty", judge={})
        else:
            row["text"] = outcome.text
            requests.append((row, ChatRequest(tuple(score_messages(
                entry["question"], entry["persona"], outcome.text)), params, tag="sympref/judge")))
        rows.append(row)
    checked = ask_scores(judge, [r for _, r in requests], store, progress=progress) \
        if requests else []
    for (row, _), judged in zip(requests, checked, strict=True):
        if judged.failed_call:
            row.update(verdict="judge_failed", judge={"problem": judged.call_error})
            continue
        score = judged.value or JudgeScore(problem=judged.problem)
        row.update(verdict=verdict(score), judge={**score.to_dict(), "reply": judged.reply[:500]})
    return rows


def select_pairs(rows: list[dict], pairs_per_prompt: int) -> list[tuple[dict, dict]]:
    """Chosen × rejected per prompt, instructed arm and lower sample first for chosen, least
    helpful first for rejected; the first ``pairs_per_prompt`` (0 = all) of each prompt."""
    by_prompt: dict[str, list[dict]] = {}
    for row in rows:
        by_prompt.setdefault(row["prompt_id"], []).append(row)
    pairs = []
    for group in by_prompt.values():
        chosen = sorted((r for r in group if r["verdict"] == "chosen"),
                        key=lambda r: (r["arm"] != "instructed", r["sample"]))
        rejected = sorted((r for r in group if r["verdict"] == "rejected"),
                          key=lambda r: (r["judge"]["h"], r["arm"] != "instructed", r["sample"]))
        product = [(c, r) for r in rejected for c in chosen]
        pairs.extend(product if pairs_per_prompt == 0 else product[:pairs_per_prompt])
    return pairs


def rewrite_pairs(pairs, rewriter, store, seed: int, max_tokens: int, progress: bool):
    """Rewrite both sides of each pair; returns dataset rows and rewrite-outcome counts."""

    params = GenerationParams(temperature=0.0, max_tokens=max_tokens, seed=seed)
    requests = [ChatRequest(tuple(rewrite_messages(row["question"], row["text"], role)), params,
                            tag=f"sympref/rewrite_{role}")
                for chosen, rejected in pairs
                for role, row in (("chosen", chosen), ("rejected", rejected))]
    replies = run_requests(rewriter, requests, store, progress=progress, desc="rewrite") \
        if requests else []
    counts = {"rewritten": 0, "normalised": 0, "failed": 0}
    rows = []
    for index, (chosen, rejected) in enumerate(pairs):
        texts = []
        for offset, row in enumerate((chosen, rejected)):
            reply = replies[2 * index + offset]
            text, how = finish_rewrite(row["text"], reply.text if isinstance(reply, ChatResponse)
                                       else None)
            counts[how] += 1
            texts.append((text, how))
        if any(text is None for text, _ in texts):
            continue
        persona = Persona(chosen["persona_id"], "", chosen["persona"])
        rows.append({
            "prompt": prompt_messages(persona, chosen["question"], True),
            "chosen": [{"role": "assistant", "content": texts[0][0]}],
            "rejected": [{"role": "assistant", "content": texts[1][0]}],
            "source": "sympref", "question_id": chosen["question_id"],
            "persona_id": chosen["persona_id"], "chosen_h": chosen["judge"]["h"],
            "rejected_h": rejected["judge"]["h"], "rewrite": f"{texts[0][1]}/{texts[1][1]}"})
    return rows, counts


def build_sympref(config: SymPrefConfig, out: Path, *, progress: bool = True,
                  models: dict | None = None) -> dict:
    """Build the data set under ``out`` (``dataset/``, ``train.jsonl``, ``test.jsonl``,
    ``sympref_report.json``); returns the report. ``models`` may give ready model objects for
    the roles ``model`` / ``judge`` / ``rewriter`` (tests); otherwise model strings are used."""

    models = models or {}
    questions = load_questions(config.questions)[: config.limit]
    personas = load_personas(config.personas)
    general = read_general(config.mix) if config.mix else None  # refused before any call
    if config.mix and not config.mix_fraction < 1.0:
        raise MemlensError(f"--mix-fraction must be in [0, 1), got {config.mix_fraction}")
    output_dir(out, "--out folder")
    with RunStore(out) as store:
        open_run_manifest(store, "sympref", asdict(config), runtime_only=SYMPREF_RUNTIME_ONLY,
                          inputs={"questions_sha256": content_sha256(questions),
                                  "personas_sha256": content_sha256(personas)})
        generator = models.get("model") or get_model(config.model)
        judge = models.get("judge") or get_model(require_judge(config.judge))
        rewriter = models.get("rewriter") or (get_model(config.rewriter) if config.rewriter
                                              else judge)
        plan = candidate_plan(config, questions, personas)
        outcomes = run_requests(generator, [e["request"] for e in plan], store,
                                progress=progress, desc="candidates")
        rows = judge_candidates(plan, outcomes, judge, store, config.seed, progress)
        store.put_rows("sympref_candidates", rows)
        pairs = select_pairs(rows, config.pairs_per_prompt)
        dataset_rows, rewrites = rewrite_pairs(pairs, rewriter, store, config.seed,
                                               config.max_tokens, progress)
    counts = _counts(questions, rows, pairs, dataset_rows, config.pairs_per_prompt)
    counts["rewrites"] = rewrites
    if config.mix:
        dataset_rows, counts["mix"] = mix_general(dataset_rows, general, config.mix_fraction,
                                                  config.max_length_difference, config.seed)
    counts["total_rows"] = len(dataset_rows)
    counts["splits"] = save_dataset(dataset_rows, out, test_fraction=config.test_fraction,
                                    seed=config.seed) if dataset_rows else {"train": 0, "test": 0}
    report = {"config": asdict(config), "counts": counts}
    atomic_write_text(out / "sympref_report.json", json.dumps(report, indent=2))
    return report


def _counts(questions, rows, pairs, dataset_rows, pairs_per_prompt: int) -> dict:
    verdicts: dict[str, int] = {}
    for row in rows:
        verdicts[row["verdict"]] = verdicts.get(row["verdict"], 0) + 1
    prompts = {row["prompt_id"] for row in rows}
    return {
        "questions": len(questions), "prompts": len(prompts), "candidates": len(rows),
        "judged": sum(v for k, v in verdicts.items()
                      if k in ("chosen", "rejected", "neither", "invalid")),
        "verdicts": verdicts,
        "chosen": verdicts.get("chosen", 0), "rejected": verdicts.get("rejected", 0),
        "prompts_with_pair": len({c["prompt_id"] for c, _ in pairs}),
        "pairs_per_prompt_rule": pairs_per_prompt or "all", "pairs_selected": len(pairs),
        "pairs_kept": len(dataset_rows),
    }
