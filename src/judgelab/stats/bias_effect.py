"""One bias effect (:class:`BiasEffect`): the typed result every bias of :mod:`judgelab.stats.bias`,
:mod:`judgelab.stats.position` and :mod:`judgelab.stats.prompt_sensitivity` returns, and what they
share to make one: the cluster-bootstrap interval (:mod:`judgelab.stats.wboot`), weighted per-resample
means and SDs, and the interval's wording.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab.stats.wboot import weighted_ci

__all__ = ["BiasEffect", "effects_frame", "EFFECT_COLUMNS"]

EFFECT_COLUMNS = ["bias", "rater", "criterion", "estimate", "ci_low", "ci_high", "null", "detected", "n", "n_clusters",
                  "note", "line"]
_NAN = float("nan")


@dataclass(frozen=True)
class BiasEffect:
    """One bias of one rater on one criterion.

    Attributes:
        bias: ``leniency``, ``spread_ratio``, ``scale_point:<p>``, ``length``, ``self_preference``,
            ``position_first``, ``position_consistency``.
        estimate, ci_low, ci_high: the effect and its interval (NaN bounds: ``note`` says why).
        null: the value meaning "no bias" (0; 1 for ``spread_ratio``; NaN for consistency, which
            has no no-bias value: a judge with noise is inconsistent without a position bias).
        n: rows behind the estimate (items, pairs); n_clusters: the items resampled.
        note: caveats and reasons of NaN; line: one plain-language sentence.
    """

    bias: str
    rater: str
    criterion: str
    estimate: float
    ci_low: float
    ci_high: float
    null: float
    n: int
    n_clusters: int
    note: str = ""
    line: str = ""

    @property
    def detected(self) -> bool:
        """The interval excludes the no-bias value."""
        if math.isnan(self.null) or math.isnan(self.ci_low) or math.isnan(self.ci_high):
            return False
        return not (self.ci_low <= self.null <= self.ci_high)

    def covers(self, value: float) -> bool:
        """The interval contains ``value``."""
        return bool(self.ci_low <= value <= self.ci_high)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["detected"] = self.detected
        return {c: d[c] for c in EFFECT_COLUMNS}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([self.to_dict()], columns=EFFECT_COLUMNS)


def effects_frame(effects: list[BiasEffect]) -> pd.DataFrame:
    """The effects as one table (``EFFECT_COLUMNS``)."""
    return pd.DataFrame([e.to_dict() for e in effects], columns=EFFECT_COLUMNS)


def _ci(stat, k: int, n_resamples: int, level: float, seed: int):
    if n_resamples <= 0:
        return _NAN, _NAN, "no bootstrap (n_resamples 0)"
    ci = weighted_ci(stat, k, n_resamples, level, seed)
    return ci.low, ci.high, ci.message


def _csum(codes: np.ndarray, k: int, v) -> np.ndarray:
    """Per-cluster sums of ``v`` (rows in clusters ``codes``): a resample's weighted sum is ``w @ sums``,
    so no statistic builds a (resamples × rows) array."""
    return np.bincount(codes, weights=np.asarray(v, dtype=float), minlength=k)


def _wmean(w: np.ndarray, codes: np.ndarray, x, where=None) -> np.ndarray:
    """Mean of ``x`` over the rows (optionally only those with ``where``) in each resample ``w`` (B × k)."""
    x = np.asarray(x, dtype=float)
    mask = np.ones_like(x) if where is None else np.asarray(where, dtype=float)
    k = w.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ _csum(codes, k, x * mask)) / (w @ _csum(codes, k, mask))


def _wsd(w: np.ndarray, codes: np.ndarray, x) -> np.ndarray:
    """Population SD of ``x`` over the rows in each resample (centred first: a constant gives exactly 0)."""
    x = np.asarray(x, dtype=float)
    x = x - x.mean()
    m, m2 = _wmean(w, codes, x), _wmean(w, codes, x ** 2)
    return np.sqrt(np.maximum(m2 - m ** 2, 0.0))


def _sign_word(x: float, up: str, down: str) -> str:
    return up if x >= 0 else down


def _interval_text(low: float, high: float, digits: int = 2, pct: bool = False, points: bool = False) -> str:
    if math.isnan(low):
        return "no interval"
    if points:
        return f"95% CI {100 * low:+.1f} to {100 * high:+.1f} points"
    if pct:
        return f"95% CI {100 * low:.1f}% to {100 * high:.1f}%"
    return f"95% CI {low:.{digits}f} to {high:.{digits}f}"
