"""The runner: cache + resume + bounded concurrency + progress, and the dry-run plan.

See docs/run-store.md.
"""

from memlens.engine.breaker import AuthenticationStopped, FailureRateStopped, RunStopped
from memlens.engine.plan import RunPlan, estimate_prompt_tokens, plan_groups, plan_requests
from memlens.engine.runner import run_requests

__all__ = ["AuthenticationStopped", "FailureRateStopped", "RunPlan", "RunStopped",
           "estimate_prompt_tokens", "plan_groups", "plan_requests", "run_requests"]
