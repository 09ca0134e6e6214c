"""Prediction-powered inference (PPI, PPI++) for a mean rating: few human ratings, a judge on every item.

A judge rates every item; humans rate only a random subset of ``n`` of them. The judge's
mean over all items is cheap but biased (the judge is not the humans); the humans' mean on
the ``n`` items is unbiased but wide. PPI (Angelopoulos et al. 2023) keeps the judge's
precision and removes its bias with a *rectifier* measured on the labelled items; PPI++
(Angelopoulos, Duchi & Zrnic 2024) scales the judge by a power-tuning weight ``lam`` so the
interval is never wider (asymptotically) than the human-only one.

Notation (one system, one rating dimension): ``y`` the ``n`` human ratings, ``yhat`` the
judge's ratings of the same ``n`` items, ``yhat_u`` the judge's ratings of the ``N`` other
items (the labelled subset must be a uniform random sample of all items).

* estimate   ``theta = lam * mean(yhat_u) + mean(y - lam * yhat)``
* tuned lam  ``lam = cov(y, yhat) / ((1 + n/N) var(yhat ∪ yhat_u))``, clipped to [0, 1];
  ``cov`` over the ``n`` pairs with ddof 0 and ``var`` over all ``n + N`` judge ratings with
  ddof 1 — exactly the choices of ppi-python (``ppi_mean_pointestimate``/``ppi_mean_ci``
  with ``lam=None``). It minimises the variance below
  (the minimiser of ``lam^2 var_f (1/n + 1/N) - 2 lam cov / n``).

Two intervals (argument ``quantile``):

* ``"normal"`` — ppi-python's, exactly: ``se^2 = lam^2 var(yhat_u) / N + var(y - lam yhat) / n``
  with ddof 0 and ``theta ± z_{1-alpha/2} se``. Valid as ``n`` grows; at ``n = 10`` it covers
  87–90% instead of 95% (docs/intervals.md; the tests measure it).
* ``"t"`` (default) — the same estimate with unbiased variances and a t quantile:
  ``var(yhat_u)`` with ddof 1, ``var(y - lam yhat)`` with ddof ``k`` (``k = 2`` when ``lam``
  is tuned from the same data, as for a regression estimator with an estimated slope;
  ``k = 1`` for a fixed ``lam``), and ``theta ± t_{1-alpha/2, df} se`` with
  ``df = min(n - k, Welch–Satterthwaite df of the two variance terms)``. Covers 94–95% at
  ``n = 10`` for uninformative and informative judges and for a difference of two means
  (simulation in the tests, 4,000 studies each); equal to ``"normal"`` in the limit.

Neither interval keeps its level when the ratings are strongly skewed at small ``n`` (a mean
near the end of the scale): every result carries a ``note`` when Cochran's rule
``n > 25 g1^2`` (g1 the sample skewness of ``y - lam yhat``) fails. An interval of zero width
(every human rating equal and ``lam = 0``) is never reported: its bounds are NaN, with a note.

Beside the PPI interval every result carries the human-only interval (``mean(y)``; under
``"normal"`` exactly ppi-python's ``classical_mean_ci``, under ``"t"`` Student's interval) and
the naive judge-only interval over all ``n + N`` items, which is as narrow as it is biased:
its coverage of the human mean collapses as soon as the judge is off by a constant.

The planner (:func:`plan_ppi_mean`, :func:`plan_ppi_difference`) inverts the variance
formula: the smallest ``n`` whose predicted half-width with power-tuned ``lam`` reaches a
target, from the human–judge agreement seen in a pilot, and says from which ``n`` on the
interval can be trusted (``valid_from``).

The input checks and the interval arithmetic the estimator shares with the planner (quantiles,
degrees of freedom, :data:`~judgelab.stats.ppi_core.VALID_FROM`, Cochran's rule) are in
:mod:`judgelab.stats.ppi_core`; the result types in :mod:`judgelab.stats.ppi_results`.

References:
    Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023). Prediction-powered inference.
    Science 382(6671):669–674. doi:10.1126/science.adi6000.
    Angelopoulos, Duchi & Zrnic (2024). PPI++: Efficient prediction-powered inference.
    arXiv:2311.01453.
    Satterthwaite (1946). An approximate distribution of estimates of variance components.
    Biometrics Bulletin 2(6):110–114.
    Cochran (1977). Sampling Techniques, 3rd ed., §2.15 (the rule ``n > 25 G1^2``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special as _sp

from judgelab.stats.ppi_core import (VALID_FROM, _alpha, _capped_df, _ci, _inputs, _join, _lam_value, _quantile_name,
                                     _skew_note)
from judgelab.stats.ppi_results import PPIDifference, PPIMean

__all__ = ["ppi_mean", "ppi_mean_difference"]


# --------------------------------------------------------------------------- estimation


def _tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """PPI++ power-tuning weight, clipped to [0, 1]; 0 when the judge is constant."""
    n, N = y.size, yhat_u.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var_f = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not var_f > 0:
        return 0.0  # a constant judge carries no information about y
    return float(min(1.0, max(0.0, cov / ((1 + n / N) * var_f))))


@dataclass(frozen=True)
class _Fit:
    estimate: float
    lam: float
    judge_term: tuple[float, float]  # (variance, df) of lam * mean(yhat_u)
    labelled_term: tuple[float, float]  # (variance, df) of mean(y - lam * yhat)
    resid: np.ndarray

    @property
    def se(self) -> float:
        return math.sqrt(self.judge_term[0] + self.labelled_term[0])


def _fit(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray, lam: float | None, quantile: str) -> _Fit:
    n, N = y.size, yhat_u.size
    tuned = lam is None
    lam_ = _tuned_lam(y, yhat, yhat_u) if lam is None else lam
    resid = y - lam_ * yhat
    est = float(lam_ * yhat_u.mean() + resid.mean())
    if quantile == "normal":  # ppi-python: ddof 0, normal quantile
        return _Fit(est, lam_, (lam_**2 * float(np.var(yhat_u)) / N, math.inf), (float(np.var(resid)) / n, math.inf), resid)
    k = 2 if tuned else 1
    return _Fit(est, lam_, (lam_**2 * float(np.var(yhat_u, ddof=1)) / N, N - 1.0),
                (float(np.var(resid, ddof=k)) / n, float(n - k)), resid)


def ppi_mean(y, yhat, yhat_unlabeled, *, alpha: float = 0.05, lam: float | None = None,
             quantile: str = "t") -> PPIMean:
    """Prediction-powered (PPI++) estimate and confidence interval for a mean human rating.

    The items rated by humans must be a uniform random sample of all the items the judge
    rated; otherwise neither this nor the human-only interval is valid.

    Args:
        y: human ratings of the ``n`` labelled items.
        yhat: the judge's ratings of the same ``n`` items, in the same order.
        yhat_unlabeled: the judge's ratings of the ``N`` items no human rated.
        alpha: error level; the interval targets ``1 - alpha`` coverage (default 0.05;
            note that ppi-python's default is 0.1).
        lam: power-tuning weight. ``None`` (default) tunes it from the data (PPI++,
            clipped to [0, 1]); ``1`` is classical PPI; ``0`` the human-only estimate.
            Any other finite value is used as given.
        quantile: ``"t"`` (default): unbiased variances and a t quantile with
            ``df = min(n - k, Welch–Satterthwaite df)`` (``k = 2`` for a tuned ``lam``, 1 for
            a fixed one), which keeps its level at small ``n`` (about 95% at ``n = 10`` in
            simulation). ``"normal"``: ppi-python's interval exactly (ddof 0, normal
            quantile; except that a zero-width interval becomes NaN), which covers 87–90% at
            ``n = 10``; use it to reproduce ppi-python or for large ``n`` (from 50).

    Returns:
        :class:`PPIMean` with the PPI estimate, standard error, interval and ``lam``,
        beside the human-only and the (biased) judge-only intervals, the quantile's ``df``
        and a ``note`` with any caveat. A zero standard error gives NaN bounds (never a
        zero-width "interval"), with the reason in ``note``.

    Raises:
        ValueError: lengths differ; fewer items than :func:`minimum_sizes` (``"t"``: ``n >= 3``
            with a tuned ``lam``, ``n >= 2`` with a fixed one, ``N >= 2``; ``"normal"``:
            ``n >= 2``, ``N >= 1``); a value is missing or non-finite; ``alpha``, ``lam`` or
            ``quantile`` is out of range.

    References:
        Angelopoulos et al. (2023), Science 382:669 (PPI, the mean);
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453 (PPI++, the power-tuning
        weight); ppi-python 0.2.3's ``ppi_mean_pointestimate``/``ppi_mean_ci`` (the oracle of
        ``quantile="normal"``); Satterthwaite (1946); Cochran (1977) §2.15.

    Example:
        >>> r = ppi_mean([4, 3, 5, 2, 4], [4.5, 3.2, 5.0, 2.9, 4.4], [3.9, 4.6, 2.8, 3.5, 4.1, 4.8])
        >>> round(r.estimate, 3), r.lam_tuned, r.df
        (3.563, True, 3.0)
    """
    alpha = _alpha(alpha)
    quantile = _quantile_name(quantile)
    lam = _lam_value(lam)
    tuned = lam is None
    y, yhat, yhat_u = _inputs(y, yhat, yhat_unlabeled, quantile=quantile, tuned=tuned)
    n, N = y.size, yhat_u.size
    fit = _fit(y, yhat, yhat_u, lam, quantile)
    se = fit.se
    df = math.inf if quantile == "normal" else _capped_df([fit.judge_term, fit.labelled_term], [fit.labelled_term])
    ppi = _ci("ppi", fit.estimate, se, alpha, df, "every human rating less lam × the judge's is the same")

    f_all = np.concatenate([yhat, yhat_u])
    if quantile == "normal":  # ppi-python's classical_mean_ci: ddof 0, normal quantile
        human = _ci("human_only", y.mean(), float(np.std(y)) / math.sqrt(n), alpha, math.inf, "every human rating is the same")
        judge = _ci("judge_only", f_all.mean(), float(np.std(f_all)) / math.sqrt(f_all.size), alpha, math.inf,
                    "every judge rating is the same")
    else:  # Student's t
        human = _ci("human_only", y.mean(), float(np.std(y, ddof=1)) / math.sqrt(n), alpha, n - 1.0,
                    "every human rating is the same")
        judge = _ci("judge_only", f_all.mean(), float(np.std(f_all, ddof=1)) / math.sqrt(f_all.size), alpha,
                    f_all.size - 1.0, "every judge rating is the same")
    few = (f"{n} human-rated items, fewer than the {VALID_FROM[quantile]} from which this interval "
           f"({quantile}) was shown to keep its level" if n < VALID_FROM[quantile] else "")
    note = _join(ppi.note, few, _skew_note(fit.resid) if not ppi.note else "")
    eff = n * human.se**2 / se**2 if se > 0 else float("nan")
    return PPIMean(
        estimate=fit.estimate, se=float(se), ci_low=ppi.ci_low, ci_high=ppi.ci_high,
        lam=fit.lam, lam_tuned=tuned, alpha=alpha, n=n, N=N, effective_n=float(eff),
        human_only=human, judge_only=judge, quantile=quantile, df=float(df), note=note,
    )


def ppi_mean_difference(
    y_a, yhat_a, yhat_unlabeled_a,
    y_b, yhat_b, yhat_unlabeled_b,
    *,
    alpha: float = 0.05,
    lam: float | None | tuple[float | None, float | None] = None,
    quantile: str = "t",
) -> PPIDifference:
    """PPI++ estimate and interval for the difference of two systems' mean human ratings, A − B.

    Each system has its own items: a random labelled subset (human and judge ratings) and
    the rest (judge only). The two samples are independent, so the estimate is the
    difference of the per-system PPI++ estimates and the variances add.

    ``lam`` is tuned **per system**: ``Var(A − B) = Var_A(lam_a) + Var_B(lam_b)`` is a sum of
    two terms each depending on one weight only, so tuning each system separately is the
    joint minimiser; one shared weight would be a constrained (never better) choice. This
    is not the right tool when A and B were rated on the *same* items (paired design: the
    covariance between the two estimates is then ignored).

    Args:
        y_a, yhat_a, yhat_unlabeled_a: system A's human ratings, the judge's ratings of the
            same items, and the judge's ratings of A's other items.
        y_b, yhat_b, yhat_unlabeled_b: the same for system B.
        alpha: error level of the two-sided interval (default 0.05).
        lam: ``None`` tunes each system's weight; a number uses it for both systems; a pair
            ``(lam_a, lam_b)`` sets them separately (``None`` inside tunes that one).
        quantile: ``"t"`` (default; ``df`` the Welch–Satterthwaite value of the four variance
            terms, at most that of the two human-labelled ones) or ``"normal"`` (ppi-python's
            per-system variances and the normal quantile). See :func:`ppi_mean`.

    Returns:
        :class:`PPIDifference` with the estimate, standard error, interval, Wald statistic
        and two-sided p-value, the per-system :class:`PPIMean` results and the naive baselines.

    Raises:
        ValueError: as :func:`ppi_mean`, for either system.

    References:
        Angelopoulos et al. (2023); Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453;
        Welch (1947), Biometrika 34:28–35; Satterthwaite (1946).

    Example:
        >>> d = ppi_mean_difference([4, 3, 5], [4, 3, 4], [4, 5, 3, 4], [2, 3, 2], [3, 3, 2], [2, 3, 3, 2])
        >>> round(d.estimate, 3) == round(d.a.estimate - d.b.estimate, 3)
        True
    """
    alpha = _alpha(alpha)
    quantile = _quantile_name(quantile)
    lam_a, lam_b = lam if isinstance(lam, (tuple, list)) else (lam, lam)
    lam_a, lam_b = _lam_value(lam_a), _lam_value(lam_b)
    # validate with the system's name in the message
    ya, fa, fua = _inputs(y_a, yhat_a, yhat_unlabeled_a, "_a", quantile, lam_a is None)
    yb, fb, fub = _inputs(y_b, yhat_b, yhat_unlabeled_b, "_b", quantile, lam_b is None)
    a = ppi_mean(ya, fa, fua, alpha=alpha, lam=lam_a, quantile=quantile)
    b = ppi_mean(yb, fb, fub, alpha=alpha, lam=lam_b, quantile=quantile)
    est = a.estimate - b.estimate
    se = math.hypot(a.se, b.se)
    if quantile == "normal":
        df = h_df = j_df = math.inf
    else:
        fit_a, fit_b = _fit(ya, fa, fua, lam_a, quantile), _fit(yb, fb, fub, lam_b, quantile)
        labelled = [fit_a.labelled_term, fit_b.labelled_term]
        df = _capped_df([fit_a.judge_term, fit_b.judge_term, *labelled], labelled)
        h_parts = [(a.human_only.se**2, a.n - 1.0), (b.human_only.se**2, b.n - 1.0)]
        h_df = _capped_df(h_parts, h_parts)
        j_parts = [(a.judge_only.se**2, a.n + a.N - 1.0), (b.judge_only.se**2, b.n + b.N - 1.0)]
        j_df = _capped_df(j_parts, j_parts)
    ppi = _ci("ppi", est, se, alpha, df, "both systems' PPI standard errors are 0")
    if ppi.note:
        stat, p = float("nan"), float("nan")
    else:
        stat = est / se
        p = float(2 * (_sp.ndtr(-abs(stat)) if math.isinf(df) else _sp.stdtr(df, -abs(stat))))
    human = _ci("human_only", a.human_only.estimate - b.human_only.estimate,
                math.hypot(a.human_only.se, b.human_only.se), alpha, h_df, "every human rating is the same")
    judge = _ci("judge_only", a.judge_only.estimate - b.judge_only.estimate,
                math.hypot(a.judge_only.se, b.judge_only.se), alpha, j_df, "every judge rating is the same")
    note = _join(ppi.note, f"A: {a.note}" if a.note else "", f"B: {b.note}" if b.note else "")
    return PPIDifference(
        estimate=float(est), se=float(se), ci_low=ppi.ci_low, ci_high=ppi.ci_high,
        z=float(stat), p_value=p, alpha=alpha, a=a, b=b, human_only=human, judge_only=judge,
        quantile=quantile, df=float(df), note=note,
    )
