"""Statistics of memory-induced drift (SPEC §1.7): drift-table loading, noise floor, elevation,
d_rel with a vectorised cluster bootstrap, Benjamini–Hochberg, Cohen's d, Welch tests with a
compact letter display, the mixed-effects model, convergence and the instrument-validity verdict.

The generic pieces (``cluster_bootstrap``, ``benjamini_hochberg``, ``cohen_d``, …) are reused by
the audit and the tool-drift benchmark.
"""

from memlens.stats.analyze import analyze, to_jsonable
from memlens.stats.bootstrap import (
    BootstrapEstimate,
    bootstrap_p_value,
    cluster_bootstrap,
    cluster_sums,
    d_rel,
    draw_cluster_counts,
    elevation_pct,
    mean_difference,
    summarize_replicates,
)
from memlens.stats.effects import cohen_d, paired_cluster_t_test, welch_t_test
from memlens.stats.letters import compact_letters
from memlens.stats.mixed import fit_mixed_model
from memlens.stats.multiple import benjamini_hochberg
from memlens.stats.pairwise import pairwise_welch
from memlens.stats.results import AuditStats, DriftStats, parse_stats
from memlens.stats.summary import format_summary
from memlens.stats.table import load_drift_table, metric_columns, validate_drift_table
from memlens.stats.validity import convergence, validity_verdict

__all__ = [
    "AuditStats",
    "DriftStats",
    "parse_stats",
    "BootstrapEstimate",
    "analyze",
    "benjamini_hochberg",
    "bootstrap_p_value",
    "cluster_bootstrap",
    "cluster_sums",
    "cohen_d",
    "compact_letters",
    "convergence",
    "d_rel",
    "draw_cluster_counts",
    "elevation_pct",
    "fit_mixed_model",
    "format_summary",
    "load_drift_table",
    "mean_difference",
    "metric_columns",
    "paired_cluster_t_test",
    "pairwise_welch",
    "summarize_replicates",
    "to_jsonable",
    "validate_drift_table",
    "validity_verdict",
    "welch_t_test",
]
