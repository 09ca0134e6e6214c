"""DHP statistics: one-sided Wilcoxon tests, harmonic-mean p-values, discernment scores.

Wang et al., "DHP Benchmark: Are LLMs Good NLG Evaluators?", section 3.3.

* 3.3.1 — per perturbation and metric, the one-sided Wilcoxon signed-rank test of
  H1 "original scores are greater than perturbed scores" on the N paired scores.
  Zero differences are dropped before ranking (Wilcoxon's original treatment, scipy's
  ``zero_method="wilcox"``); when every difference is zero there is no evidence of a
  difference and p = 1. The exact null distribution is used for small samples without
  ties or zeros, the normal approximation with tie correction otherwise (scipy's ``auto``).
* 3.3.2 — p-values of the M metrics combined by the harmonic mean p-value of Wilson
  (2019): ``p = sum(w) / sum(w / p)`` with weights summing to one (equal weights
  ``1/M`` without expert weights, else the expert votes normalised). The paper prints
  ``1 / sum(1/p)``, which is Wilson's statistic divided by M (no weights) and not a
  p-value on [0, 1]; we implement Wilson's definition. :func:`harmonic_mean_p_exact`
  gives the asymptotically exact HMP (``p.hmp`` of the R package harmonicmeanp 3.x).
* 3.3.3 — discernment ``D = log_0.05(p)``: D = 1 at p = 0.05, higher is better. A p-value
  of exactly 0 (possible only through underflow) is floored at ``P_FLOOR`` = 1e-300 so
  that D stays finite (D ≈ 230.6). ``D_avg`` is the mean over perturbations weighted so
  that each perturbation level (character, word, sentence) contributes equally and the
  perturbations within a level equally; ``D_min`` the minimum.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats as _st
from scipy.special import digamma

__all__ = [
    "P_FLOOR",
    "wilcoxon_greater",
    "harmonic_mean_p",
    "harmonic_mean_p_exact",
    "discernment",
    "expert_weights",
    "level_balanced_mean",
]

P_FLOOR = 1e-300


def wilcoxon_greater(original, perturbed) -> float:
    """One-sided Wilcoxon signed-rank p-value for original > perturbed (pairs with a NaN dropped)."""
    a = np.asarray(original, dtype=float)
    b = np.asarray(perturbed, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"original and perturbed differ in length: {a.size} vs {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    d = a[keep] - b[keep]
    if d.size == 0 or np.all(d == 0):
        return 1.0
    return float(_st.wilcoxon(d, zero_method="wilcox", alternative="greater").pvalue)


def _weights(pvalues: np.ndarray, weights) -> np.ndarray:
    if weights is None:
        return np.full(pvalues.size, 1.0 / pvalues.size)
    w = np.asarray(weights, dtype=float)
    if w.shape != pvalues.shape:
        raise ValueError("weights and p-values differ in length")
    if np.any(w < 0):
        raise ValueError("weights cannot be negative")
    return w


def harmonic_mean_p(pvalues, weights=None) -> float:
    """Wilson's (2019) weighted harmonic mean p-value ``sum(w) / sum(w / p)`` (equal weights when None).

    A zero weight drops its p-value. A p-value of 0 with positive weight gives 0.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        raise ValueError("no p-values to combine")
    w = _weights(p, weights)
    use = w > 0
    if not use.any():
        raise ValueError("all weights are zero")
    p, w = p[use], w[use]
    if np.any(p == 0):
        return 0.0
    return float(w.sum() / np.sum(w / p))


def _landau_sf(x: float, mu: float, sigma: float) -> float:
    """Survival function of the Landau distribution (stable, alpha = 1, beta = 1) in Nolan's
    S0 parametrization with location ``mu`` and scale ``sigma`` (FMStable's ``pm = 0``)."""
    loc_s1 = mu - (2 / math.pi) * sigma * math.log(sigma)  # S0 -> S1 location for alpha = 1, beta = 1
    return float(_st.levy_stable.sf(x, 1.0, 1.0, loc=loc_s1, scale=sigma))


def harmonic_mean_p_exact(pvalues, weights=None, L: int | None = None) -> float:
    """Asymptotically exact HMP, as ``p.hmp`` of the R package harmonicmeanp 3.x (multilevel).

    ``L`` is the total number of p-values of the family (default: ``len(pvalues)``);
    weights default to ``1/L`` each and may not sum to more than 1. With ``w = sum(weights)``
    and ``HMP = harmonic_mean_p(pvalues, weights)``:
    ``max(HMP, w * Landau_sf(w / HMP; mu = log L + 1 + digamma(1) - log(2/pi), sigma = pi/2))``.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        raise ValueError("no p-values to combine")
    L = int(L) if L is not None else p.size
    if p.size > L:
        raise ValueError("the number of p-values cannot exceed L")
    w = np.full(p.size, 1.0 / L) if weights is None else _weights(p, weights)
    w_sum = float(w.sum())
    if w_sum > 1 + 1e-6:
        raise ValueError("weights cannot sum to more than 1")
    hmp = harmonic_mean_p(p, w)
    if hmp == 0:
        return 0.0
    mu = math.log(L) + 1 + float(digamma(1)) - math.log(2 / math.pi)
    return float(max(hmp, w_sum * _landau_sf(w_sum / hmp, mu, math.pi / 2)))


def discernment(p: float) -> float:
    """``D = log_0.05(p)`` (DHP section 3.3.3); p = 0 is floored at ``P_FLOOR``."""
    p = float(p)
    if math.isnan(p):
        return float("nan")
    if not 0 <= p <= 1:
        raise ValueError(f"not a p-value: {p}")
    return math.log(max(p, P_FLOOR)) / math.log(0.05)


def expert_weights(votes: Mapping[str, float], metrics: Sequence[str]) -> list[float]:
    """Votes per metric for one perturbation → weights summing to 1 (DHP section 3.3.2).

    E.g. coherence 4, consistency 1, fluency 5 → [0.4, 0.1, 0.5]. A metric without votes
    gets weight 0. With no votes at all, equal weights are returned.
    """
    raw = np.array([float(votes.get(m, 0.0)) for m in metrics])
    if np.any(raw < 0):
        raise ValueError("votes cannot be negative")
    if raw.sum() == 0:
        return [1.0 / len(metrics)] * len(metrics)
    return list(raw / raw.sum())


def level_balanced_mean(values: Sequence[float], levels: Sequence[str]) -> float:
    """Mean in which every level has the same total weight, split equally within the level."""
    if len(values) != len(levels) or not values:
        raise ValueError("need one level per value")
    counts: dict[str, int] = {}
    for level in levels:
        counts[level] = counts.get(level, 0) + 1
    weights = np.array([1.0 / (len(counts) * counts[level]) for level in levels])
    return float(np.sum(weights * np.asarray(values, dtype=float)))
