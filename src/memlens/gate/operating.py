"""Operating characteristics: how often each decision memlens hands a user is wrong.

For a design (:data:`memlens.audit.simulate.PRESETS`) and a truth
(:class:`memlens.audit.simulate.Truth`), :func:`measure` runs seeded simulated audits through
the real drift, statistics and decision code and counts each decision:

- ``validity_pass`` — the verdict is ``pass`` (well-behaved instrument: life events at the
  paper's +23 %, nothing else) — *power*, target ≥ 0.8;
- ``specificity_fail`` — specificity ``fail`` when noise is null — *false-positive rate*, ≤ 0.05;
- ``persona_detected_null`` — some null persona category "detected" (d_rel q ≤ 0.05 with its CI
  above 0, what the report's forest plot marks) — ≤ 0.05;
- ``persona_detected`` — the planted persona category detected — power;
- ``direction_null_category`` — a category with no effect at all (noise, the other persona
  categories) gets a significant direction row — ≤ 0.05; ``direction_planted`` — the planted
  category gets one — power. (Life events are left out of the null count: they change the
  reasoning by design, toward a different symbol in each question, so they have an effect, only
  not a consistent direction; with few questions such a skewed effect can pass the t test.);
- ``contrast_identical`` — a value contrast "detected" although every value is treated alike
  (memory of any value adds drift) — ≤ 0.05; ``contrast_planted`` — the planted value pair
  detected — power;
- ``gate_false_alarm`` / ``gate_power`` — ``memlens gate`` with its default policy (a baseline
  implies Δ mean, limit 0) exits 1 for the same model on another sampling seed / for a doubled
  persona effect on another seed; ``gate_undecided`` — it exits 5.

Every rate comes with its replicate count and a Wilson 95 % interval. The benchmark script
(``benchmarks/bench_operating_characteristics.py``) writes the table of
docs/operating-characteristics.md; ``tests/gate/test_operating.py`` re-checks a fast subset.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memlens.audit.simulate import (
    PRESETS,
    Design,
    SimulatedRun,
    Truth,
    ontology_symbols,
    simulate_run,
)
from memlens.gate.policy import Policy
from memlens.gate.rules import RunStats, evaluate
from memlens.ontology.gold import wilson_interval
from memlens.stats.direction import direction_profile

PERSONA_WEIGHT = 0.5
"""Mixing weight of a planted persona effect (≈ +10–15 % DTW elevation: half the paper's
life-event effect)."""
DOUBLED_WEIGHT = 0.75
"""The weight whose persona elevation is about twice :data:`PERSONA_WEIGHT`'s."""


@dataclass(frozen=True)
class Rate:
    """One decision's rate over replicates, with its Wilson 95 % interval."""

    decision: str
    design: str
    truth: str
    hits: int
    n: int

    @property
    def rate(self) -> float:
        """hits / n."""
        return self.hits / self.n if self.n else float("nan")

    @property
    def ci(self) -> tuple[float, float]:
        """Wilson 95 % interval."""
        return wilson_interval(self.hits, self.n)


def _analyze(run: SimulatedRun, seed: int, n_bootstrap: int):
    from memlens.stats import analyze  # lazy: pulls scipy

    return analyze(run.frame, metrics=["dtw", "sri"], seed=seed, n_bootstrap=n_bootstrap,
                   mixed_model=False)


def _detected(stats, category: str) -> bool:
    row = stats.metrics["dtw"].categories.get(category)
    return bool(row is not None and row.d_rel_q is not None and row.d_rel_q <= 0.05
                and row.d_rel_ci[0] is not None and row.d_rel_ci[0] > 0)


def _pair_frame(run: SimulatedRun):
    from memlens.audit.howdrift import pair_frame  # lazy: pulls scipy

    return pair_frame(run.frame, run.pairs)


