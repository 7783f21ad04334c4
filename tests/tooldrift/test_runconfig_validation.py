"""``RunConfig`` is a pydantic dataclass: wrong types and out-of-range values are refused when it
is constructed, naming the field; its manifest record is what the plain dataclass wrote."""

import dataclasses
import json

import pytest
from tooldrift_fakes import DATA

from memlens.errors import MemlensError
from memlens.models import FakeModel
from memlens.tooldrift.runner import RunConfig, run_tooldrift

# {**RunConfig().__dict__} of the plain dataclass (the config part of the manifest record)
DEFAULT_RECORD = {
    "k": 5, "setting": 1, "framework": None, "seed": 0, "temperature": 0.7, "max_tokens": 512,
    "limit": None, "n_bootstrap": 10000, "tool_choice": "entry", "call_path": "auto",
    "judge": None, "min_biased_retrieval_count": 2, "min_biased_retrieval_share": 0.25,
    "extra": {}}


@pytest.mark.parametrize(("changes", "message"), [
    ({"k": "many"}, "RunConfig: field 'k': Input should be a valid integer, unable to parse "
                    "string as an integer (got 'many')"),
    ({"k": 0}, "RunConfig: field 'k': Input should be greater than or equal to 1 (got 0)"),
    ({"setting": 3}, "RunConfig: field 'setting': Input should be 1 or 2 (got 3)"),
    ({"call_path": "grammar"}, "RunConfig: field 'call_path': Input should be 'auto', 'tools' "
                               "or 'json_schema' (got 'grammar')"),
    ({"temperature": float("inf")},
     "RunConfig: field 'temperature': Input should be a finite number (got inf)"),
    ({"min_biased_retrieval_share": 1.5}, "RunConfig: field 'min_biased_retrieval_share': "
                                          "Input should be less than or equal to 1 (got 1.5)"),
    ({"n_bootstrap": 0},
     "RunConfig: field 'n_bootstrap': Input should be greater than or equal to 1 (got 0)"),
    ({"extra": ["top_k"]}, "RunConfig: field 'extra': Input should be a valid dictionary "
                           "(got ['top_k'])"),
])
def test_bad_values_are_refused_at_construction(changes, message):
    with pytest.raises(MemlensError) as caught:
        RunConfig(**changes)
    assert str(caught.value) == message


def test_unknown_field_and_replace():
    with pytest.raises(MemlensError, match=r"^RunConfig: unknown key 'bootstrap' \(valid keys: k, "):
        RunConfig(bootstrap=100)
    with pytest.raises(MemlensError, match="field 'limit'"):
        dataclasses.replace(RunConfig(), limit=-1)
    assert dataclasses.replace(RunConfig(), k="3").k == 3  # text from a flag is converted


def test_manifest_record_is_unchanged(tmp_path):
    assert json.dumps(dict(RunConfig().__dict__)) == json.dumps(DEFAULT_RECORD)
    config = RunConfig(k=1, limit=1, n_bootstrap=20)
    run_tooldrift(FakeModel(), DATA, tmp_path, config, progress=False)
    from memlens.store import RunStore

    with RunStore(tmp_path) as store:
        recorded = store.read_manifest()["tooldrift"]["config"]
    expected = {**DEFAULT_RECORD, "k": 1, "limit": 1, "n_bootstrap": 20}
    assert {key: recorded[key] for key in expected} == expected
    assert recorded["resolved_call_path"] == "tools" and recorded["model"] == "fake"
