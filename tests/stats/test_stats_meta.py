"""Meta-evaluation statistics against independent implementations and published examples."""
import math

import numpy as np
import pandas as pd
import pingouin as pg
import pytest
from scipy import stats as st
from statsmodels.stats.multitest import multipletests

from judgelab.stats import (
    bh_adjust, correlate, icc, overall, per_group, system_level, williams_test,
)


def _pingouin_icc(x):
    long = pd.DataFrame([(i, j, x[i, j]) for i in range(x.shape[0]) for j in range(x.shape[1])], columns=["t", "r", "s"])
    return pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type")


@pytest.mark.parametrize("seed", range(5))
def test_icc_matches_pingouin(seed):
    rng = np.random.default_rng(seed)
    k = 3 + seed % 3
    x = rng.normal(size=(25 + seed, 1)) + rng.normal(scale=0.8, size=(25 + seed, k)) + rng.normal(size=k) * 0.3
    ours = icc(x)
    ref = _pingouin_icc(x)
    assert ours.single.estimate == pytest.approx(ref.loc["ICC(A,1)", "ICC"], abs=1e-9)
    assert ours.average.estimate == pytest.approx(ref.loc["ICC(A,k)", "ICC"], abs=1e-9)
    assert (ours.n, ours.k) == x.shape
    for est, ref_key in ((ours.single, "ICC(A,1)"), (ours.average, "ICC(A,k)")):
        low, high = ref.loc[ref_key, "CI95"]  # pingouin rounds its CI to 2 decimals
        assert est.confidence_interval() == pytest.approx((low, high), abs=0.005 + 1e-9)
        assert est.f == pytest.approx(ref.loc[ref_key, "F"], rel=1e-9)
        assert (est.df1, est.df2) == (ref.loc[ref_key, "df1"], ref.loc[ref_key, "df2"])
        assert est.pvalue == pytest.approx(ref.loc[ref_key, "pval"], rel=1e-6, abs=1e-300)
    frame = ours.to_frame()
    assert list(frame["kind"]) == ["ICC(2,1)", "ICC(2,k)"]
    assert frame.loc[1, "estimate"] == ours.average.estimate
    assert ours.to_dict()["ICC(2,k)"]["ci_high"] == ours.average.ci_high


def test_icc_shrout_fleiss_published_example():
    # Shrout & Fleiss (1979), Table 2: 6 targets × 4 judges; ICC(2,1) = .29, ICC(2,k) = .62.
    data = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], float)
    res = icc(data)
    assert res.single.estimate == pytest.approx(0.29, abs=0.005)
    assert res.average.estimate == pytest.approx(0.62, abs=0.005)
    assert res.single.confidence_interval() == pytest.approx((0.02, 0.76), abs=0.005)  # as R psych::ICC and pingouin print  # as R psych::ICC and pingouin print


def test_icc_drops_incomplete_items_and_degenerate():
    x = np.array([[1, 2, 2], [3, np.nan, 3], [4, 4, 5], [2, 2, 3]], float)
    assert icc(x).average.estimate == pytest.approx(icc(x[[0, 2, 3]]).average.estimate)
    assert icc(x).n == 3
    one = icc(np.ones((1, 3)))
    assert all(math.isnan(v) for v in (*one.single, one.single.f, one.single.pvalue))


@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_correlate_matches_scipy_and_drops_nan_pairwise(method):
    rng = np.random.default_rng(3)
    x = rng.integers(1, 6, 80).astype(float)
    y = x + rng.normal(size=80)
    x[[3, 10]] = np.nan
    y[[10, 20]] = np.nan
    keep = ~(np.isnan(x) | np.isnan(y))
    ref = {"pearson": st.pearsonr, "spearman": st.spearmanr, "kendall": st.kendalltau}[method](x[keep], y[keep])
    c = correlate(x, y, method)
    assert (c.r, c.p, c.n) == (pytest.approx(ref.statistic, abs=1e-12), pytest.approx(ref.pvalue, abs=1e-12), 77)


def test_kendall_tau_c():
    rng = np.random.default_rng(4)
    x, y = rng.integers(1, 4, 50), rng.integers(1, 6, 50)
    ref = st.kendalltau(x, y, variant="c")
    assert correlate(x, y, "kendall", variant="c").r == pytest.approx(ref.statistic, abs=1e-12)


def test_undefined_correlations_are_nan_with_reason():
    c = correlate([3, 3, 3, 3], [1, 2, 3, 4])
    assert math.isnan(c.r) and "constant" in c.reason
    c = correlate([1, np.nan], [2, 3])
    assert math.isnan(c.r) and "paired" in c.reason


