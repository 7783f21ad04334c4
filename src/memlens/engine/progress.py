"""Progress bars: one per stage (calls done, rate, ETA, cached / failed counts) and, for a
multi-stage run such as an audit, one overall bar with an ETA across all its chunks and stages.

The overall bar is opened with ``overall_progress(total)``; while it is open, every stage bar
opened with ``counts_toward_overall=True`` (the default) also advances it. A stage whose inner
calls must not be counted twice (the labeler's own model calls, counted per response by the
label stage) opens its bar inside ``overall_paused()``.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm.auto import tqdm

_OVERALL: contextvars.ContextVar[OverallProgress | None] = contextvars.ContextVar(
    "memlens_overall_progress", default=None)


class OverallProgress:
    """The bar of a whole run: work units of every stage (e.g. generation calls plus labelled
    responses), with the stage now running and an ETA from the rate so far. Safe to advance
    from several threads (an overlapped audit generates and labels at once)."""

    def __init__(self, total: int, desc: str = "overall", enabled: bool = True):
        self._lock = threading.RLock()
        self.done = 0
        self.total = total
        self.stage = ""
        self._bar = tqdm(total=total, desc=desc, unit="step", disable=not enabled,
                         dynamic_ncols=True, smoothing=0.05, position=0, leave=True)

    def advance(self, units: int = 1) -> None:
        """Count finished work units."""
        with self._lock:
            self.done += units
            if self.done > self._bar.total:  # more work appeared than planned: grow
                self.grow(self.done - self._bar.total)
            self._bar.update(units)

    def grow(self, units: int) -> None:
        """Add planned work (or, negative, drop work that will not happen: e.g. responses
        without steps need no labels); never below what is done."""
        with self._lock:
            total = max(self.done, self.total + units)
            if total != self.total:
                self.total = total
                self._bar.total = total
                self._bar.refresh()

    def set_stage(self, stage: str) -> None:
        """Name the stage now running (shown after the bar)."""
        with self._lock:
            if stage != self.stage:
                self.stage = stage
                self._bar.set_postfix_str(stage, refresh=False)

    def close(self) -> None:
        """Finish the bar."""
        self._bar.close()


@contextmanager
def overall_progress(total: int, desc: str = "overall",
                     enabled: bool = True) -> Iterator[OverallProgress]:
    """Open the overall bar for the duration of the block (stage bars advance it)."""
    bar = OverallProgress(total, desc, enabled)
    token = _OVERALL.set(bar)
    try:
        yield bar
    finally:
        _OVERALL.reset(token)
        bar.close()


@contextmanager
def overall_paused() -> Iterator[None]:
    """Stage bars opened in this block do not advance the overall bar."""
    token = _OVERALL.set(None)
    try:
        yield
    finally:
        _OVERALL.reset(token)


def current_overall() -> OverallProgress | None:
    """The open overall bar, if any (and not paused)."""
    return _OVERALL.get()


class RunProgress:
    """A tqdm bar over the calls to make, with ``cached=`` and ``failed=`` counters (and
    ``limit=`` when an API backend's adaptive bound is below the concurrency asked for)."""

    def __init__(self, total: int, cached: int, desc: str = "", enabled: bool = True,
                 counts_toward_overall: bool = True):
        self.cached = cached
        self.failed = 0
        self.limit = ""
        self._overall = current_overall() if counts_toward_overall else None
        if self._overall is not None:
            self._overall.set_stage(desc or "calls")
            self._overall.advance(cached)  # answered from the store: done without a call
        self._bar = tqdm(total=total, desc=desc or "calls", unit="call", disable=not enabled,
                         dynamic_ncols=True, smoothing=0.1,
                         position=1 if self._overall is not None else None,
                         leave=self._overall is None)
        self._bar.set_postfix_str(self._postfix(), refresh=False)

    def _postfix(self) -> str:
        return f"cached={self.cached} failed={self.failed}{self.limit}"

    def advance(self, failed: bool, units: int = 1) -> None:
        """Count ``units`` finished calls."""
        if failed:
            self.failed += units
            self._bar.set_postfix_str(self._postfix(), refresh=False)
        self._bar.update(units)
        if self._overall is not None:
            self._overall.advance(units)

    def window(self, bound: int, asked: int) -> None:
        """Show the backend's adaptive bound when 429s have lowered it below ``asked``."""
        limit = f" limit={bound}/{asked}" if bound < asked else ""
        if limit != self.limit:
            self.limit = limit
            self._bar.set_postfix_str(self._postfix(), refresh=False)

    def close(self) -> None:
        """Finish the bar."""
        self._bar.close()
