"""``memlens report RUN`` reads the run store read-only: it succeeds while another process
holds the run directory for writing (e.g. an audit still running) and writes nothing to it."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from memlens.audit.pipeline import STATS_TABLE, run_stats
from memlens.cli.main import main
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import scripted  # noqa: E402

HOLDER = textwrap.dedent("""
    import sys, time
    from memlens.store import RunStore
    store = RunStore(sys.argv[1])
    print("holding", flush=True)
    time.sleep(60)
""")


def _contents(run_dir: Path) -> dict:
    """Manifest and every stage table of a run store."""
    with RunStore(run_dir, read_only=True) as store:
        return {"manifest": store.read_manifest(),
                **{table: store.rows(table) for table in store.tables()}}


def test_report_while_another_process_holds_the_run(tmp_path, capsys):
    run_dir = tmp_path / "run"
    config, _ = scripted.run_scripted_audit(tmp_path, run_dir)
    with RunStore(run_dir) as store:  # as if the audit were still before its statistics
        store.delete_table(STATS_TABLE)
    before = _contents(run_dir)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        assert main(["report", str(run_dir)]) == 0
    finally:
        holder.kill()
        holder.wait()
    assert capsys.readouterr().out.strip() == f"report: {run_dir / 'report.html'}"
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "computed now from the current drift table" in html
    assert _contents(run_dir) == before  # nothing written, the statistics not stored
    reported = json.loads((run_dir / "stats.json").read_text())
    with RunStore(run_dir) as store:  # the holder is gone: the writing path, for comparison
        stored, _ = run_stats(store, config)
    assert reported == stored.to_json()
    assert reported["metrics"]["dtw"]["categories"]["age"]["n"] == 4
