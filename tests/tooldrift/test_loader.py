"""Loading the layout: the bundled sample, Setting-2 additions, and errors naming file/entry/field."""

import json
import shutil

import pytest

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.tooldrift import BIAS_DIMENSIONS, bundled_path, load_dataset, load_rubrics


@pytest.fixture
def layout(tmp_path):
    root = tmp_path / "memdrift"
    shutil.copytree(bundled_path(), root)
    return root


def read(path):
    return json.loads(path.read_text())


def test_bundled_sample_covers_every_dimension_with_rubrics():
    data = load_dataset()
    per_dimension = {d: [e for e in data.entries.values() if e.bias_dimension == d]
                     for d in BIAS_DIMENSIONS}
    assert all(len(entries) >= 2 for entries in per_dimension.values())
    assert len({e.domain for e in data.entries.values()}) >= 6
    assert set(data.rubrics) == set(data.entries)
    for entry in data.entries.values():  # every rubric parameter declares a default or is required
        props = entry.parameters_schema["properties"]
        assert all(name in props for name in data.rubrics[entry.id].params)


def test_setting2_files_are_merged(layout):
    (layout / "conversations").mkdir()
    key = {"bias_dimension": "risk_permissiveness", "domain": "finance", "scenario_num": "scenario_1"}
    talk = [{"memory_idx": 0, "memory": "m", "conversation": [
        {"role": "user", "content": "I went cliff diving."}, {"role": "assistant", "content": "Wow."}]}]
    (layout / "conversations" / "risk_permissiveness.json").write_text(
        json.dumps([{**key, "biased_conversation": talk}]))
    (layout / "memories" / "mem0").mkdir(parents=True)
    (layout / "memories" / "mem0" / "risk_permissiveness.json").write_text(
        json.dumps([{**key, "biased_retrieved_memory": ["cliff diving"]}]))
    entry = load_dataset(layout).entries["risk_permissiveness/finance/scenario_1"]
    assert entry.extras["biased_conversation"] == talk
    assert entry.extras["retrieved"] == {"mem0": {"biased_retrieved_memory": ["cliff diving"]}}


@pytest.mark.parametrize("edit,message", [
    (lambda e: e.pop("user_prompt"), "entry 1 (speed_impatience/healthcare/scenario_2): field 'user_prompt'"),
    (lambda e: e.update(biased_user_memory=["ok", ""]), "field 'biased_user_memory[1]'"),
    (lambda e: e.update(bias_dimension="vanity"), "field 'bias_dimension' is 'vanity'"),
    (lambda e: e["function_tool_call"]["parameters"].update(required=["nope"]),
     "required' names unknown properties ['nope']"),
])
def test_entry_errors_name_file_entry_and_field(layout, edit, message):
    path = layout / "scenarios" / "speed_impatience.json"
    entries = read(path)
    edit(entries[1])
    path.write_text(json.dumps(entries))
    with pytest.raises(MemlensError) as error:
        load_dataset(layout)
    assert str(path) in str(error.value) and message in str(error.value)


def test_rubric_errors(layout):
    path = layout / "rubrics" / "all_params" / "resource_frugality.json"
    rubrics = read(path)
    rubrics[0]["params"]["headroom_policy"]["order"] = ["none", "lavish"]
    path.write_text(json.dumps(rubrics))
    with pytest.raises(MemlensError, match=r"params.headroom_policy.order' has values \['lavish'\]"):
        load_dataset(layout)
    rubrics[0]["params"] = {"x": {"kind": "numeric", "degraded": "down"}}
    path.write_text(json.dumps(rubrics))
    with pytest.raises(MemlensError, match="entry 0 .*field 'params.x': 'degraded' must be"):
        load_rubrics(layout / "rubrics")


def test_malformed_json_names_line(layout):
    path = layout / "scenarios" / "minimalism_conciseness.json"
    path.write_text('[\n{"bias_dimension": \n')
    with pytest.raises(MemlensError, match="minimalism_conciseness.json:3: invalid JSON"):
        load_dataset(layout)


def test_score_cli_on_rubrics_or_all_params(layout, tmp_path, capsys):
    calls = tmp_path / "calls.jsonl"
    rows = [{"entry_id": "risk_permissiveness/finance/scenario_1", "condition": c, "k": 0,
             "status": "ok", "arguments": {"verification": v}}
            for c, v in (("base", "callback"), ("neutral", "callback"), ("biased", "none"))]
    calls.write_text("\n".join(json.dumps(r) for r in rows))
    for rubrics in (layout / "rubrics", layout / "rubrics" / "all_params"):
        assert main(["tooldrift", "score", "--rubrics", str(rubrics), "--calls", str(calls),
                     "--out", str(tmp_path / "out"), "--bootstrap", "50"]) == 0
        summary = read(tmp_path / "out" / "tooldrift.json")
        # sanctions_screening missing on both sides -> schema default (True) from scenarios/
        assert (summary["r_neutral"], summary["r_biased"]) == (0.0, 0.5)
    assert "overall" in capsys.readouterr().out
    calls.write_text('{"entry_id": "a/b/c", "condition": "biased", "k": -1}\n')
    assert main(["tooldrift", "score", "--rubrics", str(layout / "rubrics"), "--calls",
                 str(calls), "--out", str(tmp_path / "out")]) == 2
    assert "calls.jsonl:1: field 'k'" in capsys.readouterr().err


def test_run_cli_flag_errors(capsys, tmp_path):
    assert main(["tooldrift", "run", "--model", "fake", "--out", str(tmp_path),
                 "--setting", "2"]) == 2
    assert "--setting 2 needs --framework" in capsys.readouterr().err


@pytest.mark.parametrize(("flags", "message"), [
    (["--limit", "0"], "argument --limit: must be an integer from 1"),
    (["--bootstrap", "0"], "argument --bootstrap: must be an integer from 1"),
])
def test_run_cli_refuses_empty_limit_and_bootstrap(flags, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:  # refused by the flag's type, before any work
        main(["tooldrift", "run", "--model", "fake", "--out", str(tmp_path), *flags])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_scenario_file_that_is_not_utf8_is_a_clear_error(tmp_path):
    from memlens.tooldrift.loader import read_json_list

    path = tmp_path / "speed_impatience.json"
    path.write_bytes('[{"domain": "caf\xe9"}]'.encode("latin-1"))
    with pytest.raises(MemlensError, match=r"speed_impatience.json:1: JSON file is not UTF-8"):
        read_json_list(path)
