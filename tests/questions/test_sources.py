"""Candidate loaders: JSONL, CSV (column mapping), a local HF datasets copy; bad input."""

import csv
import json

import pytest

from memlens.errors import MemlensError
from memlens.questions import Candidate, load_candidates


def test_jsonl_keeps_provenance_and_skips_empty(tmp_path):
    path = tmp_path / "dilemmas.jsonl"
    rows = [{"question": "Should I  tell\nher?"}, {"question": "  "}, {"question": "Rent or buy?",
                                                                        "category": "money"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    got = load_candidates(path)
    assert got == [
        Candidate("dilemmas:0", "Should I tell her?", "dilemmas", 0),
        Candidate("dilemmas:2", "Rent or buy?", "dilemmas", 2, category="money")]
    assert got[1].to_dict()["row_index"] == 2


def test_csv_with_text_field_mapping(tmp_path):
    path = tmp_path / "career.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["role", "Body"])
        writer.writerow(["nurse", "Is it worth switching teams?"])
        writer.writerow(["pilot", "What is a pilot?"])
    got = load_candidates(path, text_field="Body", source="career_guidance")
    assert [(c.id, c.text, c.row_index) for c in got] == [
        ("career_guidance:0", "Is it worth switching teams?", 0),
        ("career_guidance:1", "What is a pilot?", 1)]
    with pytest.raises(MemlensError, match=r"text field 'body' not found \(columns: role, Body\)"):
        load_candidates(path, text_field="body")
    with pytest.raises(MemlensError, match="no text column found among role, Body; name it"):
        load_candidates(path)


def test_hf_dataset_saved_to_disk(tmp_path):
    datasets = pytest.importorskip("datasets")
    data = datasets.DatasetDict({
        "train": datasets.Dataset.from_dict({"prompt": ["Is it fair to split evenly?", "Why?"]}),
        "test": datasets.Dataset.from_dict({"prompt": ["Tea vs coffee?"]}),
    })
    data.save_to_disk(str(tmp_path / "hf"))
    got = load_candidates(tmp_path / "hf", source="dailydilemmas")
    assert [(c.id, c.text) for c in got] == [("dailydilemmas:0", "Is it fair to split evenly?"),
                                             ("dailydilemmas:1", "Why?")]
    assert [c.text for c in load_candidates(tmp_path / "hf", split="test")] == ["Tea vs coffee?"]
    with pytest.raises(MemlensError, match=r"choose a split with --split \(available: train, test"):
        load_candidates(tmp_path / "hf", split="validation")


def test_bad_inputs(tmp_path):
    with pytest.raises(MemlensError, match="candidate file not found"):
        load_candidates(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok?"}\n{"text": \n')
    with pytest.raises(MemlensError, match=r"bad.jsonl:2: invalid JSON"):
        load_candidates(bad)
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text('{"text": "ok?"}\n{"text": 5}\n{"other": 1}\n')
    with pytest.raises(MemlensError, match=r"wrong.jsonl:2: field 'text' must be text"):
        load_candidates(wrong)
    (tmp_path / "x.parquet").write_text("")
    with pytest.raises(MemlensError, match="unsupported candidate file type '.parquet'"):
        load_candidates(tmp_path / "x.parquet")
    (tmp_path / "notdata").mkdir()
    with pytest.raises(MemlensError, match="cannot read as a local datasets copy"):
        load_candidates(tmp_path / "notdata")
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("text\nok?,extra\n")
    with pytest.raises(MemlensError, match=r"ragged.csv:2: more cells than header columns"):
        load_candidates(ragged)
