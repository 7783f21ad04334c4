"""Defaults that cannot hurt (issue 25): a run estimated to take more than an hour is not started
unasked, ``--dry-run`` needs no run directory and prints the estimated time, and
``--control-set`` stays within ``--n-questions``."""

from memlens.cli.main import main


def test_dry_run_needs_no_run_directory_and_prints_the_time(capsys):
    # the README's example, verbatim (it failed: --out was required)
    assert main(["audit", "--preset", "paper", "--model", "vllm:Qwen/Qwen3-4B", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "28,764 calls to make" in out
    assert "time: 28,764 calls, at most 58,908,672 completion" in out and "assumed" in out


def test_a_run_needs_its_directory(capsys):
    assert main(["audit", "--preset", "quick"]) == 2
    assert "--out RUN_DIR is required" in capsys.readouterr().err


def test_the_full_benchmark_is_not_started_unasked(tmp_path, capsys):
    # the README tour line without a preset: 29,682 calls of <= 2,048 tokens on the embedded
    # model, days of CPU; stdin is not a terminal under pytest: refused, with the numbers
    run_dir = tmp_path / "sys"
    assert main(["audit", "--mode", "system", "--out", str(run_dir), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlens: error: this audit: 29,682 calls, at most 60,788,736 "
                          "completion + ~")
    assert "days" in err and "--yes" in err and "--dry-run" in err
    assert not (run_dir / "memlens.sqlite").exists()  # nothing was started


def test_a_short_run_is_not_asked_about(tmp_path):
    from memlens.audit import load_config
    from memlens.cli.audit_cmd import confirm_audit

    confirm_audit(load_config(None, {}, preset="quick"), str(tmp_path / "q"), yes=False)  # ~8-15 min


def test_yes_starts_a_long_run(monkeypatch, tmp_path):
    import memlens.audit as audit

    started = []
    monkeypatch.setattr(audit, "run_audit", lambda *args, **kwargs: started.append(args)
                        or (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["audit", "--mode", "system", "--out", str(tmp_path / "y"), "--yes"]) == 130
    assert len(started) == 1


def test_control_set_respects_n_questions():
    from memlens.audit import load_config
    from memlens.audit.control_set import control_cells
    from memlens.stimuli import load_stimuli

    config = load_config(None, {"n_questions": 2, "control_set": "should-personalize"})
    cells = control_cells(config, load_stimuli())
    assert 0 < len({cell.question.id for cell in cells}) <= 2  # was all 52 questions (+111 calls)
    everything = control_cells(load_config(None, {"control_set": "should-personalize"}),
                               load_stimuli())
    assert len({cell.question.id for cell in everything}) == 52


def test_confirmation_on_a_terminal(monkeypatch):
    import io

    import pytest

    from memlens.cli import confirm
    from memlens.errors import MemlensError
    from memlens.models.throughput import Throughput

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(confirm.sys, "stdin", Terminal("n\n"))
    monkeypatch.setattr(confirm.sys, "stderr", Terminal())
    slow = Throughput(1.0, "test")
    with pytest.raises(MemlensError, match="not started"):
        confirm.confirm_long_run("this run", 10, 10_000, 0, slow, yes=False, smaller="smaller")
    monkeypatch.setattr(confirm.sys, "stdin", Terminal("y\n"))
    confirm.confirm_long_run("this run", 10, 10_000, 0, slow, yes=False, smaller="smaller")
    assert "10 calls, at most 10,000 completion" in confirm.sys.stderr.getvalue()


def test_estimates_are_stated_per_backend():
    from memlens.models.throughput import expected_throughput

    assert expected_throughput("embedded", threads=2, replicas=1).tokens_per_s == 75.0
    assert expected_throughput("embedded", threads=1, replicas=2).tokens_per_s == 90.0
    assert expected_throughput("anthropic:claude-x").tokens_per_s == 16 * 50.0
    assert expected_throughput("fake").seconds(10**9) == 0.0
