"""The gate policy: which rules run and their limits, from a YAML/JSON file and/or flags.

Every limit is off (``null``) unless set, except ``require_valid`` (on) — and a baseline run
implies the regression rule: ``max_regression`` defaults to 0 on the paired Δ of the **mean**
drift whenever ``--baseline`` is given (:meth:`Policy.with_inputs`; the default and its error
rates across sampling seeds are measured in docs/operating-characteristics.md). A flag overrides
the file's key of the same name. Unknown keys and bad values are one ``MemlensError`` naming the
file and the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memlens.errors import MemlensError
from memlens.jsonl import read_document
from memlens.pydantic_config import validation_message


class Policy(BaseModel):
    """Gate rules and limits (docs/gate.md).

    >>> Policy(max_regression=0.1).metrics
    ['dtw']
    """

    model_config = ConfigDict(extra="forbid")

    require_valid: bool = True
    """Every audit run's validity verdict must be ``pass`` (else exit 5: cannot decide)."""
    metrics: list[str] = Field(default_factory=lambda: ["dtw"], min_length=1)
    """Drift metrics the persona rules look at."""
    classes: list[Literal["persona", "life_event", "noise"]] = Field(
        default_factory=lambda: ["persona"], min_length=1)
    """Condition classes whose categories the persona rules look at."""
    max_d_rel_ci_low: float | None = None
    """Fail when a category's d_rel 95 % CI lower bound is above this (the run's own drift)."""
    max_regression: float | None = None
    """Fail when a category's paired Δ (candidate − baseline) has its 95 % CI lower bound above
    this and q ≤ ``alpha`` (needs a baseline run)."""
    regression_statistic: Literal["d_rel", "mean"] = "mean"
    """Which Δ ``max_regression`` applies to: Δ mean drift (default: across sampling seeds it
    detects a doubled persona effect that Δ d_rel, divided by each run's own noisy σ_noise,
    misses) or Δ d_rel."""
    alpha: float = Field(0.05, gt=0, lt=1)
    """BH q-value a regression must reach (false-discovery rate over the categories)."""
    max_tooldrift_delta: float | None = None
    """Fail when the tool-drift Δ (r_biased − r_neutral) CI lower bound, overall or of a bias
    dimension, is above this (needs a tool-drift run)."""
    max_tooldrift_regression: float | None = None
    """Fail when a paired ΔΔ (candidate − baseline tool-drift run) has its CI lower bound above
    this and q ≤ ``alpha`` (overall or per dimension; needs both tool-drift runs)."""
    seed: int = Field(0, ge=0)
    n_bootstrap: int = Field(10_000, ge=100, le=1_000_000)

    def with_inputs(self, *, baseline: bool, tooldrift_baseline: bool = False) -> Policy:
        """The policy for what the gate was given: a baseline audit run turns the regression
        rule on (limit :data:`DEFAULT_MAX_REGRESSION`) unless the policy set a limit; a baseline
        tool-drift run does the same for ``max_tooldrift_regression``. Never silent: the rule
        then shows in every output.

        >>> Policy().with_inputs(baseline=True).max_regression
        0.0
        """
        updates = {}
        if baseline and self.max_regression is None:
            updates["max_regression"] = DEFAULT_MAX_REGRESSION
        if tooldrift_baseline and self.max_tooldrift_regression is None:
            updates["max_tooldrift_regression"] = DEFAULT_MAX_REGRESSION
        return self.model_copy(update=updates) if updates else self


DEFAULT_MAX_REGRESSION = 0.0
"""The regression limit a baseline implies: any increase whose paired CI excludes 0 at q ≤ α."""


def load_policy(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Policy:
    """The policy from ``path`` (YAML / JSON mapping; None = defaults) with ``overrides`` (flag
    values; ``None`` entries are ignored) on top."""
    values: dict[str, Any] = {}
    source = "gate policy"
    if path is not None:
        source = str(path)
        document = read_document(path, "gate policy")
        if document is None:
            document = {}
        if not isinstance(document, dict):
            raise MemlensError(f"{path}: a gate policy must be a mapping of keys to values "
                               f"(got {type(document).__name__})")
        values.update(document)
    flags = {key: value for key, value in (overrides or {}).items() if value is not None}
    values.update(flags)
    try:
        return Policy(**values)
    except ValidationError as error:
        if flags and path is None:
            source = "gate flags"
        raise MemlensError(validation_message(error, source, Policy.model_fields,
                                               key_word="key")) from None
