"""Malformed inputs: every case is one memlens error line and exit 2, never a traceback or a
silently accepted nonsense value (issue 10 item 7). The first part holds the cases a sweep over
the commands found; the second fuzzes every command that reads a user file."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.cli.main import main
from memlens.tooldrift.loader import bundled_path

sys.path.insert(0, str(Path(__file__).parent))
from clirun import run  # noqa: E402

DEEP = "[" * 100_000 + "]" * 100_000
BIG_INT = '{"id": ' + "1" * 5000 + ', "text": "x"}'
LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdef", "bcdefg", strict=True))




def assert_one_error(status, err: str, *expected: str) -> None:
    assert "Traceback" not in err
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("memlens: error:") or ": error: argument" in lines[-1], err
    assert all(text in err for text in expected), err


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def file_commands(tmp_path: Path, path: str) -> dict[str, list[str]]:
    """Every command reading ``path`` as its user file, with otherwise valid flags."""
    out = str(tmp_path / "out")
    return {
        "questions list": ["questions", "list", "--file", path],
        "questions filter": ["questions", "filter", path, "--out", out + ".jsonl"],
        "stimuli list": ["stimuli", "list", "--file", path],
        "ontology show": ["ontology", "show", "--ontology", path],
        "label": ["label", "--labeler", "fake", "--in", path, "--out", out + ".labels.jsonl"],
        "tooldrift score": ["tooldrift", "score", "--rubrics", str(bundled_path() / "rubrics"),
                            "--calls", path, "--out", out],
        "audit config": ["audit", "--config", path, "--dry-run", "--out", out + "-run",
                         "--model", "fake", "--n-questions", "1"],
        "chat schema": ["chat", "hi", "--model", "fake", "--json-schema", path],
        "mitigate config": ["mitigate", "grpo", "--model", str(tmp_path), "--data",
                            str(tmp_path), "--output", out + "-m", "--config", path, "--dry-run"],
    }


# -- found by the sweep: tracebacks ---------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    (DEEP, "nested deeper than 64 levels"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested deeper than 64 levels"),
    (BIG_INT, "more than 4300 digits"),
])
@pytest.mark.parametrize("command", ["questions list", "questions filter", "stimuli list",
                                     "ontology show", "label", "tooldrift score",
                                     "audit config", "chat schema"])
def test_deep_json_and_huge_integers_are_one_error(command, content, expected, tmp_path, capsys):
    path = write(tmp_path, "in.json", content)
    status, err = run(file_commands(tmp_path, path)[command], capsys)
    assert_one_error(status, err, f"{path}:1:", expected)


@pytest.mark.parametrize("content, expected", [
    ("[" * 5000 + "]" * 5000, "nested deeper than 64 levels"),
    ("samples: " + "1" * 5000, "integer string conversion"),
    (LAUGHS, "more than 1,000,000 values once aliases are expanded"),
])
@pytest.mark.parametrize("command", ["audit config", "ontology show", "mitigate config"])
def test_deep_huge_or_exploding_yaml_is_one_error(command, content, expected, tmp_path, capsys):
    path = write(tmp_path, "in.yaml", content)
    started = time.perf_counter()
    status, err = run(file_commands(tmp_path, path)[command], capsys)
    assert_one_error(status, err, path, expected)
    assert time.perf_counter() - started < 30  # a blow-up takes minutes; slack for load


def test_nan_and_overflowing_numbers_are_not_json(tmp_path, capsys):
    path = write(tmp_path, "q.jsonl", '{"id": "a", "text": "x?"}\n{"id": NaN}\n')
    assert_one_error(*run(["questions", "list", "--file", path], capsys),
                     f"{path}:2: invalid JSON (NaN is not a JSON number)")
    path = write(tmp_path, "s.json", '{"type": "object",\n "maximum": 1e400}')
    assert_one_error(*run(["chat", "hi", "--model", "fake", "--json-schema", path], capsys),
                     f"{path}:2: invalid JSON (number 1e400 is too large)")


def test_mitigate_extra_must_be_a_mapping(tmp_path, capsys):
    commands = file_commands(tmp_path, write(tmp_path, "c.yaml", "extra: [1, 2]\n"))
    assert_one_error(*run(commands["mitigate config"], capsys), "field 'extra' must be a mapping")


def test_mitigate_set_with_a_huge_integer(tmp_path, capsys):
    argv = ["mitigate", "grpo", "--model", str(tmp_path), "--data", str(tmp_path), "--output",
            str(tmp_path / "m"), "--dry-run", "--set", "x=" + "1" * 5000]
    assert_one_error(*run(argv, capsys), "--set x:1:", "more than 4300 digits")


def test_label_out_must_not_be_a_directory(tmp_path, capsys):
    steps = write(tmp_path, "steps.jsonl", '{"id": "a", "text": "I think so."}\n')
    assert_one_error(*run(["label", "--labeler", "fake", "--in", steps, "--out", str(tmp_path)],
                          capsys), "argument --out", "is a directory")


@pytest.mark.parametrize("argv, flag", [
    (["analyze", "--example", "--seed", "-1", "--out", "OUT"], "--seed"),
    (["ontology", "sample", "L.jsonl", "--seed", "-3", "--out", "OUT/s.csv"], "--seed"),
    (["audit", "--seed", "-1", "--dry-run", "--out", "OUT"], "--seed"),
    (["audit", "--max-tokens", "-5", "--dry-run", "--out", "OUT"], "--max-tokens"),
    (["audit", "--temperature", "inf", "--dry-run", "--out", "OUT"], "--temperature"),
    (["audit", "--samples", "1" * 5000, "--dry-run", "--out", "OUT"], "--samples"),
])
def test_bad_flag_values_are_refused_by_the_parser(argv, flag, tmp_path, capsys):
    argv = [arg.replace("OUT", str(tmp_path / "out")) for arg in argv]
    assert_one_error(*run(argv, capsys), f"argument {flag}")


# -- found by the sweep: wrong values accepted ----------------------------------------------

@pytest.mark.parametrize("setting, expected", [
    ("temperature: .inf", "(value inf of field 'temperature' is not a finite number)"),
    ("temperature: 7", "field 'temperature': Input should be less than or equal to 5"),
    ("max_tokens: 1e30", "field 'max_tokens'"),
    ("top_p: .nan", "field 'top_p'"),
    ("orthogonality_threshold: .nan", "field 'orthogonality_threshold'"),
    ("samples: 100000000", "field 'samples': Input should be less than or equal to 1000"),
])
def test_audit_config_numbers_must_be_finite_and_sane(setting, expected, tmp_path, capsys):
    commands = file_commands(tmp_path, write(tmp_path, "c.yaml", setting + "\n"))
    assert_one_error(*run(commands["audit config"], capsys), expected)


@pytest.mark.parametrize("setting, expected", [
    ("learning_rate: .nan", "(value nan of field 'learning_rate' is not a finite number)"),
    ("learning_rate: -1", "'learning_rate' must be a finite number > 0 and <= 1, got -1.0"),
    ("learning_rate: 1e400", "'learning_rate' must be a finite number > 0 and <= 1, got inf"),
    ("per_device_train_batch_size: 0", "'per_device_train_batch_size' must be a finite number "
                                       ">= 1 and <= 65536, got 0"),
    ("num_train_epochs: 0", "'num_train_epochs' must be a finite number > 0"),
    ("beta: -0.5", "'beta' must be a finite number >= 0 and <= 100, got -0.5"),
])
def test_mitigation_settings_must_be_finite_and_in_range(setting, expected, tmp_path, capsys):
    commands = file_commands(tmp_path, write(tmp_path, "c.yaml", setting + "\n"))
    assert_one_error(*run(commands["mitigate config"], capsys), expected)


def test_mitigation_flag_value_nan_is_refused(tmp_path, capsys):
    argv = ["mitigate", "grpo", "--model", str(tmp_path), "--data", str(tmp_path), "--output",
            str(tmp_path / "m"), "--dry-run", "--learning-rate", "nan"]
    assert_one_error(*run(argv, capsys), "--learning-rate: setting 'learning_rate' must be")


@pytest.mark.parametrize("argv, flag", [
    (["chat", "hi", "--model", "fake", "--temperature", "inf"], "--temperature"),
    (["chat", "hi", "--model", "fake", "--top-p", "nan"], "--top-p"),
    (["chat", "hi", "--model", "fake", "--seed", "-1"], "--seed"),
    (["audit", "--dry-run", "--out", "FILE"], "--out"),
    (["tooldrift", "run", "--model", "fake", "--out", "OUT", "--temperature", "inf"],
     "--temperature"),
    (["tooldrift", "run", "--model", "fake", "--out", "OUT", "--max-tokens", "-5"],
     "--max-tokens"),
    (["tooldrift", "run", "--model", "fake", "--out", "OUT", "--top-k", "0"], "--top-k"),
    (["tooldrift", "run", "--model", "fake", "--out", "OUT", "--retrieval-threshold", "nan"],
     "--retrieval-threshold"),
    (["mitigate", "references", "--judge", "fake", "--out", "OUT", "--candidates", "0"],
     "--candidates"),
    (["mitigate", "references", "--judge", "fake", "--out", "OUT", "--max-tokens", "-5"],
     "--max-tokens"),
    (["mitigate", "references", "--judge", "fake", "--out", "OUT", "--limit", "-1"], "--limit"),
    (["mitigate", "sympref", "--judge", "fake", "--out", "OUT", "--mix-fraction", "nan"],
     "--mix-fraction"),
])
def test_nonsense_flag_values_were_accepted_and_now_are_not(argv, flag, tmp_path, capsys):
    a_file = write(tmp_path, "a-file", "x")
    argv = [arg.replace("OUT", str(tmp_path / "out")).replace("FILE", a_file) for arg in argv]
    assert_one_error(*run(argv, capsys), f"argument {flag}")


def test_a_drift_value_of_1e300_is_refused_with_its_line(tmp_path, capsys):
    rows = ["question_id,condition_class,category,dtw", "q1,control,no_perturbation,0.1",
            "q1,noise,filler,0.2", "q1,persona,age,1e300"]
    path = write(tmp_path, "d.csv", "\n".join(rows) + "\n")
    assert_one_error(*run(["analyze", path, "--out", str(tmp_path / "o")], capsys),
                     f"{path}: line 4: metric column 'dtw' is beyond ±1e+06")


def test_absurd_statistics_print_in_scientific_notation():
    from memlens.stats.validity import _p, _signed

    assert _signed(5100940777432016896.0) == "+5.10e+18"
    assert _signed(float("inf")) == "n/a" and _signed(12.34) == "+12.3"
    assert _p(float("nan")) == "p=n/a" and _p(0.0123) == "p=0.012"


# -- dry-run planning ------------------------------------------------------------------------

def test_dry_run_with_huge_samples_is_refused_at_once(tmp_path, capsys):
    started = time.perf_counter()
    status, err = run(["audit", "--dry-run", "--samples", "100000000", "--model", "fake",
                       "--out", str(tmp_path / "run")], capsys)
    assert_one_error(status, err, "field 'samples': Input should be less than or equal to 1000")
    assert time.perf_counter() - started < 10  # refused before any planning


def test_dry_run_of_a_28_million_call_design_is_arithmetic(tmp_path, capsys):
    """306 questions x (5 no-memory baselines + 92 stimuli x 1000 samples) = 28,153,530 calls;
    the old plan built every request (minutes, gigabytes)."""
    started = time.perf_counter()
    status = main(["audit", "--dry-run", "--samples", "1000", "--model", "fake",
                   "--out", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert status == 0
    assert "306 questions x 93 stimuli" in out and "= 28153530 responses" in out
    assert "28,153,530 calls to make, 0 cached" in out
    assert "at most 57,658,429,440 completion tokens" in out  # 28,153,530 x 2048
    assert time.perf_counter() - started < 30  # a blow-up takes minutes; slack for load


@pytest.mark.parametrize("overrides", [{"samples": 3, "n_questions": 4},
                                       {"samples": 2, "n_questions": 3, "baselines": 1}])
def test_arithmetic_plan_equals_the_request_by_request_plan(overrides):
    from memlens.audit import load_config, planned_requests
    from memlens.audit.pipeline import planned_request_groups
    from memlens.engine import plan_groups, plan_requests

    config = load_config(None, {"model": "fake", **overrides})
    requests, inputs = planned_requests(config)
    groups, group_inputs = planned_request_groups(config)
    assert plan_groups("fake", groups) == plan_requests("fake", requests)
    assert group_inputs == inputs and sum(copies for _, copies in groups) == len(requests)


# -- fuzz: every command reading a user file keeps the error contract -----------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(["id", "text", "class", "category", "label", "roots",
                                       "symbols", "samples", "extra", "type", "x"]),
                      children, max_size=4),
    max_leaves=12)
documents = st.one_of(
    st.binary(max_size=200),
    json_values.map(json.dumps),
    st.lists(json_values.map(json.dumps), max_size=4).map("\n".join),
    st.integers(min_value=65, max_value=3000).map(lambda depth: "[" * depth + "]" * depth),
    st.integers(min_value=4301, max_value=6000).map(lambda digits: '{"id": ' + "7" * digits + "}"),
    st.text(max_size=200),
)
FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.mark.parametrize("command", ["questions list", "questions filter", "stimuli list",
                                     "ontology show", "label", "tooldrift score",
                                     "audit config", "chat schema", "mitigate config"])
@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_fuzzed_user_files_keep_the_error_contract(command, suffix, tmp_path, capsys):
    @FUZZ
    @given(content=documents)
    def check(content):
        if command in ("questions list", "questions filter", "stimuli list", "label",
                       "tooldrift score") and suffix == ".yaml":
            return  # JSON-lines readers: the suffix does not matter, one run is enough
        path = write(tmp_path, "in" + suffix, content)
        status, err = run(file_commands(tmp_path, path)[command], capsys)
        assert "Traceback" not in err
        assert status in (0, 2), err
        if status == 2:
            lines = [line for line in err.splitlines() if line.strip()]
            assert len(lines) == 1 and lines[0].startswith("memlens: error:"), err

    check()


@FUZZ
@given(content=st.one_of(st.binary(max_size=200), st.text(max_size=200),
                         st.lists(st.sampled_from(["question_id", "condition_class", "category",
                                                   "dtw", "control", "noise", "no_perturbation",
                                                   "filler", "1e300", "nan", "0.5", "-1", ""]),
                                  max_size=40).map(lambda cells: "\n".join(
                                      ",".join(cells[i:i + 4]) for i in range(0, len(cells), 4)))))
def test_fuzzed_drift_tables_keep_the_error_contract(content, tmp_path_factory, capsys):
    tmp_path = tmp_path_factory.mktemp("analyze")
    path = write(tmp_path, "d.csv", content)
    status, err = run(["analyze", path, "--out", str(tmp_path / "o"), "--bootstrap", "100"],
                      capsys)
    assert "Traceback" not in err
    assert status in (0, 2), err
    if status == 2:
        assert [line for line in err.splitlines() if line.strip()][0].startswith("memlens: error:")
