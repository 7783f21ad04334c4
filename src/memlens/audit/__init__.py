"""The reasoning-drift audit: questions x memory conditions -> drift rows -> statistics;
``load_audit_run`` reads a run back for ``memlens.report`` (which this package never imports).

Stages run over one run store (``memlens.store.RunStore``); each skips work already stored.
"""

from memlens.audit.config import PRESETS, AuditConfig, build_config, load_config, read_config_file
from memlens.audit.design import Cell, cell_id, design_cells, sample_seed
from memlens.audit.drift import DRIFT_COLUMNS, drift_pairs, score_pairs, symbol_sequence
from memlens.audit.pipeline import AuditResult, drift_frame, planned_requests, run_audit
from memlens.audit.quality import data_quality
from memlens.audit.results import AuditRun, load_audit_run

__all__ = [
    "DRIFT_COLUMNS",
    "PRESETS",
    "AuditConfig",
    "AuditResult",
    "AuditRun",
    "Cell",
    "build_config",
    "cell_id",
    "data_quality",
    "design_cells",
    "drift_frame",
    "drift_pairs",
    "load_audit_run",
    "load_config",
    "planned_requests",
    "read_config_file",
    "run_audit",
    "sample_seed",
    "score_pairs",
    "symbol_sequence",
]
