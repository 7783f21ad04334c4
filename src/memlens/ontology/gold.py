"""Score a labeler against human gold labels: accuracy, coverage, Cohen's kappa, confusion.

A gold row has ``id``, ``text``, ``root`` (a root id or ``unlabeled``) and ``subcategory`` (a
symbol id of that root, or ``None`` when the annotator gave only a root or the step is
``unlabeled``). The bundled gold set (``gold_embedded_steps.jsonl``, real SmolLM2 steps labeled
by hand) and its dev split (``dev_embedded_steps.jsonl``, for choosing thresholds) are described
in docs/ontology.md; neither is ever used for prototypes or training.

``unlabeled`` is a category like any other: a labeler that gives a symbol to a step without value
reasoning is wrong, and one that abstains on a value step is wrong. ``coverage`` is the share of
steps the labeler labelled; the ``labeled_*`` accuracies are over those steps only (what reaches
the drift trajectories, since ``unlabeled`` steps are dropped from them).
"""

from __future__ import annotations

import math
from importlib import resources
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.ontology.agreement import cohen_kappa
from memlens.ontology.label_files import label_rows, read_jsonl
from memlens.ontology.load import load_ontology
from memlens.ontology.schema import UNLABELED, Ontology

GOLD_FILE = "gold_embedded_steps.jsonl"
DEV_FILE = "dev_embedded_steps.jsonl"
Z_95 = 1.959963984540054


def bundled_path(name: str = GOLD_FILE) -> Path:
    """Path of a bundled gold file (``GOLD_FILE`` or ``DEV_FILE``)."""
    return Path(str(resources.files("memlens").joinpath("data", "ontology", name)))


def load_gold(path: str | Path | None = None, ontology: Ontology | None = None) -> list[dict]:
    """Validated gold rows (default: the bundled gold set); ``MemlensError`` naming the row for
    an unknown root or subcategory, or a subcategory that is not under the row's root."""

    ontology = ontology or load_ontology()
    path = path or bundled_path()
    rows = read_jsonl(path, ("id", "text", "root"), "gold file")
    for row in rows:
        row["subcategory"] = row.get("subcategory") or None
        check_gold_label(row["root"], row["subcategory"], ontology, f"{path}: row '{row['id']}'")
    return rows


def check_gold_label(root: str, subcategory: str | None, ontology: Ontology, where: str) -> None:
    """Raise ``MemlensError`` unless (root, subcategory) is a valid gold label."""
    roots = {r.id for r in ontology.roots}
    if root != UNLABELED and root not in roots:
        raise MemlensError(f"{where}: unknown root {root!r} (expected one of "
                           f"{', '.join(sorted(roots))} or 'unlabeled')")
    if subcategory is None:
        return
    if subcategory not in ontology.symbol_ids:
        raise MemlensError(f"{where}: unknown subcategory {subcategory!r} for ontology "
                           f"{ontology.name}")
    if ontology.root_of(subcategory) != root:
        raise MemlensError(f"{where}: subcategory {subcategory!r} is not under root {root!r}")


