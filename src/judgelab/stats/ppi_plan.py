"""Planning human ratings for PPI++ (:mod:`judgelab.stats.ppi`): how many human-rated items a target
half-width needs, predicted from a pilot, and from which ``n`` the interval keeps its level
(``valid_from``: :data:`~judgelab.stats.ppi_core.VALID_FROM`, raised by Cochran's rule on skewed pilots)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from judgelab.stats.ppi_core import (COCHRAN, VALID_FROM, _alpha, _q, _quantile_name, _vector, _welch_df,
                                     minimum_sizes)

__all__ = ["PPIPlan", "plan_ppi_mean", "plan_ppi_difference"]


@dataclass(frozen=True)
class PPIPlan:
    """How many human ratings a PPI++ interval needs to reach a target half-width.

    Attributes:
        n: human ratings to collect (per system for a difference): ``max(n_for_width, valid_from)``.
        predicted_half_width: predicted half-width at that ``n``.
        target_half_width: the target.
        alpha: error level of the planned interval.
        N: judge-only items (a pair ``(N_a, N_b)`` for a difference).
        lam: power-tuning weight predicted at ``n`` (a pair for a difference).
        n_human_only: human ratings a human-only interval would need for the same target.
        corr: pilot correlation between human and judge ratings (a pair for a difference).
        pilot_n: pilot pairs the plan is based on (a pair for a difference).
        quantile: the interval planned for (``"t"`` or ``"normal"``).
        n_for_width: the smallest ``n`` whose predicted half-width is at most the target.
        valid_from: the smallest ``n`` from which the interval is trusted to keep its level:
            :data:`VALID_FROM` of the quantile, raised by Cochran's rule ``n > 25 g1²`` when
            the pilot's residuals ``y - lam yhat`` are skewed (the larger system for a difference).
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
    quantile: str = "t"
    n_for_width: int = 0
    valid_from: int = 0

    def to_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    def to_frame(self) -> pd.DataFrame:
        """One row: ``n`` beside the human-only ``n`` and the pilot summary."""
        return pd.DataFrame([{k: (str(v) if isinstance(v, list) else v) for k, v in self.to_dict().items()}])


# --------------------------------------------------------------------------- validation


@dataclass(frozen=True)
class _Pilot:
    var_y: float
    cov: float
    var_f: float  # judge variance on labelled items
    var_fu: float  # judge variance on unlabelled items
    N: int
    n: int
    y: np.ndarray
    yhat: np.ndarray

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

    def valid_from(self, n: int, quantile: str) -> int:
        """:data:`VALID_FROM`, raised by Cochran's rule on the pilot residuals at ``lam(n)``."""
        lam = float(self.lam(np.array([n], dtype=float))[0])
        d = self.y - lam * self.yhat
        d = d - d.mean()
        m2 = float(np.mean(d * d))
        need = 0 if not m2 > 0 else math.floor(COCHRAN * (float(np.mean(d**3)) / m2**1.5) ** 2) + 1
        return max(VALID_FROM[quantile], need)


def _pilot(y, yhat, N, yhat_unlabeled, suffix: str = "", quantile: str = "t") -> _Pilot:
    y = _vector(y, "y" + suffix, 2)
    yhat = _vector(yhat, "yhat" + suffix, 2)
    if y.size != yhat.size:
        raise ValueError(f"y{suffix} and yhat{suffix} must rate the same items: {y.size} vs {yhat.size} values.")
    N_min = minimum_sizes(quantile)[1]
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < N_min:
        raise ValueError(f"N{suffix} (judge-only items) must be an integer >= {N_min}, got {N!r}.")
    c = np.cov(y, yhat)  # ddof 1, positive semi-definite
    var_f = float(c[1, 1])
    if yhat_unlabeled is not None:
        fu = _vector(yhat_unlabeled, "yhat_unlabeled" + suffix, 2)
        var_fu = float(np.var(fu, ddof=1))
    else:
        var_fu = var_f
    return _Pilot(float(c[0, 0]), float(c[0, 1]), var_f, var_fu, int(N), int(y.size), y, yhat)


def _smallest(ok, lo: int) -> int:
    """Smallest integer n >= lo with ok(n), for a predicate that stays true once true."""
    if ok(lo):
        return lo
    hi = max(lo + 1, 2 * lo)
    while not ok(hi):  # invariant: not ok(lo)
        lo, hi = hi, 2 * hi
        if hi > 10**12:
            raise ValueError("the target half-width cannot be reached: the predicted half-width does not shrink to it.")
    while hi - lo > 1:  # invariant: not ok(lo), ok(hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _plan_q(alpha: float, quantile: str, n: int, dfs) -> float:
    """The quantile the planned interval will use at ``n`` labels (``dfs(n)``: its df)."""
    return _q(alpha, math.inf if quantile == "normal" else dfs(n))


