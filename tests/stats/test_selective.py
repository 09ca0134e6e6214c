"""judgelab.stats.selective: the fixed-sequence threshold by hand, its refusals, and the guarantee in
simulation (realised agreement >= target in >= 1 - delta of 500 calibration/test splits)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from judgelab.errors import JudgelabError
from judgelab.stats.selective import calibrate_selective, select


def test_threshold_by_hand():
    # 40 items, confidence 40..1; the 10 least confident and items 25, 27 disagree
    c = np.arange(40, 0, -1, dtype=float)
    err = np.zeros(40, bool)
    err[30:] = True
    err[[25, 27]] = True
    judge, human = np.where(err, 5.0, 3.0), np.full(40, 3.0)
    t = calibrate_selective(c, judge, human, alpha=0.2, delta=0.1, grid=100)
    m = math.ceil(math.log(0.1) / math.log(0.8))  # 11
    kept = np.arange(m, 41)
    p = binom.cdf(np.cumsum(err)[kept - 1], kept, 0.2)
    first_fail = int(np.flatnonzero(p > 0.1)[0])
    assert t.n_kept == kept[first_fail - 1] and t.threshold == c[t.n_kept - 1]
    assert t.p_value == pytest.approx(p[first_fail - 1]) and t.p_value <= 0.1
    assert t.agreement == pytest.approx(1 - err[:t.n_kept].mean())
    assert select(t, c).sum() == t.n_kept


def test_ties_are_kept_together_and_too_few_items_keep_nothing():
    c = np.array([3.0] * 30 + [1.0] * 30)
    t = calibrate_selective(c, np.full(60, 3.0), np.full(60, 3.0), grid=100)
    assert t.n_kept == 60  # no threshold splits a tie: 30, then 60
    few = calibrate_selective(np.ones(5), np.ones(5), np.ones(5))
    assert math.isinf(few.threshold) and "at least 22" in few.note and not select(few, np.ones(5)).any()
    with pytest.raises(JudgelabError, match="between 0 and 1"):
        calibrate_selective(c, c, c, alpha=1.5)
    with pytest.raises(JudgelabError, match="equally long"):
        calibrate_selective(c, c[:3], c)


def test_guarantee_holds_in_500_splits():
    """Agreement rises with confidence (P(agree) = 0.5 + 0.5 c); 500 items calibrate, 5,000 test.
    The promise: agreement among kept test items >= 90% in >= 90% of splits (Monte-Carlo SE of the
    success rate about 1.3 points at 90%)."""
    rng = np.random.default_rng(2024)
    alpha = delta = 0.1
    met, coverage = [], []
    for _ in range(500):
        c = rng.random(5500)
        agree = rng.random(5500) < 0.5 + 0.5 * c
        judge = np.where(agree, 3.0, 3.0 + rng.choice([-2.0, 2.0], 5500))
        t = calibrate_selective(c[:500], judge[:500], np.full(500, 3.0), alpha, delta)
        keep = select(t, c[500:])
        met.append(agree[500:][keep].mean() >= 1 - alpha if keep.any() else True)
        coverage.append(keep.mean())
    assert np.mean(met) >= 1 - delta
    assert np.mean(coverage) > 0.05  # it does keep items (the ideal threshold keeps 40%)
