"""Cluster bootstrap CIs against a hand-written resampling loop (the same draws), scipy's own BCa, and by coverage."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from judgelab.stats.bootstrap import FEW_CLUSTERS, METHODS, MIN_CLUSTERS, cluster_bootstrap_ci, expanded_level


def _clustered(rng, k=40, per=5, icc_sd=1.0):
    centres = rng.normal(0, icc_sd, k)
    return pd.DataFrame({"c": np.repeat(np.arange(k), per), "x": np.repeat(centres, per) + rng.normal(0, 0.3, k * per)})


def _mean(t):
    return t["x"].mean()


def test_matches_a_manual_cluster_resampling_with_the_same_draws():
    rng = np.random.default_rng(1)
    df = _clustered(rng)
    ci = cluster_bootstrap_ci(df, _mean, "c", n_resamples=500, seed=7)
    # scipy draws integers(0, k, (n_resamples, k)) from the generator we pass
    draws = np.random.default_rng(7).integers(0, 40, (500, 40))
    means = df.groupby("c")["x"].mean().to_numpy()  # equal cluster sizes: mean of rows = mean of cluster means
    boot = means[draws].mean(1)
    manual = np.quantile(boot, [0.025, 0.975])
    assert ci.low == pytest.approx(manual[0], abs=1e-9) and ci.high == pytest.approx(manual[1], abs=1e-9)
    assert ci.method == "percentile" and ci.note == "" and ci.reason == ""
    # basic: the percentile bounds reflected about the estimate
    basic = cluster_bootstrap_ci(df, _mean, "c", n_resamples=500, seed=7, method="basic")
    theta = df["x"].mean()
    assert (basic.low, basic.high) == pytest.approx((2 * theta - manual[1], 2 * theta - manual[0]), abs=1e-9)
    # expanded: the same resamples at Hesterberg's levels, z' = sqrt(k/(k-1)) t_{k-1}
    z_expanded = math.sqrt(40 / 39) * st.t.ppf(0.975, 39)
    a = st.norm.sf(z_expanded)
    assert expanded_level(0.95, 40) == pytest.approx(1 - 2 * a)
    expanded = cluster_bootstrap_ci(df, _mean, "c", n_resamples=500, seed=7, method="expanded")
    assert (expanded.low, expanded.high) == pytest.approx(tuple(np.quantile(boot, [a, 1 - a])), abs=1e-9)
    assert expanded.low < ci.low and expanded.high > ci.high


def test_bca_is_scipys_bca_on_the_cluster_means():
    """With equal cluster sizes the mean of the rows is the mean of the cluster means, so scipy's BCa on the
    cluster means (resampled with the same generator) is an independent implementation of the same interval."""
    rng = np.random.default_rng(5)
    df = _clustered(rng, k=25, per=4)
    df["x"] = np.exp(df["x"])  # skewed, so that BCa differs from the percentile interval
    ci = cluster_bootstrap_ci(df, _mean, "c", n_resamples=800, seed=3, method="BCa")
    means = df.groupby("c")["x"].mean().to_numpy()
    ref = st.bootstrap((means,), np.mean, n_resamples=800, method="BCa", rng=np.random.default_rng(3)).confidence_interval
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    percentile = cluster_bootstrap_ci(df, _mean, "c", n_resamples=800, seed=3)
    assert abs(ci.low - percentile.low) > 1e-3


def test_clusters_widen_the_interval_compared_with_rows():
    rng = np.random.default_rng(2)
    df = _clustered(rng)
    by_cluster = cluster_bootstrap_ci(df, _mean, "c", n_resamples=400)
    by_row = cluster_bootstrap_ci(df.assign(r=np.arange(len(df))), _mean, "r", n_resamples=400)
    assert (by_cluster.high - by_cluster.low) > 1.5 * (by_row.high - by_row.low)


def test_expanded_covers_more_than_percentile_with_few_clusters():
    """The fast check (the full coverage table at 30 clusters × 8 rows, 2,000 replications, is measured by
    benchmarks/interval_coverage.py and stated in docs/intervals.md): with 8 clusters × 8 rows the percentile
    interval is too narrow; the expanded one, on the same resamples, is wider by about z'/z and covers more."""
    rng = np.random.default_rng(3)
    k, per, trials = 8, 8, 300
    frame = pd.DataFrame({"c": np.repeat(np.arange(k), per)})
    hits = {"percentile": 0, "expanded": 0}
    ratio = []
    for t in range(trials):
        x = np.repeat(rng.normal(size=k), per) + rng.normal(size=k * per)

        def stat(rows, _clusters, x=x):
            return float(x[rows].mean())

        p = cluster_bootstrap_ci(frame, stat, "c", 200, seed=t, method="percentile", rows=True)
        e = cluster_bootstrap_ci(frame, stat, "c", 200, seed=t, method="expanded", rows=True)
        hits["percentile"] += p.low <= 0 <= p.high
        hits["expanded"] += e.low <= 0 <= e.high
        ratio.append((e.high - e.low) / (p.high - p.low))
        assert "only 8 c values" in p.note and "only 8 c values" in e.note
    coverage = {m: h / trials for m, h in hits.items()}
    # nominal 0.95; with 8 clusters the percentile interval is about sqrt(7/8) z / t_7 as wide as Student's
    assert coverage["percentile"] < 0.91, coverage
    assert coverage["expanded"] >= coverage["percentile"] + 0.03 and coverage["expanded"] >= 0.9, coverage
    expected = math.sqrt(8 / 7) * st.t.ppf(0.975, 7) / st.norm.ppf(0.975)
    assert np.median(ratio) == pytest.approx(expected, rel=0.1)


