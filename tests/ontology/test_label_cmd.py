"""`memlens label` and `memlens ontology …` through the real CLI entry point."""

import csv
import json

import pytest

from memlens.cli.main import main
from memlens.ontology.label_files import group_responses


def write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_show_counts_4_roots_11_subcategories(capsys):
    assert main(["ontology", "show"]) == 0
    out = capsys.readouterr().out
    assert "4 roots, 11 subcategories" in out
    assert main(["ontology", "show", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["roots"]) == 4 and len(data["symbols"]) == 11


def test_show_bad_ontology_file_exits_2(tmp_path, capsys):
    bad = write(tmp_path / "o.json", ['{"name": "x"}'])
    assert main(["ontology", "show", "--ontology", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: ") and str(bad) in err
    assert "field version: Field required (and 2 more problems)" in err


@pytest.mark.parametrize(
    "lines,message",
    [
        (['{"id": "1", "text": "ok"}', "{not json"], ":2: invalid JSON"),
        (['{"id": "1"}'], ":1: missing field 'text'"),
        (['{"id": "1", "text": "a"}', '{"id": "1", "text": "b"}'],
         ":2: field 'id': duplicate id '1' (first on line 1)"),
        (['["id", "text"]'], ":1: expected a JSON object with fields id, text, got an array"),
        (['{"id": "1", "text": ["a"]}'], ":1: field 'text' must be a string"),
        ([""], "no rows"),
    ],
)
def test_label_bad_rows_name_the_line(tmp_path, capsys, lines, message):
    steps = write(tmp_path / "steps.jsonl", lines)
    assert main(["label", "--labeler", "fake", "--in", str(steps),
                 "--out", str(tmp_path / "out.jsonl")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()


def test_label_with_llm_model_string_groups_by_response(tmp_path, capsys):
    # get_model("fake") echoes a hash: garbage JSON -> repaired? no -> every step unlabeled,
    # recorded, and the run still writes all rows.
    steps = write(tmp_path / "steps.jsonl", [
        {"id": "a", "text": "Say thanks.", "response_id": "r1"},
        {"id": "b", "text": "It is cheap.", "response_id": "r1"},
        {"id": "c", "text": "Lock the door."}])
    out = tmp_path / "labels.jsonl"
    assert main(["label", "--labeler", "fake", "--in", str(steps), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["id"], r["label"], r["root"]) for r in rows] == [
        ("a", "unlabeled", "unlabeled"), ("b", "unlabeled", "unlabeled"),
        ("c", "unlabeled", "unlabeled")]
    assert rows[0]["response_id"] == "r1"
    out_text = capsys.readouterr().out
    assert "labeled 3 steps" in out_text
    assert "2 of 2 responses could not be labeled" in out_text
    problems = [json.loads(x) for x in (tmp_path / "labels.problems.jsonl").read_text().splitlines()]
    assert [p["index"] for p in problems] == [0, 1]
    assert problems[0]["reply"].startswith("echo ")


def test_label_run_dir_caches_llm_calls(tmp_path, capsys, monkeypatch):
    from memlens.models.fake import FakeModel

    calls = []
    original = FakeModel.complete
    monkeypatch.setattr(FakeModel, "complete",
                        lambda self, m, p: calls.append(1) or original(self, m, p))
    steps = write(tmp_path / "steps.jsonl", [{"id": "a", "text": "Say thanks."}])
    args = ["label", "--labeler", "fake", "--in", str(steps), "--out", str(tmp_path / "l.jsonl"),
            "--run-dir", str(tmp_path / "run")]
    assert main(args) == 0
    from memlens.store import RunStore

    with RunStore(tmp_path / "run") as store:
        assert len(store.response_keys()) == 2  # first call and its repair
    assert len(calls) == 2
    assert main(args) == 0
    assert len(calls) == 2  # the second run is answered from the run store


def test_group_responses_keeps_order():
    assert group_responses([{"response_id": 1}, {"response_id": 2}, {"response_id": 1}, {}]) == [
        [0, 2], [1], [3]]


def test_agreement_and_sample_commands(tmp_path, capsys):
    a = write(tmp_path / "a.jsonl", [
        {"id": "1", "label": "social.norms_communication"},
        {"id": "2", "label": "practical.resources_cost"},
        {"id": "3", "label": "social.relationships_care"},
        {"id": "4", "label": "personal.emotional_wellbeing"}])
    b = write(tmp_path / "b.jsonl", [
        {"id": "1", "label": "social.norms_communication"},
        {"id": "2", "label": "practical.planning_feasibility"},
        {"id": "3", "label": "social.fairness_reciprocity"},
        {"id": "4", "label": "personal.emotional_wellbeing"}])
    assert main(["ontology", "agreement", str(a), str(b), "--json"]) == 0
    label_level = json.loads(capsys.readouterr().out)
    assert label_level["pairs"][0]["agreement"] == 0.5
    assert main(["ontology", "agreement", str(a), str(b), "--level", "root", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pairs"][0]["agreement"] == 1.0

    out = tmp_path / "audit.csv"
    assert main(["ontology", "sample", str(a), "--n", "3", "--seed", "0", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 3 and set(rows[0]) >= {"id", "label", "human_label", "verdict"}
    first = [r["id"] for r in rows]
    assert main(["ontology", "sample", str(a), "--n", "3", "--seed", "0", "--out", str(out)]) == 0
    assert [r["id"] for r in csv.DictReader(out.open())] == first


def test_agreement_unknown_label_and_single_file(tmp_path, capsys):
    a = write(tmp_path / "a.jsonl", [{"id": "1", "label": "social.harmony"}])
    assert main(["ontology", "agreement", str(a), str(a)]) == 2
    assert "unknown label 'social.harmony'" in capsys.readouterr().err
    assert main(["ontology", "agreement", str(a)]) == 2
    assert "at least two label files" in capsys.readouterr().err


def test_refine_command_needs_two_labelers(tmp_path, capsys):
    steps = write(tmp_path / "s.jsonl", [{"id": "1", "text": "x"}])
    assert main(["ontology", "refine", "--labelers", "fake", "--steps", str(steps),
                 "--reviser", "fake", "--out", str(tmp_path / "r")]) == 2
    assert "at least two different labelers" in capsys.readouterr().err


@pytest.mark.embedded
def test_refine_command_records_failed_revision(tmp_path, capsys):
    # embedded labels every step, fake (echo) gives garbage -> unlabeled: agreement 0; the fake
    # reviser's echo is no ontology, so the revision fails, is recorded, and v0 stays best.
    steps = write(tmp_path / "s.jsonl", [{"id": "1", "text": "Lock the door at night."},
                                         {"id": "2", "text": "It costs too much."}])
    assert main(["ontology", "refine", "--labelers", "embedded", "fake", "--steps", str(steps),
                 "--reviser", "fake", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "v0: agreement 0.0 % (initial)" in out
    assert "v1: revision failed: the reply contains no JSON object" in out
    history = [json.loads(x) for x in (tmp_path / "r" / "history.jsonl").read_text().splitlines()]
    assert [h["revision"] for h in history] == ["initial", "failed"]


@pytest.mark.embedded
def test_robustness_command_with_embedded_labeler(tmp_path, capsys):
    steps = write(tmp_path / "s.jsonl", [
        {"id": "1", "text": "Lock the door at night.", "response_id": "r"},
        {"id": "2", "text": "It costs too much for your budget.", "response_id": "r"},
        {"id": "3", "text": "Say thank you politely."}])
    assert main(["ontology", "robustness", "--labeler", "embedded", "--in", str(steps)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["repeat"] == {"steps": 3, "seeds": [1, 2], "agreement": 1.0,
                                "cohen_kappa": 1.0}
    assert result["definition_robustness"]["steps"] == 3
    assert 0.0 <= result["definition_robustness"]["agreement"] <= 1.0
