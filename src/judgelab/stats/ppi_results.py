"""The result types of PPI++ estimation (:mod:`judgelab.stats.ppi`): a mean with its interval, a
system's PPI++ mean beside the human-only and judge-only ones, and a difference of two systems
(both :class:`PPIInterval`: the fields they share)."""
from __future__ import annotations

import math
from dataclasses import KW_ONLY, asdict, dataclass

import pandas as pd

__all__ = ["MeanCI", "PPIInterval", "PPIMean", "PPIDifference"]


@dataclass(frozen=True)
class MeanCI:
    """One estimator of a mean (or of a difference of means) with its two-sided interval.

    Attributes:
        method: ``"ppi"`` (PPI/PPI++), ``"human_only"`` or ``"judge_only"``.
        estimate: point estimate.
        se: standard error.
        ci_low, ci_high: ``estimate ± q se``, ``q`` the normal quantile or the t quantile with
            ``df`` degrees of freedom; NaN when ``se`` is 0 (a zero-width interval is no
            interval; ``note`` says so).
        df: degrees of freedom of the t quantile (``inf`` for the normal quantile).
        note: why the bounds are NaN, or a caveat on the interval.
    """

    method: str
    estimate: float
    se: float
    ci_low: float
    ci_high: float
    df: float = math.inf
    note: str = ""

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    def to_dict(self) -> dict:
        return {**asdict(self), "half_width": self.half_width}


@dataclass(frozen=True)
class PPIInterval:
    """What every PPI++ result carries: the PPI estimate with its interval, and the two naive baselines.

    The base of :class:`PPIMean` and :class:`PPIDifference`; the fields after ``ci_high`` are
    keyword-only (so that each result adds its own fields after the interval).

    Attributes:
        estimate, se, ci_low, ci_high: the PPI estimate, its standard error and its two-sided
            ``1 - alpha`` interval (NaN bounds when ``se`` is 0; see ``note``).
        alpha: error level of the intervals.
        human_only: the interval from the human ratings alone.
        judge_only: naive interval from the judge's ratings alone (biased).
        quantile: ``"t"`` or ``"normal"`` (see :mod:`judgelab.stats.ppi`).
        df: degrees of freedom of the t quantile (``inf`` under ``"normal"``).
        note: caveats (empty when there is none).
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    _: KW_ONLY
    alpha: float
    human_only: MeanCI
    judge_only: MeanCI
    quantile: str = "t"
    df: float = math.inf
    note: str = ""

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2

    @property
    def ppi(self) -> MeanCI:
        """The PPI estimator as a :class:`MeanCI` (the first row of ``to_frame()``)."""
        return MeanCI("ppi", self.estimate, self.se, self.ci_low, self.ci_high, self.df, self.note)


@dataclass(frozen=True)
class PPIMean(PPIInterval):
    """PPI++ estimate of one system's mean human rating, with the two naive baselines.

    Attributes:
        estimate, se, ci_low, ci_high, alpha, quantile, df: as in :class:`PPIInterval`.
        lam: the power-tuning weight used (tuned when ``lam_tuned``).
        lam_tuned: True when ``lam`` was estimated from the data (``lam=None``).
        n: human-rated items (each also rated by the judge).
        N: items rated by the judge only.
        effective_n: human ratings a human-only interval would need for the same standard
            error, ``n * se_human^2 / se^2`` (NaN when ``se`` is 0).
        human_only: the interval from the ``n`` human ratings alone.
        judge_only: naive interval from the judge's ``n + N`` ratings (biased).
        note: caveats: zero standard error, fewer human ratings than
            :data:`~judgelab.stats.ppi_core.VALID_FROM`, skewed ratings by Cochran's rule
            (empty when there is none).
    """

    lam: float
    lam_tuned: bool
    n: int
    N: int
    effective_n: float

    def to_dict(self) -> dict:
        """Plain nested dict (JSON-ready floats)."""
        return {"estimate": self.estimate, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "lam": self.lam, "lam_tuned": self.lam_tuned, "alpha": self.alpha, "n": self.n, "N": self.N,
                "effective_n": self.effective_n, "quantile": self.quantile, "df": self.df, "note": self.note,
                "half_width": self.half_width, "human_only": self.human_only.to_dict(),
                "judge_only": self.judge_only.to_dict()}

    def to_frame(self) -> pd.DataFrame:
        """One row per estimator (``ppi``, ``human_only``, ``judge_only``)."""
        rows = []
        for m, n_h, n_j, lam in ((self.ppi, self.n, self.n + self.N, self.lam),
                                 (self.human_only, self.n, 0, 0.0),
                                 (self.judge_only, 0, self.n + self.N, float("nan"))):
            rows.append({**m.to_dict(), "lam": lam, "n_human": n_h, "n_judge": n_j, "alpha": self.alpha})
        return pd.DataFrame(rows)


@dataclass(frozen=True)
class PPIDifference(PPIInterval):
    """PPI++ estimate of ``mean(A) - mean(B)`` for two systems rated on separate item sets.

    Attributes:
        estimate, se, ci_low, ci_high: ``a.estimate - b.estimate``, ``sqrt(a.se² + b.se²)``
            and its two-sided ``1 - alpha`` interval (NaN bounds when ``se`` is 0).
        z, p_value: Wald statistic ``estimate / se`` and its two-sided p-value for H0: no
            difference, from the same distribution as the interval (t with ``df`` degrees of
            freedom, or normal), so ``p_value < alpha`` exactly when the interval excludes 0.
        alpha: error level.
        a, b: the per-system :class:`PPIMean` results (each with its own tuned ``lam``).
        human_only, judge_only: the same difference from the two naive baselines.
        quantile, df: as in :class:`PPIMean`; ``df`` is the Welch–Satterthwaite value of the
            four variance terms, capped at that of the two human-labelled terms.
        note: caveats of either system and of the difference.
    """

    z: float
    p_value: float
    a: PPIMean
    b: PPIMean

    def to_dict(self) -> dict:
        return {
            "estimate": self.estimate, "se": self.se, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "half_width": self.half_width, "z": self.z, "p_value": self.p_value, "alpha": self.alpha,
            "quantile": self.quantile, "df": self.df, "note": self.note,
            "a": self.a.to_dict(), "b": self.b.to_dict(),
            "human_only": self.human_only.to_dict(), "judge_only": self.judge_only.to_dict(),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per estimator of the difference (``ppi``, ``human_only``, ``judge_only``)."""
        rows = [{**m.to_dict(), "alpha": self.alpha} for m in (self.ppi, self.human_only, self.judge_only)]
        frame = pd.DataFrame(rows)
        frame["lam_a"] = [self.a.lam, 0.0, float("nan")]
        frame["lam_b"] = [self.b.lam, 0.0, float("nan")]
        return frame
