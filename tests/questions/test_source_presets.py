"""Source presets (App. G): per-preset column composition, skipped rows, provenance; missing
columns give an error listing the file's columns; the CLI flag and `questions sources`."""

import csv
import json

import pytest

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.questions import load_questions
from memlens.questions.source_presets import PRESETS, get_preset, load_preset_candidates


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_csv(path, header, rows):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def save_hf(path, split, columns):
    datasets = pytest.importorskip("datasets")
    datasets.DatasetDict({split: datasets.Dataset.from_dict(columns)}).save_to_disk(str(path))
    return path


def provenance(candidate):
    row = candidate.to_dict()
    return (row["source"], row["preset"], row["dataset"], row["license"], row["row_index"])


def test_every_preset_is_documented():
    assert set(PRESETS) == {"career-guidance", "ethics-commonsense", "ethics-justice",
                            "medical-qa", "financial-advisor", "legal-advice",
                            "reddit-questions", "dailydilemmas"}
    for preset in PRESETS.values():
        assert preset.url.startswith("https://huggingface.co/datasets/")
        assert preset.evidence and preset.license and preset.parts
    assert not PRESETS["reddit-questions"].verified
    with pytest.raises(MemlensError, match="unknown source preset 'reddit' .known: career-gui"):
        get_preset("reddit")


def test_career_guidance_either_spelling_and_role_category(tmp_path):
    lower = write_jsonl(tmp_path / "career.jsonl", [
        {"role": "Data Scientist", "question": "Is a PhD worth it  for data science?",
         "answer": "..."},
        {"role": "Nurse", "question": "", "answer": "..."}])
    [got] = load_preset_candidates(lower, "career-guidance")
    assert (got.text, got.category, got.id) == ("Is a PhD worth it for data science?",
                                                "Data Scientist", "career-guidance:0")
    assert provenance(got) == ("career-guidance", "career-guidance",
                               "Pradeep016/career-guidance-qa-dataset",
                               PRESETS["career-guidance"].license, 0)
    upper = write_csv(tmp_path / "Career QA Dataset.csv", ["Role", "Question", "Answer"],
                      [["Pilot", "Should I train abroad?", "..."]])
    [got] = load_preset_candidates(upper, "career-guidance")
    assert (got.text, got.category) == ("Should I train abroad?", "Pilot")


@pytest.mark.parametrize("preset, column", [("ethics-commonsense", "input"),
                                            ("ethics-justice", "scenario")])
def test_ethics_subsets(tmp_path, preset, column):
    path = save_hf(tmp_path / preset, "train", {"label": [1, 0],
                                                column: ["I took the last seat.", " "]})
    [got] = load_preset_candidates(path, preset)
    assert got.text == "I took the last seat." and got.license.startswith("MIT")
    assert provenance(got) == (preset, preset, f"hendrycks/ethics (subset {preset[7:]})",
                               got.license, 0)


def test_medical_qa_uses_input_not_instruction(tmp_path):
    path = write_jsonl(tmp_path / "med.jsonl", [
        {"instruction": "If you are a doctor, please answer.", "input": "Is it better to "
         "treat mild back pain with rest or with exercise?", "output": "..."}])
    [got] = load_preset_candidates(path, "medical-qa")
    assert got.text.startswith("Is it better to treat") and "doctor" not in got.text
    assert got.to_dict()["dataset_url"].endswith("Malikeh1375/medical-question-answering-datasets")


def test_financial_advisor(tmp_path):
    path = write_jsonl(tmp_path / "fin.jsonl", [{"question": "Pay off debt or invest?",
                                                 "answer": "..."}])
    [got] = load_preset_candidates(path, "financial-advisor", source="finadv")
    assert (got.id, got.text) == ("finadv:0", "Pay off debt or invest?")
    assert "not specified on the dataset card" in got.license
    assert provenance(got)[:3] == ("finadv", "financial-advisor", "nihiluis/financial-advisor-100")


def test_legal_advice_composes_title_and_body(tmp_path):
    path = write_jsonl(tmp_path / "legal.jsonl", [
        {"id": "a", "title": "Can my landlord keep the deposit?", "body": "Lease ended.\n\nHe "
         "kept it.", "text_label": "housing"},
        {"id": "b", "title": "Fired for jury duty?", "body": "[removed]", "text_label": "employment"},
        {"id": "c", "title": "", "body": "Only a body", "text_label": "other"}])
    got = load_preset_candidates(path, "legal-advice")
    assert [(c.text, c.category, c.row_index) for c in got] == [
        ("Can my landlord keep the deposit? Lease ended. He kept it.", "housing", 0),
        ("Fired for jury duty?", "employment", 1)]


