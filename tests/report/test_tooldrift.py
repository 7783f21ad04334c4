"""The tool-drift report (``memlens.report.tooldrift``): rendered from the run directory after the
pipeline, model text escaped, the table's cells as computed by hand, and the CLI writing it."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tooldrift"))
from tooldrift_fakes import DATA, drifting_agent  # noqa: E402

from memlens.cli.main import main  # noqa: E402
from memlens.models import FakeModel  # noqa: E402
from memlens.report.tooldrift import format_table, render_html, write_tooldrift_report  # noqa: E402
from memlens.tooldrift import bundled_path  # noqa: E402
from memlens.tooldrift.runner import RunConfig, run_tooldrift  # noqa: E402


def test_model_text_is_escaped_in_the_html_report(tmp_path):
    attack = "<script>alert('x')</script>"
    run_tooldrift(FakeModel([attack]), DATA, tmp_path, RunConfig(k=1, limit=1, n_bootstrap=20),
                  progress=False)
    html, text = write_tooldrift_report(tmp_path)
    page = html.read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert text.read_text().startswith("group ")


def test_report_from_the_run_directory_equals_the_report_of_the_returned_summary(tmp_path):
    summary = run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                            RunConfig(k=2, limit=3, n_bootstrap=50), progress=False)
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    html, text = write_tooldrift_report(tmp_path)  # reads tooldrift.json and calls.jsonl back
    assert html.read_text() == render_html(summary, calls)
    assert text.read_text() == format_table(summary) + "\n"
    # 3 scenarios, every neutral call at the best end and every biased one at the worst:
    # r_neutral 0, r_biased 1, Δ +1 with a degenerate interval; 18 calls, none without a call
    overall = format_table(summary).splitlines()[2].split()
    assert overall[:8] == ["overall", "3", "0.000", "1.000", "+1.000", "[+1.000,", "+1.000]",
                           "0.25"]  # exact Wilcoxon p of 3 positive differences: 2 / 8
    assert overall[-3:] == ["0/18", "[0.00,", "0.18]"]  # Wilson upper bound 3.84 / 21.84


def test_tooldrift_score_cli_writes_json_html_and_text(tmp_path, capsys):
    run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path / "run",
                  RunConfig(k=1, limit=2, n_bootstrap=20), progress=False)
    status = main(["tooldrift", "score", "--rubrics", str(bundled_path() / "rubrics"),
                   "--calls", str(tmp_path / "run" / "calls.jsonl"), "--out",
                   str(tmp_path / "scored"), "--bootstrap", "20"])
    assert status == 0
    printed = capsys.readouterr().out
    for name in ("tooldrift.json", "tooldrift.html", "tooldrift.txt"):
        assert (tmp_path / "scored" / name).stat().st_size > 0
    assert (tmp_path / "scored" / "tooldrift.txt").read_text() in printed
    assert "<h2>Calls</h2>" in (tmp_path / "scored" / "tooldrift.html").read_text()
