"""Exit statuses of model-calling commands: 3 = finished with failed calls, 4 = stopped early
by the circuit breaker, 2 = bad input (flags validated)."""

import time

import pytest

from memlens.cli.main import main
from memlens.models.loopback import LoopbackServer


def audit_args(server, out, *extra):
    # the quick preset on one question: one call per stimulus + 1 extra no-memory sample
    return ["audit", "--model", f"openai:m@{server.base_url}", "--labeler", "fake",
            "--preset", "quick", "--n-questions", "1", "--bootstrap", "100", "--no-progress",
            "--out", str(out), *extra]


def test_finished_audit_with_a_failed_call_exits_3(tmp_path, capsys):
    with LoopbackServer(faults=["400"]) as server:
        status = main(audit_args(server, tmp_path / "run", "--timeout", "5", "--attempts", "2"))
        calls = len(server.requests)
    assert status == 3 and calls >= 12
    assert (f"finished, but 1 of {calls} calls failed; re-run the same command"
            in capsys.readouterr().err)


def test_audit_against_a_hanging_server_stops_fast_with_exit_4(tmp_path, capsys):
    started = time.monotonic()
    with LoopbackServer(faults=lambda index, body: "hang", hang_s=30) as server:
        status = main(audit_args(server, tmp_path / "run", "--timeout", "0.3", "--attempts", "2"))
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert status == 4
    assert "stopped sending calls: 10 of the last 10 calls failed" in err
    assert "timeout after 0.3s" in err and "re-run the same command to resume" in err
    assert elapsed < 0.3 * 2 + 0.5 + 8  # one round of concurrent calls plus audit start-up


@pytest.mark.parametrize("flags", [["--timeout", "0"], ["--timeout", "inf"], ["--timeout", "x"],
                                   ["--attempts", "0"], ["--attempts", "1.5"]])
def test_timeout_and_attempts_are_validated(flags, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", "--model", "fake", "--out", str(tmp_path / "run"), *flags])
    assert exit_info.value.code == 2
    assert flags[0] in capsys.readouterr().err


def subparser(parser, path):
    import argparse

    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


@pytest.mark.parametrize("command", [
    "audit", "chat", "tooldrift run", "questions filter", "questions orthogonality",
    "mitigate references", "mitigate sympref", "mitigate eval", "label", "ontology refine",
    "ontology robustness"])
def test_every_model_calling_command_takes_the_flags(command):
    from memlens.cli.main import build_parser

    parser = subparser(build_parser(), command.split())
    options = {a.dest: a.option_strings for a in parser._actions}
    assert options["call_timeout"] == ["--timeout"] and options["call_attempts"] == ["--attempts"]
    build = subparser(build_parser(), ["tooldrift", "build"])  # --attempts: per scenario there
    assert {a.dest: a.option_strings for a in build._actions}["call_attempts"] == ["--call-attempts"]
