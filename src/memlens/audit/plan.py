"""Power and cost of audit designs before money is spent (``memlens plan``).

A design is (questions, K baselines) on top of an audit config (stimuli, samples, max_tokens).
Its power comes from the variance model of :mod:`memlens.stats.power`: one question's
(life-event mean − floor) difference has variance ``difference_variance(σ²_a, σ²_e, τ², n_c, K)``
with ``n_c`` life-event responses per question, and the sensitivity check is a two-sided paired
t over questions at α = 0.001 (:mod:`memlens.stats.validity`). The variance components come
either from stated assumptions (:func:`assumed_model`) or from a finished pilot audit
(:func:`pilot_model`). Costs count generation calls exactly and estimate prompt tokens the way
``memlens audit --dry-run`` does (``memlens.engine.plan.estimate_prompt_tokens`` over the real
requests), scaled per question.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from memlens.audit.assumptions import (
    DEFAULT_FLOOR_MEAN,
    DEFAULT_PAIR_SD,
    DEFAULT_SHARE_RESPONSE,
    DEFAULT_TAU,
)
from memlens.audit.config import AuditConfig
from memlens.audit.design import control_samples, design_cells
from memlens.audit.drift import METRICS, PAIRS_TABLE
from memlens.audit.generate import build_request
from memlens.audit.memory_sets import memory_cells
from memlens.audit.pipeline import select_inputs
from memlens.engine.plan import CHARS_PER_TOKEN, RunPlan, estimate_prompt_tokens
from memlens.errors import MemlensError
from memlens.models import ChatRequest
from memlens.models.modelstring import public_model_string
from memlens.ontology import load_ontology
from memlens.ontology.labelers import is_embedded
from memlens.ontology.llm_labeler import LLMLabeler
from memlens.ontology.prompting import label_messages, reply_schema
from memlens.stats.power import (
    difference_variance,
    paired_mde,
    paired_power,
    questions_needed,
    variance_components,
)
from memlens.stats.validity import MEANINGFUL_MDE_PCT
from memlens.stimuli import load_stimuli
from memlens.store import RunStore
from memlens.targets import ALPHA_SENSITIVITY, PAPER_EFFECT_PCT, TARGET_POWER


@dataclass(frozen=True)
class VarianceModel:
    """What the power calculation needs: floor mean and the variance components."""

    floor_mean: float
    sigma_a2: float
    """Variance of the response term shared by every pair a response is in."""
    sigma_e2: float
    """Variance of the pair residual."""
    tau2: float
    """Per-question heterogeneity of the life-event effect."""
    source: str
    """``assumptions`` or the pilot run directory."""
    metric: str = "dtw"
    details: dict = field(default_factory=dict)
    """Pilot only: pairs, questions, identifiable, observed/predicted difference variance."""


@dataclass(frozen=True)
class QuestionCost:
    """Per-question generation cost of an audit config (what scales with the questions)."""

    control_prompt_tokens: float
    """Mean estimated prompt tokens of one no-memory call."""
    perturbed_conditions: int
    """Perturbed (noise, persona, life-event) conditions per question."""
    perturbed_prompt_tokens: float
    """Mean estimated prompt tokens of one question's perturbed calls, one sample each."""
    life_event_conditions: int
    samples: int
    max_tokens: int
    llm_labeler: bool
    available_questions: int
    """Questions the config selects (designs beyond this need a bigger question source)."""
    values_per_category: dict = field(default_factory=dict)
    """Persona / life-event category -> (values selected, values in the catalogue): what
    value contrasts (issue 13) can use and what ``--stimuli-per-category 2`` would add."""


@dataclass(frozen=True)
class DesignRow:
    """One design: its power for the target effect, MDE and cost."""

    questions: int
    baselines: int
    diff_sd: float
    power: float
    mde_pct: float
    questions_needed: int | None
    generation_calls: int
    est_prompt_tokens: int
    max_completion_tokens: int
    labeler_calls: int
    recommended: bool = False

    @property
    def cost(self) -> tuple[int, int]:
        """What "cheapest" compares: generation tokens, then all calls."""
        return (self.est_prompt_tokens + self.max_completion_tokens,
                self.generation_calls + self.labeler_calls)


