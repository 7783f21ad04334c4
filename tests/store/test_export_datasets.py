"""Every table of a real (loopback) audit out as a Hugging Face dataset, Parquet, CSV, JSONL."""

import json
import sys
from pathlib import Path

import datasets
import pandas as pd
import pytest

from memlens.errors import MemlensError
from memlens.store import RunStore
from memlens.store.export import export_run, export_table, to_dataset

sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import scripted  # noqa: E402


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("audit")
    scripted.run_scripted_audit(directory, directory / "run")
    return directory / "run"


def test_export_all_tables_in_all_formats(run_dir, tmp_path):
    with RunStore(run_dir, read_only=True) as store:
        counts = export_run(store, tmp_path / "out")
        tables = store.tables()
        steps = store.rows("audit_steps")
        responses = store.records("responses")
    assert {"responses", "failures", "manifest", "audit_steps", "audit_labels",
            "audit_drift", "audit_drift_pairs"} <= set(counts) == {"responses", "failures",
                                                                   "manifest", *tables}
    for table, rows in counts.items():
        dataset = datasets.load_from_disk(str(tmp_path / "out" / table))
        assert len(dataset) == rows
        assert len(pd.read_parquet(tmp_path / "out" / f"{table}.parquet")) == rows
        if rows:
            assert len(pd.read_csv(tmp_path / "out" / f"{table}.csv")) == rows
        lines = (tmp_path / "out" / f"{table}.jsonl").read_text().splitlines()
        assert len(lines) == rows
    hf_steps = datasets.load_from_disk(str(tmp_path / "out" / "audit_steps"))
    by_id = {row["id"]: row for row in hf_steps}
    # nested values stay nested: a list of step strings, not JSON text
    assert all(by_id[row["id"]]["steps"] == row["steps"] for row in steps)
    hf_responses = datasets.load_from_disk(str(tmp_path / "out" / "responses"))
    assert hf_responses[0]["messages"] == json.loads(responses[0]["messages"])
    assert {"key", "model_id", "tag", "text", "prompt_tokens"} <= set(hf_responses.column_names)


def test_single_table_formats_and_errors(run_dir, tmp_path):
    with RunStore(run_dir, read_only=True) as store:
        assert export_table(store, "audit_drift", tmp_path / "drift_hf", "hf") == 25
        assert export_table(store, "audit_drift", tmp_path / "d.csv") == 25
        with pytest.raises(MemlensError, match="must end in .parquet"):
            export_table(store, "audit_drift", tmp_path / "d.csv", "parquet")
        with pytest.raises(MemlensError, match="unknown export format"):
            export_table(store, "audit_drift", tmp_path / "d", "xlsx")
        with pytest.raises(MemlensError, match="no table 'nope'"):
            export_table(store, "nope", tmp_path / "n", "hf")
        (tmp_path / "file").write_text("x")
        with pytest.raises(MemlensError, match="a file of that name exists"):
            export_table(store, "audit_drift", tmp_path / "file", "hf")
    assert len(datasets.load_from_disk(str(tmp_path / "drift_hf"))) == 25


def test_mixed_type_column_falls_back_to_text():
    dataset = to_dataset([{"id": "a", "value_x": 1, "tags": ["x"]},
                          {"id": "b", "value_x": "one", "tags": {"k": 2}}], "stage")
    assert dataset["value_x"] == ["1", "one"]
    assert dataset["tags"] == ['["x"]', '{"k": 2}']
    assert dataset["id"] == ["a", "b"]


def test_cli_export(run_dir, tmp_path, capsys):
    from memlens.cli.main import main

    assert main(["store", "export", str(run_dir), "all", str(tmp_path / "all"),
                 "--format", "parquet,hf"]) == 0
    assert "as parquet, hf" in capsys.readouterr().out
    assert (tmp_path / "all" / "audit_drift.parquet").exists()
    assert not (tmp_path / "all" / "audit_drift.csv").exists()
    assert main(["store", "export", str(run_dir), "audit_steps", str(tmp_path / "s"),
                 "--format", "hf"]) == 0
    assert main(["store", "export", str(run_dir), "audit_steps", str(tmp_path / "s2"),
                 "--format", "hf,csv"]) == 2
    with pytest.raises(SystemExit):
        main(["store", "export", str(run_dir), "all", str(tmp_path / "x"), "--format", "xls"])
