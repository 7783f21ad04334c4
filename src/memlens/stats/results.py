"""The typed results of :func:`memlens.stats.analyze` and of an audit's statistics.

``stats.json`` is the serialised form of these models (``to_json()``), unchanged in format:
``DriftStats.model_validate(json.load(f))`` reads it back, ``to_json()`` writes exactly the
keys that were set. Every model is frozen and forbids unknown keys, so a renamed or misspelt
key fails where the statistics are built or loaded — never later, in a report.

Numbers that could not be computed are ``None`` (JSON ``null``), never NaN: the analysis runs
its output through ``to_jsonable`` before validation.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from memlens.errors import MemlensError
from memlens.pydantic_config import field_of, validation_message

Number = float | None
Interval = tuple[Number, Number]


class Result(BaseModel):
    """Base of every statistics model: frozen, no unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self) -> dict:
        """The JSON form (the keys that were set, as in ``stats.json``)."""
        return self.model_dump(mode="json", exclude_unset=True)


class FloorStats(Result):
    """The ``no_perturbation`` rows (drift between two no-memory samples)."""

    category: str
    n: int
    mean: Number
    sd: Number


class NoiseStats(Result):
    """The pooled ``noise`` class: the reference of d_rel."""

    n: int
    mean: Number
    sd: Number
    diff_sd: Number
    n_paired: int


class CategoryStats(Result):
    """One category of one metric (see ``memlens.stats.panel``)."""

    condition_class: str
    n: int
    n_questions: int
    mean: Number
    sd: Number
    elevation_pct: Number
    elevation_ci: Interval
    elevation_p: Number
    d_rel: Number
    d_rel_ci: Interval
    d_rel_p: Number
    d_rel_q: Number
    q_family: str
    d_rel_mde: Number
    cohen_d: Number
    diff_sd: Number
    n_paired: int
    letters: str
    interpretable: bool = True
    """False with fewer than 8 questions: a cluster bootstrap over so few questions has too few
    distinct resamples for its interval (``memlens.stats.direction.MIN_QUESTIONS``)."""


class ClassStats(Result):
    """One condition class pooled (noise, persona, life_event) against the floor."""

    n: int
    mean: Number
    elevation_pct: Number
    elevation_ci: Interval
    elevation_p: Number
    diff_sd: Number
    n_paired: int


class PairwiseTest(Result):
    """A BH-corrected Welch test between two categories."""

    a: str
    b: str
    t: Number
    df: Number
    p: Number
    q: Number
    significant: bool


class Coefficient(Result):
    """A fixed effect of the mixed model."""

    estimate: Number
    se: Number
    ci: Interval
    p_value: Number


class MixedModel(Result):
    """The random-intercept model ``metric ~ category + (1 | question)``; ``error`` when the
    fit failed (then the fit's fields are absent)."""

    formula: str
    n_obs: int
    n_groups: int
    coefficients: dict[str, Coefficient] = {}
    group_variance: Number = None
    residual_variance: Number = None
    converged: bool | None = None
    singular: bool | None = None
    warnings: list[str] = []
    error: str | None = None


class MetricStats(Result):
    """Everything about one metric column."""

    floor: FloorStats
    noise: NoiseStats
    categories: dict[str, CategoryStats]
    classes: dict[str, ClassStats]
    pairwise: list[PairwiseTest]
    n_bootstrap: int
    seed: int
    mixed_model: MixedModel | None = None


class Convergence(Result):
    """Spearman ρ / Pearson r between two metrics' category means, or why it was omitted."""

    omitted: str | None = None
    metrics: list[str] = []
    n_categories: int = 0
    spearman: Number = None
    spearman_p: Number = None
    pearson: Number = None
    pearson_p: Number = None


class Check(Result):
    """One validity check: ``specificity``, ``sensitivity`` or ``convergence``."""

    name: str
    metric: str | None
    status: str
    detail: str
    elevated: list[str] = []
    below_floor: list[str] = []
    pooled_ci_high: Number = None
    elevation_pct: Number = None
    mde_pct: Number = None
    smallest_q: Number = None
    moved_categories: list[str] = []
    too_few_questions: int | None = None
    """Specificity only, when set: the questions behind the noise class, fewer than a pass
    needs (``memlens.stats.direction.MIN_QUESTIONS``)."""


