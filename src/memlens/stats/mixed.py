"""Linear mixed-effects model: drift ~ category (reference no_perturbation) + (1 | question).

Fitted with statsmodels ``MixedLM`` (REML). The design matrix is built here rather than from a
formula so that any category name (quotes, spaces, symbols) is safe; the coefficient names follow
patsy's ``C(category, Treatment('no_perturbation'))`` convention: ``Intercept`` and
``category[T.<name>]``. A singular or non-converged fit is returned with its warnings recorded;
a fit that fails outright is returned as ``{"error": ...}`` — never raised.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

SINGULAR_TOLERANCE = 1e-8
"""Relative size under which the random-intercept variance counts as zero (a singular fit)."""
FORMULA = "{metric} ~ C(category, Treatment('{reference}')) + (1 | question_id)"


def fit_mixed_model(
    values: Sequence[float] | np.ndarray,
    categories: Sequence[str] | np.ndarray,
    clusters: Sequence | np.ndarray,
    *,
    reference: str = "no_perturbation",
    metric: str = "drift",
    confidence: float = 0.95,
) -> dict:
    """Fit the random-intercept model and return coefficients with SEs, CIs and p-values.

    Result keys: ``formula``, ``n_obs``, ``n_groups``, ``coefficients`` (name → ``estimate``,
    ``se``, ``ci`` [low, high], ``p_value``), ``group_variance``, ``residual_variance``,
    ``converged``, ``singular`` (the random-intercept variance is on the boundary: at most
    ``SINGULAR_TOLERANCE`` times the variance of ``values``, so statsmodels' 0 and its 1e-36
    residue read alike), ``warnings`` (list of str); or ``error`` when the fit failed.
    """
    from statsmodels.regression.mixed_linear_model import MixedLM

    categories = np.asarray(categories).astype(str)
    exog, names = _design(categories, reference)
    summary: dict = {
        "formula": FORMULA.format(metric=metric, reference=reference),
        "n_obs": int(len(categories)),
        "n_groups": int(len(np.unique(np.asarray(clusters).astype(str)))),
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = MixedLM(np.asarray(values, float), exog, groups=np.asarray(clusters).astype(str))
            result = model.fit(reml=True)
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError) as error:
            summary["error"] = f"mixed model could not be fitted: {error}"
            summary["warnings"] = _messages(caught)
            return summary
    summary.update(_coefficients(result, names, confidence))
    summary["warnings"] = _messages(caught)
    scale = float(np.var(np.asarray(values, float)))
    summary["singular"] = bool(summary["group_variance"] <= SINGULAR_TOLERANCE * max(scale, 1e-300))
    if summary["singular"]:
        summary["warnings"].append("singular fit: the question random-intercept variance is "
                                   "zero (on the boundary); read the fixed effects as OLS")
    return summary


def _design(categories: np.ndarray, reference: str) -> tuple[np.ndarray, list[str]]:
    levels = sorted(set(categories) - {reference})
    columns = [np.ones(len(categories))]
    columns += [(categories == level).astype(float) for level in levels]
    names = ["Intercept"] + [f"category[T.{level}]" for level in levels]
    return np.column_stack(columns), names


def _coefficients(result, names: list[str], confidence: float) -> dict:
    k = len(names)
    params = np.asarray(result.fe_params)
    errors = np.asarray(result.bse_fe)
    p_values = np.asarray(result.pvalues)[:k]
    intervals = np.asarray(pd.DataFrame(result.conf_int(alpha=1.0 - confidence)))[:k]
    coefficients = {
        name: {"estimate": float(params[i]), "se": float(errors[i]),
               "ci": [float(intervals[i, 0]), float(intervals[i, 1])],
               "p_value": float(p_values[i])}
        for i, name in enumerate(names)
    }
    return {
        "coefficients": coefficients,
        "group_variance": float(np.asarray(result.cov_re)[0, 0]),
        "residual_variance": float(result.scale),
        "converged": bool(result.converged),
    }


def _messages(caught) -> list[str]:
    return list(dict.fromkeys(" ".join(str(item.message).split()) for item in caught))
