"""Human-annotation round trip: export, import, strict / relaxed sets, Fleiss' kappa."""

import csv

import pytest
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from memlens.errors import MemlensError
from memlens.questions import Question
from memlens.questions.filtering import export_for_annotation, import_annotations

ITEMS = [Question(f"q{i}", f"Question {i}?", "c", "s") for i in range(5)]
# 3 yes / 2 yes / 1 yes / 0 yes / 3 yes
VOTES = [("yes", "yes", "yes"), ("yes", "no", "y"), ("no", "1", "0"), ("no", "n", "false"),
         ("YES", "true", "yes")]


def fill(path, votes):
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    for row, triple in zip(rows, votes, strict=True):
        row.update(zip(("rater_1", "rater_2", "rater_3"), triple, strict=True))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_round_trip_sets_and_kappa(tmp_path):
    path = tmp_path / "annotate.csv"
    assert export_for_annotation(ITEMS, path) == 5
    header = path.read_text().splitlines()[0]
    assert header == "id,text,source,rater_1,rater_2,rater_3"
    fill(path, VOTES)
    strict, relaxed, kappa = import_annotations(path)
    assert [row["id"] for row in strict] == ["q0", "q4"]
    assert [row["id"] for row in relaxed] == ["q0", "q1", "q4"]
    assert strict[0]["text"] == "Question 0?"
    # counts of (yes, no) per item -> statsmodels reference
    counts = [[3, 0], [2, 1], [1, 2], [0, 3], [3, 0]]
    assert kappa == pytest.approx(sm_fleiss_kappa(counts, method="fleiss"))
    # hand computation: P_bar = (1 + 1/3 + 1/3 + 1 + 1)/5 = 11/15; p_yes = 9/15
    expected = (11 / 15 - ((9 / 15) ** 2 + (6 / 15) ** 2)) / (1 - ((9 / 15) ** 2 + (6 / 15) ** 2))
    assert kappa == pytest.approx(expected)


def test_one_file_per_annotator(tmp_path):
    paths = []
    for rater in range(3):
        path = tmp_path / f"rater{rater}.csv"
        lines = ["id,text,rating"] + [f"q{i},Question {i}?,{VOTES[i][rater]}" for i in range(5)]
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    strict, relaxed, _ = import_annotations(paths)
    assert [r["id"] for r in strict] == ["q0", "q4"]
    assert [r["id"] for r in relaxed] == ["q0", "q1", "q4"]
    paths[2].write_text("id,text,rating\nq0,Question 0?,yes\n")
    with pytest.raises(MemlensError, match="item 'q1' has 2 ratings across 3 annotator files"):
        import_annotations(paths)


def test_bad_ratings_name_file_line_column(tmp_path):
    path = tmp_path / "a.csv"
    export_for_annotation(ITEMS[:2], path)
    fill(path, [("yes", "yes", "yes"), ("yes", "maybe", "no")])
    with pytest.raises(MemlensError, match=r"a.csv:3: column 'rater_2': rating is 'maybe'"):
        import_annotations(path)
    export_for_annotation(ITEMS[:1], path)
    with pytest.raises(MemlensError, match=r"a.csv:2: column 'rater_1': rating is empty"):
        import_annotations(path)
    (tmp_path / "b.csv").write_text("id,text,score\nq0,x,yes\n")
    with pytest.raises(MemlensError, match="needs an 'id' column and at least two rater columns"):
        import_annotations(tmp_path / "b.csv")
    with pytest.raises(MemlensError, match="annotation file not found"):
        import_annotations(tmp_path / "none.csv")
