"""The run store: one SQLite file (WAL) per run directory — manifest, request cache, failures,
generic stage tables — with export to Parquet / CSV / JSONL. See docs/run-store.md."""

from memlens.store.hashing import file_sha256
from memlens.store.runstore import DB_NAME, RunStore, StoreWriteError

__all__ = ["DB_NAME", "RunStore", "StoreWriteError", "file_sha256"]
