"""Read back a filled-in human-audit CSV (written by ``memlens ontology sample``) as gold rows.

Each audited row gives the human's label in ``human_label``: a symbol id, a root id (root-level
only) or ``unlabeled``. An empty ``human_label`` with ``verdict`` ``agree`` means the human
accepted the labeler's ``label``; rows left empty, or marked ``ambiguous`` without a label, are
skipped (and counted). Anything else is one ``MemlensError`` naming the file, line and field.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from memlens.errors import MemlensError
from memlens.jsonl import read_text
from memlens.ontology.gold import check_gold_label
from memlens.ontology.schema import UNLABELED, Ontology

AUDIT_COLUMNS = ("id", "text", "label", "human_label", "verdict")
VERDICTS = ("", "agree", "disagree", "ambiguous")


def human_gold(value: str, ontology: Ontology, where: str) -> tuple[str, str | None]:
    """(root, subcategory) of a human label: a symbol id, a root id or ``unlabeled``."""
    value = value.strip()
    if value == UNLABELED:
        return UNLABELED, None
    if value in ontology.symbol_ids:
        return ontology.root_of(value), value
    if value in {root.id for root in ontology.roots}:
        return value, None
    raise MemlensError(f"{where}: field 'human_label': {value!r} is not a symbol id, a root id "
                       f"or 'unlabeled' of ontology {ontology.name}")


def read_audit(path: str | Path, ontology: Ontology) -> tuple[list[dict], list[str], int]:
    """(gold rows, the labeler's labels from the ``label`` column, number of skipped rows)."""
    text = read_text(path, "audit CSV")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [name for name in AUDIT_COLUMNS if name not in (reader.fieldnames or [])]
    if missing:
        raise MemlensError(f"{path}: audit CSV lacks column(s) {', '.join(missing)} (write it "
                           "with 'memlens ontology sample')")
    known = set(ontology.symbol_ids) | {UNLABELED}
    gold, predicted, skipped, seen = [], [], 0, set()
    try:
        for row in reader:
            where = f"{path}:{reader.line_num}"
            verdict = (row["verdict"] or "").strip().lower()
            if verdict not in VERDICTS:
                raise MemlensError(f"{where}: field 'verdict': {row['verdict']!r} is not one of "
                                   "agree, disagree, ambiguous")
            label = (row["label"] or "").strip()
            if label not in known:
                raise MemlensError(f"{where}: field 'label': unknown label {label!r} for "
                                   f"ontology {ontology.name}")
            human = (row["human_label"] or "").strip()
            if not human and verdict == "agree":
                human = label
            if not human:
                if verdict == "disagree":
                    raise MemlensError(f"{where}: verdict 'disagree' needs a 'human_label'")
                skipped += 1
                continue
            root, subcategory = human_gold(human, ontology, where)
            check_gold_label(root, subcategory, ontology, where)
            if row["id"] in seen:
                raise MemlensError(f"{where}: field 'id': duplicate id {row['id']!r}")
            seen.add(row["id"])
            gold.append({"id": row["id"], "text": row["text"] or "", "root": root,
                         "subcategory": subcategory, "verdict": verdict or None})
            predicted.append(label)
    except csv.Error as error:
        raise MemlensError(f"{path}:{reader.line_num}: malformed CSV: {error}") from None
    if not gold:
        raise MemlensError(f"{path}: no audited rows (fill in 'human_label' or set verdict "
                           "'agree')")
    return gold, predicted, skipped