def test_reddit_questions_title_only_and_skips_nsfw(tmp_path):
    header = ["type", "id", "subreddit.id", "subreddit.name", "subreddit.nsfw", "created_utc",
              "permalink", "domain", "url", "selftext", "title", "score"]
    path = write_csv(tmp_path / "one-million-reddit-questions.csv", header, [
        ["post", "x1", "2qh1i", "askreddit", "false", "1", "/r/x1", "self.AskReddit", "", "body",
         "What is a skill everyone should learn?", "5"],
        ["post", "x2", "2qh1i", "askreddit", "true", "2", "/r/x2", "self.AskReddit", "", "",
         "NSFW question?", "3"],
        ["post", "x3", "2qh1i", "askreddit", "false", "3", "/r/x3", "self.AskReddit", "", "",
         "[deleted]", "1"]])
    [got] = load_preset_candidates(path, "reddit-questions")
    assert (got.text, got.row_index) == ("What is a skill everyone should learn?", 0)
    assert got.license == "CC-BY-4.0 (dataset card metadata)"


def test_dailydilemmas_one_candidate_per_dilemma(tmp_path):
    situation = ("You're a project manager. A colleague uses company resources for a personal "
                 "project. Should you report this to your superior?")
    other = "Your friend asks you to lie for them. Do you lie or tell the truth?"
    path = save_hf(tmp_path / "dd", "test", {
        "idx": [0, 1, 2, 3], "dilemma_idx": [55, 55, 56, 56],
        "basic_situation": ["taking initiative."] * 2 + ["loyalty."] * 2,
        "dilemma_situation": [situation, situation, other, other],
        "action_type": ["to_do", "not_to_do", "to_do", "not_to_do"],
        "action": ["Report", "Not report", "Lie", "Not lie"],
        "negative_consequence": ["..."] * 4, "values_aggregated": ["['honesty']"] * 4,
        "topic": [11, 11, 3, 3], "topic_group": ["workplace"] * 2 + ["friendship"] * 2})
    got = load_preset_candidates(path, "dailydilemmas")
    assert [(c.text, c.row_index, c.category) for c in got] == [
        (situation, 0, "workplace"), (other, 2, "friendship")]
    assert got[0].license == "CC-BY-4.0 (dataset card metadata)"
    assert got[0].to_dict()["dataset"].startswith("kellycyy/daily_dilemmas")


def test_missing_column_lists_columns_and_suggests_text_field(tmp_path):
    path = write_jsonl(tmp_path / "dd.jsonl", [{"situation": "Should I stay or go?", "x": 1}])
    with pytest.raises(MemlensError, match=r"dd.jsonl: source preset 'dailydilemmas' needs column "
                       r"'dilemma_situation' \(per kellycyy.*the file has columns: situation, x\. "
                       r"Name the column holding the question with --text-field"):
        load_preset_candidates(path, "dailydilemmas")
    reddit = write_jsonl(tmp_path / "r.jsonl", [{"question": "Why?"}])
    with pytest.raises(MemlensError, match=r"'title' \(a best guess, not verified: inferred"):
        load_preset_candidates(reddit, "reddit-questions")
    [got] = load_preset_candidates(path, "dailydilemmas", text_field="situation")
    assert got.text == "Should I stay or go?" and got.to_dict()["preset"] == "dailydilemmas"
    with pytest.raises(MemlensError, match=r"needs column 'sit' \(given with --text-field\)"):
        load_preset_candidates(path, "dailydilemmas", text_field="sit")
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"question": "ok?"}, {"question": 3}])
    with pytest.raises(MemlensError, match=r"bad.jsonl:2: field 'question' must be text"):
        load_preset_candidates(bad, "financial-advisor")


def test_cli_filter_with_preset_and_sources_listing(capsys, tmp_path):
    path = write_jsonl(tmp_path / "dd.jsonl", [
        {"dilemma_idx": 1, "dilemma_situation": "Is it better to tell a friend a hard truth or "
         "stay silent?", "action_type": "to_do", "topic_group": "friendship"},
        {"dilemma_idx": 1, "dilemma_situation": "Is it better to tell a friend a hard truth or "
         "stay silent?", "action_type": "not_to_do", "topic_group": "friendship"}])
    out_path = tmp_path / "kept.jsonl"
    status = main(["questions", "filter", str(path), "--source-preset", "dailydilemmas",
                   "--out", str(out_path)])
    out, _ = capsys.readouterr()
    assert status == 0 and out.splitlines()[0].split() == ["read", "1"]
    [row] = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert (row["source"], row["preset"], row["row_index"]) == ("dailydilemmas", "dailydilemmas", 0)
    assert row["dataset_url"] == "https://huggingface.co/datasets/kellycyy/daily_dilemmas"
    assert [q.id for q in load_questions(out_path)] == ["dailydilemmas:0"]
    status = main(["questions", "filter", str(path), "--source-preset", "legal-advice",
                   "--out", str(out_path)])
    _, err = capsys.readouterr()
    assert status == 2 and "needs column 'title'" in err and "--text-field" in err
    assert main(["questions", "sources"]) == 0
    out, _ = capsys.readouterr()
    assert out.count("https://huggingface.co/datasets/") == len(PRESETS)
    assert "BEST GUESS" in out and "DailyDilemmas (Chiu et al. 2024)" in out
