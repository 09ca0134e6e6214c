"""Selective judging with a guarantee: keep the judge's rating where its own confidence is high enough,
send the rest to people, so that the kept ratings agree with the humans at a guaranteed rate.

Agreement is ``|judge − human| ≤ tolerance`` (default one scale point). Calibrated on human-rated
items, the procedure picks a confidence threshold ``λ̂`` such that, with probability at least
``1 − δ`` over the calibration sample, the disagreement rate of future items with confidence
``≥ λ̂`` is at most ``α`` (agreement at least ``1 − α``). It is the fixed-sequence testing
procedure of Trust-or-Escalate (Jung et al. 2024, §3, after Learn-then-Test, Angelopoulos et al.
2021, and Bauer 1991), adapted to ratings:

1. sort the calibration items by confidence, highest first; the candidate thresholds are the
   confidences at which about ``grid`` evenly spaced counts from ``m`` to ``n`` items are kept,
   where ``m`` is the smallest count at which an error-free set could pass the test
   (``(1 − α)^m ≤ δ``);
2. for each candidate in that order, test ``H0: disagreement among kept items > α`` with the exact
   binomial p-value ``P(Bin(n_kept, α) ≤ errors)``; continue while ``p ≤ δ``;
3. the threshold is the last candidate that passed (none passed: every item goes to people).

Assumptions (state them with the result): calibration and future items are exchangeable (the same
kind of items, judge and humans); the human rating of a calibration item is what the guarantee is
about (the mean of its raters); the guarantee is marginal over calibration samples (probability
``1 − δ``), not for every sample, and about the *rate* over the kept items, not any single item.
Ties in confidence are kept or escalated together. The candidate thresholds come from the
calibration confidences (not from the labels); the simulation in ``tests/stats/test_selective.py``
checks that the promise holds with this choice.

References:
    Jung, Brahman & Choi (2024). Trust or Escalate: LLM judges with provable guarantees for human
    agreement, §3 (fixed-sequence testing).
    Angelopoulos, Bates, Candès, Jordan & Lei (2021). Learn then Test, §4.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from judgelab.errors import JudgelabError

__all__ = ["SelectiveThreshold", "calibrate_selective", "select"]


@dataclass(frozen=True)
class SelectiveThreshold:
    """A calibrated threshold: keep items with confidence ``>= threshold``.

    Attributes:
        threshold: the confidence threshold (``inf``: every item goes to people).
        alpha, delta, tolerance: the promise: disagreement ``|judge − human| > tolerance`` among kept
            items at most ``alpha``, with probability at least ``1 − delta``.
        n_calibration: calibration items; n_kept: those kept; errors: kept items that disagree.
        coverage: share of calibration items kept; agreement: agreement among them.
        p_value: the binomial p-value at the chosen threshold (NaN when none passed).
        note: why nothing is kept, or caveats.
    """

    threshold: float
    alpha: float
    delta: float
    tolerance: float
    n_calibration: int
    n_kept: int
    errors: int
    coverage: float
    agreement: float
    p_value: float
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(alpha: float, delta: float) -> None:
    if not 0 < alpha < 1 or not 0 < delta < 1:
        raise JudgelabError(f"alpha and delta are between 0 and 1 (got {alpha}, {delta})")


def calibrate_selective(confidence, judge, human, alpha: float = 0.1, delta: float = 0.1,
                        tolerance: float = 1.0, grid: int = 20) -> SelectiveThreshold:
    """The threshold of the fixed-sequence procedure (module docstring) on human-rated items.

    Args:
        confidence: the judge's confidence per item (higher = more trusted), e.g. minus the spread of
            its samples or of a jury's judges.
        judge, human: the judge's and the (mean) human rating of the same items, in the same order.
        alpha: the disagreement allowed among kept items (target agreement ``1 − alpha``).
        delta: the probability that the promise fails over calibration samples.
        tolerance: agreement is ``|judge − human| <= tolerance``.
        grid: at most this many candidate thresholds, evenly spaced in the number of items kept (a
            fixed sequence stops at its first failure, so a fine grid stops early by chance; in the
            simulation of the tests, 20 candidates kept 15% of the items, every calibration item as
            a candidate 13%).

    Returns:
        A :class:`SelectiveThreshold`.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> c = rng.random(2000); agree = rng.random(2000) < 0.6 + 0.4 * c
        >>> t = calibrate_selective(c, np.where(agree, 3.0, 5.0), np.full(2000, 3.0), 0.1, 0.1)
        >>> 0.5 < t.threshold < 1 and t.agreement >= 0.9
        True
    """
    from scipy.stats import binom

    _check(alpha, delta)
    c, j, h = (np.asarray(v, dtype=float) for v in (confidence, judge, human))
    if not (c.shape == j.shape == h.shape) or c.ndim != 1:
        raise JudgelabError("confidence, judge and human ratings must be equally long")
    ok = np.isfinite(c) & np.isfinite(j) & np.isfinite(h)
    c, err = c[ok], (np.abs(j[ok] - h[ok]) > tolerance + 1e-12)
    n = c.size
    order = np.argsort(-c, kind="stable")
    c, err = c[order], err[order]
    m = math.ceil(math.log(delta) / math.log(1 - alpha))
    # a threshold keeps every item tied with it: candidates are the last position of each tie run
    last = np.flatnonzero(np.r_[c[1:] != c[:-1], True])
    last = last[last + 1 >= m]
    if last.size > grid:  # evenly spaced in items kept: the first candidate keeps about m items
        targets = np.linspace(m, n, grid)
        last = np.unique(last[np.minimum(np.searchsorted(last + 1, targets), last.size - 1)])
    kept = last + 1
    errors = np.cumsum(err)[last]
    p = binom.cdf(errors, kept, alpha)
    fails = np.flatnonzero(p > delta)
    passed = len(last) if fails.size == 0 else int(fails[0])
    base = dict(alpha=alpha, delta=delta, tolerance=tolerance, n_calibration=n)
    if passed == 0:
        why = (f"only {n} calibration items: at least {m} are needed to guarantee {1 - alpha:.0%} agreement with "
               f"probability {1 - delta:.0%}" if n < m else
               f"the first candidate (the {int(kept[0])} most confident items, {int(errors[0])} of them disagreeing) "
               f"does not pass the test at {1 - alpha:.0%} agreement: every item goes to people")
        return SelectiveThreshold(math.inf, n_kept=0, errors=0, coverage=0.0, agreement=math.nan, p_value=math.nan,
                                  note=why, **base)
    i = passed - 1
    k, e = int(kept[i]), int(errors[i])
    note = f"{int((~ok).sum())} items without a confidence or rating left out" if (~ok).any() else ""
    return SelectiveThreshold(float(c[last[i]]), n_kept=k, errors=e, coverage=k / n, agreement=1 - e / k,
                              p_value=float(p[i]), note=note, **base)


def select(threshold: SelectiveThreshold, confidence) -> np.ndarray:
    """Which items keep the judge's rating (``True``) and which go to people (``False``)."""
    c = np.asarray(confidence, dtype=float)
    return np.isfinite(c) & (c >= threshold.threshold)