def test_levels_match_pandas():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(10, 30))  # systems × groups
    y = x + rng.normal(size=(10, 30))
    long = pd.DataFrame({"s": np.repeat(range(10), 30), "g": np.tile(range(30), 10), "x": x.ravel(), "y": y.ravel()})
    assert overall(x, y, "kendall").r == pytest.approx(long["x"].corr(long["y"], method="kendall"), abs=1e-12)
    means = long.groupby("s")[["x", "y"]].mean()
    assert system_level(x, y, "pearson").r == pytest.approx(means["x"].corr(means["y"]), abs=1e-12)
    per = long.groupby("g").apply(lambda d: d["x"].corr(d["y"], method="spearman"), include_groups=False).mean()
    assert per_group(x, y, "spearman").r == pytest.approx(per, abs=1e-12)


def test_williams_steiger_published_example():
    # Steiger (1980), the example of R psych::r.test: n = 103, r12 = .4, r13 = .5, r23 = .1 -> t = -0.89.
    t, p = williams_test(0.4, 0.5, 0.1, 103)
    assert t == pytest.approx(-0.89, abs=0.005)
    assert p == pytest.approx(2 * st.t.sf(0.8913, 100), abs=1e-3)
    one = williams_test(0.5, 0.4, 0.1, 103, alternative="greater")
    assert one.statistic == pytest.approx(-t) and one.pvalue == pytest.approx(p / 2)
    assert (one.df, one.n, one.alternative) == (100, 103, "greater")
    less = williams_test(0.5, 0.4, 0.1, 103, alternative="less")
    assert less.pvalue == pytest.approx(1 - one.pvalue) and less.pvalue == pytest.approx(st.t.cdf(one.statistic, 100))
    assert all(math.isnan(v) for v in williams_test(0.5, 0.4, 0.1, 3))
    with pytest.raises(ValueError, match="alternative"):
        williams_test(0.5, 0.4, 0.1, 103, alternative="increase")


def _mrr_z(r12, r13, r23, n):
    """Meng, Rosenthal & Rubin (1992) Z for dependent correlations: an independent test of the same H0."""
    z12, z13 = np.arctanh(r12), np.arctanh(r13)
    rbar2 = (r12**2 + r13**2) / 2
    f = min((1 - r23) / (2 * (1 - rbar2)), 1.0)
    h = (1 - f * rbar2) / (1 - rbar2)
    z = (z12 - z13) * math.sqrt((n - 3) / (2 * (1 - r23) * h))
    return z, 2 * st.norm.sf(abs(z))


@pytest.mark.parametrize("r12,r13,r23", [(0.30, 0.25, 0.6), (0.5, 0.45, 0.3), (0.2, 0.25, 0.8)])
def test_williams_agrees_with_meng_rosenthal_rubin_for_large_n(r12, r13, r23):
    _, p = williams_test(r12, r13, r23, 5000)
    _, p_mrr = _mrr_z(r12, r13, r23, 5000)
    assert p == pytest.approx(p_mrr, abs=0.01)


def test_williams_is_calibrated_under_the_null():
    rng = np.random.default_rng(11)
    cov = np.array([[1, 0.4, 0.4], [0.4, 1, 0.5], [0.4, 0.5, 1]])
    rejections = 0
    reps = 3000
    for _ in range(reps):
        d = rng.multivariate_normal(np.zeros(3), cov, size=60)
        c = np.corrcoef(d.T)
        rejections += williams_test(c[0, 1], c[0, 2], c[1, 2], 60).pvalue < 0.05
    assert 0.035 < rejections / reps < 0.065


@pytest.mark.parametrize("seed", range(4))
def test_bh_matches_statsmodels(seed):
    p = np.random.default_rng(seed).uniform(size=40) ** 2
    assert bh_adjust(p) == pytest.approx(multipletests(p, method="fdr_bh")[1], abs=1e-12)


def test_bh_keeps_order_and_nan():
    out = bh_adjust([0.04, np.nan, 0.01, 0.03])
    ref = multipletests([0.04, 0.01, 0.03], method="fdr_bh")[1]
    assert np.isnan(out[1]) and out[[0, 2, 3]] == pytest.approx(ref)


def test_bootstrap_ci_covers_the_estimate():
    # the old stats.correlation.bootstrap_ci (pairs resampled) is replaced by level_correlation's
    # clustered CI; with one row per item the cluster is the pair, as before
    from judgelab.stats.correlation import level_correlation

    rng = np.random.default_rng(2)
    x = rng.normal(size=200)
    y = 0.5 * x + rng.normal(size=200)
    frame = pd.DataFrame({"system": "s", "item_id": np.arange(200).astype(str), "group": None, "score_x": x, "score_y": y})
    c = level_correlation(frame, "overall", "pearson", n_resamples=400, seed=1)
    r = correlate(x, y, "pearson").r
    assert c.ci_low < r < c.ci_high and c.ci_high - c.ci_low < 0.35
    again = level_correlation(frame, "overall", "pearson", n_resamples=50, seed=7)
    assert again == level_correlation(frame, "overall", "pearson", n_resamples=50, seed=7)
