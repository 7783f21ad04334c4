"""The typed tool-drift summary: ``to_dict()`` is the written ``tooldrift.json`` byte for byte,
``from_dict`` reads it back to an equal object, and a foreign file is one clear error."""

import json

import pytest
from test_frameworks import StubClient
from tooldrift_fakes import DATA, drifting_agent

from memlens.errors import MemlensError
from memlens.models import FakeModel
from memlens.tooldrift.frameworks import FrameworkMemory
from memlens.tooldrift.results import (
    Attribution,
    Estimate,
    PairedTest,
    Proportion,
    ToolDriftSummary,
    parse_summary,
)
from memlens.tooldrift.runner import RunConfig, run_tooldrift
from memlens.tooldrift.summary import read_summary


def judge(messages, params):
    return json.dumps({"score": 4 if "biased" in messages[0]["content"] else 2,
                       "justification": "x"})


@pytest.fixture(scope="module")
def framework_run(tmp_path_factory):
    """A Setting-2 run through a stub framework with a judge: every optional section filled."""
    out = tmp_path_factory.mktemp("run")
    memory = FrameworkMemory("stub", StubClient(), threshold=0.0, limit=2)
    summary = run_tooldrift(FakeModel(drifting_agent), DATA, out,
                            RunConfig(k=2, limit=4, setting=2, framework="stub", n_bootstrap=50),
                            memory, judge=FakeModel(judge), progress=False)
    return summary, out / "tooldrift.json"


def test_to_dict_is_the_written_file_and_from_dict_reads_it_back(framework_run):
    summary, path = framework_run
    text = path.read_text()
    assert json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n" == text
    again = read_summary(path.parent)
    assert again == summary
    assert json.dumps(again.to_dict(), indent=2, ensure_ascii=False) + "\n" == text
    # every optional section is present in this run, in the documented order
    assert list(summary.to_dict())[-5:] == ["counts", "settings", "scenarios", "run",
                                            "deflection"]
    retrieval = summary.to_dict()["retrieval"]
    assert list(retrieval)[:2] == ["neutral", "biased"] and "items_retrieved" in retrieval
    assert summary.counts.failed_calls == 0 and summary.run.memory == "framework:stub"


def test_groups_are_in_report_order(framework_run):
    summary, _ = framework_run
    labels = [label for label, _ in summary.groups()]
    assert labels[0] == "overall"
    assert labels[1:] == ([f"dim: {d}" for d in summary.by_dimension]
                          + [f"domain: {d}" for d in summary.by_domain])
    assert len(labels) == 1 + len(summary.by_dimension) + len(summary.by_domain)


def test_parts_serialise_with_optional_keys_only_when_set():
    assert PairedTest("t", 1, 0.5, note="undefined").to_dict() == {
        "test": "t", "n": 1, "mean_difference": 0.5, "wilcoxon_statistic": None,
        "wilcoxon_p": None, "t_statistic": None, "t_p": None, "note": "undefined"}
    assert "note" not in PairedTest("t", 3, 0.5, 1.0, 0.25, 2.0, 0.1).to_dict()
    assert Estimate(2, 0.5, (0.25, 0.75), 0.04).to_dict() == {
        "n": 2, "estimate": 0.5, "ci95": [0.25, 0.75], "bootstrap_p": 0.04}
    assert Attribution(False, "verbatim").to_dict() == {"applicable": False, "note": "verbatim"}
    assert Proportion.from_dict({"k": 1, "n": 4, "rate": 0.25, "ci95": [0.05, 0.7]}).ci95 == (
        0.05, 0.7)


def test_a_foreign_file_is_one_error_naming_the_key(framework_run, tmp_path):
    summary, _ = framework_run
    data = summary.to_dict()
    del data["by_dimension"]
    with pytest.raises(MemlensError, match=r"x.json: .*missing key 'by_dimension'"):
        parse_summary(data, "x.json")
    with pytest.raises(MemlensError, match=r"unknown key 'colour'"):
        parse_summary({**summary.to_dict(), "colour": 1}, "x.json")
    with pytest.raises(MemlensError, match="expected a JSON object"):
        parse_summary([1], "x.json")
    broken = summary.to_dict()
    broken["ci"] = 3
    with pytest.raises(MemlensError, match="malformed value"):
        parse_summary(broken, "x.json")
    (tmp_path / "tooldrift.json").write_text("{}")
    with pytest.raises(MemlensError, match="missing key 'metric'"):
        read_summary(tmp_path)
    assert isinstance(ToolDriftSummary.from_dict(summary.to_dict()), ToolDriftSummary)
