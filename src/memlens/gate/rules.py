"""Gate rules over one audit run, its paired comparison with a baseline run, and tool drift.

Each rule returns a :class:`RuleResult` with status ``pass``, ``fail`` (the data show the limit
is exceeded), ``undecided`` (the instrument is not valid, so the data cannot say) or ``skipped``
(nothing to check, with the reason). A rule fails only when the interval excludes the limit:

- ``instrument_valid`` — every audit run's validity verdict is ``pass``;
- ``d_rel_ci_low`` — no category (of ``classes``, per metric) has its d_rel 95 % CI lower bound
  above ``max_d_rel_ci_low``;
- ``regression`` — no category's paired Δ (candidate − baseline, ``regression_statistic``) has
  its 95 % CI lower bound above ``max_regression`` with BH q ≤ ``alpha``;
- ``tooldrift_delta`` — the tool-drift Δ CI lower bound (overall and per bias dimension) is not
  above ``max_tooldrift_delta``;
- ``tooldrift_regression`` — no paired ΔΔ (overall: p ≤ ``alpha``; per dimension: q ≤ ``alpha``)
  has its CI lower bound above ``max_tooldrift_regression``.

Every rule appears in the result: one that was not evaluated is ``skipped`` with the reason
(e.g. "no baseline run: no regression was checked"), so no output can pass silently. A baseline
run turns the regression rule on by default (:meth:`memlens.gate.policy.Policy.with_inputs`).

Exit status (:mod:`memlens.gate.exits`): 1 when a rule failed, else 5 when one is undecided,
else 0. Persona rules are ``undecided`` whenever a run they read is not valid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.errors import MemlensError
from memlens.gate.exits import INSTRUMENT_INVALID, PASSED, RULE_FAILED
from memlens.gate.policy import Policy
from memlens.numfmt import number
from memlens.stats.paired import p_text as _p
from memlens.stats.results import DriftStats
from memlens.tooldrift.results import ToolDriftSummary


@dataclass(frozen=True)
class RunStats:
    """An audit run's statistics for the rules, or why there are none (``error``)."""

    stats: DriftStats | None
    error: str = ""

    @property
    def verdict(self) -> str:
        """The validity verdict (``not computed`` without statistics)."""
        return self.stats.validity.verdict if self.stats else "not computed"

    @property
    def explanation(self) -> str:
        """Why the verdict is what it is."""
        return self.stats.validity.explanation if self.stats else (self.error or "no statistics")


@dataclass(frozen=True)
class RuleResult:
    """One rule's outcome; ``offenders`` name each offending category with its numbers."""

    name: str
    status: str  # pass | fail | undecided | skipped
    summary: str
    offenders: tuple[str, ...] = ()


@dataclass(frozen=True)
class GateResult:
    """All rules, the exit status and the comparisons the rules read."""

    rules: tuple[RuleResult, ...]
    exit_status: int
    comparison: dict | None = None
    tooldrift_comparison: dict | None = None
    labels: dict = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``pass``, ``fail`` or ``undecided`` (the gate as a whole)."""
        return {PASSED: "pass", RULE_FAILED: "fail"}.get(self.exit_status, "undecided")


def _ci(low, high) -> str:
    return f"[95% CI {number(low, '+.3f')}, {number(high, '+.3f')}]"


def instrument_rule(runs: dict[str, RunStats]) -> RuleResult:
    """Every audit run (label -> statistics) has validity verdict ``pass``."""
    bad = [f"{label}: verdict {run.verdict}. {run.explanation}".strip()
           for label, run in runs.items() if run.verdict != "pass"]
    if bad:
        return RuleResult("instrument_valid", "undecided",
                          f"{len(bad)} of {len(runs)} audit run(s) not valid: the instrument "
                          "cannot decide", tuple(bad))
    return RuleResult("instrument_valid", "pass",
                      f"validity verdict pass in {len(runs)} audit run(s)")


def _check_metrics(available, metrics, what: str) -> None:
    missing = [m for m in metrics if m not in available]
    if missing:
        raise MemlensError(f"gate: metric(s) {', '.join(map(repr, missing))} not in the {what} "
                           f"(available: {', '.join(sorted(available)) or 'none'}); set --metric")


def d_rel_rule(run: RunStats, policy: Policy, label: str) -> RuleResult:
    """No category's d_rel CI lower bound above ``policy.max_d_rel_ci_low``."""
    limit = policy.max_d_rel_ci_low
    name = "d_rel_ci_low"
    if run.stats is None or run.verdict != "pass":
        return RuleResult(name, "undecided", f"{label}: instrument verdict {run.verdict}: "
                                             "persona d_rel is not interpretable")
    metrics = run.stats.metrics
    _check_metrics(metrics, policy.metrics, f"statistics of {label}")
    offenders, checked, too_few = [], 0, []
    for metric in policy.metrics:
        for category, row in metrics[metric].categories.items():
            if row.condition_class not in policy.classes:
                continue
            if not row.interpretable:
                too_few.append(f"{category} ({metric}): {row.n_questions} questions")
                continue
            checked += 1
            low, high = row.d_rel_ci
            if low is not None and low > limit:
                offenders.append(f"{category} ({metric}): d_rel {number(row.d_rel, '+.3f')} "
                                 f"{_ci(low, high)}, lower bound above {number(limit, '+.3f')}; "
                                 f"n = {row.n} rows, {row.n_questions} questions")
    summary = (f"{len(offenders)} of {checked} {'/'.join(policy.classes)} categories of {label} "
               f"have a d_rel CI lower bound above {number(limit, '+.3f')}")
    if not offenders and too_few:
        return RuleResult(name, "undecided", summary + f"; {len(too_few)} categories rest on "
                          "fewer than 8 questions (not interpretable)", tuple(too_few))
    return RuleResult(name, "fail" if offenders else "pass", summary, tuple(offenders))


