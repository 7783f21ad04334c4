"""Stop a run early instead of sending thousands of calls that cannot succeed.

Two rules, checked on every finished call of a ``run_requests`` (calls answered from the store
do not count):

- **authentication**: ``AUTH_STOP_AFTER`` consecutive calls refused with HTTP 401 / 403 stop the
  run (a wrong or missing key fails every call; one stray refusal among successes does not);
- **failure rate**: once ``MIN_FINISHED`` calls have finished, more than ``MAX_FAILED_SHARE`` of
  the last ``WINDOW`` calls failing stops the run (a dead or overloaded server).

Either raises a ``RunStopped`` (a ``MemlensError``) out of ``run_requests``; every call finished
before it is already in the run store, so re-running the same command resumes the run.
"""

from __future__ import annotations

from collections import deque

from memlens.errors import MemlensError
from memlens.models.base import ModelCallError
from memlens.models.retry import AuthenticationFailed

AUTH_STOP_AFTER = 2
"""Consecutive 401 / 403 refusals that stop a run."""
MIN_FINISHED = 10
"""Finished calls before the failure-rate rule applies."""
WINDOW = 20
"""How many of the most recent calls the failure-rate rule looks at."""
MAX_FAILED_SHARE = 0.5
"""The run stops when more than this share of the window failed."""


class RunStopped(MemlensError):
    """A run stopped early; what finished is stored and the same command resumes it."""

    exit_status = 4
    """Process exit status of the CLI for this error."""


class AuthenticationStopped(RunStopped):
    """Consecutive 401 / 403 refusals: the API key is missing, wrong or lacks access."""

    exit_status = 2


class FailureRateStopped(RunStopped):
    """Most recent calls failed."""


class CallBreaker:
    """Watches finished calls and raises ``RunStopped`` when a rule above trips."""

    def __init__(self, model: object, *, auth_stop_after: int = AUTH_STOP_AFTER,
                 min_finished: int = MIN_FINISHED, window: int = WINDOW,
                 max_failed_share: float = MAX_FAILED_SHARE):
        self.model_id = str(getattr(model, "model_id", model))
        self.key_variable = getattr(model, "api_key_env", "") or ""
        self.auth_stop_after = auth_stop_after
        self.min_finished = min_finished
        self.max_failed_share = max_failed_share
        self.recent: deque[bool] = deque(maxlen=window)
        self.finished = 0
        self.succeeded = 0
        self.auth_streak = 0
        self.tripped: RunStopped | None = None

    def record(self, outcome: object) -> None:
        """Count one finished call; raise ``RunStopped`` if the run should stop now (and, once
        tripped, the same error again for calls that were still in flight)."""
        if self.tripped is not None:
            raise self.tripped
        try:
            self._check(outcome)
        except RunStopped as error:
            self.tripped = error
            raise

    def _check(self, outcome: object) -> None:
        failed = isinstance(outcome, ModelCallError)
        self.finished += 1
        self.succeeded += not failed
        self.recent.append(failed)
        self.auth_streak = self.auth_streak + 1 if isinstance(outcome, AuthenticationFailed) else 0
        if self.auth_streak >= self.auth_stop_after:
            raise AuthenticationStopped(self._auth_message(outcome))
        failures = sum(self.recent)
        if self.finished >= self.min_finished and failures > self.max_failed_share * len(self.recent):
            raise FailureRateStopped(
                f"{self.model_id}: stopped sending calls: {failures} of the last "
                f"{len(self.recent)} calls failed (last: {outcome.reason}). "
                f"{self._kept()} Fix the cause (server, URL, load) and re-run the same command "
                "to resume; failed calls are retried.")

    def _auth_message(self, outcome: AuthenticationFailed) -> str:
        variable = f"${self.key_variable}" if self.key_variable else "the API key variable"
        return (f"{self.model_id}: stopped sending calls: the server refused "
                f"{self.auth_streak} calls in a row with HTTP {outcome.status} "
                f"(authentication failed): check {variable} (or choose another variable with "
                f"--api-key-env). {self._kept()} Re-run the same command to resume.")

    def _kept(self) -> str:
        return (f"The {self.succeeded} call(s) that succeeded in this run are stored."
                if self.succeeded else "No call of this run succeeded.")
