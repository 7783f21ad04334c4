"""The runner: cache + resume + bounded concurrency + progress, and the dry-run plan.

See docs/run-store.md.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "AuthenticationStopped": "breaker",
    "FailureRateStopped": "breaker",
    "RunPlan": "plan",
    "RunStopped": "breaker",
    "estimate_prompt_tokens": "plan",
    "plan_groups": "plan",
    "plan_requests": "plan",
    "run_requests": "runner",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