def regression_rule(comparison: dict, policy: Policy) -> RuleResult:
    """No category regressed by more than ``policy.max_regression`` (paired CI excludes it)."""
    limit, statistic, name = policy.max_regression, policy.regression_statistic, "regression"
    base, candidate = comparison["runs"]
    _check_metrics(comparison["metrics"], policy.metrics, "comparison")
    offenders, undecided, undefined, checked = [], [], [], 0
    for metric in policy.metrics:
        for category, row in comparison["metrics"][metric]["categories"].items():
            if row["condition_class"] not in policy.classes:
                continue
            if not row.get("interpretable", True):
                undecided.append(f"{category} ({metric})")
                continue
            entry = row[statistic]
            low, high = entry.get("delta_ci") or (None, None)
            if entry.get("delta") is None or low is None:
                undefined.append(f"{category} ({metric})")
                continue
            checked += 1
            q = entry.get("delta_q")
            if low is not None and low > limit and q is not None and q <= policy.alpha:
                offenders.append(
                    f"{category} ({metric}): Δ {statistic} {number(entry.get('delta'), '+.3f')} "
                    f"{_ci(low, high)}, q = {_p(q)}; {statistic} {number(entry.get('a'), '+.3f')}"
                    f" -> {number(entry.get('b'), '+.3f')}; {row['n_questions']} paired questions")
    head = (f"{candidate} vs baseline {base}: Δ {statistic} with CI lower bound above "
            f"{number(limit, '+.3f')} and q <= {policy.alpha}")
    if undefined:
        head += (f"; {len(undefined)} categories with an undefined Δ not checked "
                 f"({', '.join(undefined[:5])})")
    design = comparison.get("design", {})
    if design.get("warning"):
        head += f" ({design['warning']})"
    if offenders:
        return RuleResult(name, "fail", f"{len(offenders)} of {checked} categories regressed; "
                                        + head, tuple(offenders))
    if undecided:
        return RuleResult(name, "undecided", f"{len(undecided)} categories not interpretable "
                                             "(a run's instrument is not valid); " + head,
                          tuple(f"{u}: not interpretable" for u in undecided))
    if not checked:
        return RuleResult(name, "undecided", "no category could be checked; " + head)
    return RuleResult(name, "pass", f"0 of {checked} categories regressed; " + head)


def tooldrift_rule(summary: ToolDriftSummary, policy: Policy, label: str) -> RuleResult:
    """The tool-drift Δ CI lower bound, overall and per bias dimension, not above the limit."""
    limit, name = policy.max_tooldrift_delta, "tooldrift_delta"
    groups = {"overall": summary.overall,
              **{f"dimension {k}": v for k, v in summary.by_dimension.items()}}
    offenders, undecided = [], []
    for group, row in groups.items():
        if not row.interpretation.interpretable:
            reasons = "; ".join(reason.text for reason in row.interpretation.reasons)
            undecided.append(f"{group}: not interpretable ({reasons})")
            continue
        low, high = row.ci.delta or (None, None)
        if low is not None and low > limit:
            offenders.append(f"{group}: Δ {number(row.delta, '+.3f')} {_ci(low, high)}, "
                             f"lower bound above {number(limit, '+.3f')}; "
                             f"{row.n_scenarios} scenarios")
    text = (f"{len(offenders)} of {len(groups) - len(undecided)} interpretable tool-drift groups "
            f"of {label} have a Δ CI lower bound above {number(limit, '+.3f')}")
    if offenders:
        return RuleResult(name, "fail", text, tuple(offenders + undecided))
    if any(u.startswith("overall:") for u in undecided):
        return RuleResult(name, "undecided", text + "; the run's Δ is not interpretable",
                          tuple(undecided))
    return RuleResult(name, "pass", text, tuple(undecided))


