"""Bad inputs to every loader the audit reads: one clear message, exit 2, never a traceback."""

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlens.cli.main import main

FIELDS = {
    "questions": ["id", "text", "category", "subcategory", "source", "license"],
    "stimuli": ["id", "class", "category", "text"],
    "ontology": ["name", "version", "roots", "symbols", "id", "root", "definition", "triggers"],
}
values = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.booleans(),
                   st.sampled_from(["control", "noise", "persona", "no_perturbation", "Social"]),
                   st.lists(st.text(max_size=3), max_size=2))


def records(kind):
    return st.lists(st.dictionaries(st.sampled_from(FIELDS[kind]), values, max_size=6),
                    max_size=4)


def file_text(kind):
    as_jsonl = records(kind).map(lambda rows: "".join(json.dumps(r) + "\n" for r in rows))
    as_json = st.dictionaries(st.sampled_from(FIELDS[kind]), values, max_size=5).map(json.dumps)
    return st.one_of(as_jsonl, as_json, st.text(max_size=120))


def run_cli(capsys, argv) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    return code, err


def check(code: int, err: str) -> None:
    assert "Traceback" not in err
    if code != 0:
        assert code == 2
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("memlens: error: "), err


@pytest.mark.parametrize("kind,flag,suffix", [("questions", "--questions", ".jsonl"),
                                              ("stimuli", "--stimuli", ".jsonl"),
                                              ("ontology", "--ontology", ".json")])
def test_fuzz_loaders_through_the_cli(kind, flag, suffix, tmp_path_factory, capsys):
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text=file_text(kind))
    def inner(text):
        path = tmp_path_factory.mktemp(kind) / f"input{suffix}"
        path.write_text(text, encoding="utf-8")
        code, err = run_cli(capsys, ["audit", "--model", "fake", "--n-questions", "2", flag,
                                     str(path), "--out", str(path.parent / "run"), "--dry-run"])
        check(code, err)

    inner()


def test_fuzz_config_through_the_cli(tmp_path_factory, capsys):
    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(text=st.one_of(st.text(max_size=80), st.dictionaries(
        st.sampled_from(["samples", "mode", "seed", "model", "typo", "preset"]), values,
        max_size=4).map(json.dumps)))
    def inner(text):
        path = tmp_path_factory.mktemp("cfg") / "audit.json"
        path.write_text(text, encoding="utf-8")
        code, err = run_cli(capsys, ["audit", "--config", str(path), "--model", "fake",
                                     "--n-questions", "2", "--out", str(path.parent / "r"),
                                     "--dry-run"])
        check(code, err)

    inner()


def test_fuzz_drift_tables_through_analyze(tmp_path_factory, capsys):
    cols = st.sampled_from(["question_id", "condition_class", "category", "dtw", "sri", "x"])

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(header=st.lists(cols, min_size=1, max_size=6),
           rows=st.lists(st.lists(st.one_of(st.text(max_size=6).filter(
               lambda s: "," not in s and "\n" not in s and "\r" not in s and '"' not in s),
               st.floats(0, 1).map(str), st.sampled_from(["control", "noise",
                                                          "no_perturbation"])),
               min_size=1, max_size=6), max_size=6))
    def inner(header, rows):
        path = tmp_path_factory.mktemp("drift") / "drift.csv"
        path.write_text("\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n")
        code, err = run_cli(capsys, ["analyze", str(path), "--out", str(path.parent / "o"),
                                     "--bootstrap", "100"])
        check(code, err)

    inner()


@pytest.mark.parametrize("argv", [
    ["audit", "--config", "{missing}", "--out", "{out}"],
    ["audit", "--questions", "{bad}", "--model", "fake", "--out", "{out}", "--dry-run"],
    ["report", "{out}"],
])
def test_real_process_exit_code(argv, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1", "text": 5}\n')
    argv = [a.format(missing=tmp_path / "nope.yaml", out=tmp_path / "run", bad=bad) for a in argv]
    done = subprocess.run([sys.executable, "-m", "memlens.cli.main", *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("memlens: error: ") and done.stderr.count("\n") == 1


def test_dry_run_needs_no_key_or_backend(tmp_path, capsys, monkeypatch):
    """Planning a paper-size audit of an API or vLLM model works on a laptop: no key, no GPU."""
    from memlens.cli.main import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for model in ("openai:gpt-4.1-mini", "vllm:Qwen/Qwen3-4B"):
        assert main(["audit", "--preset", "paper", "--model", model, "--dry-run",
                     "--out", str(tmp_path / "run")]) == 0
        out = capsys.readouterr().out
        assert f"audit of {model}" in out and "calls to make, 0 cached" in out
    assert not (tmp_path / "run").exists()  # a plan writes nothing
