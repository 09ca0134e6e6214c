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
* variance   ``se^2  = lam^2 var(yhat_u) / N + var(y - lam * yhat) / n``  (``var`` with ddof 0)
* interval   ``theta ± z_{1-alpha/2} se``  (normal, two-sided)
* tuned lam  ``lam = cov(y, yhat) / ((1 + n/N) var(yhat ∪ yhat_u))``, clipped to [0, 1];
  ``cov`` over the ``n`` pairs with ddof 0 and ``var`` over all ``n + N`` judge ratings with
  ddof 1 — exactly the choices of ppi-python (``ppi_mean_pointestimate``/``ppi_mean_ci``
  with ``lam=None``), which the tests use as the oracle. It minimises ``se^2``
  (the minimiser of ``lam^2 var_f (1/n + 1/N) - 2 lam cov / n``).

``lam = 1`` is classical PPI, ``lam = 0`` the human-only (classical CLT) interval.

Beside the PPI interval every result carries the human-only interval (``mean(y)``,
``std(y)/sqrt(n)``, as ppi-python's ``classical_mean_ci``) and the naive judge-only
interval over all ``n + N`` items, which is as narrow as it is biased: its coverage of the
human mean collapses as soon as the judge is off by a constant (see the tests).

The planner (:func:`plan_ppi_mean`, :func:`plan_ppi_difference`) inverts the variance
formula: the smallest ``n`` whose predicted half-width with power-tuned ``lam`` reaches a
target, from the human–judge agreement seen in a pilot.

References:
    Angelopoulos, Bates, Fannjiang, Jordan & Zrnic (2023). Prediction-powered inference.
    Science 382(6671):669–674. doi:10.1126/science.adi6000.
    Angelopoulos, Duchi & Zrnic (2024). PPI++: Efficient prediction-powered inference.
    arXiv:2311.01453.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = [
    "MeanCI",
    "PPIMean",
    "PPIDifference",
    "PPIPlan",
    "ppi_mean",
    "ppi_mean_difference",
    "plan_ppi_mean",
    "plan_ppi_difference",
]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class MeanCI:
    """One estimator of a mean (or of a difference of means) with its normal interval.

    Attributes:
        method: ``"ppi"`` (PPI/PPI++), ``"human_only"`` or ``"judge_only"``.
        estimate: point estimate.
        se: standard error.
        ci_low, ci_high: two-sided ``1 - alpha`` normal interval ``estimate ± z se``.
    """

    method: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def to_dict(self) -> dict:
        return {**asdict(self), "half_width": self.half_width}


@dataclass(frozen=True)
class PPIMean:
    """PPI++ estimate of one system's mean human rating, with the two naive baselines.

    Attributes:
        estimate, se, ci_low, ci_high: the PPI estimate, its standard error and its
            two-sided ``1 - alpha`` interval.
        lam: the power-tuning weight used (tuned when ``lam_tuned``).
        lam_tuned: True when ``lam`` was estimated from the data (``lam=None``).
        alpha: error level of the intervals.
        n: human-rated items (each also rated by the judge).
        N: items rated by the judge only.
        effective_n: human ratings a human-only interval would need for the same standard
            error, ``n * se_human^2 / se^2`` (NaN when ``se`` is 0).
        human_only: classical interval from the ``n`` human ratings alone.
        judge_only: naive interval from the judge's ``n + N`` ratings (biased).
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    lam: float
    lam_tuned: bool
    alpha: float
    n: int
    N: int
    effective_n: float
    human_only: MeanCI
    judge_only: MeanCI

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    @property
    def ppi(self) -> MeanCI:
        return MeanCI("ppi", self.estimate, self.se, self.ci_low, self.ci_high)

    def to_dict(self) -> dict:
        """Plain nested dict (JSON-ready floats)."""
        d = {k: v for k, v in asdict(self).items() if k not in ("human_only", "judge_only")}
        d["half_width"] = self.half_width
        d["human_only"] = self.human_only.to_dict()
        d["judge_only"] = self.judge_only.to_dict()
        return d

    def to_frame(self) -> pd.DataFrame:
        """One row per estimator (``ppi``, ``human_only``, ``judge_only``)."""
        rows = []
        for m, n_h, n_j, lam in ((self.ppi, self.n, self.n + self.N, self.lam),
                                 (self.human_only, self.n, 0, 0.0),
                                 (self.judge_only, 0, self.n + self.N, float("nan"))):
            rows.append({**m.to_dict(), "lam": lam, "n_human": n_h, "n_judge": n_j, "alpha": self.alpha})
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class PPIDifference:
    """PPI++ estimate of ``mean(A) - mean(B)`` for two systems rated on separate item sets.

    Attributes:
        estimate, se, ci_low, ci_high: ``a.estimate - b.estimate``, ``sqrt(a.se² + b.se²)``
            and its two-sided ``1 - alpha`` normal interval.
        z, p_value: Wald statistic ``estimate / se`` and two-sided p-value for H0: no
            difference (``p_value < alpha`` exactly when the interval excludes 0).
        alpha: error level.
        a, b: the per-system :class:`PPIMean` results (each with its own tuned ``lam``).
        human_only, judge_only: the same difference from the two naive baselines.
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    z: float
    p_value: float
    alpha: float
    a: PPIMean
    b: PPIMean
    human_only: MeanCI
    judge_only: MeanCI

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def to_dict(self) -> dict:
        return {
            "estimate": self.estimate, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "half_width": self.half_width, "z": self.z, "p_value": self.p_value, "alpha": self.alpha,
            "a": self.a.to_dict(), "b": self.b.to_dict(),
            "human_only": self.human_only.to_dict(), "judge_only": self.judge_only.to_dict(),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per estimator of the difference (``ppi``, ``human_only``, ``judge_only``)."""
        ppi = MeanCI("ppi", self.estimate, self.se, self.ci_low, self.ci_high)
        rows = [{**m.to_dict(), "alpha": self.alpha} for m in (ppi, self.human_only, self.judge_only)]
        frame = pd.DataFrame(rows)
        frame["lam_a"] = [self.a.lam, 0.0, float("nan")]
        frame["lam_b"] = [self.b.lam, 0.0, float("nan")]
        return frame


@dataclass(frozen=True)
class PPIPlan:
    """How many human ratings a PPI++ interval needs to reach a target half-width.

    Attributes:
        n: human ratings needed (per system for a difference); the smallest ``n >= 2``
            whose predicted half-width is at most the target.
        predicted_half_width: predicted half-width at that ``n``.
        target_half_width: the target.
        alpha: error level of the planned interval.
        N: judge-only items (a pair ``(N_a, N_b)`` for a difference).
        lam: power-tuning weight predicted at ``n`` (a pair for a difference).
        n_human_only: human ratings a human-only interval would need for the same target.
        corr: pilot correlation between human and judge ratings (a pair for a difference).
        pilot_n: pilot pairs the plan is based on (a pair for a difference).
    """

    n: int
    predicted_half_width: float
    target_half_width: float
    alpha: float
    N: int | tuple[int, int]
    lam: float | tuple[float, float]
    n_human_only: int
    corr: float | tuple[float, float]
    pilot_n: int | tuple[int, int]

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    def to_frame(self) -> pd.DataFrame:
        """One row: ``n`` beside the human-only ``n`` and the pilot summary."""
        return pd.DataFrame([{k: (str(v) if isinstance(v, list) else v) for k, v in self.to_dict().items()}])


# --------------------------------------------------------------------------- validation


def _vector(x, name: str, min_len: int) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric ratings.") from None
    if a.ndim != 1:
        a = a.ravel() if a.ndim == 2 and 1 in a.shape else a
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {np.shape(x)}.")
    if a.size < min_len:
        raise ValueError(f"{name} needs at least {min_len} values, got {a.size}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains missing or non-finite values; drop those items first.")
    return a


def _alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    return float(alpha)


def _inputs(y, yhat, yhat_unlabeled, suffix: str = ""):
    y = _vector(y, "y" + suffix, 2)
    yhat = _vector(yhat, "yhat" + suffix, 2)
    if y.size != yhat.size:
        raise ValueError(f"y{suffix} and yhat{suffix} must rate the same items: {y.size} vs {yhat.size} values.")
    yhat_u = _vector(yhat_unlabeled, "yhat_unlabeled" + suffix, 1)
    return y, yhat, yhat_u


def _z(alpha: float) -> float:
    return float(_st.norm.ppf(1 - alpha / 2))


def _ci(method: str, est: float, se: float, z: float) -> MeanCI:
    return MeanCI(method, float(est), float(se), float(est - z * se), float(est + z * se))


# --------------------------------------------------------------------------- estimation


def _tuned_lam(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """PPI++ power-tuning weight, clipped to [0, 1]; 0 when the judge is constant."""
    n, N = y.size, yhat_u.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var_f = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not var_f > 0:
        return 0.0  # a constant judge carries no information about y
    return float(min(1.0, max(0.0, cov / ((1 + n / N) * var_f))))


def ppi_mean(y, yhat, yhat_unlabeled, *, alpha: float = 0.05, lam: float | None = None) -> PPIMean:
    """Prediction-powered (PPI++) estimate and confidence interval for a mean human rating.

    The items rated by humans must be a uniform random sample of all the items the judge
    rated; otherwise neither this nor the human-only interval is valid.

    Args:
        y: human ratings of the ``n`` labelled items (``n >= 2``).
        yhat: the judge's ratings of the same ``n`` items, in the same order.
        yhat_unlabeled: the judge's ratings of the ``N >= 1`` items no human rated.
        alpha: error level; the interval targets ``1 - alpha`` coverage (default 0.05;
            note that ppi-python's default is 0.1).
        lam: power-tuning weight. ``None`` (default) tunes it from the data (PPI++,
            clipped to [0, 1]); ``1`` is classical PPI; ``0`` the human-only estimate.
            Any other finite value is used as given.

    Returns:
        :class:`PPIMean` with the PPI estimate, standard error, interval and ``lam``,
        beside the human-only and the (biased) judge-only intervals.

    Raises:
        ValueError: lengths differ, ``n < 2``, ``N < 1``, a value is missing or non-finite,
            or ``alpha``/``lam`` is out of range.

    References:
        Angelopoulos et al. (2023), Science 382:669 (PPI, the mean);
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453 (PPI++, the power-tuning
        weight); ppi-python 0.2.3's ``ppi_mean_pointestimate``/``ppi_mean_ci`` (the oracle).

    Example:
        >>> r = ppi_mean([4, 3, 5, 2, 4], [4.5, 3.2, 5.0, 2.9, 4.4], [3.9, 4.6, 2.8, 3.5, 4.1, 4.8])
        >>> round(r.estimate, 3), r.lam_tuned
        (3.563, True)
    """
    alpha = _alpha(alpha)
    y, yhat, yhat_u = _inputs(y, yhat, yhat_unlabeled)
    n, N = y.size, yhat_u.size
    tuned = lam is None
    if tuned:
        lam = _tuned_lam(y, yhat, yhat_u)
    elif not (isinstance(lam, (int, float, np.floating, np.integer)) and math.isfinite(lam)):
        raise ValueError(f"lam must be None or a finite number, got {lam!r}.")
    lam = float(lam)
    z = _z(alpha)

    resid = y - lam * yhat
    est = lam * yhat_u.mean() + resid.mean()
    se = math.sqrt(lam**2 * np.var(yhat_u) / N + np.var(resid) / n)

    human = _ci("human_only", y.mean(), np.std(y) / math.sqrt(n), z)
    f_all = np.concatenate([yhat, yhat_u])
    judge = _ci("judge_only", f_all.mean(), np.std(f_all) / math.sqrt(f_all.size), z)
    eff = n * human.se**2 / se**2 if se > 0 else float("nan")
    return PPIMean(
        estimate=float(est), se=float(se), ci_low=float(est - z * se), ci_high=float(est + z * se),
        lam=lam, lam_tuned=tuned, alpha=alpha, n=n, N=N, effective_n=float(eff),
        human_only=human, judge_only=judge,
    )


def ppi_mean_difference(
    y_a, yhat_a, yhat_unlabeled_a,
    y_b, yhat_b, yhat_unlabeled_b,
    *,
    alpha: float = 0.05,
    lam: float | None | tuple[float | None, float | None] = None,
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

    Returns:
        :class:`PPIDifference` with the estimate, standard error, interval, Wald ``z`` and
        two-sided p-value, the per-system :class:`PPIMean` results and the naive baselines.

    Raises:
        ValueError: as :func:`ppi_mean`, for either system.

    References:
        Angelopoulos et al. (2023); Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453.

    Example:
        >>> d = ppi_mean_difference([4, 3, 5], [4, 3, 4], [4, 5, 3, 4], [2, 3, 2], [3, 3, 2], [2, 3, 3, 2])
        >>> round(d.estimate, 3) == round(d.a.estimate - d.b.estimate, 3)
        True
    """
    alpha = _alpha(alpha)
    lam_a, lam_b = lam if isinstance(lam, (tuple, list)) else (lam, lam)
    # validate with the system's name in the message
    _inputs(y_a, yhat_a, yhat_unlabeled_a, "_a")
    _inputs(y_b, yhat_b, yhat_unlabeled_b, "_b")
    a = ppi_mean(y_a, yhat_a, yhat_unlabeled_a, alpha=alpha, lam=lam_a)
    b = ppi_mean(y_b, yhat_b, yhat_unlabeled_b, alpha=alpha, lam=lam_b)
    z = _z(alpha)
    est = a.estimate - b.estimate
    se = math.hypot(a.se, b.se)
    zstat = est / se if se > 0 else (0.0 if est == 0 else math.copysign(math.inf, est))
    p = float(2 * _st.norm.sf(abs(zstat)))
    human = _ci("human_only", a.human_only.estimate - b.human_only.estimate,
                math.hypot(a.human_only.se, b.human_only.se), z)
    judge = _ci("judge_only", a.judge_only.estimate - b.judge_only.estimate,
                math.hypot(a.judge_only.se, b.judge_only.se), z)
    return PPIDifference(
        estimate=float(est), se=float(se), ci_low=float(est - z * se), ci_high=float(est + z * se),
        z=float(zstat), p_value=p, alpha=alpha, a=a, b=b, human_only=human, judge_only=judge,
    )


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _Pilot:
    var_y: float
    cov: float
    var_f: float  # judge variance on labelled items
    var_fu: float  # judge variance on unlabelled items
    N: int
    n: int

    @property
    def corr(self) -> float:
        d = math.sqrt(self.var_y * self.var_f)
        return self.cov / d if d > 0 else float("nan")

    def lam(self, n: np.ndarray) -> np.ndarray:
        """Variance-minimising weight in [0, 1] at ``n`` labels (the PPI++ lambda)."""
        denom = self.var_f + n * self.var_fu / self.N
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = np.where(denom > 0, self.cov / np.where(denom > 0, denom, 1.0), 0.0)
        return np.clip(lam, 0.0, 1.0)

    def var(self, n: np.ndarray) -> np.ndarray:
        """Predicted ``se^2`` of the PPI++ estimate with ``n`` labels and power-tuned lambda."""
        lam = self.lam(n)
        resid = np.maximum(self.var_y - 2 * lam * self.cov + lam**2 * self.var_f, 0.0)
        return lam**2 * self.var_fu / self.N + resid / n


def _pilot(y, yhat, N, yhat_unlabeled, suffix: str = "") -> _Pilot:
    y = _vector(y, "y" + suffix, 2)
    yhat = _vector(yhat, "yhat" + suffix, 2)
    if y.size != yhat.size:
        raise ValueError(f"y{suffix} and yhat{suffix} must rate the same items: {y.size} vs {yhat.size} values.")
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"N{suffix} (judge-only items) must be a positive integer, got {N!r}.")
    c = np.cov(y, yhat)  # ddof 1, positive semi-definite
    var_f = float(c[1, 1])
    if yhat_unlabeled is not None:
        fu = _vector(yhat_unlabeled, "yhat_unlabeled" + suffix, 2)
        var_fu = float(np.var(fu, ddof=1))
    else:
        var_fu = var_f
    return _Pilot(float(c[0, 0]), float(c[0, 1]), var_f, var_fu, int(N), int(y.size))


def _smallest_n(var_fn, target_var: float, n_hi: int) -> int:
    """Smallest integer n in [2, n_hi] with var_fn(n) <= target_var; var_fn is non-increasing."""
    lo, hi = 2, max(2, n_hi)
    if var_fn(np.array([lo], dtype=float))[0] <= target_var:
        return lo
    while hi - lo > 1:  # invariant: var(lo) > target >= var(hi)
        mid = (lo + hi) // 2
        if var_fn(np.array([mid], dtype=float))[0] <= target_var:
            hi = mid
        else:
            lo = mid
    return hi


def _target(half_width: float) -> float:
    if not (isinstance(half_width, (int, float)) and math.isfinite(half_width) and half_width > 0):
        raise ValueError(f"half_width must be a positive number, got {half_width!r}.")
    return float(half_width)


def plan_ppi_mean(y, yhat, N: int, half_width: float, *, alpha: float = 0.05,
                  yhat_unlabeled=None) -> PPIPlan:
    """Human ratings needed for a PPI++ interval of a system mean to reach a target half-width.

    From a pilot of human–judge pairs, the planner estimates ``var(y)``, ``cov(y, yhat)`` and
    ``var(yhat)`` (ddof 1; ``var(yhat)`` on the judge-only items from ``yhat_unlabeled``
    when given) and predicts, for ``n`` labels and ``N`` judge-only items,

        ``se^2(n) = lam^2 var_fu / N + (var_y - 2 lam cov + lam^2 var_f) / n``

    with the variance-minimising ``lam = cov / (var_f + n var_fu / N)`` clipped to [0, 1]
    (the PPI++ weight). For every fixed ``lam`` the right-hand side does not increase with
    ``n``, so neither does its minimum over ``lam``: the half-width ``z se(n)`` is monotone
    and the smallest sufficient ``n`` is found by bisection. It never exceeds the human-only
    requirement ``ceil((z sd_y / h)^2)`` (``lam = 0`` is always available). ``N`` is held
    fixed; the prediction ignores the noise of estimating ``lam`` and the pilot moments.

    Args:
        y: pilot human ratings (``>= 2``).
        yhat: the judge's ratings of the same pilot items.
        N: judge-only items in the planned study.
        half_width: target half-width of the two-sided ``1 - alpha`` interval.
        alpha: error level (default 0.05).
        yhat_unlabeled: optional judge ratings of unlabelled items, for ``var_fu``.

    Returns:
        :class:`PPIPlan` with ``n``, the predicted half-width, the predicted ``lam`` and the
        human-only requirement.

    Raises:
        ValueError: invalid pilot (see :func:`ppi_mean`), ``N < 1`` or ``half_width <= 0``.

    References:
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453 (variance of the power-tuned
        estimator); the inversion for ``n`` is this module's.

    Example:
        >>> p = plan_ppi_mean([4, 3, 5, 2, 4, 3], [4.4, 3.1, 4.9, 2.6, 4.2, 3.3], N=1000, half_width=0.2)
        >>> p.n < p.n_human_only
        True
    """
    alpha = _alpha(alpha)
    h = _target(half_width)
    pilot = _pilot(y, yhat, N, yhat_unlabeled)
    z = _z(alpha)
    target_var = (h / z) ** 2
    n_human = max(2, math.ceil(pilot.var_y / target_var))
    n = _smallest_n(pilot.var, target_var, n_human)
    arr = np.array([n], dtype=float)
    return PPIPlan(
        n=int(n), predicted_half_width=float(z * math.sqrt(pilot.var(arr)[0])), target_half_width=h,
        alpha=alpha, N=int(N), lam=float(pilot.lam(arr)[0]), n_human_only=int(n_human),
        corr=float(pilot.corr), pilot_n=pilot.n,
    )


def plan_ppi_difference(y_a, yhat_a, N_a: int, y_b, yhat_b, N_b: int, half_width: float, *,
                        alpha: float = 0.05, yhat_unlabeled_a=None, yhat_unlabeled_b=None) -> PPIPlan:
    """Human ratings per system (equal ``n`` for A and B) for a PPI++ interval of A − B.

    The predicted variance of the difference is ``se_a^2(n) + se_b^2(n)``, each system with
    its own pilot moments and its own power-tuned ``lam`` (see :func:`plan_ppi_mean` and
    :func:`ppi_mean_difference`); the sum is monotone in ``n``, and the smallest ``n`` is
    found by bisection.

    Args:
        y_a, yhat_a: pilot human and judge ratings of system A's texts.
        N_a: judge-only items of system A in the planned study.
        y_b, yhat_b, N_b: the same for system B.
        half_width: target half-width of the interval for the difference.
        alpha: error level (default 0.05).
        yhat_unlabeled_a, yhat_unlabeled_b: optional judge ratings of unlabelled items.

    Returns:
        :class:`PPIPlan` with ``n`` per system, pairs for ``N``, ``lam``, ``corr`` and
        ``pilot_n``, and the human-only requirement per system.

    Raises:
        ValueError: invalid pilot for either system, or ``half_width <= 0``.

    References:
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453.

    Example:
        >>> p = plan_ppi_difference([4, 3, 5, 2], [4, 3, 4, 2], 500, [3, 2, 4, 2], [3, 2, 3, 3], 500, 0.3)
        >>> p.n <= p.n_human_only
        True
    """
    alpha = _alpha(alpha)
    h = _target(half_width)
    pa = _pilot(y_a, yhat_a, N_a, yhat_unlabeled_a, "_a")
    pb = _pilot(y_b, yhat_b, N_b, yhat_unlabeled_b, "_b")
    z = _z(alpha)
    target_var = (h / z) ** 2
    n_human = max(2, math.ceil((pa.var_y + pb.var_y) / target_var))

    def var(n: np.ndarray) -> np.ndarray:
        return pa.var(n) + pb.var(n)

    n = _smallest_n(var, target_var, n_human)
    arr = np.array([n], dtype=float)
    return PPIPlan(
        n=int(n), predicted_half_width=float(z * math.sqrt(var(arr)[0])), target_half_width=h, alpha=alpha,
        N=(int(N_a), int(N_b)), lam=(float(pa.lam(arr)[0]), float(pb.lam(arr)[0])), n_human_only=int(n_human),
        corr=(float(pa.corr), float(pb.corr)), pilot_n=(pa.n, pb.n),
    )