def verdict_decisions(design: Design, replicates: int, *, seed: int = 0,
                      n_bootstrap: int = 500) -> list[Rate]:
    """Validity and persona "detected" under the well-behaved truth (null persona, null
    noise) and with one planted persona category (age)."""
    counts = {"validity_pass": 0, "specificity_fail": 0, "persona_detected_null": 0,
              "persona_detected": 0}
    for r in range(replicates):
        stats = _analyze(simulate_run(design, Truth(), seed + r, question_seed=seed + r),
                         seed + r, n_bootstrap)
        counts["validity_pass"] += stats.validity.verdict == "pass"
        counts["specificity_fail"] += any(c.name == "specificity" and c.status == "fail"
                                          for c in stats.validity.checks)
        counts["persona_detected_null"] += any(_detected(stats, c) for c in design.persona)
        planted = _analyze(simulate_run(design, Truth(persona={"age": PERSONA_WEIGHT}),
                                        10_000 + seed + r, question_seed=seed + r),
                           seed + r, n_bootstrap)
        counts["persona_detected"] += _detected(planted, "age")
    truths = {"validity_pass": "life events +23 %, persona and noise null",
              "specificity_fail": "noise null", "persona_detected_null": "persona null",
              "persona_detected": f"age planted (w = {PERSONA_WEIGHT})"}
    return [Rate(name, design.name, truths[name], hits, replicates)
            for name, hits in counts.items()]


def direction_decisions(design: Design, replicates: int, *, seed: int = 0,
                        n_bootstrap: int = 500) -> list[Rate]:
    """Direction flags: a directional effect planted on ``age`` (toward one symbol in every
    question); how often another category is flagged, and how often age is."""

    symbols, root_of = ontology_symbols()
    null_categories = (set(design.noise) | set(design.persona)) - {"age"}
    null_hits = planted_hits = 0
    for r in range(replicates):
        run = simulate_run(design, Truth(direction={"age": PERSONA_WEIGHT}), seed + r,
                           question_seed=seed + r, symbols=symbols)
        table = direction_profile(_pair_frame(run), symbols, root_of, seed=seed + r,
                                  n_bootstrap=n_bootstrap)
        flagged = set(table.loc[table["significant"], "category"])
        null_hits += bool(flagged & null_categories)
        planted_hits += "age" in flagged
    truth = (f"direction planted on age (w = {PERSONA_WEIGHT}); noise and other persona "
             "categories null")
    return [Rate("direction_null_category", design.name, truth, null_hits, replicates),
            Rate("direction_planted", design.name, truth, planted_hits, replicates)]


def contrast_decisions(design: Design, replicates: int, *, seed: int = 0,
                       n_bootstrap: int = 500) -> list[Rate]:
    """Value contrasts (designs with ≥ 2 values per category): values treated alike under
    memory-added variability, and one value of age planted apart."""
    from memlens.audit.howdrift import contrast_section  # lazy: pulls scipy

    boot = {"n_bootstrap": n_bootstrap}
    null_hits = planted_hits = 0
    values = design.persona.get("age", 1)
    for r in range(replicates):
        null = simulate_run(design, Truth(memory_noise=0.3), seed + r, question_seed=seed + r)
        rows = contrast_section(null.frame, _pair_frame(null), {**boot, "seed": seed + r})
        null_hits += any(row["detected"] for row in rows["rows"])
        planted = simulate_run(design, Truth(memory_noise=0.3,
                                             values={("age", values - 1): PERSONA_WEIGHT}),
                               10_000 + seed + r, question_seed=seed + r)
        rows = contrast_section(planted.frame, _pair_frame(planted), {**boot, "seed": seed + r})
        planted_hits += any(row["detected"] and row["category"] == "age"
                            and row["value_b"] == f"persona/age/{values}" for row in rows["rows"])
    return [Rate("contrast_identical", design.name,
                 "every value alike, memory adds variability (w = 0.3)", null_hits, replicates),
            Rate("contrast_planted", design.name,
                 f"one age value apart (w = {PERSONA_WEIGHT})", planted_hits, replicates)]