@dataclass(frozen=True)
class PowerPlan:
    """A grid of designs for one variance model and target."""

    model: VarianceModel
    effect_pct: float
    alpha: float
    target_power: float
    n_c: int
    """Life-event responses per question (life-event conditions × samples)."""
    cost: QuestionCost
    rows: tuple[DesignRow, ...]

    @property
    def recommended(self) -> DesignRow | None:
        """The cheapest design with power ≥ the target (None if none reaches it)."""
        return next((row for row in self.rows if row.recommended), None)

    def to_dict(self) -> dict:
        """JSON-ready form (NaN -> None)."""
        data = asdict(self)
        data["recommended"] = asdict(self.recommended) if self.recommended else None
        return _json_safe(data)


def assumed_model(floor_mean: float = DEFAULT_FLOOR_MEAN, pair_sd: float = DEFAULT_PAIR_SD,
                  share_response: float = DEFAULT_SHARE_RESPONSE, tau: float = DEFAULT_TAU,
                  metric: str = "dtw") -> VarianceModel:
    """Variance model from stated assumptions: one pair's SD, the share of its variance that
    belongs to the two responses (``2σ²_a / (2σ²_a + σ²_e)``) and the SD τ of the effect over
    questions.

    >>> m = assumed_model(0.35, 0.2, 0.5, 0.0)
    >>> round(m.sigma_a2, 6), round(m.sigma_e2, 6)
    (0.01, 0.02)
    """
    _check(floor_mean, "floor mean", low=0.0, low_open=True)
    _check(pair_sd, "pair SD", low=0.0, low_open=True)
    _check(share_response, "response share", low=0.0, high=1.0)
    _check(tau, "tau", low=0.0)
    pair_var = pair_sd ** 2
    return VarianceModel(floor_mean=floor_mean, sigma_a2=share_response * pair_var / 2.0,
                         sigma_e2=(1.0 - share_response) * pair_var, tau2=tau ** 2,
                         source="assumptions", metric=metric)


def pilot_model(pair_rows: Sequence[dict], baselines: int, metric: str = "dtw",
                source: str = "pilot") -> VarianceModel:
    """Variance model estimated from a pilot's pair rows (``audit_drift_pairs``).

    σ²_a, σ²_e: :func:`memlens.stats.power.variance_components` within each (question,
    condition), so condition effects do not count as noise. Floor mean: the mean over
    questions of the mean no-memory pair drift. τ²: the variance over questions of the observed
    (life-event mean − floor) differences minus what the model predicts from sampling alone
    (each question with its own life-event response count), clamped at 0; when the model
    predicts *more* than observed, σ²_a and σ²_e are scaled down instead, so that at the pilot's
    own design the plan and the pilot's report give the same MDE.
    """
    rows = [row for row in pair_rows if _finite(row.get(metric))]
    if not rows:
        raise MemlensError(f"{source}: no drift pair rows with a finite {metric!r} value "
                           "(audit_drift_pairs is empty: run the pilot audit to the end first)")
    grouped = [{**row, "question_id": f"{row['question_id']}\x1f{row.get('stimulus_id', '')}"}
               for row in rows]
    components = variance_components(grouped, metric)
    sigma_a2, sigma_e2 = float(components["sigma_a2"]), float(components["sigma_e2"])
    if not (math.isfinite(sigma_a2) and math.isfinite(sigma_e2)):
        raise MemlensError(f"{source}: too few drift pairs to estimate the variance components "
                           "(no condition of any question has two pairs)")
    floors, life = _per_question(rows, metric)
    floor_values = [v for v in floors.values() if v is not None]
    if not floor_values:
        raise MemlensError(f"{source}: no no-memory (floor) pairs; cannot estimate the floor")
    floor_mean = _floor_mean(rows, metric)
    if not floor_mean > 0:
        raise MemlensError(f"{source}: the no-memory floor is 0 (every two no-memory samples "
                           "got the same symbols), so an effect in % of the floor is undefined; "
                           "plan from assumptions instead (--floor-mean X --pair-sd SD)")
    diffs, predicted = [], []
    for question, responses in life.items():
        if floors.get(question) is None or not responses:
            continue
        diffs.append(float(np.mean(list(responses.values()))) - floors[question])
        predicted.append(difference_variance(sigma_a2, sigma_e2, 0.0, len(responses), baselines))
    observed = float(np.var(diffs, ddof=1)) if len(diffs) >= 2 else float("nan")
    expected = float(np.mean(predicted)) if predicted else float("nan")
    tau2 = max(observed - expected, 0.0) if math.isfinite(observed) else 0.0
    if math.isfinite(observed) and 0 < observed < expected:
        # the components over-predict this pilot's own spread: scale them so the pilot's own
        # design reproduces its observed spread, as the report's MDE does (one variance model)
        sigma_a2, sigma_e2 = sigma_a2 * observed / expected, sigma_e2 * observed / expected
    details = {"pairs": int(components["n_pairs"]), "identifiable": bool(components["identifiable"]),
               "questions_with_life_events": len(diffs), "observed_diff_var": observed,
               "predicted_diff_var": expected, "pilot_baselines": baselines,
               "tau2_estimated": math.isfinite(observed)}
    return VarianceModel(floor_mean=floor_mean, sigma_a2=sigma_a2, sigma_e2=sigma_e2, tau2=tau2,
                         source=source, metric=metric, details=details)