def _human_only_n(var_y: float, h: float, alpha: float, quantile: str) -> int:
    """Smallest n >= 2 whose human-only half-width ``q sqrt(var_y / n)`` is at most ``h``."""
    return _smallest(lambda n: _plan_q(alpha, quantile, n, lambda m: m - 1.0) * math.sqrt(var_y / n) <= h, 2)


def _target(half_width: float) -> float:
    if not (isinstance(half_width, (int, float)) and math.isfinite(half_width) and half_width > 0):
        raise ValueError(f"half_width must be a positive number, got {half_width!r}.")
    return float(half_width)


def plan_ppi_mean(y, yhat, N: int, half_width: float, *, alpha: float = 0.05,
                  yhat_unlabeled=None, quantile: str = "t") -> PPIPlan:
    """Human ratings needed for a PPI++ interval of a system mean to reach a target half-width.

    From a pilot of human–judge pairs, the planner estimates ``var(y)``, ``cov(y, yhat)`` and
    ``var(yhat)`` (ddof 1; ``var(yhat)`` on the judge-only items from ``yhat_unlabeled``
    when given) and predicts, for ``n`` labels and ``N`` judge-only items,

        ``se^2(n) = lam^2 var_fu / N + (var_y - 2 lam cov + lam^2 var_f) / n``

    with the variance-minimising ``lam = cov / (var_f + n var_fu / N)`` clipped to [0, 1]
    (the PPI++ weight). For every fixed ``lam`` the right-hand side does not increase with
    ``n``, so neither does its minimum over ``lam``; the quantile (normal, or t with
    ``min(n - 2, N - 1)`` degrees of freedom — the interval's own df whenever ``N > n - 2``,
    and fewer otherwise) does not increase either, so the half-width is monotone and the
    smallest sufficient ``n`` (``n_for_width``) is found by bisection. ``N`` is held fixed; the
    prediction ignores the noise of estimating ``lam`` and the pilot moments.

    The plan never goes below ``valid_from``: :data:`VALID_FROM` of the quantile (5 for
    ``"t"``, 50 for ``"normal"``), raised by Cochran's rule ``n > 25 g1²`` when the pilot's
    residuals ``y - lam yhat`` are skewed. ``n = max(n_for_width, valid_from)``.

    Args:
        y: pilot human ratings (``>= 2``).
        yhat: the judge's ratings of the same pilot items.
        N: judge-only items in the planned study (``>= 2`` for ``"t"``).
        half_width: target half-width of the two-sided ``1 - alpha`` interval.
        alpha: error level (default 0.05).
        yhat_unlabeled: optional judge ratings of unlabelled items, for ``var_fu``.
        quantile: the interval planned for, as in :func:`ppi_mean` (default ``"t"``).

    Returns:
        :class:`PPIPlan` with ``n``, ``n_for_width``, ``valid_from``, the predicted half-width,
        the predicted ``lam`` and the human-only requirement.

    Raises:
        ValueError: invalid pilot (see :func:`ppi_mean`), ``N`` too small or ``half_width <= 0``.

    References:
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453 (variance of the power-tuned
        estimator); Cochran (1977) §2.15; the inversion for ``n`` is this module's.

    Example:
        >>> p = plan_ppi_mean([4, 3, 5, 2, 4, 3], [4.4, 3.1, 4.9, 2.6, 4.2, 3.3], N=1000, half_width=0.2)
        >>> p.n < p.n_human_only, p.valid_from
        (True, 5)
    """
    alpha = _alpha(alpha)
    quantile = _quantile_name(quantile)
    h = _target(half_width)
    pilot = _pilot(y, yhat, N, yhat_unlabeled, quantile=quantile)
    n_min = minimum_sizes(quantile)[0]

    def dfs(n: int) -> float:
        return float(min(n - 2, int(N) - 1))

    def half(n: int) -> float:
        return _plan_q(alpha, quantile, n, dfs) * math.sqrt(pilot.var(np.array([n], dtype=float))[0])

    n_width = _smallest(lambda n: half(n) <= h, n_min)
    valid = pilot.valid_from(n_width, quantile)
    n = max(n_width, valid)
    return PPIPlan(
        n=int(n), predicted_half_width=float(half(n)), target_half_width=h, alpha=alpha, N=int(N),
        lam=float(pilot.lam(np.array([n], dtype=float))[0]), n_human_only=_human_only_n(pilot.var_y, h, alpha, quantile),
        corr=float(pilot.corr), pilot_n=pilot.n, quantile=quantile, n_for_width=int(n_width), valid_from=int(valid),
    )


