import json

import pandas as pd
import pytest

from memlens.errors import MemlensError
from memlens.models import ChatRequest, ChatResponse, ToolCall
from memlens.store import RunStore

ASK = ChatRequest(({"role": "user", "content": "hi, \"you\"\nthere"},), tag="t0")


@pytest.fixture
def store(tmp_path):
    with RunStore(tmp_path / "run") as store:
        store.put_response("k1", ASK, ChatResponse("a,b\n\"c\"", 3, 2,
                           tool_calls=[ToolCall("f", "{}")]), model_id="fake")
        store.put_failure("k2", ASK, "HTTP 500", attempts=4, model_id="fake")
        store.put_rows("drift", [{"id": "x", "dtw": 0.5, "steps": ["a", "b"]},
                                 {"id": "y", "dtw": 1.0, "steps": []}])
        yield store


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_export_responses(store, tmp_path, suffix):
    path = tmp_path / f"responses{suffix}"
    assert store.export("responses", path) == 1
    if suffix == ".jsonl":
        [record] = [json.loads(line) for line in path.read_text().splitlines()]
        assert record["messages"] == [dict(ASK.messages[0])]
        assert record["tool_calls"] == [{"name": "f", "arguments_json": "{}"}]
    else:
        record = (pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)).iloc[0]
        assert json.loads(record["messages"]) == [dict(ASK.messages[0])]
    assert record["text"] == "a,b\n\"c\""
    assert (record["key"], record["model_id"], record["tag"]) == ("k1", "fake", "t0")
    assert (record["prompt_tokens"], record["completion_tokens"]) == (3, 2)


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_export_stage_table_and_failures(store, tmp_path, suffix):
    path = tmp_path / f"drift{suffix}"
    assert store.export("drift", path) == 2
    frame = pd.read_json(path, lines=True) if suffix == ".jsonl" else (
        pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path))
    assert list(frame["id"]) == ["x", "y"] and list(frame["dtw"]) == [0.5, 1.0]
    failures = tmp_path / f"failures{suffix}"
    store.export("failures", failures)
    frame = pd.read_json(failures, lines=True) if suffix == ".jsonl" else (
        pd.read_csv(failures) if suffix == ".csv" else pd.read_parquet(failures))
    assert (frame["reason"][0], frame["attempts"][0]) == ("HTTP 500", 4)


def test_mixed_type_column_still_exports_to_parquet(store, tmp_path):
    store.put_rows("mixed", [{"id": 1, "v": 1}, {"id": 2, "v": "two"}])
    store.export("mixed", tmp_path / "m.parquet")
    assert list(pd.read_parquet(tmp_path / "m.parquet")["v"]) == ["1", "two"]


def test_export_errors(store, tmp_path):
    with pytest.raises(MemlensError, match=r"extension must be one of \.parquet, \.csv, \.jsonl"):
        store.export("drift", tmp_path / "out.xlsx")
    with pytest.raises(MemlensError, match="no table 'nope' .* tables: failures, manifest, responses, drift"):
        store.export("nope", tmp_path / "out.csv")
    with pytest.raises(MemlensError, match="does not exist"):
        store.export("drift", tmp_path / "no" / "out.csv")
    assert not list(tmp_path.glob("*.partial"))