def read_pilot(run_dir: str, metric: str = "dtw") -> tuple[VarianceModel, dict]:
    """The variance model of a finished audit's run directory and its recorded config."""
    rows, config = pilot_rows(run_dir, metric)
    baselines = int(config.get("baselines") or 1)
    return pilot_model(rows, baselines, metric, source=str(run_dir)), config


def pilot_rows(run_dir: str, metric: str = "dtw") -> tuple[list[dict], dict]:
    """A finished audit's drift pair rows and its recorded config (errors name the run)."""
    if metric not in METRICS:
        raise MemlensError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    with RunStore(run_dir, read_only=True) as store:
        config = (store.read_manifest().get("audit") or {}).get("config")
        rows = store.rows(PAIRS_TABLE)
    if not isinstance(config, dict):
        raise MemlensError(f"{run_dir}: not an audit run (its manifest has no audit config)")
    if not rows:
        raise MemlensError(f"{run_dir}: the run has no drift pair rows ({PAIRS_TABLE}); "
                           "finish the pilot audit first (re-run `memlens audit` to resume)")
    return rows, config


def question_cost(config: AuditConfig) -> QuestionCost:
    """Per-question cost of ``config``'s design, from its real requests (as ``--dry-run``)."""

    questions, stimuli, _ = select_inputs(config)
    if not questions:
        raise MemlensError("the audit config selects no questions")
    control_tokens = perturbed_tokens = 0
    classes: dict[str, int] = {}

    for cell in design_cells(questions, stimuli, 1, 1) + memory_cells(config, questions, stimuli, 1):
        if cell.sample != 0:  # the paper design's extra no-memory sample: counted by the design
            continue
        tokens = estimate_prompt_tokens(build_request(cell, config))
        if cell.is_control:
            control_tokens += tokens
        else:
            perturbed_tokens += tokens
            classes[cell.stimulus.stimulus_class] = classes.get(cell.stimulus.stimulus_class, 0) + 1
    n = len(questions)
    return QuestionCost(
        control_prompt_tokens=control_tokens / n,
        perturbed_conditions=sum(classes.values()) // n,
        perturbed_prompt_tokens=perturbed_tokens / n,
        life_event_conditions=classes.get("life_event", 0) // n,
        samples=config.samples, max_tokens=config.max_tokens,
        llm_labeler=not is_embedded(config.labeler), available_questions=n,
        values_per_category=_values_per_category(config, stimuli))


def _values_per_category(config: AuditConfig, selected) -> dict:
    """(selected, in the catalogue) stimuli of every persona / life-event category."""

    out: dict[str, list[int]] = {}
    for stimulus in load_stimuli(config.stimuli):
        if stimulus.stimulus_class in ("persona", "life_event"):
            out.setdefault(stimulus.category, [0, 0])[1] += 1
    for stimulus in selected:
        if stimulus.category in out:
            out[stimulus.category][0] += 1
    return {category: tuple(counts) for category, counts in sorted(out.items())}


