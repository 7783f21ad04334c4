"""Linear mixed-effects model: drift ~ category (reference no_perturbation) + (1 | question).

Fitted with statsmodels ``MixedLM`` (REML), started at the REML optimum of the one parameter it
searches (the question variance relative to the residual one), found first by a vectorised
profile likelihood (:func:`reml_variance_ratio`): statsmodels' own search from its default start
evaluates its per-question likelihood loop ~16 times per fit, which made the mixed model most of
``analyze`` on a paper-size table; its optimizer, Hessian, standard errors and warnings are
unchanged. The design matrix is built here rather than from a
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
            y, groups = np.asarray(values, float), np.asarray(clusters).astype(str)
            model = MixedLM(y, exog, groups=groups)
            result = model.fit(start_params=_start(y, exog, groups), reml=True)
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


def reml_variance_ratio(values: np.ndarray, exog: np.ndarray, groups: np.ndarray) -> float:
    """The REML estimate of ``γ = σ²_question / σ²_residual`` in ``y = Xβ + u_question + e``.

    With ``V = σ²(I + γ·Z Z')`` the REML log-likelihood profiled over β and σ² is, up to a
    constant, ``-½ [Σ_g log(1 + n_g γ) + log det(X'V*⁻¹X) + (N − p) log(r'V*⁻¹r)]`` (``V* = V/σ²``),
    and ``V*⁻¹`` of each question block is ``I − γ/(1 + n_g γ)·J``, so every term is a sum over
    questions of per-question totals: one evaluation is a few small matrix products, searched
    over ``√γ`` (statsmodels' parameter) on a bracket grown until the optimum is inside it.

    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(np.arange(200), 5)
    >>> y = np.repeat(rng.normal(0, 1.0, 200), 5) + rng.normal(0, 2.0, 1000)
    >>> round(reml_variance_ratio(y, np.ones((1000, 1)), groups), 2)  # truth 1 / 4; statsmodels: 0.2421
    0.24
    """
    from scipy.optimize import minimize_scalar  # lazy: pulls scipy

    _, inverse, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    totals_x = np.zeros((len(sizes), exog.shape[1]))
    np.add.at(totals_x, inverse, exog)
    totals_y = np.bincount(inverse, weights=values, minlength=len(sizes))
    xtx, xty, yty = exog.T @ exog, exog.T @ values, float(values @ values)
    dof = len(values) - exog.shape[1]

    def minus_loglike(root: float) -> float:
        gamma = root * root
        weights = gamma / (1.0 + sizes * gamma)
        a = xtx - (totals_x * weights[:, None]).T @ totals_x
        b = xty - totals_x.T @ (weights * totals_y)
        sign, logdet = np.linalg.slogdet(a)
        quadratic = yty - float(weights @ totals_y**2) - float(b @ np.linalg.solve(a, b))
        if sign <= 0 or quadratic <= 0:
            return np.inf
        return 0.5 * (float(np.log1p(sizes * gamma).sum()) + logdet + dof * np.log(quadratic))

    upper = 1.0
    while upper < 1e6 and minus_loglike(upper) <= minus_loglike(upper / 2):
        upper *= 4.0  # the optimum may lie beyond the bracket: grow it
    best = minimize_scalar(minus_loglike, bounds=(0.0, upper), method="bounded",
                           options={"xatol": 1e-10})
    root = float(best.x) if minus_loglike(float(best.x)) <= minus_loglike(0.0) else 0.0
    return root * root


def _start(values: np.ndarray, exog: np.ndarray, groups: np.ndarray) -> np.ndarray | None:
    """statsmodels' packed start ``[√γ]``; None (its default start) when the optimum is on the
    boundary (γ ≈ 0, where a zero start would make its first step singular) or the profile
    search fails on a degenerate table."""
    with np.errstate(all="ignore"):
        try:
            ratio = reml_variance_ratio(values, exog, groups)
        except (np.linalg.LinAlgError, ValueError):
            return None
    return np.array([np.sqrt(ratio)]) if np.isfinite(ratio) and ratio > SINGULAR_TOLERANCE else None


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
