"""Scoring a labeler against gold labels, the bundled gold / dev files, abstention, and the
human-audit round trip (sample -> fill in -> audit-import)."""

import csv
import json

import numpy as np
import pytest
from test_embedded_labeler import keyword_encoder  # noqa: E402  (one copy of the test encoder)

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.ontology import load_ontology
from memlens.ontology.abstention import prototype_extras
from memlens.ontology.embedded_labeler import EmbeddedLabeler
from memlens.ontology.gold import DEV_FILE, bundled_path, load_gold, score_labels

ONTOLOGY = load_ontology()


def gold(root, subcategory=None, id_=None):
    return {"id": id_ or f"{root}-{subcategory}", "text": "t", "root": root,
            "subcategory": subcategory}


TINY_GOLD = [
    gold("Social", "social.fairness_reciprocity", "1"),
    gold("Social", "social.relationships_care", "2"),
    gold("Practical", "practical.resources_cost", "3"),
    gold("unlabeled", None, "4"),
    gold("unlabeled", None, "5"),
    gold("Protective", None, "6"),  # root-only gold label
]
TINY_PREDICTED = ["social.fairness_reciprocity", "social.norms_communication", "unlabeled",
                  "personal.emotional_wellbeing", "unlabeled",
                  "protective.legal_institutional_risk"]


def test_score_labels_on_hand_computed_case():
    report = score_labels(TINY_GOLD, TINY_PREDICTED, ONTOLOGY, replicates=50)
    pick = {name: (report[name]["k"], report[name]["n"])
            for name in ("coverage", "root_accuracy", "subcategory_accuracy",
                         "labeled_root_accuracy", "labeled_subcategory_accuracy")}
    assert pick == {"coverage": (4, 6), "root_accuracy": (4, 6),
                    "subcategory_accuracy": (2, 5),  # row 6 has no gold subcategory
                    "labeled_root_accuracy": (3, 4), "labeled_subcategory_accuracy": (1, 3)}
    # p_o = 4/6, p_e = (4 + 4 + 1) / 36 = 1/4 -> kappa = (2/3 - 1/4) / (3/4) = 5/9
    assert report["kappa_root"]["value"] == pytest.approx(5 / 9)
    low, high = report["kappa_root"]["ci95"]
    assert -1 <= low <= high <= 1
    assert report["coverage"]["ci95"] == pytest.approx([0.3000, 0.9032], abs=1e-4)  # Wilson 4/6
    labels = report["confusion_root"]["labels"]
    assert labels == ["Social", "Practical", "Protective", "Personal", "unlabeled"]
    matrix = np.array(report["confusion_root"]["matrix"])
    assert matrix.sum() == 6 and matrix[0, 0] == 2 and matrix[1, 4] == 1
    assert matrix[4, 3] == 1 and matrix[4, 4] == 1 and matrix[2, 2] == 1


def test_score_labels_refuses_mismatched_lengths():
    with pytest.raises(MemlensError, match="6 rows, 1 predictions"):
        score_labels(TINY_GOLD, ["unlabeled"], ONTOLOGY)


def test_bundled_gold_and_dev_files_schema():
    rows = load_gold()
    dev = load_gold(bundled_path(DEV_FILE))
    assert len(rows) >= 200 and len(dev) >= 50
    for row in rows + dev:
        assert set(row) >= {"id", "text", "root", "subcategory", "source", "annotator"}
        assert row["text"].strip()
        assert set(row["source"]) >= {"question_id", "stimulus_id", "seed"}
        if row["root"] == "unlabeled":
            assert row["subcategory"] is None
        else:
            assert ONTOLOGY.root_of(row["subcategory"]) == row["root"]
    assert len({r["id"] for r in rows + dev}) == len(rows) + len(dev)
    # dev is for choosing thresholds: disjoint questions; neither is a prototype text
    assert not ({r["source"]["question_id"] for r in rows}
                & {r["source"]["question_id"] for r in dev})
    extras = prototype_extras()
    prototype = set(extras["non_value"]) | {t for v in extras["examples"].values() for t in v}
    prototype |= {t for s in ONTOLOGY.symbols for t in s.examples}
    assert not prototype & {r["text"] for r in rows + dev}
    assert {r["root"] for r in rows} == {"Social", "Practical", "Protective", "Personal",
                                         "unlabeled"}


def test_load_gold_names_the_bad_row(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a", "text": "x", "root": "Social",
                                "subcategory": "practical.resources_cost"}) + "\n")
    with pytest.raises(MemlensError, match="row 'a': subcategory 'practical.resources_cost' "
                                           "is not under root 'Social'"):
        load_gold(path)


def test_abstain_and_margin_leave_steps_unlabeled():
    steps = ["fairness fairness", "Step 2:", "fairness relationships"]
    plain = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder())
    plain_labels = plain.label_texts(steps)
    assert plain_labels[0] == "social.fairness_reciprocity" and "unlabeled" not in plain_labels
    abstaining = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder(), abstain=True)
    assert abstaining.label_texts(steps) == ["social.fairness_reciprocity", "unlabeled",
                                             plain_labels[2]]
    # cosine margins are < 2, so min_margin=2 abstains on every step (the mask itself is
    # tested in abstain_mask's doctest)
    margin = EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder(), min_margin=2.0)
    assert margin.label_texts(steps) == ["unlabeled"] * 3
    assert abstaining.labeler_id.endswith(":abstain") and margin.labeler_id.endswith(":margin2")
    with pytest.raises(MemlensError, match="min_margin"):
        EmbeddedLabeler(ONTOLOGY, encoder=keyword_encoder(), min_margin=-1)


def test_audit_round_trip(tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    rows = [{"id": "a", "text": "Split the bill evenly.", "label": "social.fairness_reciprocity"},
            {"id": "b", "text": "The answer is:", "label": "practical.resources_cost"},
            {"id": "c", "text": "Check the budget.", "label": "practical.resources_cost"},
            {"id": "d", "text": "Be honest.", "label": "protective.ethical_responsibility"}]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    audit = tmp_path / "audit.csv"
    assert main(["ontology", "sample", str(labels), "--n", "10", "--out", str(audit)]) == 0
    with audit.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    human = {"a": ("", "agree"), "b": ("unlabeled", "disagree"), "c": ("Practical", ""),
             "d": ("", "")}  # d: not audited -> skipped
    for row in table:
        row["human_label"], row["verdict"] = human[row["id"]]
    with audit.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    capsys.readouterr()
    assert main(["ontology", "audit-import", str(audit), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == 1 and report["n"] == 3
    assert (report["root_accuracy"]["k"], report["root_accuracy"]["n"]) == (2, 3)
    assert (report["subcategory_accuracy"]["k"], report["subcategory_accuracy"]["n"]) == (1, 2)
    assert report["coverage"]["k"] == 3

    table[1]["human_label"] = "social.nonsense"
    with audit.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    assert main(["ontology", "audit-import", str(audit)]) == 2
    err = capsys.readouterr().err
    assert f"{audit}:3: field 'human_label': 'social.nonsense'" in err
