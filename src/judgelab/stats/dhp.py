"""DHP statistics: one-sided Wilcoxon tests, harmonic-mean p-values, discernment scores.

Wang et al., "DHP Benchmark: Are LLMs Good NLG Evaluators?", section 3.3.

* 3.3.1 — per perturbation and metric, the one-sided Wilcoxon signed-rank test of
  H1 "original scores are greater than perturbed scores" on the N paired scores
  (:func:`judgelab.stats.wilcoxon` with ``alternative="greater"``).
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
from scipy.integrate import quad
from scipy.special import digamma, xlogy

__all__ = [
    "P_FLOOR",
    "harmonic_mean_p",
    "harmonic_mean_p_exact",
    "discernment",
    "max_discernment",
    "expert_weights",
    "level_balanced_mean",
]

P_FLOOR = 1e-300


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


# Below this standard-Landau value the survival function is above 0.98 and scipy's levy_stable
# (Nolan's integral) is accurate; above it Landau's Laplace integral is used (see _landau_standard_sf).
_LANDAU_SCIPY_BELOW = -2.0


def _landau_standard_sf(lam: float) -> float:
    """``P(Λ > lam)`` for Landau's standard distribution (stable, alpha = 1, beta = 1; Nolan's S0 with
    scale pi/2 and location log(pi/2), the defaults of R's ``pLandau``).

    From Landau's (1944) density ``p(λ) = (1/π) ∫_0^∞ exp(−t log t − λt) sin(πt) dt``, integrated over
    ``(lam, ∞)``: ``P(Λ > lam) = ∫_0^∞ exp(−t log t − lam·t) sinc(t) dt`` with ``sinc(t) = sin(πt)/(πt)``.
    For ``lam > 1`` the substitution ``t = u / lam`` gives ``(1/lam) ∫_0^∞ exp(−u − t log t) sinc(t) du``,
    which keeps full relative accuracy in the tail (``P ≈ 1/lam``) up to lam = 1e300. scipy's
    ``levy_stable`` cannot be used there: its ``sf`` returns 0 beyond a standardised value of about 400
    (an HMP below about 0.0025 with four p-values). Below ``lam = -2`` the integrand cancels badly
    and scipy's ``levy_stable`` at scale 1 (where its S0 and S1 parametrizations coincide) is used.
    """
    if math.isnan(lam):
        return float("nan")
    if lam == math.inf:
        return 0.0
    if lam < _LANDAU_SCIPY_BELOW:
        z = (lam - math.log(math.pi / 2)) / (math.pi / 2)  # standard stable(1, 1): scale 1, location 0
        return float(_st.levy_stable.sf(z, 1.0, 1.0))
    if lam > 1:
        def in_u(u: float) -> float:
            t = u / lam
            return math.exp(-u - xlogy(t, t)) * float(np.sinc(t))

        return float(quad(in_u, 0, math.inf, limit=200, epsabs=0, epsrel=1e-12)[0] / lam)

    def in_t(t: float) -> float:  # exp(-t log t + 2t) < 1e-50 beyond t = 60
        return math.exp(-xlogy(t, t) - lam * t) * float(np.sinc(t))

    return float(quad(in_t, 0, 60, limit=200, epsabs=1e-14, epsrel=1e-12)[0])


def _landau_sf(x: float, mu: float, sigma: float) -> float:
    """Survival function of the Landau distribution (stable, alpha = 1, beta = 1) with location ``mu``
    and scale ``sigma`` in Nolan's S0 parametrization: R's ``pLandau(x, mu, sigma, lower.tail = FALSE)``
    (FMStable, ``pm = 0``).

    S0 is a location-scale family (``X = mu + sigma·Z``), so the standard Landau variable is
    ``λ = log(pi/2) + (pi/2)(x − mu)/sigma``. No S0 → S1 location shift is involved. (scipy's
    ``levy_stable`` in its default "S1" parametrization is inconsistent for alpha = 1 and scale ≠ 1:
    ``sf`` treats loc and scale as a location-scale family, i.e. as S0, while ``cdf``, ``pdf`` and
    ``rvs`` are Nolan's S1; ``sf(x, 1, 1, loc=mu, scale=sigma)`` equals the S0 value here.)
    """
    return _landau_standard_sf(math.log(math.pi / 2) + (math.pi / 2) * (x - mu) / sigma)


def harmonic_mean_p_exact(pvalues, weights=None, L: int | None = None) -> float:
    """Asymptotically exact HMP (DHP section 3.3.2 combination): ``p.hmp`` of the R package
    harmonicmeanp 3.x (multilevel = TRUE; Wilson 2019, PNAS 116:1195).

    ``L`` is the total number of p-values of the family (default: ``len(pvalues)``); weights
    default to ``1/L`` each, may not be negative and may not sum to more than 1. With
    ``w = sum(weights)`` and ``HMP = harmonic_mean_p(pvalues, weights) = w / sum(weights / p)``,
    the result is ``w * pLandau(w / HMP, mu = log L + 1 + digamma(1) − log(2/pi), sigma = pi/2,
    lower.tail = FALSE)`` in Nolan's S0 parametrization. Note ``w / HMP = sum(weights / p)``: the
    Landau argument is ``1/HMP`` only when the weights sum to 1 (the DHP case). The location
    ``log L + 0.874`` is that of ``(1/L) Σ 1/U_i`` for L independent uniform ``U_i`` (generalised
    central limit theorem).

    Accuracy against simulation of the null (L independent uniform p-values; see
    ``tests/test_hmp_simulation.py``; observed HMP between 0.001 and 0.2):

    * equal weights, L = 100 and 1000: within Monte Carlo error (about 2 % of the value);
    * equal weights, L = 4 (the usual number of DHP metrics) and L = 10: asymptotic only. Within
      about 2 % for HMP ≤ 0.01; for HMP between 0.01 and 0.2 conservative, by up to about 10 % of
      the true null probability at L = 4 (e.g. 0.143 for a true 0.130 at HMP 0.1) and 6 % at L = 10;
      near HMP = 0.5 anti-conservative (0.68 for a true 0.78 at L = 4), which does not matter for
      significance (D ≈ 0.1 either way);
    * unequal weights summing to 1: conservative. The location keeps log L, while for weights
      ``w_i`` the limit has location ``−Σ w_i log w_i + 0.874 ≤ log L + 0.874``; the excess vanishes
      in the tail (HMP ≤ 0.01) but not with L (up to about 30 % of the true value at HMP 0.2).
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
    x = w_sum / hmp  # = sum(w / p)
    if not math.isfinite(x):
        return hmp  # p.hmp / HMP -> 1 as HMP -> 0
    mu = math.log(L) + 1 + float(digamma(1)) - math.log(2 / math.pi)
    return float(min(1.0, w_sum * _landau_sf(x, mu, math.pi / 2)))


def discernment(p: float) -> float:
    """``D = log_0.05(p)`` (DHP section 3.3.3); p = 0 is floored at ``P_FLOOR``."""
    p = float(p)
    if math.isnan(p):
        return float("nan")
    if not 0 <= p <= 1:
        raise ValueError(f"not a p-value: {p}")
    return math.log(max(p, P_FLOOR)) / math.log(0.05)


def max_discernment(n_pairs: int) -> float:
    """The largest D a perturbation with ``n_pairs`` pairs can reach (DHP sections 3.3.1 and 3.3.3).

    In the exact null distribution of the one-sided Wilcoxon signed-rank statistic (n pairs, no
    ties or zero differences) each of the 2**n sign patterns has probability 0.5**n, and the most
    extreme one (every difference positive) alone gives the smallest p-value, ``0.5**n``. Hence
    ``D <= n · log(0.5) / log(0.05) ≈ 0.231 n``: 4 pairs give at most D = 0.93, and D > 1 (p < 0.05)
    needs at least 5 pairs. Combining metrics cannot go lower with Wilson's HMP statistic (weights
    summing to 1); the asymptotically exact HMP is higher still. Zero differences are dropped
    before ranking, so they only lower the bound further. (With ties, scipy versions that use the
    normal approximation for small samples can report smaller p-values than 0.5**n; that
    approximation is not valid for so few pairs.)
    """
    n = int(n_pairs)
    if n < 0:
        raise ValueError(f"the number of pairs cannot be negative: {n_pairs}")
    return 0.0 if n == 0 else discernment(0.5**n)


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
