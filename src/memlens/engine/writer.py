"""The single writer thread: every finished call reaches SQLite at once, in small commits.

Results from the event loop or the worker threads go onto a queue; one thread drains it and
writes whatever has arrived in one transaction. Under light load that is one commit per call;
under heavy load (hundreds of calls per second) the batches grow to what arrived during the
previous commit — a few milliseconds of results, never more.
"""

from __future__ import annotations

import queue
import threading

from memlens.models.base import ChatRequest, ChatResponse, ModelCallError
from memlens.store import RunStore

_STOP = object()


class ResultWriter:
    """Writes (key, request, outcome) triples to a ``RunStore`` from one background thread."""

    def __init__(self, store: RunStore, model_id: str, max_batch: int = 512):
        self._store = store
        self._model_id = model_id
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self.error: BaseException | None = None
        self.written = 0
        self._thread = threading.Thread(target=self._loop, name="memlens-store-writer",
                                        daemon=True)
        self._thread.start()

    def submit(self, key: str, request: ChatRequest,
               outcome: ChatResponse | ModelCallError) -> None:
        """Queue one result for writing; re-raises a previous write error."""
        if self.error is not None:
            raise self.error
        self._queue.put((key, request, outcome))

    def close(self, *, raise_error: bool = True) -> None:
        """Write everything queued so far, stop the thread, and re-raise a write error."""
        self._queue.put(_STOP)
        self._thread.join()
        if raise_error and self.error is not None:
            raise self.error

    def _loop(self) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stopping = any(item is _STOP for item in batch)
            batch = [item for item in batch if item is not _STOP]
            if batch and self.error is None:
                try:
                    self._store.put_results(batch, model_id=self._model_id)
                    self.written += len(batch)
                except BaseException as error:  # surfaced to the caller by submit / close
                    self.error = error
