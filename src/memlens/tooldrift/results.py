"""The typed tool-drift summary: what ``summarize`` computes and ``tooldrift.json`` stores.

Frozen dataclasses, as the audit's statistics are typed (``memlens.stats.results``). Each has
``to_dict()``, exactly its part of ``tooldrift.json`` (same keys, same order: the file is
unchanged), and ``from_dict`` to read it back; :func:`parse_summary` reads a whole file with a
``MemlensError`` naming the source and the first missing or malformed key. Numbers that could not
be computed are ``None`` (JSON ``null``). Intervals are ``(low, high)`` tuples (JSON lists).

The report (``memlens.report.tooldrift``), the gate and the CLI read these attributes, never
string keys. Free-form parts stay dicts where their keys are data, not fields: the per-condition
status counts and ``calls_by_path``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlens.errors import MemlensError

Interval = tuple[float, float] | None


def _interval(value) -> Interval:
    return None if value is None else (value[0], value[1])


def _list(value: Interval) -> list[float] | None:
    return None if value is None else [value[0], value[1]]


@dataclass(frozen=True)
class Proportion:
    """``k`` of ``n`` with its Wilson 95 % interval (rate and interval None when n = 0)."""

    k: int
    n: int
    rate: float | None
    ci95: Interval

    def to_dict(self) -> dict:
        """``{"k", "n", "rate", "ci95"}``."""
        return {"k": self.k, "n": self.n, "rate": self.rate, "ci95": _list(self.ci95)}

    @classmethod
    def from_dict(cls, data: dict) -> Proportion:
        """Read :meth:`to_dict`'s form."""
        return cls(data["k"], data["n"], data["rate"], _interval(data["ci95"]))


@dataclass(frozen=True)
class ScenarioIntervals:
    """Scenario-bootstrap percentile 95 % CIs of r_neutral, r_biased, Δ and Δ's bootstrap p."""

    r_neutral: Interval
    r_biased: Interval
    delta: Interval
    delta_bootstrap_p: float | None

    def to_dict(self) -> dict:
        """``{"r_neutral", "r_biased", "delta", "delta_bootstrap_p"}``."""
        return {"r_neutral": _list(self.r_neutral), "r_biased": _list(self.r_biased),
                "delta": _list(self.delta), "delta_bootstrap_p": self.delta_bootstrap_p}

    @classmethod
    def from_dict(cls, data: dict) -> ScenarioIntervals:
        """Read :meth:`to_dict`'s form."""
        return cls(_interval(data["r_neutral"]), _interval(data["r_biased"]),
                   _interval(data["delta"]), data["delta_bootstrap_p"])


@dataclass(frozen=True)
class PairedTest:
    """Wilcoxon signed-rank and paired t-test of per-scenario rates; ``note`` says why the
    p-values are None when a test is undefined."""

    test: str
    n: int
    mean_difference: float | None
    wilcoxon_statistic: float | None = None
    wilcoxon_p: float | None = None
    t_statistic: float | None = None
    t_p: float | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        """The test's fields (``note`` only when set)."""
        data = {"test": self.test, "n": self.n, "mean_difference": self.mean_difference,
                "wilcoxon_statistic": self.wilcoxon_statistic, "wilcoxon_p": self.wilcoxon_p,
                "t_statistic": self.t_statistic, "t_p": self.t_p}
        return data if self.note is None else {**data, "note": self.note}

    @classmethod
    def from_dict(cls, data: dict) -> PairedTest:
        """Read :meth:`to_dict`'s form."""
        return cls(data["test"], data["n"], data["mean_difference"], data["wilcoxon_statistic"],
                   data["wilcoxon_p"], data["t_statistic"], data["t_p"], data.get("note"))


@dataclass(frozen=True)
class Reason:
    """Why Δ is not interpretable: ``code``, ``text`` and the terminal table's ``short`` form."""

    code: str
    text: str
    short: str | None = None

    def to_dict(self) -> dict:
        """``{"code", "text", "short"}`` (``short`` only when set)."""
        data = {"code": self.code, "text": self.text}
        return data if self.short is None else {**data, "short": self.short}

    @classmethod
    def from_dict(cls, data: dict) -> Reason:
        """Read :meth:`to_dict`'s form."""
        return cls(data["code"], data["text"], data.get("short"))