class Power(Result):
    """Sensitivity power of one metric: the detectable life-event elevation at this n."""

    mde_pct: Number
    n_questions: int
    paper_effect_pct: float
    questions_for_paper_effect: int | None
    powered: bool
    questions_to_plan: int | None = None
    """Questions for a paper-sized effect at the upper ``planning_confidence`` limit of the
    spread (``memlens.stats.power.sd_upper_limit``): what the explanation recommends."""
    planning_confidence: float | None = None
    diff_sd: Number = None
    floor_mean: Number = None
    baselines: int | None = None
    note: str | None = None


class Thresholds(Result):
    """The validity thresholds the checks used."""

    alpha_specificity: float
    alpha_sensitivity: float
    specificity_margin_pct: float
    alpha_floor_unstable: float = 0.05
    min_rho: float
    max_convergence_p: float
    paper_effect_pct: float
    target_power: float


class Coverage(Result):
    """Planned and usable drift rows of one condition class."""

    planned: int
    usable: int


class Validity(Result):
    """The instrument's verdict: ``pass``, ``fail``, ``inconclusive`` or ``not_stated``."""

    verdict: str
    persona_interpretable: bool
    thresholds: Thresholds
    checks: list[Check]
    power: dict[str, Power]
    explanation: str
    coverage: dict[str, Coverage] | None = None
    min_coverage: float | None = None
    verdict_if_stated: str | None = None
    coverage_note: str | None = None

    def check(self, name: str, metric: str | None = None) -> Check | None:
        """The first check called ``name`` (for ``metric``, when given)."""
        return next((c for c in self.checks
                     if c.name == name and (metric is None or c.metric == metric)), None)


class Settings(Result):
    """How the statistics were computed."""

    seed: int
    n_bootstrap: int
    confidence: float
    model: str | None
    floor: str
    noise_reference: str


class DriftStats(Result):
    """The result of ``analyze()`` on a drift table (``stats.json`` of ``memlens analyze``)."""

    format_version: int
    settings: Settings
    n_rows: int
    n_questions: int
    metrics: dict[str, MetricStats]
    convergence: Convergence
    validity: Validity


class Design(Result):
    """What produced an audit's drift table (``memlens.audit.pipeline.design_summary``)."""

    baselines: int
    samples: int
    design: str
    injection_mode: str
    memory_template: str | None = None


class HowSection(Result):
    """A how-drift table (``direction``, ``substitutions``, ``contrasts``; see
    ``memlens.audit.howdrift``): its settings, then ``rows`` (table records, rendered row by
    row) or ``error``."""

    version: int
    seed: int
    n_bootstrap: int
    confidence: float
    alpha: float
    floor: str
    rows: list[dict[str, Any]] = []
    error: str | None = None
    n_pairs: int | None = None
    unit: str | None = None
    design: dict[str, Any] | None = None
    note: str | None = None
    n_contrast_pairs: int | None = None


class AnswerSection(Result):
    """Answer drift: the floor / d_rel statistics of each answer metric column, or why none."""

    version: int
    metrics: dict[str, MetricStats]
    columns: list[str]
    note: str | None = None
    error: str | None = None
    n_rows: int | None = None
    n_bootstrap: int | None = None
    seed: int | None = None


class AuditStats(DriftStats):
    """An audit's statistics (its ``stats.json``): ``analyze()`` plus the design and the
    how-drift sections (absent in runs from before they existed)."""

    design: Design | None = None
    direction: HowSection | None = None
    substitutions: HowSection | None = None
    contrasts: HowSection | None = None
    answer: AnswerSection | None = None


def parse_stats(data: Any, source: str, kind: type[DriftStats] = DriftStats) -> DriftStats:
    """``kind.model_validate(data)``; a shape that is not ``stats.json`` raises
    :class:`MemlensError` naming ``source`` and every offending key."""
    try:
        return kind.model_validate(data)
    except ValidationError as error:
        problems = validation_message(error, "", describe=_describe)
        raise MemlensError(f"{source}: not a memlens statistics file ({problems[2:]})") from None


def _describe(item: dict) -> str:
    """One problem of a statistics file: the dotted key and what was wrong with it."""
    if item["type"] == "extra_forbidden":
        return f"unknown key {field_of(item)!r}"
    return f"key {field_of(item)!r}: {' '.join(str(item['msg']).split())}"