def contrast_line(cost: QuestionCost) -> str:
    """What value contrasts the design allows, and the price of allowing them."""
    values = cost.values_per_category
    if not values:
        return ""
    ready = [c for c, (chosen, _) in values.items() if chosen >= 2]
    pairs = sum(chosen * (chosen - 1) // 2 for chosen, _ in values.values())
    possible = [c for c, (chosen, total) in values.items() if 1 <= chosen < 2 <= total]
    extra = sum(2 - chosen for c, (chosen, _) in values.items() if c in possible)
    per_call = cost.perturbed_prompt_tokens / max(cost.perturbed_conditions, 1)
    used = sum(chosen >= 1 for chosen, _ in values.values())
    line = (f"value contrasts: {len(ready)} of the {used} persona / life-event categories "
            f"have >= 2 values ({pairs} value pairs per question and sample, no extra calls)")
    if possible:
        line += (f"; --stimuli-per-category 2 would add {extra} conditions per question for "
                 f"{len(possible)} more categories: +{extra * cost.samples} generation calls and "
                 f"~{round(extra * cost.samples * per_call):,} prompt tokens per question")
    return line


def design_row(model: VarianceModel, cost: QuestionCost, questions: int, baselines: int,
               effect_pct: float = PAPER_EFFECT_PCT, alpha: float = ALPHA_SENSITIVITY,
               target_power: float = TARGET_POWER, diff_sd: float | None = None) -> DesignRow:
    """Power, MDE (% of the floor), questions needed and cost of one design. ``diff_sd`` (the
    spread of one question's life-event − floor difference) replaces the model's prediction; by
    default it is the pilot's observed spread at the pilot's own design (:func:`observed_sd`)."""
    n_c = cost.life_event_conditions * cost.samples
    if n_c < 1:
        raise MemlensError("the audit config has no life-event condition; the sensitivity "
                           "check (life events vs floor) cannot be planned")
    if diff_sd is None:
        diff_sd = observed_sd(model, questions, baselines)
    sd = diff_sd if diff_sd is not None else math.sqrt(
        difference_variance(model.sigma_a2, model.sigma_e2, model.tau2, n_c, baselines))
    effect = effect_pct / 100.0 * model.floor_mean
    controls = control_samples(cost.samples, baselines)
    calls = questions * (controls + cost.perturbed_conditions * cost.samples)
    prompt = questions * (controls * cost.control_prompt_tokens
                          + cost.samples * cost.perturbed_prompt_tokens)
    return DesignRow(
        questions=questions, baselines=baselines, diff_sd=sd,
        power=paired_power(effect, sd, questions, alpha),
        mde_pct=100.0 * paired_mde(sd, questions, alpha, target_power) / model.floor_mean,
        questions_needed=questions_needed(effect, sd, alpha, target_power),
        generation_calls=calls, est_prompt_tokens=round(prompt),
        max_completion_tokens=calls * cost.max_tokens,
        labeler_calls=calls if cost.llm_labeler else 0)


def observed_sd(model: VarianceModel, questions: int, baselines: int) -> float | None:
    """The pilot's own observed spread when the design is the pilot's (same questions and K):
    then the plan states exactly what the pilot's report stated, usable rows and all; else None
    (the variance model predicts the full design).

    >>> m = VarianceModel(0.6, 0.01, 0.02, 0.0, "pilot", details={
    ...     "observed_diff_var": 0.04, "questions_with_life_events": 16, "pilot_baselines": 5})
    >>> observed_sd(m, 16, 5), observed_sd(m, 24, 5), observed_sd(m, 16, 3)
    (0.2, None, None)
    """
    details = model.details or {}
    observed = details.get("observed_diff_var")
    same = (questions == details.get("questions_with_life_events")
            and baselines == details.get("pilot_baselines"))
    return math.sqrt(observed) if same and observed and math.isfinite(observed) else None


def plan_designs(model: VarianceModel, cost: QuestionCost, questions: Iterable[int],
                 baselines: Iterable[int], effect_pct: float = PAPER_EFFECT_PCT,
                 alpha: float = ALPHA_SENSITIVITY,
                 target_power: float = TARGET_POWER) -> PowerPlan:
    """Every (questions, baselines) design, the cheapest adequate one marked ``recommended``."""
    _check(effect_pct, "effect %", low=0.0, low_open=True)
    _check(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)
    _check(target_power, "power", low=0.0, high=1.0, low_open=True, high_open=True)
    qs, ks = sorted(set(questions)), sorted(set(baselines))
    if not qs or min(qs) < 2:
        raise MemlensError("questions: give at least one design with 2 or more questions")
    if not ks or min(ks) < 1 or max(ks) > 50:
        raise MemlensError("baselines: give values from 1 to 50")
    rows = [design_row(model, cost, q, k, effect_pct, alpha, target_power) for q in qs for k in ks]
    adequate = [row for row in rows if row.power >= target_power]
    best = min(adequate, key=lambda row: row.cost) if adequate else None
    rows = [DesignRow(**{**asdict(row), "recommended": row is best}) for row in rows]
    return PowerPlan(model=model, effect_pct=effect_pct, alpha=alpha, target_power=target_power,
                     n_c=cost.life_event_conditions * cost.samples, cost=cost, rows=tuple(rows))


def format_plan(plan: PowerPlan) -> str:
    """The terminal table, with the model and the recommendation."""
    m = plan.model
    lines = [f"variance model ({m.metric}, from {m.source}): floor mean {m.floor_mean:.4g}, "
             f"sigma_a^2 {m.sigma_a2:.4g}, sigma_e^2 {m.sigma_e2:.4g}, tau^2 {m.tau2:.4g}; "
             f"{plan.n_c} life-event response(s) per question",
             f"target: +{plan.effect_pct:g}% over the floor, two-sided paired t, "
             f"alpha {plan.alpha:g}, power {plan.target_power:g}"]
    header = ("questions", "K", "power", "MDE %", "Q needed", "gen calls", "prompt tok",
              "max compl tok", "label calls", "")
    table = [header] + [(
        str(r.questions), str(r.baselines), _num(r.power, ".3f"), _mde_text(r.mde_pct),
        str(r.questions_needed) if r.questions_needed is not None else "-",
        f"{r.generation_calls:,}", f"{r.est_prompt_tokens:,}", f"{r.max_completion_tokens:,}",
        f"{r.labeler_calls:,}", "<- recommended" if r.recommended else "") for r in plan.rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
              for row in table]
    best = plan.recommended
    if best:
        lines.append(f"recommended: {best.questions} questions x K = {best.baselines} (the "
                     f"cheapest design with power >= {plan.target_power:g})")
    else:
        lines.append(f"no design in the grid reaches power {plan.target_power:g}; "
                     "see 'Q needed' for the questions each K needs")
    if contrast_line(plan.cost):
        lines.append(contrast_line(plan.cost))
    if any(math.isfinite(r.mde_pct) and r.mde_pct >= MEANINGFUL_MDE_PCT for r in plan.rows):
        lines.append(f"n.m.: not meaningful — an MDE beyond +{MEANINGFUL_MDE_PCT:.0f}% of the "
                     "floor says only that the design is far too small")
    if any(r.questions > plan.cost.available_questions for r in plan.rows):
        lines.append(f"note: the config selects {plan.cost.available_questions} questions; "
                     "bigger designs need a bigger question source (costs are extrapolated)")
    return "\n".join(lines)


def _floor_mean(rows: list[dict], metric: str) -> float:
    """The floor as the statistics define it (``memlens.stats``: the mean of the no-memory drift
    rows): each no-memory response's mean drift to the other baselines, averaged over responses
    — so that a pilot whose responses are not all usable (unlabeled ones drop out) gives its
    report's floor, not a per-question average of it.

    >>> rows = [{"condition_class": "control", "response_id": r, "dtw": v}
    ...         for r, v in (("a", 0.2), ("a", 0.4), ("b", 0.6))]
    >>> round(_floor_mean(rows, "dtw"), 6)
    0.45
    """
    by_response: dict[str, list[float]] = {}
    for row in rows:
        if row.get("condition_class") == "control":
            by_response.setdefault(str(row["response_id"]), []).append(float(row[metric]))
    return float(np.mean([np.mean(values) for values in by_response.values()]))


def _per_question(rows: list[dict], metric: str) -> tuple[dict, dict]:
    """Floor mean per question and each life-event response's mean pair drift per question."""
    floor_sums: dict[str, list[float]] = {}
    life: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        question = str(row["question_id"])
        floor_sums.setdefault(question, [])
        if row.get("condition_class") == "control":
            floor_sums[question].append(float(row[metric]))
        elif row.get("condition_class") == "life_event":
            life.setdefault(question, {}).setdefault(str(row["response_id"]), []).append(
                float(row[metric]))
    floors = {q: (float(np.mean(v)) if v else None) for q, v in floor_sums.items()}
    life_means = {q: {r: float(np.mean(v)) for r, v in rs.items()} for q, rs in life.items()}
    return floors, life_means


def _check(value: float, name: str, *, low: float | None = None, high: float | None = None,
           low_open: bool = False, high_open: bool = False) -> None:
    """MemlensError unless ``value`` is finite and in range."""
    ok = isinstance(value, (int, float)) and math.isfinite(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        bound = f"{'>' if low_open else '>='} {low:g}" if low is not None else ""
        if high is not None:
            bound += f"{' and ' if bound else ''}{'<' if high_open else '<='} {high:g}"
        raise MemlensError(f"{name} must be a finite number {bound} (got {value!r})")


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def _mde_text(mde_pct: float) -> str:
    """The MDE cell: beyond +1000 % of the floor a number would only mislead."""
    if math.isfinite(mde_pct) and mde_pct >= MEANINGFUL_MDE_PCT:
        return f">{MEANINGFUL_MDE_PCT:.0f} (n.m.)"
    return _num(mde_pct, ".1f")


def _num(value: float, spec: str) -> str:
    return format(value, spec) if math.isfinite(value) else "n/a"


def _json_safe(value):
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, np.generic):
        return _json_safe(value.item())
    return value


@dataclass(frozen=True)
class LabelingPlan:
    """What an LLM labeler will cost: one call per response with steps, each carrying the
    whole ontology (computed from the real prompt, not a constant) plus that response's steps."""

    labeler: str
    calls: int
    """Responses to label (at most; responses without steps need no call)."""
    fixed_prompt_tokens: int
    """Per call: system prompt, ontology, instructions and reply schema."""
    max_steps_tokens: int
    """Per call, at most: the labelled response itself (the generation's ``max_tokens``)."""
    max_completion_tokens: int
    """Per call, at most: the labeler's own ``max_tokens``."""

    @property
    def run_plan(self):
        """The plan as a ``memlens.engine.RunPlan`` (token bounds summed over the calls)."""

        return RunPlan(calls=self.calls, cached=0,
                       est_prompt_tokens=self.calls * (self.fixed_prompt_tokens
                                                       + self.max_steps_tokens),
                       est_completion_tokens=self.calls * self.max_completion_tokens)

    def __str__(self) -> str:
        """The ``--dry-run`` lines.

        >>> print(LabelingPlan("m", 10, 3222, 512, 2048))
        labeling with m: up to 10 calls (one per response), ~3,222 prompt tokens per call of ontology and instructions + the response's steps (at most 512); plus at most one repair call per invalid reply
        10 calls to make, 0 cached; ~37,340 prompt tokens, at most 20,480 completion tokens
        """
        return (f"labeling with {self.labeler}: up to {self.calls:,} calls (one per response), "
                f"~{self.fixed_prompt_tokens:,} prompt tokens per call of ontology and "
                f"instructions + the response's steps (at most {self.max_steps_tokens:,}); "
                f"plus at most one repair call per invalid reply\n{self.run_plan}")


def labeling_plan(config: AuditConfig, responses: int) -> LabelingPlan | None:
    """The LLM labeler's calls and tokens for ``responses`` responses (None: the embedded
    labeler makes no model call). Prompt tokens are estimated (``estimate_prompt_tokens``)
    over the labeler's real request for a response without steps, reply schema included."""
    if is_embedded(config.labeler):
        return None
    import inspect
    import json

    ontology = load_ontology(config.ontology)
    defaults = inspect.signature(LLMLabeler).parameters
    fixed = estimate_prompt_tokens(ChatRequest(tuple(label_messages(ontology, []))))
    if defaults["structured"].default:  # the schema goes out with every structured request
        fixed += math.ceil(len(json.dumps(reply_schema(ontology))) / CHARS_PER_TOKEN)
    return LabelingPlan(labeler=public_model_string(config.labeler), calls=responses,
                        fixed_prompt_tokens=fixed, max_steps_tokens=config.max_tokens,
                        max_completion_tokens=int(defaults["max_tokens"].default))