def tooldrift_regression_rule(comparison: dict, policy: Policy) -> RuleResult:
    """No paired ΔΔ with CI lower bound above ``policy.max_tooldrift_regression``."""
    limit, name = policy.max_tooldrift_regression, "tooldrift_regression"
    groups = {"overall": (comparison["overall"], comparison["overall"].get("delta_p")),
              **{f"dimension {k}": (v, v.get("delta_q"))
                 for k, v in comparison["by_dimension"].items()}}
    offenders, not_interpretable = [], []
    for group, (row, q) in groups.items():
        if not row.get("interpretable"):
            not_interpretable.append(group)
            continue
        low, high = row.get("delta_ci") or (None, None)
        if low is not None and low > limit and q is not None and q <= policy.alpha:
            offenders.append(f"{group}: ΔΔ {number(row.get('delta'), '+.3f')} {_ci(low, high)}, "
                             f"p/q = {_p(q)}; Δ {number(row.get('a'), '+.3f')} -> "
                             f"{number(row.get('b'), '+.3f')}; {row.get('n_paired')} paired "
                             "scenarios")
    base, candidate = comparison["runs"]
    text = (f"{len(offenders)} of {len(groups) - len(not_interpretable)} tool-drift groups of "
            f"{candidate} regressed vs {base} by more than {number(limit, '+.3f')}")
    if not_interpretable:
        text += f" ({len(not_interpretable)} group(s) with too few scenarios not checked)"
    if comparison["design"].get("warning"):
        text += f"; {comparison['design']['warning']}"
    if not offenders and len(not_interpretable) == len(groups):
        return RuleResult(name, "undecided", text)
    return RuleResult(name, "fail" if offenders else "pass", text, tuple(offenders))


def _skipped(name: str, reason: str) -> RuleResult:
    """A rule the gate did not evaluate, listed with why (never silent)."""
    return RuleResult(name, "skipped", f"not evaluated: {reason}")


def exit_status(rules: list[RuleResult]) -> int:
    """1 when a rule failed, else 5 when one is undecided, else 0."""
    statuses = {rule.status for rule in rules}
    if "fail" in statuses:
        return RULE_FAILED
    if "undecided" in statuses:
        return INSTRUMENT_INVALID
    return PASSED


def evaluate(policy: Policy, *, run: RunStats | None = None, baseline: RunStats | None = None,
             comparison: dict | None = None, tooldrift: ToolDriftSummary | None = None,
             tooldrift_comparison: dict | None = None,
             labels: dict | None = None) -> GateResult:
    """Run every rule the policy enables on what is given (pure: no file is read).

    ``run`` / ``baseline`` are audit runs' statistics, ``comparison`` a
    ``memlens.audit.compare`` result, ``tooldrift`` a tool-drift summary (``tooldrift.json``
    read by ``memlens.tooldrift.summary.read_summary``) and
    ``tooldrift_comparison`` a ``memlens.tooldrift.compare`` result. A rule whose input is
    missing is a ``MemlensError`` (bad input), as is a policy with nothing to check.
    """
    labels = labels or {}
    rules = []
    audit_runs = {labels.get("run", "run"): run} if run is not None else {}
    if baseline is not None:
        audit_runs[labels.get("baseline", "baseline")] = baseline
    for label, audit in audit_runs.items():  # a wrong --metric is bad input, whatever the verdict
        if audit.stats is not None:
            _check_metrics(audit.stats.metrics, policy.metrics, f"statistics of {label}")
    if policy.require_valid and audit_runs:
        rules.append(instrument_rule(audit_runs))
    else:
        rules.append(_skipped("instrument_valid", "no audit run given" if policy.require_valid
                              else "turned off (--no-require-valid / require_valid: false)"))
    if policy.max_d_rel_ci_low is not None:
        if run is None:
            raise MemlensError("gate: --max-d-rel-ci-low needs an audit run (RUN)")
        rules.append(d_rel_rule(run, policy, labels.get("run", "run")))
    else:
        rules.append(_skipped("d_rel_ci_low", "no limit set (--max-d-rel-ci-low X)"))
    if policy.max_regression is not None:
        if comparison is None:
            raise MemlensError("gate: --max-regression needs a baseline run (--baseline RUN)")
        rules.append(regression_rule(comparison, policy))
    else:
        rules.append(_skipped("regression", "no baseline run (--baseline RUN): no regression "
                                            "was checked"))
    if policy.max_tooldrift_delta is not None:
        if tooldrift is None:
            raise MemlensError("gate: --max-tooldrift-delta needs a tool-drift run (--tooldrift DIR)")
        rules.append(tooldrift_rule(tooldrift, policy, labels.get("tooldrift", "tool drift")))
    else:
        rules.append(_skipped("tooldrift_delta", "no limit set (--max-tooldrift-delta Z)"))
    if policy.max_tooldrift_regression is not None:
        if tooldrift_comparison is None:
            raise MemlensError("gate: --max-tooldrift-regression needs --tooldrift DIR and "
                               "--tooldrift-baseline DIR")
        rules.append(tooldrift_regression_rule(tooldrift_comparison, policy))
    else:
        rules.append(_skipped("tooldrift_regression", "no tool-drift baseline "
                                                      "(--tooldrift-baseline DIR)"))
    if all(rule.status == "skipped" for rule in rules):
        raise MemlensError("gate: no rule to check (give an audit RUN, or set a limit such as "
                           "--max-regression / --max-tooldrift-delta)")
    return GateResult(tuple(rules), exit_status(rules), comparison, tooldrift_comparison, labels)
