"""Statistics of memory-induced drift (SPEC §1.7): drift-table loading, noise floor, elevation,
d_rel with a vectorised cluster bootstrap, Benjamini–Hochberg, Cohen's d, Welch tests with a
compact letter display, the mixed-effects model, convergence and the instrument-validity verdict.

The generic pieces (``cluster_bootstrap``, ``benjamini_hochberg``, ``cohen_d``, …) are reused by
the audit and the tool-drift benchmark.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "AuditStats": "results",
    "BootstrapEstimate": "bootstrap",
    "DriftStats": "results",
    "MeanEstimate": "bootstrap",
    "MemorySets": "memory_sets",
    "Selectivity": "selectivity",
    "analyze": "analyze",
    "benjamini_hochberg": "multiple",
    "bootstrap_mean": "bootstrap",
    "bootstrap_p_value": "bootstrap",
    "cluster_bootstrap": "bootstrap",
    "cluster_sums": "bootstrap",
    "cohen_d": "effects",
    "compact_letters": "letters",
    "compare_memory_sets": "memory_sets",
    "convergence": "validity",
    "d_rel": "bootstrap",
    "draw_cluster_counts": "bootstrap",
    "elevation_pct": "bootstrap",
    "fit_mixed_model": "mixed",
    "format_summary": "summary",
    "load_drift_table": "table",
    "mean_difference": "bootstrap",
    "metric_columns": "table",
    "paired_cluster_t_test": "effects",
    "pairwise_welch": "pairwise",
    "parse_stats": "results",
    "selectivity": "selectivity",
    "summarize_replicates": "bootstrap",
    "to_jsonable": "analyze",
    "validate_drift_table": "table",
    "validity_verdict": "validity",
    "welch_t_test": "effects",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