def plan_ppi_difference(y_a, yhat_a, N_a: int, y_b, yhat_b, N_b: int, half_width: float, *,
                        alpha: float = 0.05, yhat_unlabeled_a=None, yhat_unlabeled_b=None,
                        quantile: str = "t") -> PPIPlan:
    """Human ratings per system (equal ``n`` for A and B) for a PPI++ interval of A − B.

    The predicted variance of the difference is ``se_a^2(n) + se_b^2(n)``, each system with
    its own pilot moments and its own power-tuned ``lam`` (see :func:`plan_ppi_mean` and
    :func:`ppi_mean_difference`); under ``"t"`` the quantile has the Welch–Satterthwaite df
    of the two labelled terms, ``(v_a + v_b)² / (v_a²/(n-2) + v_b²/(n-2))`` (at least
    ``n - 2``), capped by ``N_a - 1`` and ``N_b - 1``. The smallest ``n`` is found by search
    (the half-width does not increase with ``n``); ``valid_from`` is the larger of the two
    systems'.

    Args:
        y_a, yhat_a: pilot human and judge ratings of system A's texts.
        N_a: judge-only items of system A in the planned study.
        y_b, yhat_b, N_b: the same for system B.
        half_width: target half-width of the interval for the difference.
        alpha: error level (default 0.05).
        yhat_unlabeled_a, yhat_unlabeled_b: optional judge ratings of unlabelled items.
        quantile: as in :func:`ppi_mean` (default ``"t"``).

    Returns:
        :class:`PPIPlan` with ``n`` per system, pairs for ``N``, ``lam``, ``corr`` and
        ``pilot_n``, and the human-only requirement per system.

    Raises:
        ValueError: invalid pilot for either system, or ``half_width <= 0``.

    References:
        Angelopoulos, Duchi & Zrnic (2024), arXiv:2311.01453; Welch (1947); Cochran (1977).

    Example:
        >>> p = plan_ppi_difference([4, 3, 5, 2], [4, 3, 4, 2], 500, [3, 2, 4, 2], [3, 2, 3, 3], 500, 0.3)
        >>> p.n <= p.n_human_only
        True
    """
    alpha = _alpha(alpha)
    quantile = _quantile_name(quantile)
    h = _target(half_width)
    pa = _pilot(y_a, yhat_a, N_a, yhat_unlabeled_a, "_a", quantile)
    pb = _pilot(y_b, yhat_b, N_b, yhat_unlabeled_b, "_b", quantile)
    n_min = minimum_sizes(quantile)[0]

    def parts(n: int) -> tuple[float, float]:
        arr = np.array([n], dtype=float)
        return float(pa.var(arr)[0]), float(pb.var(arr)[0])

    def dfs(n: int) -> float:
        va, vb = parts(n)
        ws = _welch_df([(va, n - 2.0), (vb, n - 2.0)])
        return float(min(n - 2.0 if math.isnan(ws) else ws, int(N_a) - 1, int(N_b) - 1))

    def half(n: int) -> float:
        return _plan_q(alpha, quantile, n, dfs) * math.sqrt(sum(parts(n)))

    n_width = _smallest(lambda n: half(n) <= h, n_min)
    valid = max(pa.valid_from(n_width, quantile), pb.valid_from(n_width, quantile))
    n = max(n_width, valid)
    # human-only: the Welch df of two equal-n samples is at least n - 1
    n_human = _human_only_n(pa.var_y + pb.var_y, h, alpha, quantile)
    arr = np.array([n], dtype=float)
    return PPIPlan(
        n=int(n), predicted_half_width=float(half(n)), target_half_width=h, alpha=alpha,
        N=(int(N_a), int(N_b)), lam=(float(pa.lam(arr)[0]), float(pb.lam(arr)[0])), n_human_only=int(n_human),
        corr=(float(pa.corr), float(pb.corr)), pilot_n=(pa.n, pb.n), quantile=quantile,
        n_for_width=int(n_width), valid_from=int(valid),
    )
