"""``run_gate``: load the runs a policy needs, compare them paired, evaluate the rules."""

from __future__ import annotations

from pathlib import Path

from memlens.audit.results import load_audit_run
from memlens.errors import MemlensError
from memlens.gate.policy import Policy
from memlens.gate.rules import GateResult, RunStats, evaluate
from memlens.tooldrift.results import parse_summary


def run_gate(policy: Policy, run_dir: str | Path | None = None, *,
             baseline_dir: str | Path | None = None, tooldrift_dir: str | Path | None = None,
             tooldrift_baseline_dir: str | Path | None = None) -> GateResult:
    """Read the audit run (and baseline) through read-only stores and the tool-drift summaries,
    build the paired comparisons the rules need, and evaluate (``memlens.gate.rules``)."""

    if baseline_dir is not None and run_dir is None:
        raise MemlensError("gate: --baseline needs an audit RUN to compare with it")
    if tooldrift_baseline_dir is not None and tooldrift_dir is None:
        raise MemlensError("gate: --tooldrift-baseline needs --tooldrift DIR")
    policy = policy.with_inputs(baseline=baseline_dir is not None,
                                tooldrift_baseline=tooldrift_baseline_dir is not None)
    labels: dict[str, str] = {}
    stats = baseline_stats = comparison = summary = td_comparison = None
    if run_dir is not None:
        from memlens.audit.compare import compare_audits  # lazy: pulls scipy

        run = load_audit_run(run_dir)
        labels["run"] = str(run_dir)
        stats = RunStats(run.stats, run.stats_error or "")
        if baseline_dir is not None:
            base = load_audit_run(baseline_dir)
            labels["baseline"] = str(baseline_dir)
            baseline_stats = RunStats(base.stats, base.stats_error or "")
            if policy.max_regression is not None:
                comparison = compare_audits(base, run, labels=(labels["baseline"], labels["run"]),
                                            seed=policy.seed, n_bootstrap=policy.n_bootstrap)
    if tooldrift_dir is not None:
        from memlens.tooldrift.compare import compare_tooldrift, load_summary  # lazy: pulls scipy

        document = load_summary(tooldrift_dir)
        labels["tooldrift"] = str(tooldrift_dir)
        if policy.max_tooldrift_delta is not None:  # the Δ rule reads the typed groups
            summary = parse_summary(document, str(tooldrift_dir))
        if tooldrift_baseline_dir is not None:  # the comparison reads only the scenarios
            td_comparison = compare_tooldrift(
                load_summary(tooldrift_baseline_dir), document,
                labels=(str(tooldrift_baseline_dir), str(tooldrift_dir)), seed=policy.seed,
                n_bootstrap=policy.n_bootstrap)
    return evaluate(policy, run=stats, baseline=baseline_stats, comparison=comparison,
                    tooldrift=summary, tooldrift_comparison=td_comparison, labels=labels)
