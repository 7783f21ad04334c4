"""The ontology refinement loop (§2.2, App. C): label → measure agreement → revise definitions.

Every version is saved under the output folder as ``v0.json``, ``v1.json``, … and one line per
version goes to ``history.jsonl`` (agreement, pairs, hash, what happened to the revision).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memlens.errors import MemlensError
from memlens.fileio import append_text, atomic_write_text, output_dir
from memlens.models.base import ChatModel, GenerationParams, ModelCallError
from memlens.ontology.load import parse_ontology
from memlens.ontology.reliability import agreement_report
from memlens.ontology.schema import Ontology

REVISER_PROMPT = (
    "You maintain a value ontology used by several LLM labelers to label reasoning steps. "
    "The labelers disagree on the steps below. Revise the ontology so that they would agree: "
    "remove overlap between subcategories, replace abstract phrasing with operational triggers "
    "(prescriptive modals, action verbs, cue phrases) and add include / exclude decision "
    "boundaries naming the neighbouring subcategory. Keep every id, root and the JSON structure "
    "exactly; change only names, definitions, triggers, include, exclude and examples. "
    "Reply with the complete revised ontology as one JSON object and nothing else."
)


@dataclass
class RefineResult:
    """Outcome of ``refine``: every version's agreement and the best version."""

    history: list[dict]
    best_version: int
    best: Ontology
    out_dir: Path


def disagreements(steps: list[str], labels: dict[str, list[str]], limit: int = 40) -> list[dict]:
    """Steps on which the labelers do not all agree, with each labeler's label."""
    rows = []
    for index, text in enumerate(steps):
        given = {name: column[index] for name, column in labels.items()}
        if len(set(given.values())) > 1:
            rows.append({"step": text, "labels": given})
    return rows[:limit]


def revise(reviser: ChatModel, ontology: Ontology, problems: list[dict]) -> tuple[Ontology, str]:
    """Ask ``reviser`` for a revised ontology; validate it (same ids and roots), with one repair.

    Returns the new ontology and ``"ok"`` / ``"repaired"``; raises ``ValueError`` with the reason
    when both replies are unusable (the loop records it and stops)."""
    payload = json.dumps(ontology.model_dump(mode="json"), ensure_ascii=False, indent=1)
    messages = [{"role": "system", "content": REVISER_PROMPT},
                {"role": "user", "content": f"Ontology:\n{payload}\n\nDisagreements:\n"
                                            + json.dumps(problems, ensure_ascii=False, indent=1)}]
    params = GenerationParams(temperature=0.0, max_tokens=8192)
    reason = ""
    for attempt in ("ok", "repaired"):
        try:
            text = reviser.complete(messages, params).text
        except ModelCallError as error:
            raise ValueError(f"reviser call failed: {error.reason}") from None
        try:
            return _validated_revision(text, ontology), attempt
        except ValueError as error:
            reason = str(error)
        messages = [*messages, {"role": "assistant", "content": text},
                    {"role": "user", "content": f"That revision is invalid: {reason}. Reply "
                                                "with the corrected complete JSON ontology."}]
    raise ValueError(reason)


def _validated_revision(text: str, ontology: Ontology) -> Ontology:
    start, end = text.find("{"), text.rfind("}")
    if not 0 <= start < end:
        raise ValueError("the reply contains no JSON object")
    try:
        revised = parse_ontology(text[start:end + 1], "revised ontology")
    except MemlensError as error:
        raise ValueError(str(error)) from None
    if revised.symbol_ids != ontology.symbol_ids:
        raise ValueError("symbol ids must stay exactly the same, in the same order")
    if [s.root for s in revised.symbols] != [s.root for s in ontology.symbols]:
        raise ValueError("every symbol must keep its root")
    return revised.model_copy(update={"name": ontology.name})


def _measure(labelers: dict[str, Callable[[Ontology], object]], ontology: Ontology,
             responses: list[list[str]]) -> tuple[dict, dict[str, list[str]]]:
    flat: dict[str, list[str]] = {}
    for name, make in labelers.items():
        flat[name] = [label for response in make(ontology).label(responses) for label in response]
    ids = [str(index) for index in range(len(flat[next(iter(flat))]))]
    report = agreement_report({name: dict(zip(ids, column, strict=True))
                               for name, column in flat.items()})
    return report, flat


def refine(labelers: dict[str, Callable[[Ontology], object]], responses: Sequence[list[str]],
           reviser: ChatModel, ontology: Ontology, out_dir: str | Path, *,
           threshold: float = 0.8, max_iter: int = 5) -> RefineResult:
    """Iterate label → agreement → revision until mean pairwise agreement ≥ ``threshold`` or
    ``max_iter`` revisions were made; every version and its agreement is saved in ``out_dir``.

    ``labelers`` maps a name to a factory ``ontology -> Labeler`` (at least two).
    """
    if len(labelers) < 2:
        raise MemlensError("refinement needs at least two labelers")
    if not 0.0 < threshold <= 1.0 or max_iter < 0:
        raise MemlensError("--threshold must be in (0, 1] and --max-iter at least 0")
    out = Path(out_dir)
    output_dir(out, "--out folder")
    atomic_write_text(out / "history.jsonl", "")
    responses = [list(steps) for steps in responses]
    steps = [text for response in responses for text in response]
    history: list[dict] = []
    current, version, status = ontology, 0, "initial"
    while True:
        report, flat = _measure(labelers, current, responses)
        atomic_write_text(out / f"v{version}.json",
                          json.dumps(current.model_dump(mode="json"), ensure_ascii=False, indent=2))
        entry = {"version": version, "file": f"v{version}.json", "revision": status,
                 "sha256": current.content_hash(), "mean_agreement": report["mean_agreement"],
                 "fleiss_kappa": report["fleiss_kappa"], "pairs": report["pairs"],
                 "disagreements": sum(len(set(c)) > 1 for c in zip(*flat.values(), strict=True))}
        history.append(entry)
        _append(out / "history.jsonl", entry)
        if report["mean_agreement"] >= threshold or version >= max_iter:
            break
        try:
            current, status = revise(reviser, current, disagreements(steps, flat))
        except ValueError as error:
            entry = {"version": version + 1, "revision": "failed", "reason": str(error)}
            history.append(entry)
            _append(out / "history.jsonl", entry)
            break
        version += 1
    scored = [h for h in history if "mean_agreement" in h]
    best = max(scored, key=lambda h: (h["mean_agreement"], -h["version"]))
    best_ontology = parse_ontology((out / best["file"]).read_text(), best["file"])
    return RefineResult(history=history, best_version=best["version"], best=best_ontology,
                        out_dir=out)


def _append(path: Path, entry: dict) -> None:
    append_text(path, json.dumps(entry, ensure_ascii=False) + "\n")
