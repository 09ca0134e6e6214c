"""The one mean interval (stats.describe.mean_interval) against scipy, and its refusals."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.stats.describe import mean_interval


@pytest.mark.parametrize("n", [2, 5, 30])
def test_t_and_normal_intervals_match_scipy(n):
    values = np.random.default_rng(n).normal(3, 1, n)
    t = mean_interval(values, 0.9)
    lo, hi = stats.t.interval(0.9, n - 1, loc=values.mean(), scale=stats.sem(values))
    assert (t.low, t.high) == pytest.approx((lo, hi), rel=1e-12)
    z = mean_interval(values, 0.95, quantile="normal")
    lo, hi = stats.norm.interval(0.95, loc=values.mean(), scale=stats.sem(values))
    assert z.confidence_interval() == pytest.approx((lo, hi), rel=1e-12)


def test_missing_values_are_left_out_and_degenerate_intervals_refused():
    r = mean_interval([1.0, None, float("nan"), pd.NA, np.float32("nan"), 3.0])
    assert (r.mean, r.n) == (2.0, 2) and r.low < 2.0 < r.high
    one = mean_interval([4.0])
    assert one.mean == 4.0 and math.isnan(one.low) and "one value" in one.reason
    same = mean_interval([2, 2, 2])
    assert math.isnan(same.high) and "zero-width" in same.reason
    assert math.isnan(mean_interval([]).mean)
    with pytest.raises(ValueError, match="quantile"):
        mean_interval([1, 2], quantile="z")
