"""Convergent validity of two metrics and the instrument-validity verdict (RQ1).

Checks, per analysed metric unless stated:

- **specificity** — no noise category is elevated above the floor: for every ``noise`` category,
  not (elevation > 0 and elevation p ≤ ``alpha_specificity`` = 0.05).
- **sensitivity** — life events are elevated: the pooled ``life_event`` class has elevation > 0
  and elevation p < ``alpha_sensitivity`` = 0.001.
- **convergence** (once, DTW vs SRI category means) — Spearman ρ ≥ ``min_rho`` = 0.7 and its
  p < 0.05. Skipped, with the reason, when the table lacks ``dtw`` or ``sri``.

The verdict is ``"pass"`` when every check that could be run passed, else ``"fail"``; when it
fails, persona results are not interpretable (the instrument did not behave as it must).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from scipy import stats as scipy_stats

MIN_RHO = 0.7
MAX_CONVERGENCE_P = 0.05
ALPHA_SPECIFICITY = 0.05
ALPHA_SENSITIVITY = 0.001


def convergence(
    metric_results: Mapping[str, Mapping], first: str = "dtw", second: str = "sri"
) -> dict:
    """Spearman ρ and Pearson r (with p-values) between two metrics' category means.

    ``metric_results`` maps a metric to a dict with ``categories`` → name → ``mean``. Categories
    present under both metrics are used. Returns ``{"omitted": reason}`` when a metric is missing
    or fewer than three categories are shared.
    """
    if first not in metric_results or second not in metric_results:
        return {"omitted": f"needs both '{first}' and '{second}' metric columns"}
    a, b = metric_results[first]["categories"], metric_results[second]["categories"]
    shared = [name for name in a if name in b]
    if len(shared) < 3:
        return {"omitted": f"only {len(shared)} categories shared by '{first}' and '{second}'"}
    x = np.array([a[name]["mean"] for name in shared], float)
    y = np.array([b[name]["mean"] for name in shared], float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"omitted": "a metric has the same mean in every category"}
    spearman = scipy_stats.spearmanr(x, y)
    pearson = scipy_stats.pearsonr(x, y)
    return {"metrics": [first, second], "n_categories": len(shared),
            "spearman": float(spearman.statistic), "spearman_p": float(spearman.pvalue),
            "pearson": float(pearson.statistic), "pearson_p": float(pearson.pvalue)}


def validity_verdict(metric_results: Mapping[str, Mapping], convergence_result: Mapping) -> dict:
    """Run the checks above and return ``verdict``, ``checks`` (list) and ``persona_interpretable``.

    ``metric_results[m]`` needs ``categories`` (name → ``condition_class``, ``elevation_pct``,
    ``elevation_p``) and ``classes`` (class → ``elevation_pct``, ``elevation_p``).
    """
    checks = []
    for metric, result in metric_results.items():
        checks.append(_specificity(metric, result["categories"]))
        checks.append(_sensitivity(metric, result["classes"]))
    checks.append(_convergence_check(convergence_result))
    ran = [check for check in checks if check["status"] != "skipped"]
    passed = bool(ran) and all(check["status"] == "pass" for check in ran)
    return {"verdict": "pass" if passed else "fail", "persona_interpretable": passed,
            "thresholds": {"alpha_specificity": ALPHA_SPECIFICITY,
                           "alpha_sensitivity": ALPHA_SENSITIVITY,
                           "min_rho": MIN_RHO, "max_convergence_p": MAX_CONVERGENCE_P},
            "checks": checks}


def _specificity(metric: str, categories: Mapping[str, Mapping]) -> dict:
    noise = {name: row for name, row in categories.items() if row["condition_class"] == "noise"}
    elevated = [name for name, row in noise.items()
                if _finite(row["elevation_pct"]) > 0 and _finite(row["elevation_p"], 1.0)
                <= ALPHA_SPECIFICITY]
    parts = [f"{name} {_signed(row['elevation_pct'])}% ({_p(row['elevation_p'])})"
             for name, row in noise.items()]
    return {"name": "specificity", "metric": metric,
            "status": "fail" if elevated else "pass", "elevated": elevated,
            "detail": "noise vs floor: " + ", ".join(parts)}


def _sensitivity(metric: str, classes: Mapping[str, Mapping]) -> dict:
    life = classes.get("life_event")
    if life is None:
        return {"name": "sensitivity", "metric": metric, "status": "fail",
                "detail": "no life_event rows: the positive control is missing"}
    ok = _finite(life["elevation_pct"]) > 0 and _finite(life["elevation_p"], 1.0) \
        < ALPHA_SENSITIVITY
    return {"name": "sensitivity", "metric": metric, "status": "pass" if ok else "fail",
            "detail": f"life events vs floor: {_signed(life['elevation_pct'])}% "
                      f"({_p(life['elevation_p'])})"}


def _convergence_check(result: Mapping) -> dict:
    if "omitted" in result:
        return {"name": "convergence", "metric": None, "status": "skipped",
                "detail": result["omitted"]}
    ok = result["spearman"] >= MIN_RHO and result["spearman_p"] < MAX_CONVERGENCE_P
    return {"name": "convergence", "metric": "+".join(result["metrics"]),
            "status": "pass" if ok else "fail",
            "detail": f"Spearman rho={result['spearman']:.3f} ({_p(result['spearman_p'])}), "
                      f"Pearson r={result['pearson']:.3f} over {result['n_categories']} categories"}


def _finite(value, default: float = 0.0) -> float:
    return float(value) if value is not None and np.isfinite(value) else default


def _signed(value) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:+.1f}"


def _p(value) -> str:
    if value is None or not np.isfinite(value):
        return "p=n/a"
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"
