"""``RunStore``: the single SQLite file (WAL) that holds everything one run produces.

Layout of ``run_dir/memlens.sqlite``: ``manifest`` (name -> JSON), ``responses`` (the request
cache), ``failures`` (calls that failed for good, retried by the next run) and one
``stage_<name>`` table per generic stage table (key -> JSON row).

Durability: WAL with ``synchronous=NORMAL``. Every committed transaction survives the process
being killed (SIGKILL, Ctrl-C, a crash): the WAL is written before COMMIT returns and SQLite
recovers it on the next open. Only an operating-system crash or power cut can lose the last few
commits (never corrupt the file); for a request cache that costs at most re-paying those calls,
while ``FULL`` would add an fsync to every commit. The WAL is checkpointed into the main file
every ``CHECKPOINT_EVERY_COMMITS`` commits or ``CHECKPOINT_EVERY_SECONDS`` (PASSIVE, never
waits) and truncated on close, so the main file grows during a run.

Safety: a new store is built under a temporary name and renamed into place, so
``memlens.sqlite`` is always a complete store carrying the memlens marker
(``PRAGMA application_id``). An existing file that is empty, not SQLite, or SQLite without the
marker / memlens's tables is refused with a ``MemlensError`` — never silently replaced by a new
run. A failed write (disk full, I/O error) is a ``StoreWriteError`` naming the run directory;
everything committed before stays.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlens import __version__
from memlens.errors import MemlensError
from memlens.fileio import fsync_directory
from memlens.models.base import ChatRequest, ChatResponse, ModelCallError
from memlens.store import lock
from memlens.store.encoding import (
    RESERVED_TABLES,
    check_table_name,
    redact_mapping,
    redact_text,
    to_json,
)
from memlens.store.rowtypes import check_row, damaged, load_json

_JSON_COLUMNS = frozenset({"messages", "params", "response", "value"})
"""Columns of the built-in tables that hold JSON text."""
DB_NAME = "memlens.sqlite"
SCHEMA_VERSION = 1
APPLICATION_ID = 0x6D6C6E73  # "mlns" in the SQLite header: this file is a memlens run store
CHECKPOINT_EVERY_COMMITS = 100
CHECKPOINT_EVERY_SECONDS = 2.0
_SQLITE_HEADER = b"SQLite format 3\x00"
_MEMLENS_TABLES = frozenset({"manifest", "responses", "failures"})  # stores older than the marker
_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY, model_id TEXT, tag TEXT, sample_index INTEGER, messages TEXT,
    params TEXT, response TEXT NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER,
    latency_s REAL, created_at TEXT);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY, model_id TEXT, tag TEXT, sample_index INTEGER, messages TEXT,
    params TEXT, reason TEXT, attempts INTEGER, created_at TEXT);
"""
_LOOKUP_CHUNK = 500  # stays below SQLite's bound-parameter limit
Outcome = ChatResponse | ModelCallError


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class StoreWriteError(MemlensError):
    """SQLite could not write to the run store (disk full, I/O error, locked); nothing that was
    committed before is lost."""


