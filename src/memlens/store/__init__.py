"""The run store: one SQLite file (WAL) per run directory — manifest, request cache, failures,
generic stage tables — with export to Parquet / CSV / JSONL. See docs/run-store.md."""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "DB_NAME": "runstore",
    "RunStore": "runstore",
    "StoreWriteError": "runstore",
    "export_run": "export",
    "export_table": "export",
    "file_sha256": "hashing",
    "to_dataset": "export",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