def gate_decisions(design: Design, replicates: int, *, seed: int = 0, n_bootstrap: int = 500,
                   statistics: Iterable[str] = ("mean", "d_rel")) -> list[Rate]:
    """``memlens gate CANDIDATE --baseline BASELINE`` with the default policy (and with Δ d_rel
    for comparison): baseline and candidate are sampled with different seeds on the same
    questions; the candidate has the same age effect (false alarm) or a doubled one (power)."""
    from memlens.audit.compare import compare_frames, validity_of  # lazy: pulls scipy

    counts: Counter[tuple[str, str, str]] = Counter()
    for r in range(replicates):
        base = simulate_run(design, Truth(persona={"age": PERSONA_WEIGHT}), seed + r,
                            question_seed=seed + r)
        base_stats = _analyze(base, seed + r, n_bootstrap)
        for scenario, weight in (("same", PERSONA_WEIGHT), ("doubled", DOUBLED_WEIGHT)):
            cand = simulate_run(design, Truth(persona={"age": weight}), 20_000 + seed + r,
                                question_seed=seed + r)
            cand_stats = _analyze(cand, seed + r, n_bootstrap)
            comparison = compare_frames(
                base.frame, cand.frame, baselines=(design.baselines, design.baselines),
                validity=(validity_of(base_stats), validity_of(cand_stats)), seed=seed + r,
                n_bootstrap=n_bootstrap)
            for statistic in statistics:
                policy = Policy(regression_statistic=statistic).with_inputs(baseline=True)
                result = evaluate(policy, run=RunStats(cand_stats), baseline=RunStats(base_stats),
                                  comparison=comparison)
                counts[scenario, statistic, "fail"] += result.exit_status == 1
                counts[scenario, statistic, "undecided"] += result.exit_status == 5
    out = []
    for statistic in statistics:
        label = "default (Δ mean)" if statistic == "mean" else "Δ d_rel"
        out += [Rate(f"gate_false_alarm [{label}]", design.name,
                     "same age effect, another sampling seed",
                     counts[("same", statistic, "fail")], replicates),
                Rate(f"gate_power [{label}]", design.name,
                     "age effect doubled, another sampling seed",
                     counts[("doubled", statistic, "fail")], replicates),
                Rate(f"gate_undecided [{label}]", design.name, "either scenario (exit 5)",
                     counts[("same", statistic, "undecided")]
                     + counts[("doubled", statistic, "undecided")], 2 * replicates)]
    return out


DECISIONS: dict[str, Callable[..., list[Rate]]] = {
    "verdict": verdict_decisions, "direction": direction_decisions,
    "contrasts": contrast_decisions, "gate": gate_decisions,
}


def measure(design: str | Design, groups: Iterable[str], replicates: int, *, seed: int = 0,
            n_bootstrap: int = 500) -> list[Rate]:
    """The rates of the decision ``groups`` (keys of :data:`DECISIONS`) at ``design``."""
    design = PRESETS[design] if isinstance(design, str) else design
    rates: list[Rate] = []
    for group in groups:
        if group == "contrasts" and max(design.persona.values(), default=1) < 2:
            continue  # one value per category: no contrast can be formed
        rates += DECISIONS[group](design, replicates, seed=seed, n_bootstrap=n_bootstrap)
    return rates


def markdown_table(rates: Iterable[Rate]) -> str:
    """The operating-characteristics table (Markdown)."""
    lines = ["| design | decision | truth | rate | 95 % CI | n |", "|---|---|---|---|---|---|"]
    for rate in rates:
        low, high = rate.ci
        lines.append(f"| {rate.design} | {rate.decision} | {rate.truth} | {rate.rate:.3f} | "
                     f"{low:.3f}–{high:.3f} | {rate.n} |")
    return "\n".join(lines) + "\n"


def elevation_of(weight: float, design: Design = PRESETS["standard"], seed: int = 0) -> float:
    """Mean DTW elevation (%) over the floor of a persona category planted at ``weight``
    (200 questions): what a weight means in the units of the report."""
    big = Design(design.name, 200, design.baselines, {"age": 1}, {}, design.noise)
    frame = simulate_run(big, Truth(life=0.0, persona={"age": weight}), seed).frame
    floor = frame.loc[frame.category == "no_perturbation", "dtw"].mean()
    return float(100.0 * (frame.loc[frame.category == "age", "dtw"].mean() - floor) / floor)


