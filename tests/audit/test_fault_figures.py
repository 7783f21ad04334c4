"""A reduced run of ``benchmarks/bench_faults.py``: Ctrl-C mid-generation exits 130, the same
command resumes it to the uninterrupted run's drift table, paying twice only calls in flight."""

import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
import bench_faults  # noqa: E402


def test_sigint_mid_generation_exits_130_and_resumes_exactly(tmp_path):
    inputs = bench_faults.write_inputs(tmp_path, 2)  # 16 generation calls
    reference = bench_faults.reference_run(tmp_path, inputs, 0.05)
    assert (reference["gen"], len(reference["table"])) == (16, 14)
    row = bench_faults.one_kill(tmp_path, inputs, 0.05, reference, ("G", 6), signal.SIGINT,
                                "sigint")
    assert not row["finished_first"]
    assert row["first_code"] == 130, row["first_err"]
    assert 6 <= row["gen_before"] < 16
    assert row["resumed_code"] == 0, row["resumed_err"]
    assert row["gen_distinct"] == 16
    assert row["gen_twice"] <= row["in_flight"] <= 4
    assert row["table_equal"] and row["stats_equal"]
