"""``import_inspect_log(log, run_dir)``: an inspect run of ``memlens/reasoning_drift`` as a
memlens run directory (and ``import_tooldrift_log``: ``memlens/tool_drift`` as a ``memlens
tooldrift run`` directory, through ``run_tooldrift`` the same way) — the same store, stage tables, drift table and statistics as
``memlens audit``, so ``memlens report``, ``compare``, ``gate`` and ``plan --pilot`` work on it.

The log is not re-analysed by a copy of the pipeline: its replies are served to memlens's own
``run_audit`` (``memlens.inspect_ext.replay.LoggedReplies``), which caches them, splits them into
steps, labels, pairs, scores drift and computes the statistics as for any audit. The scorer's
labels are stored first, keyed by the digest of the steps they label, so the labeler is called
only for responses the scorer could not label. Re-importing the same log resumes (nothing is
recomputed); a run directory holding another audit is refused, as ``memlens audit`` refuses it.
"""

from __future__ import annotations

from pathlib import Path

from memlens.audit.labels import LABELS_TABLE
from memlens.audit.pipeline import check_manifest, plan_cells, run_audit
from memlens.errors import MemlensError
from memlens.inspect_ext.logread import LoggedAudit, read_audit_log
from memlens.inspect_ext.replay import LoggedReplies
from memlens.rowkeys import join_key
from memlens.store import RunStore
from memlens.tooldrift.loader import load_dataset
from memlens.tooldrift.schema import CONDITIONS

INPUT_HASHES = ("questions_sha256", "stimuli_sha256", "ontology_sha256", "memory_template_sha256")
TOOLDRIFT_HASHES = ("entries_sha256", "rubrics_sha256")


def check_design(logged: LoggedAudit, planned_ids: list[str], inputs: dict,
                 keys: tuple[str, ...] = INPUT_HASHES) -> None:
    """Refuse a log whose inputs or cells are not the design memlens plans from its settings
    (changed question / stimulus / data files, samples left out with ``--limit``…)."""
    changed = [key for key in keys if logged.inputs.get(key) != inputs.get(key)]
    if changed:
        raise MemlensError(f"{logged.path}: the inputs differ from those the eval used "
                           f"({', '.join(changed)}): run the import where the task's question / "
                           "stimulus / ontology / data files are the same")
    planned, present = set(planned_ids), set(logged.cell_ids)
    if present - planned:
        extra = sorted(present - planned)
        raise MemlensError(f"{logged.path}: {len(extra)} samples are not cells of the design "
                           f"(first: {extra[0]!r})")
    if planned - present:
        raise MemlensError(f"{logged.path} holds {len(present)} of the design's {len(planned)} "
                           "cells (run without --limit / --sample-id, or finish it with inspect "
                           "eval-retry); memlens needs whole questions")


def import_inspect_log(log: str | Path | LoggedAudit, run_dir: str | Path, *,
                       progress: bool = True):
    """Import a ``memlens/reasoning_drift`` log (a path, or the log already read) into
    ``run_dir``; returns memlens's ``AuditResult`` (a ``memlens/tool_drift`` log: MemlensError
    pointing to :func:`import_tooldrift_log`)."""

    logged = log if isinstance(log, LoggedAudit) else read_audit_log(log)
    log_path = logged.path
    if logged.kind != "reasoning_drift":
        raise MemlensError(f"{log_path} is a memlens/tool_drift log: import it with "
                           "import_tooldrift_log (memlens import-inspect does this by itself)")
    model = LoggedReplies(logged)
    config = logged.config.model_copy(update={"model": model.model_id})
    cells, inputs = plan_cells(config)
    check_design(logged, [cell.id for cell in cells], inputs)
    with RunStore(run_dir) as store:
        check_manifest(store, config, inputs, run_dir)  # before anything is written
        store.write_manifest({"inspect": {"log": str(Path(log_path).resolve()),
                                          **logged.eval_info}})
        if logged.labels:
            store.put_rows(LABELS_TABLE, logged.labels)
    return run_audit(config, run_dir, progress=progress, model=model)


def import_tooldrift_log(logged: LoggedAudit, run_dir: str | Path, *,
                         progress: bool = True):
    """Import a read ``memlens/tool_drift`` log into ``run_dir`` through ``run_tooldrift``;
    returns its summary (``memlens.tooldrift.results.ToolDriftSummary``, ``tooldrift.json``)."""
    # lazy: pulls scipy
    from memlens.tooldrift.runner import RunConfig, dataset_inputs, run_tooldrift, select_entries

    settings = dict(logged.config)
    dataset = load_dataset(settings.pop("data", None))
    config = RunConfig(**settings)
    planned = [join_key(entry.id, condition, k) for entry in select_entries(dataset, config.limit)
               for condition in CONDITIONS for k in range(config.k)]
    check_design(logged, planned, dataset_inputs(dataset), TOOLDRIFT_HASHES)
    summary = run_tooldrift(LoggedReplies(logged), dataset, run_dir, config, progress=progress)
    with RunStore(run_dir) as store:  # after run_tooldrift accepted the run directory
        store.write_manifest({"inspect": {"log": str(Path(logged.path).resolve()),
                                          **logged.eval_info}})
    return summary