class RunStore:
    """The run store of one run directory; use as a context manager.

    ``read_only=True`` opens an existing store without taking the run lock (for export or
    inspection while a run is going).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as run_dir, RunStore(run_dir) as store:
    ...     store.put_rows("labels", [{"id": "a", "symbol": "S1"}, {"id": "b", "symbol": "P2"}])
    ...     store.put_rows("labels", [{"id": "a", "symbol": "S3"}])
    ...     store.rows("labels")
    [{'id': 'a', 'symbol': 'S3'}, {'id': 'b', 'symbol': 'P2'}]
    """

    def __init__(self, run_dir: str | Path, *, read_only: bool = False):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / DB_NAME
        self.read_only = read_only
        self._mutex = threading.RLock()  # one connection, shared by the engine's writer thread
        self._lock_token: str | None = None
        self._commits_since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        try:
            self._conn = self._open_read_only() if read_only else self._open_writable()
        except (OSError, sqlite3.Error) as error:  # a name too long, a folder we may not read
            reason = getattr(error, "strerror", None) or " ".join(str(error).split()[:12])
            raise MemlensError(f"cannot open the run store in {_short(self.run_dir)}: "
                               f"{reason}") from None

    # -- opening and closing -------------------------------------------------------------
    def _open_writable(self) -> sqlite3.Connection:
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise MemlensError(f"run directory {self.run_dir} exists and is not a directory")
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._lock_token = lock.acquire(self.run_dir)
        except OSError as error:
            raise MemlensError(f"cannot use run directory {self.run_dir}: "
                               f"{error.strerror or error}") from None
        conn = None
        try:
            if not self.path.exists():
                self._create()
            self._check_file()
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None,
                                   check_same_thread=False)
            self._check_database(conn)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.executescript(_SCHEMA)
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")  # mark an older store
            conn.execute("INSERT OR IGNORE INTO manifest VALUES ('memlens_version', ?), "
                         "('created_at', ?)", (json.dumps(__version__), json.dumps(_now())))
        except BaseException as error:
            if conn is not None:
                conn.close()  # idempotent: _check_database may have closed it already
            lock.release(self._lock_token)
            if isinstance(error, sqlite3.Error | OSError):
                raise MemlensError(f"cannot write the run store {self.path}: {error}") from None
            raise
        return conn

    def _create(self) -> None:
        """Build a complete, marked store under a temporary name, then rename it into place:
        a kill never leaves a half-made ``memlens.sqlite`` (call with the lock held)."""
        building = self.path.with_name(DB_NAME + ".creating")
        for leftover in ("", "-wal", "-shm", "-journal"):  # from a run killed while creating
            Path(f"{building}{leftover}").unlink(missing_ok=True)
        for orphan in ("-wal", "-shm"):  # of a deleted store: SQLite would replay it into ours
            Path(f"{self.path}{orphan}").unlink(missing_ok=True)
        conn = sqlite3.connect(building, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute("INSERT INTO manifest VALUES ('memlens_version', ?), ('created_at', ?)",
                         (json.dumps(__version__), json.dumps(_now())))
        finally:
            conn.close()  # the only connection: checkpoints everything into the file, drops WAL
        os.replace(building, self.path)
        fsync_directory(self.run_dir)

    def _check_file(self) -> None:
        """Refuse an empty or non-SQLite ``memlens.sqlite`` before SQLite touches it."""
        with open(self.path, "rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
        if not header:
            raise MemlensError(
                f"{self.path} is empty (0 bytes), not a memlens run store; refusing to start a "
                "new run over it (its cached responses are gone). Move it away or delete it to "
                "start afresh, or restore it from a backup")
        if header != _SQLITE_HEADER:
            raise MemlensError(f"{self.path} is not a memlens run store (not an SQLite "
                               "database); move it away or choose another run directory")

    def _open_read_only(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise MemlensError(f"no run store in {self.run_dir} (missing {DB_NAME})")
        try:
            self._check_file()
        except OSError as error:
            raise MemlensError(f"cannot read the run store {self.path}: "
                               f"{error.strerror or error}") from None
        conn = sqlite3.connect(self.path.resolve().as_uri() + "?mode=ro", uri=True,
                               timeout=30, isolation_level=None, check_same_thread=False)
        self._check_database(conn)
        return conn

    def _check_database(self, conn: sqlite3.Connection) -> None:
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            marker = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = {name for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as error:
            conn.close()
            raise MemlensError(f"{self.path} is not a memlens run store ({error})") from None
        if version > SCHEMA_VERSION:
            conn.close()
            raise MemlensError(f"{self.path} was written by a newer memlens (store schema "
                               f"{version}, this version reads {SCHEMA_VERSION}); upgrade memlens")
        if marker != APPLICATION_ID and not (marker == 0 and _MEMLENS_TABLES <= tables):
            conn.close()
            found = ", ".join(sorted(tables)) or "none"
            raise MemlensError(
                f"{self.path} is an SQLite database but not a memlens run store (no memlens "
                f"marker or tables; its tables: {found}); refusing to use it — move it away or "
                "choose another run directory")

    def close(self) -> None:
        """Close the connection and release the run-directory lock (idempotent)."""
        with self._mutex:
            if self._conn is not None:
                if not self.read_only:
                    self._checkpoint("TRUNCATE", busy_timeout_ms=1000)
                self._conn.close()
                self._conn = None
            if self._lock_token is not None:
                lock.release(self._lock_token)
                self._lock_token = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open_connection(self) -> sqlite3.Connection:
        """The connection, or MemlensError once closed; call with ``self._mutex`` held."""
        if self._conn is None:
            raise MemlensError(f"run store {self.path} is closed")
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back on any exception. An SQLite error
        (disk full, I/O error…) becomes a ``StoreWriteError`` naming the run directory."""
        with self._mutex:
            conn = self._open_connection()
            if self.read_only:
                raise MemlensError(f"run store {self.path} was opened read-only")
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    _rollback(conn)
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as error:
                _rollback(conn)  # SQLite may already have rolled back a failed COMMIT
                raise self._write_error(error) from None
            self._commits_since_checkpoint += 1
            if (self._commits_since_checkpoint >= CHECKPOINT_EVERY_COMMITS
                    or time.monotonic() - self._last_checkpoint >= CHECKPOINT_EVERY_SECONDS):
                self._checkpoint("PASSIVE")

    def _write_error(self, error: sqlite3.Error) -> StoreWriteError:
        name = getattr(error, "sqlite_errorname", "")
        detail = f"the disk is full ({error})" if name == "SQLITE_FULL" else str(error)
        return StoreWriteError(f"cannot write to the run store in {self.run_dir}: {detail}; "
                               "everything committed before is kept — fix the cause and run "
                               "again to resume")

    def _checkpoint(self, mode: str, busy_timeout_ms: int | None = None) -> None:
        """Copy the WAL into the main file (best effort: the data is safe in the WAL either
        way); call with ``self._mutex`` held."""
        self._commits_since_checkpoint = 0
        self._last_checkpoint = time.monotonic()
        try:
            if busy_timeout_ms is not None:
                self._conn.execute(f"PRAGMA busy_timeout={busy_timeout_ms}")
            self._conn.execute(f"PRAGMA wal_checkpoint({mode})")
        except sqlite3.Error:
            pass

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[tuple]:
        with self._mutex:
            return self._open_connection().execute(sql, tuple(parameters)).fetchall()

    # -- manifest ------------------------------------------------------------------------
    def write_manifest(self, entries: dict[str, Any]) -> None:
        """Merge ``entries`` into the manifest (top-level keys replace earlier values).

        Values under secret-looking names (``api_key``, ``token``, ``password``…) are stored as
        ``"<redacted>"``: secrets never reach the store.
        """
        safe = redact_mapping(dict(entries))
        values = [(str(name), to_json(value, f"manifest entry '{name}'"))
                  for name, value in safe.items()]
        with self._transaction() as conn:
            conn.executemany("INSERT INTO manifest VALUES (?, ?) ON CONFLICT(name) "
                             "DO UPDATE SET value = excluded.value", values)

    def read_manifest(self) -> dict[str, Any]:
        """The whole manifest; always holds ``memlens_version`` and ``created_at``."""
        return {name: load_json(value, self.path, f"manifest entry '{name}'")
                for name, value in self._query("SELECT name, value FROM manifest ORDER BY rowid")}

    # -- request cache -------------------------------------------------------------------
    def get_response(self, key: str) -> ChatResponse | None:
        """The stored response for a cache key, or None (failures are not cache hits)."""
        found = self._query("SELECT response FROM responses WHERE key = ?", (key,))
        return self._response(key, found[0][0]) if found else None

    def cached_responses(self, keys: Iterable[str]) -> dict[str, ChatResponse]:
        """Bulk form of ``get_response``: the stored responses among ``keys``."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, ChatResponse] = {}
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            chunk = wanted[start:start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, text in self._query(
                    f"SELECT key, response FROM responses WHERE key IN ({marks})", chunk):
                found[key] = self._response(key, text)
        return found

    def _response(self, key: str, text: str) -> ChatResponse:
        """A stored response; a torn or edited one is ``StoreDamaged``."""
        where = f"table 'responses', row '{key}'"
        data = load_json(text, self.path, where)
        try:
            return ChatResponse.from_dict(data)
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise damaged(self.path, where, f"not a stored response ({error})") from None

    def put_response(self, key: str, request: ChatRequest, response: ChatResponse, *,
                     model_id: str = "") -> None:
        """Store one response (replacing any earlier failure of the same key)."""
        self.put_results([(key, request, response)], model_id=model_id)

    def put_failure(self, key: str, request: ChatRequest, reason: str, attempts: int, *,
                    model_id: str = "") -> None:
        """Record a call that failed for good. ``attempts`` add up across runs."""
        self.put_results([(key, request, ModelCallError(reason, attempts))], model_id=model_id)

    def put_results(self, results: Iterable[tuple[str, ChatRequest, Outcome]], *,
                    model_id: str = "") -> None:
        """Store many responses / failures in one transaction (the engine's writer uses this).

        If that commit fails (disk full, I/O error), each result is retried in its own
        transaction, so every one that still fits is kept; a ``StoreWriteError`` saying how
        many were kept is raised only if some could not be stored.
        """
        now = _now()
        rows = [_result_row(key, request, outcome, model_id, now)
                for key, request, outcome in results]
        try:
            self._write_result_rows(rows)
        except StoreWriteError as error:
            if len(rows) < 2:
                raise
            kept = 0
            for row in rows:
                try:
                    self._write_result_rows([row])
                    kept += 1
                except StoreWriteError:
                    pass
            if kept < len(rows):
                raise StoreWriteError(f"{error} ({kept} of the {len(rows)} results in the "
                                      "failed commit were then stored one by one)") from None

    def _write_result_rows(self, rows: list[tuple[bool, tuple]]) -> None:
        successes = [values for is_failure, values in rows if not is_failure]
        failures = [values for is_failure, values in rows if is_failure]
        with self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             successes)
            conn.executemany("DELETE FROM failures WHERE key = ?", [(s[0],) for s in successes])
            conn.executemany(
                "INSERT INTO failures VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                "reason = excluded.reason, attempts = failures.attempts + excluded.attempts, "
                "created_at = excluded.created_at", failures)

    def usage(self, model_id: str | None = None) -> dict[str, int]:
        """Totals over stored responses (of one model, if given): ``responses``,
        ``prompt_tokens``, ``completion_tokens``."""
        where, parameters = ("WHERE model_id = ?", (model_id,)) if model_id is not None else ("", ())
        count, prompt, completion = self._query(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), "
            f"COALESCE(SUM(completion_tokens), 0) FROM responses {where}", parameters)[0]
        return {"responses": count, "prompt_tokens": prompt, "completion_tokens": completion}

    def response_keys(self) -> set[str]:
        """Cache keys of every stored response."""
        return {key for (key,) in self._query("SELECT key FROM responses")}

    def failures(self) -> list[dict[str, Any]]:
        """Calls still failed: key, model_id, tag, sample_index, messages, params, reason,
        attempts (summed over runs), created_at."""
        return [_decode(row, self.path) for row in self.records("failures")]

    # -- generic stage tables ------------------------------------------------------------
    def put_rows(self, table: str, rows: list[dict], key: str = "id") -> None:
        """Upsert ``rows`` into stage table ``table`` by ``str(row[key])``, in one transaction."""
        physical = self._stage(table)
        values = []
        for index, row in enumerate(rows):
            if not isinstance(row, dict) or key not in row:
                raise MemlensError(f"row {index} for table '{table}' has no key field '{key}'")
            values.append((str(row[key]), to_json(row, f"row {index} of table '{table}'")))
        with self._transaction() as conn:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {physical} "
                         "(key TEXT PRIMARY KEY, row TEXT NOT NULL)")
            conn.executemany(f"INSERT INTO {physical} VALUES (?, ?) ON CONFLICT(key) "
                             "DO UPDATE SET row = excluded.row", values)

    def rows(self, table: str) -> list[dict]:
        """Every row of a stage table in first-insertion order ([] if it does not exist)."""
        if table not in self.tables():
            return []
        rows = []
        for key, text in self._query(f"SELECT key, row FROM {self._stage(table)} ORDER BY rowid"):
            row = load_json(text, self.path, f"table '{table}', row '{key}'")
            check_row(table, key, row, self.path)
            rows.append(row)
        return rows

    def row_keys(self, table: str) -> set[str]:
        """The keys present in a stage table (empty if it does not exist)."""
        if table not in self.tables():
            return set()
        return {key for (key,) in self._query(f"SELECT key FROM {self._stage(table)}")}

    def delete_table(self, table: str) -> None:
        """Drop a stage table (no error if it does not exist)."""
        physical = self._stage(table)
        with self._transaction() as conn:
            conn.execute(f"DROP TABLE IF EXISTS {physical}")

    def tables(self) -> list[str]:
        """Names of the existing stage tables."""
        names = self._query("SELECT name FROM sqlite_master WHERE type = 'table' "
                            "AND name LIKE 'stage\\_%' ESCAPE '\\' ORDER BY name")
        return [name[len("stage_"):] for (name,) in names]

    @staticmethod
    def _stage(table: str) -> str:
        check_table_name(table)
        if table in RESERVED_TABLES:
            raise MemlensError(f"'{table}' is a built-in table of the run store; "
                               "choose another stage-table name")
        return f"stage_{table}"

    # -- export --------------------------------------------------------------------------
    def records(self, table: str) -> list[dict[str, Any]]:
        """Flat records of ``responses``, ``failures``, ``manifest`` or a stage table."""
        if table in RESERVED_TABLES:
            with self._mutex:
                cursor = self._open_connection().execute(f"SELECT * FROM {table} ORDER BY rowid")
                names = [column[0] for column in cursor.description]
                records = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
            for record in records:  # every JSON column is JSON (a response an object)
                where = f"table '{table}', row '{record.get('key', record.get('name'))}'"
                for name in set(record) & _JSON_COLUMNS:
                    value = load_json(record[name], self.path, f"{where}, {name}")
                    if name == "response" and not isinstance(value, dict):
                        raise damaged(self.path, where, "the response is not a JSON object")
            return records
        check_table_name(table)
        if table not in self.tables():
            known = ", ".join(sorted(RESERVED_TABLES) + self.tables())
            raise MemlensError(f"no table '{table}' in {self.path}; tables: {known}")
        return self.rows(table)

    def export(self, table: str, path: str | Path) -> int:
        """Write ``table`` to ``path`` (.parquet, .csv or .jsonl); return the number of rows."""
        from memlens.store.export import write_records  # lazy: keeps memlens --help light

        return write_records(self.records(table), Path(path), table)


def _result_row(key: str, request: ChatRequest, outcome: Outcome, model_id: str,
                now: str) -> tuple[bool, tuple]:
    """``(is_failure, values)`` for the ``failures`` or ``responses`` table."""
    common = (key, model_id, request.tag, request.sample_index,
              to_json(list(request.messages), f"messages of request {request.tag!r}"),
              to_json(request.params.to_dict(), f"params of request {request.tag!r}"))
    if isinstance(outcome, ModelCallError):
        return True, (*common, redact_text(outcome.reason), outcome.attempts, now)
    return False, (*common, to_json(outcome.to_dict(), f"response {key}"),
                   outcome.prompt_tokens, outcome.completion_tokens, outcome.latency_s, now)


def _short(path: Path, limit: int = 200) -> str:
    """``path`` for a message, its middle elided when it is absurdly long."""
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}…{text[-limit // 2:]}"


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # the transaction is gone either way


def _decode(record: dict[str, Any], path: Path) -> dict[str, Any]:
    for name in ("messages", "params"):
        if record.get(name):
            record[name] = load_json(record[name], path,
                                     f"table 'failures', row '{record.get('key')}', {name}")
    return record
