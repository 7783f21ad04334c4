"""`memlens stimuli|questions …` end to end through cli.main (exit codes, counts, errors)."""

import csv
import json

from memlens.cli.main import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_stimuli_list_counts(capsys):
    status, out, _ = run(capsys, "stimuli", "list")
    assert status == 0
    assert "noise          3 categories   12 stimuli" in out
    assert "persona       10 categories   50 stimuli" in out
    assert "life_event    10 categories   30 stimuli" in out
    status, out, _ = run(capsys, "stimuli", "list", "--class", "life_event", "--format", "jsonl")
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 30 and {row["class"] for row in rows} == {"life_event"}


def test_stimuli_bad_input(capsys, tmp_path):
    status, _, err = run(capsys, "stimuli", "list", "--class", "personas")
    assert status == 2 and "memlens: error: unknown stimulus class 'personas'" in err
    bad = tmp_path / "s.jsonl"
    bad.write_text('{"id": "a", "class": "vibes", "category": "c", "text": ""}\n')
    status, _, err = run(capsys, "stimuli", "list", "--file", str(bad))
    assert status == 2 and f"{bad}:1: field 'class'" in err


def test_questions_list(capsys, tmp_path):
    status, out, _ = run(capsys, "questions", "list")
    assert status == 0 and "306  (6 categories, 18 subcategories)" in out
    status, out, _ = run(capsys, "questions", "list", "--format", "jsonl")
    assert len(out.splitlines()) == 306
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "a"}\n')
    status, _, err = run(capsys, "questions", "list", "--file", str(bad))
    assert status == 2 and f"{bad}:1: field 'text' is missing" in err


def test_questions_filter_keywords_and_rater(capsys, tmp_path):
    source = tmp_path / "cands.csv"
    source.write_text("body\nIs it better to rent or buy?\nWhat is a mortgage?\n"
                      "Tea vs coffee at work?\nParis is in France.\n")
    out_path = tmp_path / "kept.jsonl"
    status, out, _ = run(capsys, "questions", "filter", str(source), "--out", str(out_path),
                         "--text-field", "body")
    assert status == 0
    assert "read                4" in out and "keyword_kept        2" in out
    rows = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [(r["id"], r["row_index"]) for r in rows] == [("cands:0", 0), ("cands:2", 2)]
    # the fake model echoes a hash, never JSON: every rating is a recorded rater_error
    status, out, _ = run(capsys, "questions", "filter", str(source), "--out", str(out_path),
                         "--text-field", "body", "--rater", "fake")
    assert status == 0 and "rater_kept          0" in out and "rater_errors        2" in out
    assert out_path.read_text() == ""


def test_questions_filter_bad_flag_and_file(capsys, tmp_path):
    source = tmp_path / "cands.csv"
    source.write_text("body\nShould I?\n")
    status, _, err = run(capsys, "questions", "filter", str(source), "--out",
                         str(tmp_path / "o.jsonl"), "--text-field", "question")
    assert status == 2 and "text field 'question' not found (columns: body)" in err
    status, _, err = run(capsys, "questions", "filter", str(tmp_path / "none.jsonl"), "--out",
                         str(tmp_path / "o.jsonl"))
    assert status == 2 and "candidate file not found" in err


def test_annotate_round_trip(capsys, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"id": f"q{i}", "text": f"Q{i}?"}) + "\n"
                                 for i in range(3)))
    sheet = tmp_path / "sheet.csv"
    status, out, _ = run(capsys, "questions", "annotate", "export", str(questions),
                         "--out", str(sheet))
    assert status == 0 and "wrote 3 items" in out
    rows = list(csv.DictReader(sheet.open()))
    for row, votes in zip(rows, [("yes",) * 3, ("yes", "yes", "no"), ("no",) * 3], strict=True):
        row.update(zip(("rater_1", "rater_2", "rater_3"), votes, strict=True))
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    strict_out = tmp_path / "strict.jsonl"
    status, out, _ = run(capsys, "questions", "annotate", "import", str(sheet),
                         "--strict-out", str(strict_out))
    assert status == 0
    assert "strict (unanimous)       1" in out and "relaxed (>= 2/3)         2" in out
    # P_bar = (1 + 1/3 + 1)/3 = 7/9; p_yes = 5/9 -> Pe = 41/81; kappa = (7/9 - 41/81)/(40/81)
    assert "Fleiss' kappa           0.550" in out
    assert [json.loads(line)["id"] for line in strict_out.read_text().splitlines()] == ["q0"]
