"""Drift-table loading: valid tables load; every malformed table gets one clear MemlensError."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.errors import MemlensError
from memlens.stats.table import load_drift_table, metric_columns, validate_drift_table

HEADER = "question_id,condition_class,category,dtw,sri\n"
GOOD_ROWS = ("q1,control,no_perturbation,0.3,0.2\n"
             "q1,noise,filler,0.31,0.21\n"
             "q1,persona,age,0.4,0.3\n"
             "q2,control,no_perturbation,0.25,0.18\n")


def write(tmp_path: Path, text: str, name: str = "drift.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_and_parquet_load_to_the_same_table(tmp_path):
    csv_table = load_drift_table(write(tmp_path, HEADER + GOOD_ROWS))
    parquet_path = tmp_path / "drift.parquet"
    csv_table.to_parquet(parquet_path)
    parquet_table = load_drift_table(parquet_path)
    pd.testing.assert_frame_equal(csv_table, parquet_table, check_dtype=False)
    assert csv_table["dtw"].tolist() == [0.3, 0.31, 0.4, 0.25]
    assert metric_columns(csv_table) == ["dtw", "sri"]


def test_declared_descriptive_columns_are_not_metrics(tmp_path):
    text = ("question_id,condition_class,category,stimulus_id,sample,model,dtw\n"
            "1,control,no_perturbation,s0,0,m,0.3\n1,noise,filler,s1,0,m,0.2\n")
    table = load_drift_table(write(tmp_path, text))
    assert metric_columns(table) == ["dtw"]
    assert table["question_id"].tolist() == ["1", "1"]


@pytest.mark.parametrize(("text", "expected"), [
    ("question_id,category,dtw\nq1,no_perturbation,0.1\n", "missing column(s) 'condition_class'"),
    (HEADER + GOOD_ROWS + "q2,memory,age,0.1,0.1\n", "line 6: unknown condition_class 'memory'"),
    (HEADER + "q1,noise,filler,0.3,0.2\n", "no 'no_perturbation' rows"),
    (HEADER + "q1,control,no_perturbation,0.3,0.2\n", "no rows of condition_class 'noise'"),
    (HEADER + GOOD_ROWS + "q3,persona,age,abc,0.1\n", "line 6: metric column 'dtw' is not a finite number: 'abc'"),
    (HEADER + GOOD_ROWS + "q3,persona,age,,0.1\n", "line 6: metric column 'dtw' is empty"),
    (HEADER + GOOD_ROWS + "q3,persona,age,0.1,inf\n", "metric column 'sri' is not a finite"),
    (HEADER + GOOD_ROWS + ",persona,age,0.1,0.1\n", "line 6: column 'question_id' is empty"),
    (HEADER + GOOD_ROWS + "q3,noise,no_perturbation,0.1,0.1\n", "the only control category"),
    (HEADER + GOOD_ROWS + "q3,noise,age,0.1,0.1\n", "category 'age' appears under several"),
    ("question_id,condition_class,category\nq1,control,no_perturbation\n", "no metric columns"),
    (HEADER, "the table has no rows"),
    ("", "the file is empty"),
])
def test_bad_tables_get_one_clear_error(tmp_path, text, expected):
    path = write(tmp_path, text)
    with pytest.raises(MemlensError) as error:
        load_drift_table(path)
    assert expected in str(error.value)
    assert str(path) in str(error.value)


def test_missing_file_unknown_extension_and_corrupt_parquet(tmp_path):
    with pytest.raises(MemlensError, match="not found"):
        load_drift_table(tmp_path / "nope.csv")
    with pytest.raises(MemlensError, match="unknown drift-table format '.xlsx'"):
        load_drift_table(write(tmp_path, "x", "table.xlsx"))
    with pytest.raises(MemlensError, match="not a readable Parquet file"):
        load_drift_table(write(tmp_path, "PAR1 garbage", "table.parquet"))
    (tmp_path / "latin.csv").write_bytes(HEADER.encode() + b"q1,control,no_perturbation,\xff,1\n")
    with pytest.raises(MemlensError, match="not UTF-8"):
        load_drift_table(tmp_path / "latin.csv")


def test_validate_reports_row_positions_without_a_file():
    frame = pd.DataFrame({"question_id": ["a", "a"], "condition_class": ["control", "noise"],
                          "category": ["no_perturbation", "filler"], "dtw": [0.1, None]})
    with pytest.raises(MemlensError, match="drift table: row 1: metric column 'dtw' is empty"):
        validate_drift_table(frame)


cell = st.one_of(st.text(max_size=6), st.sampled_from(
    ["control", "noise", "persona", "life_event", "no_perturbation", "0.5", "1e3", "nan", ""]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.lists(cell, min_size=0, max_size=6), max_size=6),
       header=st.lists(st.sampled_from(["question_id", "condition_class", "category", "dtw",
                                        "sri", "model", "x", ""]), min_size=0, max_size=6))
def test_fuzzed_csv_never_tracebacks(tmp_path, rows, header):
    text = ",".join(header) + "\n" + "".join(",".join(row) + "\n" for row in rows)
    path = write(tmp_path, text)
    try:
        table = load_drift_table(path)
    except MemlensError as error:
        assert str(path) in str(error)
    else:
        assert {"control", "noise"} <= set(table["condition_class"])
        assert all(table[column].dtype.kind == "f" for column in metric_columns(table))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200))
def test_fuzzed_bytes_never_traceback(tmp_path, data):
    for name in ("fuzz.csv", "fuzz.parquet"):
        path = tmp_path / name
        path.write_bytes(data)
        try:
            load_drift_table(path)
        except MemlensError as error:
            assert str(path) in str(error)