def gold_symbol(row: dict) -> str | None:
    """The symbol a gold row stands for at subcategory level: its subcategory, ``unlabeled``,
    or ``None`` when only a root was given."""
    if row["root"] == UNLABELED:
        return UNLABELED
    return row.get("subcategory")


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a proportion (``(nan, nan)`` for ``n == 0``).

    >>> [round(x, 4) for x in wilson_interval(8, 10)]
    [0.4902, 0.9433]
    """
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def _proportion(hits: int, n: int) -> dict:
    low, high = wilson_interval(hits, n)
    return {"k": hits, "n": n, "value": hits / n if n else math.nan, "ci95": [low, high]}


def _kappa_with_ci(gold: list[str], predicted: list[str], seed: int,
                   replicates: int) -> dict:
    value = cohen_kappa(gold, predicted)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(replicates):
        index = rng.integers(0, len(gold), len(gold))
        kappa = cohen_kappa([gold[i] for i in index], [predicted[i] for i in index])
        if not math.isnan(kappa):
            draws.append(kappa)
    low, high = (np.percentile(draws, [2.5, 97.5]).tolist() if draws else [math.nan, math.nan])
    return {"value": value, "ci95": [low, high], "bootstrap": replicates, "seed": seed}


def score_labels(gold_rows: list[dict], predicted: list[str], ontology: Ontology,
                 seed: int = 0, replicates: int = 1000) -> dict:
    """Compare predicted symbol ids (or ``unlabeled``) with gold rows (same order).

    Returns ``n``, ``coverage``, ``root_accuracy``, ``subcategory_accuracy`` (over rows with a
    gold subcategory or gold ``unlabeled``), ``labeled_root_accuracy`` /
    ``labeled_subcategory_accuracy`` (over the steps the labeler labelled), each as
    ``{"k", "n", "value", "ci95"}`` with a Wilson interval; ``kappa_root`` (Cohen's κ over roots
    with ``unlabeled`` as a category, percentile-bootstrap CI over steps) and
    ``confusion_root`` (``labels`` and ``matrix[gold][predicted]`` counts).
    """
    if len(gold_rows) != len(predicted):
        raise MemlensError(f"score needs one prediction per gold row ({len(gold_rows)} rows, "
                           f"{len(predicted)} predictions)")
    if not gold_rows:
        raise MemlensError("cannot score a labeler on zero gold rows")
    gold_roots = [row["root"] for row in gold_rows]
    predicted_roots = [ontology.root_of(label) for label in predicted]
    gold_symbols = [gold_symbol(row) for row in gold_rows]
    labelled = [i for i, label in enumerate(predicted) if label != UNLABELED]
    with_symbol = [i for i, symbol in enumerate(gold_symbols) if symbol is not None]
    root_hit = [g == p for g, p in zip(gold_roots, predicted_roots, strict=True)]
    symbol_hit = [gold_symbols[i] == predicted[i] for i in range(len(predicted))]
    labelled_with_symbol = [i for i in labelled if gold_symbols[i] is not None]
    categories = [r.id for r in ontology.roots] + [UNLABELED]
    matrix = [[sum(1 for g, p in zip(gold_roots, predicted_roots, strict=True)
                   if g == row and p == column) for column in categories]
              for row in categories]
    return {
        "n": len(gold_rows),
        "coverage": _proportion(len(labelled), len(gold_rows)),
        "root_accuracy": _proportion(sum(root_hit), len(gold_rows)),
        "subcategory_accuracy": _proportion(sum(symbol_hit[i] for i in with_symbol),
                                            len(with_symbol)),
        "labeled_root_accuracy": _proportion(sum(root_hit[i] for i in labelled), len(labelled)),
        "labeled_subcategory_accuracy": _proportion(
            sum(symbol_hit[i] for i in labelled_with_symbol), len(labelled_with_symbol)),
        "kappa_root": _kappa_with_ci(gold_roots, predicted_roots, seed, replicates),
        "confusion_root": {"labels": categories, "matrix": matrix},
    }


def score_labeler(labeler, gold_rows: list[dict], ontology: Ontology, seed: int = 0,
                  replicates: int = 1000) -> dict:
    """Label the gold rows' texts with ``labeler`` (one response per row's ``response_id`` if
    any, else one step per response) and score them with ``score_labels``; the report also
    carries ``labeler`` (its ``labeler_id``) and ``predicted`` (one label per row)."""

    steps = [{key: row[key] for key in ("id", "text", "response_id") if key in row}
             for row in gold_rows]
    predicted = [row["label"] for row in label_rows(labeler, steps, ontology)]
    report = score_labels(gold_rows, predicted, ontology, seed=seed, replicates=replicates)
    return {"labeler": labeler.labeler_id, **report, "predicted": predicted}


def format_score(report: dict) -> str:
    """The report as a short text table (proportions in %, 95 % CIs in brackets)."""
    def pct(entry: dict) -> str:
        low, high = entry["ci95"]
        return (f"{100 * entry['value']:5.1f} % [{100 * low:.1f}, {100 * high:.1f}] "
                f"({entry['k']}/{entry['n']})")

    kappa = report["kappa_root"]
    lines = [f"n = {report['n']} gold steps" + (f", labeler {report['labeler']}"
                                               if "labeler" in report else ""),
             f"coverage                      {pct(report['coverage'])}",
             f"root accuracy                 {pct(report['root_accuracy'])}",
             f"subcategory accuracy          {pct(report['subcategory_accuracy'])}",
             f"root accuracy, labelled steps {pct(report['labeled_root_accuracy'])}",
             f"subcat. accuracy, labelled    {pct(report['labeled_subcategory_accuracy'])}",
             f"Cohen's kappa (roots)         {kappa['value']:.3f} "
             f"[{kappa['ci95'][0]:.3f}, {kappa['ci95'][1]:.3f}]",
             "confusion (rows gold, columns predicted):"]
    labels = report["confusion_root"]["labels"]
    lines.append(" " * 12 + "".join(f"{label[:10]:>11}" for label in labels))
    for label, row in zip(labels, report["confusion_root"]["matrix"], strict=True):
        lines.append(f"{label[:10]:<12}" + "".join(f"{count:>11}" for count in row))
    return "\n".join(lines)
