"""The reasoning-drift audit: questions x memory conditions -> drift rows -> statistics;
``load_audit_run`` reads a run back for ``memlens.report`` (which this package never imports).

Stages run over one run store (``memlens.store.RunStore``); each skips work already stored.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "AuditConfig": "config",
    "AuditResult": "pipeline",
    "AuditRun": "results",
    "Cell": "design",
    "DRIFT_COLUMNS": "drift",
    "Explorer": "explore",
    "PRESETS": "config",
    "build_config": "config",
    "cell_id": "design",
    "compare_audits": "compare",
    "data_quality": "quality",
    "design_cells": "design",
    "drift_frame": "pipeline",
    "drift_pairs": "drift",
    "explore": "explore",
    "load_audit_run": "results",
    "load_config": "config",
    "planned_requests": "pipeline",
    "read_config_file": "config",
    "run_audit": "pipeline",
    "sample_seed": "design",
    "score_pairs": "drift",
    "symbol_sequence": "drift",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