def test_too_few_clusters_give_no_interval_and_few_a_note():
    rng = np.random.default_rng(4)
    small = _clustered(rng, k=MIN_CLUSTERS - 1, per=3)
    for method in METHODS:
        ci = cluster_bootstrap_ci(small, _mean, "c", n_resamples=100, method=method)
        assert np.isnan(ci.low) and np.isnan(ci.high) and f"at least {MIN_CLUSTERS}" in ci.reason
        assert ci.clusters == MIN_CLUSTERS - 1 and ci.message == ci.reason
    few = cluster_bootstrap_ci(_clustered(rng, k=MIN_CLUSTERS, per=3), _mean, "c", n_resamples=100)
    assert np.isfinite(few.low) and f"fewer than {FEW_CLUSTERS} clusters" in few.note and few.message == few.note
    enough = cluster_bootstrap_ci(_clustered(rng, k=FEW_CLUSTERS, per=3), _mean, "c", n_resamples=100)
    assert enough.note == ""
    # the floor is a parameter (a caller may ask for more, or explicitly accept fewer)
    assert np.isfinite(cluster_bootstrap_ci(small, _mean, "c", n_resamples=100, min_clusters=2).low)
    with pytest.raises(ValueError, match="min_clusters"):
        cluster_bootstrap_ci(small, _mean, "c", min_clusters=1)
    with pytest.raises(ValueError, match="unknown bootstrap method 'studentized'"):
        cluster_bootstrap_ci(small, _mean, "c", method="studentized")


def test_undefined_statistic_gives_a_reason_not_an_error():
    df = pd.DataFrame({"c": [1, 1], "x": [1.0, 2.0]})
    ci = cluster_bootstrap_ci(df, _mean, "c")
    assert np.isnan(ci.low) and "only 1" in ci.reason
    df = pd.DataFrame({"c": range(8), "x": [1.0] * 8})
    ci = cluster_bootstrap_ci(df, lambda t: float("nan"), "c", n_resamples=50)
    assert np.isnan(ci.high) and "undefined in 50 of 50" in ci.reason


@pytest.mark.parametrize("method", METHODS)
def test_zero_width_is_no_interval(method):
    """Every resample equal (a constant statistic, or constant data) is not a 95% interval."""
    df = pd.DataFrame({"c": np.repeat(np.arange(25), 2), "x": 3.0})
    ci = cluster_bootstrap_ci(df, _mean, "c", n_resamples=100, method=method)
    assert np.isnan(ci.low) and np.isnan(ci.high) and "every resample gives the same value (3)" in ci.reason


def test_partly_undefined_statistic_is_noted_and_bca_refuses():
    """A statistic undefined in some resamples: percentile-type intervals come from the others and say so;
    BCa cannot be computed and says why, instead of silently becoming another interval."""
    rng = np.random.default_rng(6)
    df = _clustered(rng, k=30, per=2)

    def sometimes(t):  # undefined when cluster 0 is missing from the resample (about a third of them)
        return t["x"].mean() if (t["_orig"] == 0).any() else float("nan")

    df["_orig"] = df["c"]
    for method in ("percentile", "basic", "expanded"):
        ci = cluster_bootstrap_ci(df, sometimes, "c", n_resamples=200, method=method)
        assert np.isfinite(ci.low) and "undefined in" in ci.note and "from the others" in ci.note
    bca = cluster_bootstrap_ci(df, sometimes, "c", n_resamples=200, method="BCa")
    assert np.isnan(bca.low) and "BCa is undefined here" in bca.reason


def test_the_few_clusters_note_carries_the_measured_coverage_not_a_repository_path():
    """The note reaches report.html, the tables and the terminal of an installed judgelab, where the
    repository's docs/ is not at hand: it states the simulation's figures itself."""
    from judgelab.stats.bootstrap import caveats

    note = caveats(8, "item", 0.95, 0, 999)
    assert "often cover less than 95%" in note and "84-93%" in note and "92.5-97%" in note
    assert "docs/" not in note and ".md" not in note