@dataclass(frozen=True)
class Interpretation:
    """Whether a group's Δ means something (``memlens.tooldrift.interpret``) and the rule's
    thresholds."""

    interpretable: bool
    reasons: tuple[Reason, ...]
    min_biased_retrieval_count: int
    min_biased_retrieval_share: float

    def to_dict(self) -> dict:
        """``{"interpretable", "reasons", "rule": {...}}``."""
        return {"interpretable": self.interpretable,
                "reasons": [reason.to_dict() for reason in self.reasons],
                "rule": {"min_biased_retrieval_count": self.min_biased_retrieval_count,
                         "min_biased_retrieval_share": self.min_biased_retrieval_share}}

    @classmethod
    def from_dict(cls, data: dict) -> Interpretation:
        """Read :meth:`to_dict`'s form."""
        rule = data["rule"]
        return cls(data["interpretable"], tuple(Reason.from_dict(r) for r in data["reasons"]),
                   rule["min_biased_retrieval_count"], rule["min_biased_retrieval_share"])


@dataclass(frozen=True)
class NoCallRate:
    """Share of a group's calls without a tool call, overall and per condition."""

    overall: Proportion
    by_condition: dict[str, Proportion]

    def to_dict(self) -> dict:
        """The overall proportion's keys plus ``by_condition``."""
        return {**self.overall.to_dict(),
                "by_condition": {c: p.to_dict() for c, p in self.by_condition.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> NoCallRate:
        """Read :meth:`to_dict`'s form."""
        return cls(Proportion.from_dict(data),
                   {c: Proportion.from_dict(p) for c, p in data["by_condition"].items()})


@dataclass(frozen=True)
class ConditionRetrieval:
    """One condition's queries: how many retrieved any memory, how many a biased one, and how
    many prompts equal the base prompt."""

    queries: int
    any: Proportion
    biased: Proportion
    prompt_equals_base: int

    def to_dict(self) -> dict:
        """``{"queries", "any", "biased", "prompt_equals_base"}``."""
        return {"queries": self.queries, "any": self.any.to_dict(),
                "biased": self.biased.to_dict(), "prompt_equals_base": self.prompt_equals_base}

    @classmethod
    def from_dict(cls, data: dict) -> ConditionRetrieval:
        """Read :meth:`to_dict`'s form."""
        return cls(data["queries"], Proportion.from_dict(data["any"]),
                   Proportion.from_dict(data["biased"]), data["prompt_equals_base"])


@dataclass(frozen=True)
class FrameworkRetrieval:
    """The item-level retrieval counts of a live framework run
    (``memlens.tooldrift.frameworks.retrieval_summary``)."""

    biased_queries: int
    biased_memory_retrieved: int
    biased_retrieval_rate: float | None
    mean_score: float | None
    items_retrieved: int

    def to_dict(self) -> dict:
        """The five counts, in this order."""
        return {"biased_queries": self.biased_queries,
                "biased_memory_retrieved": self.biased_memory_retrieved,
                "biased_retrieval_rate": self.biased_retrieval_rate,
                "mean_score": self.mean_score, "items_retrieved": self.items_retrieved}

    @classmethod
    def from_dict(cls, data: dict) -> FrameworkRetrieval:
        """Read :meth:`to_dict`'s form."""
        return cls(data["biased_queries"], data["biased_memory_retrieved"],
                   data["biased_retrieval_rate"], data["mean_score"], data["items_retrieved"])


@dataclass(frozen=True)
class Retrieval:
    """Retrieval rates per condition (neutral, biased) and, for the whole run of a live
    framework, the item counts (``framework``)."""

    neutral: ConditionRetrieval | None
    biased: ConditionRetrieval | None
    framework: FrameworkRetrieval | None = None

    def to_dict(self) -> dict:
        """``neutral``, ``biased`` (when known) and the framework's counts, flat."""
        data = {condition: rates.to_dict() for condition, rates in
                (("neutral", self.neutral), ("biased", self.biased)) if rates is not None}
        return data if self.framework is None else {**data, **self.framework.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> Retrieval:
        """Read :meth:`to_dict`'s form."""
        rates = {c: ConditionRetrieval.from_dict(data[c]) if c in data else None
                 for c in ("neutral", "biased")}
        framework = FrameworkRetrieval.from_dict(data) if "biased_queries" in data else None
        return cls(rates["neutral"], rates["biased"], framework)


@dataclass(frozen=True)
class GroupSummary:
    """One group of scenarios (the run, a bias dimension, a domain): the rates, Δ =
    r_biased − r_neutral, their intervals, the paired test, whether Δ is interpretable, the
    no-call rate and (Setting 2) the retrieval rates."""

    n_scenarios: int
    r_neutral: float | None
    r_biased: float | None
    delta: float | None
    ci: ScenarioIntervals
    paired_test: PairedTest
    interpretation: Interpretation
    no_call: NoCallRate
    retrieval: Retrieval | None

    def to_dict(self) -> dict:
        """The group's part of ``tooldrift.json``."""
        return {"n_scenarios": self.n_scenarios, "r_neutral": self.r_neutral,
                "r_biased": self.r_biased, "delta": self.delta, "ci": self.ci.to_dict(),
                "paired_test": self.paired_test.to_dict(),
                "interpretation": self.interpretation.to_dict(),
                "no_call": self.no_call.to_dict(),
                "retrieval": None if self.retrieval is None else self.retrieval.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> GroupSummary:
        """Read :meth:`to_dict`'s form."""
        return cls(data["n_scenarios"], data["r_neutral"], data["r_biased"], data["delta"],
                   ScenarioIntervals.from_dict(data["ci"]),
                   PairedTest.from_dict(data["paired_test"]),
                   Interpretation.from_dict(data["interpretation"]),
                   NoCallRate.from_dict(data["no_call"]),
                   None if data["retrieval"] is None else Retrieval.from_dict(data["retrieval"]))


@dataclass(frozen=True)
class Estimate:
    """A bootstrap estimate over ``n`` scenarios (None when there were none); ``what`` names
    a derived quantity."""

    n: int
    estimate: float | None = None
    ci95: Interval = None
    bootstrap_p: float | None = None
    what: str | None = None

    def to_dict(self) -> dict:
        """``{"n", "estimate", "ci95", "bootstrap_p"}`` (and ``what`` when set)."""
        data = {"n": self.n, "estimate": self.estimate, "ci95": _list(self.ci95),
                "bootstrap_p": self.bootstrap_p}
        return data if self.what is None else {**data, "what": self.what}

    @classmethod
    def from_dict(cls, data: dict) -> Estimate:
        """Read :meth:`to_dict`'s form."""
        return cls(data["n"], data["estimate"], _interval(data["ci95"]), data["bootstrap_p"],
                   data.get("what"))


@dataclass(frozen=True)
class Decomposition:
    """Δ_paired = w · Δ|retrieved + (1 − w) · Δ|not retrieved over the paired scenarios."""

    delta_paired: float
    weight_retrieved: float
    formula: str

    def to_dict(self) -> dict:
        """``{"delta_paired", "weight_retrieved", "formula"}``."""
        return {"delta_paired": self.delta_paired, "weight_retrieved": self.weight_retrieved,
                "formula": self.formula}

    @classmethod
    def from_dict(cls, data: dict) -> Decomposition:
        """Read :meth:`to_dict`'s form."""
        return cls(data["delta_paired"], data["weight_retrieved"], data["formula"])


@dataclass(frozen=True)
class Attribution:
    """Δ split into retrieval and model (``memlens.tooldrift.stats.attribution``); when not
    ``applicable`` only ``note`` says why."""

    applicable: bool
    note: str | None = None
    p_biased_retrieved: Proportion | None = None
    paired_scenarios: int = 0
    not_retrieved_equal_base: int = 0
    """Not-retrieved scenarios whose neutral and biased prompts both equal the base prompt:
    their Δ is 0 by construction."""
    delta_given_retrieved: Estimate | None = None
    delta_given_not_retrieved: Estimate | None = None
    difference: Estimate | None = None
    decomposition: Decomposition | None = None

    def to_dict(self) -> dict:
        """``{"applicable": false, "note"}``, or every part of the split."""
        if not self.applicable:
            return {"applicable": False, "note": self.note}
        data = {"applicable": True, "p_biased_retrieved": self.p_biased_retrieved.to_dict(),
                "paired_scenarios": self.paired_scenarios,
                "not_retrieved_equal_base": self.not_retrieved_equal_base,
                "delta_given_retrieved": self.delta_given_retrieved.to_dict(),
                "delta_given_not_retrieved": self.delta_given_not_retrieved.to_dict(),
                "difference": self.difference.to_dict()}
        if self.decomposition is not None:
            data["decomposition"] = self.decomposition.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Attribution:
        """Read :meth:`to_dict`'s form."""
        if not data["applicable"]:
            return cls(False, data["note"])
        decomposition = data.get("decomposition")
        return cls(True, None, Proportion.from_dict(data["p_biased_retrieved"]),
                   data["paired_scenarios"], data["not_retrieved_equal_base"],
                   Estimate.from_dict(data["delta_given_retrieved"]),
                   Estimate.from_dict(data["delta_given_not_retrieved"]),
                   Estimate.from_dict(data["difference"]),
                   None if decomposition is None else Decomposition.from_dict(decomposition))


@dataclass(frozen=True)
class StatusCount:
    """Calls with one status (``no_call``, ``invalid``) per condition seen, and in total."""

    by_condition: dict[str, int]
    total: int

    def to_dict(self) -> dict:
        """``{<condition>: count, ..., "total"}``."""
        return {**self.by_condition, "total": self.total}

    @classmethod
    def from_dict(cls, data: dict) -> StatusCount:
        """Read :meth:`to_dict`'s form."""
        return cls({key: value for key, value in data.items() if key != "total"}, data["total"])


@dataclass(frozen=True)
class Counts:
    """Data-quality counts of a scoring (see docs/tooldrift.md)."""

    calls: int
    no_call: StatusCount
    invalid: StatusCount
    schema_violations: int
    missing_parameters: int
    unrankable_parameters: int
    pairs_with_failed_call: int
    unpaired_calls: int
    scenarios_without_rate: dict[str, int]
    unscored_entries: tuple[str, ...]
    failed_calls: int | None = None
    """Calls that failed at the API after retries (a run only; ``score`` has none)."""

    def to_dict(self) -> dict:
        """The counts (``failed_calls`` only when known)."""
        data = {"calls": self.calls, "no_call": self.no_call.to_dict(),
                "invalid": self.invalid.to_dict(), "schema_violations": self.schema_violations,
                "missing_parameters": self.missing_parameters,
                "unrankable_parameters": self.unrankable_parameters,
                "pairs_with_failed_call": self.pairs_with_failed_call,
                "unpaired_calls": self.unpaired_calls,
                "scenarios_without_rate": dict(self.scenarios_without_rate),
                "unscored_entries": list(self.unscored_entries)}
        return data if self.failed_calls is None else {**data, "failed_calls": self.failed_calls}

    @classmethod
    def from_dict(cls, data: dict) -> Counts:
        """Read :meth:`to_dict`'s form."""
        return cls(data["calls"], StatusCount.from_dict(data["no_call"]),
                   StatusCount.from_dict(data["invalid"]), data["schema_violations"],
                   data["missing_parameters"], data["unrankable_parameters"],
                   data["pairs_with_failed_call"], data["unpaired_calls"],
                   dict(data["scenarios_without_rate"]), tuple(data["unscored_entries"]),
                   data.get("failed_calls"))


@dataclass(frozen=True)
class MemoryFlags:
    """One (scenario, condition) prompt: equal to the base prompt? (Setting 2) retrieved any
    memory / a biased one (None when the memory was injected verbatim)?"""

    same_as_base: bool | None
    retrieved_any: bool | None
    retrieved_biased: bool | None

    def to_dict(self) -> dict:
        """``{"same_as_base", "retrieved_any", "retrieved_biased"}``."""
        return {"same_as_base": self.same_as_base, "retrieved_any": self.retrieved_any,
                "retrieved_biased": self.retrieved_biased}

    @classmethod
    def from_dict(cls, data: dict) -> MemoryFlags:
        """Read :meth:`to_dict`'s form."""
        return cls(data["same_as_base"], data["retrieved_any"], data["retrieved_biased"])


@dataclass(frozen=True)
class PairResult:
    """One (condition call, base call) pair: its rate (flipped / comparable, None when nothing
    was comparable) and the parameters behind it."""

    k: int
    rate: float | None
    flipped: tuple[str, ...]
    improved: tuple[str, ...]
    comparable: int
    missing: tuple[str, ...]
    """Parameters absent from a call with no default to fall back on."""
    unrankable: tuple[str, ...]
    """Parameters present but not rankable (value outside the enum order, wrong type)."""

    def to_dict(self) -> dict:
        """``{"k", "rate", "flipped", "improved", "comparable", "missing", "unrankable"}``."""
        return {"k": self.k, "rate": self.rate, "flipped": list(self.flipped),
                "improved": list(self.improved), "comparable": self.comparable,
                "missing": list(self.missing), "unrankable": list(self.unrankable)}

    @classmethod
    def from_dict(cls, data: dict) -> PairResult:
        """Read :meth:`to_dict`'s form."""
        return cls(data["k"], data["rate"], tuple(data["flipped"]), tuple(data["improved"]),
                   data["comparable"], tuple(data["missing"]), tuple(data["unrankable"]))


@dataclass(frozen=True)
class ScenarioResult:
    """One scenario's rates, its prompts' memory flags per condition (None for ``score``) and
    its pairs per condition — what a paired comparison reads."""

    entry_id: str
    bias_dimension: str
    domain: str
    r_neutral: float | None
    r_biased: float | None
    memory: dict[str, MemoryFlags] | None
    pairs: dict[str, tuple[PairResult, ...]]

    def to_dict(self) -> dict:
        """The scenario's row of ``scenarios``."""
        memory = None if self.memory is None else {c: m.to_dict() for c, m in self.memory.items()}
        return {"entry_id": self.entry_id, "bias_dimension": self.bias_dimension,
                "domain": self.domain, "r_neutral": self.r_neutral, "r_biased": self.r_biased,
                "memory": memory,
                "pairs": {c: [p.to_dict() for p in pairs] for c, pairs in self.pairs.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> ScenarioResult:
        """Read :meth:`to_dict`'s form."""
        memory = data["memory"]
        return cls(data["entry_id"], data["bias_dimension"], data["domain"], data["r_neutral"],
                   data["r_biased"],
                   None if memory is None else {c: MemoryFlags.from_dict(m)
                                                for c, m in memory.items()},
                   {c: tuple(PairResult.from_dict(p) for p in pairs)
                    for c, pairs in data["pairs"].items()})


@dataclass(frozen=True)
class ScoreInputs:
    """What ``memlens tooldrift score`` read (``scenarios``: None without schema defaults)."""

    rubrics: str
    calls: str
    scenarios: str | None

    def to_dict(self) -> dict:
        """``{"rubrics", "calls", "scenarios"}``."""
        return {"rubrics": self.rubrics, "calls": self.calls, "scenarios": self.scenarios}

    @classmethod
    def from_dict(cls, data: dict) -> ScoreInputs:
        """Read :meth:`to_dict`'s form."""
        return cls(data["rubrics"], data["calls"], data["scenarios"])


@dataclass(frozen=True)
class RunInfo:
    """How a ``memlens tooldrift run`` ran: timing, size, memory mode and the call path."""

    wall_s: float
    entries: int
    k: int
    setting: int
    framework: str | None
    memory: str
    """``verbatim``, ``framework:<name>`` or ``replay:<name>``."""
    tool_choice: str
    call_path: str
    calls_by_path: dict[str, int]

    def to_dict(self) -> dict:
        """The ``run`` section."""
        return {"wall_s": self.wall_s, "entries": self.entries, "k": self.k,
                "setting": self.setting, "framework": self.framework, "memory": self.memory,
                "tool_choice": self.tool_choice, "call_path": self.call_path,
                "calls_by_path": dict(self.calls_by_path)}

    @classmethod
    def from_dict(cls, data: dict) -> RunInfo:
        """Read :meth:`to_dict`'s form."""
        return cls(data["wall_s"], data["entries"], data["k"], data["setting"],
                   data["framework"], data["memory"], data["tool_choice"], data["call_path"],
                   dict(data["calls_by_path"]))


@dataclass(frozen=True)
class Deflection:
    """The LLM judge's mean deflection score (1-5) per condition, Δ, unusable replies."""

    scale: str
    unusable: int
    neutral: float | None
    biased: float | None
    delta: float | None

    def to_dict(self) -> dict:
        """``{"scale", "unusable", "neutral", "biased", "delta"}``."""
        return {"scale": self.scale, "unusable": self.unusable, "neutral": self.neutral,
                "biased": self.biased, "delta": self.delta}

    @classmethod
    def from_dict(cls, data: dict) -> Deflection:
        """Read :meth:`to_dict`'s form."""
        return cls(data["scale"], data["unusable"], data["neutral"], data["biased"],
                   data["delta"])


@dataclass(frozen=True)
class ToolDriftSummary:
    """A whole ``tooldrift.json``: the overall group (flat at the top level), the groups per
    bias dimension and domain, the attribution, counts, settings and scenarios, and what
    produced it (``inputs`` for ``score``, ``run`` and ``deflection`` for ``run``)."""

    metric: str
    overall: GroupSummary
    by_dimension: dict[str, GroupSummary]
    by_domain: dict[str, GroupSummary]
    attribution: Attribution
    counts: Counts
    seed: int
    n_bootstrap: int
    scenarios: tuple[ScenarioResult, ...]
    inputs: ScoreInputs | None = None
    run: RunInfo | None = None
    deflection: Deflection | None = None

    def groups(self) -> list[tuple[str, GroupSummary]]:
        """``(label, group)`` for every result group in report order: ``overall``, then
        ``dim: NAME`` per bias dimension and ``domain: NAME`` per domain."""
        return [("overall", self.overall),
                *((f"dim: {name}", group) for name, group in self.by_dimension.items()),
                *((f"domain: {name}", group) for name, group in self.by_domain.items())]

    def to_dict(self) -> dict:
        """``tooldrift.json``'s structure (see docs/tooldrift.md)."""
        data = {"metric": self.metric, **self.overall.to_dict(),
                "by_dimension": {k: g.to_dict() for k, g in self.by_dimension.items()},
                "by_domain": {k: g.to_dict() for k, g in self.by_domain.items()},
                "attribution": self.attribution.to_dict(), "counts": self.counts.to_dict(),
                "settings": {"seed": self.seed, "n_bootstrap": self.n_bootstrap},
                "scenarios": [s.to_dict() for s in self.scenarios]}
        for key, part in (("inputs", self.inputs), ("run", self.run),
                          ("deflection", self.deflection)):
            if part is not None:
                data[key] = part.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict) -> ToolDriftSummary:
        """Read :meth:`to_dict`'s form (``KeyError`` / ``TypeError`` on another shape; see
        :func:`parse_summary` for the user-facing error)."""
        unknown = set(data) - SUMMARY_KEYS
        if unknown:
            raise KeyError(f"unknown key {sorted(unknown)[0]!r}")
        optional = {"inputs": ScoreInputs, "run": RunInfo, "deflection": Deflection}
        parts = {key: None if data.get(key) is None else kind.from_dict(data[key])
                 for key, kind in optional.items()}
        return cls(data["metric"], GroupSummary.from_dict(data),
                   {k: GroupSummary.from_dict(g) for k, g in data["by_dimension"].items()},
                   {k: GroupSummary.from_dict(g) for k, g in data["by_domain"].items()},
                   Attribution.from_dict(data["attribution"]), Counts.from_dict(data["counts"]),
                   data["settings"]["seed"], data["settings"]["n_bootstrap"],
                   tuple(ScenarioResult.from_dict(s) for s in data["scenarios"]), **parts)


SUMMARY_KEYS = frozenset({"metric", "n_scenarios", "r_neutral", "r_biased", "delta", "ci",
                          "paired_test", "interpretation", "no_call", "retrieval",
                          "by_dimension", "by_domain", "attribution", "counts", "settings",
                          "scenarios", "inputs", "run", "deflection"})
"""The top-level keys of ``tooldrift.json``."""


def parse_summary(data: Any, source: str) -> ToolDriftSummary:
    """``ToolDriftSummary.from_dict(data)``; another shape raises :class:`MemlensError` naming
    ``source`` and the first missing or malformed key.

    >>> parse_summary({"metric": "m"}, "run/tooldrift.json")
    Traceback (most recent call last):
    memlens.errors.MemlensError: run/tooldrift.json: not a tooldrift.json written by this memlens (missing key 'n_scenarios')
    """
    if not isinstance(data, dict):
        raise MemlensError(f"{source}: not a tooldrift.json (expected a JSON object)")
    try:
        return ToolDriftSummary.from_dict(data)
    except KeyError as error:
        problem = error.args[0]
        problem = problem if str(problem).startswith("unknown key") else f"missing key {problem!r}"
    except (TypeError, AttributeError, IndexError, ValueError) as error:
        problem = f"malformed value: {error}"
    raise MemlensError(f"{source}: not a tooldrift.json written by this memlens ({problem})")
