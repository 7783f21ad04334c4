"""The progress bar: calls done, rate, ETA, and how many were cached or failed."""

from __future__ import annotations

from tqdm.auto import tqdm


class RunProgress:
    """A tqdm bar over the calls to make, with ``cached=`` and ``failed=`` counters."""

    def __init__(self, total: int, cached: int, desc: str = "", enabled: bool = True):
        self.cached = cached
        self.failed = 0
        self._bar = tqdm(total=total, desc=desc or "calls", unit="call", disable=not enabled,
                         dynamic_ncols=True, smoothing=0.1)
        self._bar.set_postfix_str(self._postfix(), refresh=False)

    def _postfix(self) -> str:
        return f"cached={self.cached} failed={self.failed}"

    def advance(self, failed: bool) -> None:
        """Count one finished call."""
        if failed:
            self.failed += 1
            self._bar.set_postfix_str(self._postfix(), refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        """Finish the bar."""
        self._bar.close()
