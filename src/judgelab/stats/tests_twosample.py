"""Two-sample comparisons of ratings."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st

__all__ = ["welch_t"]


def welch_t(x, y) -> tuple[float, float]:
    """Welch's unequal-variance t-test: ``(t, two-sided p)``; NaN values are dropped.

    Chiang & Lee (2023), section 3.3 compare human-written and GPT-2 stories with it.
    ``t = (mean_x - mean_y) / sqrt(s_x^2/n_x + s_y^2/n_y)`` with Welch–Satterthwaite
    degrees of freedom ``(a + b)^2 / (a^2/(n_x-1) + b^2/(n_y-1))``, ``a = s_x^2/n_x``,
    ``b = s_y^2/n_y``. NaN when a group has fewer than two values or both variances are 0.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if x.size < 2 or y.size < 2:
        return float("nan"), float("nan")
    a = x.var(ddof=1) / x.size
    b = y.var(ddof=1) / y.size
    if a + b == 0:
        return float("nan"), float("nan")
    t = (x.mean() - y.mean()) / math.sqrt(a + b)
    df = (a + b) ** 2 / (a**2 / (x.size - 1) + b**2 / (y.size - 1))
    p = 2.0 * _st.t.sf(abs(t), df)
    return float(t), float(p)
