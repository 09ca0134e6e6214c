"""Cluster bootstrap CIs against a hand-written resampling loop (the same draws) and by coverage."""
import numpy as np
import pandas as pd
import pytest

from judgelab.stats.bootstrap import cluster_bootstrap_ci


def _clustered(rng, k=40, per=5, icc_sd=1.0):
    centres = rng.normal(0, icc_sd, k)
    return pd.DataFrame({"c": np.repeat(np.arange(k), per), "x": np.repeat(centres, per) + rng.normal(0, 0.3, k * per)})


def test_matches_a_manual_cluster_resampling_with_the_same_draws():
    rng = np.random.default_rng(1)
    df = _clustered(rng)
    ci = cluster_bootstrap_ci(df, lambda t: t["x"].mean(), "c", n_resamples=500, seed=7)
    # scipy draws integers(0, k, (n_resamples, k)) from the generator we pass
    draws = np.random.default_rng(7).integers(0, 40, (500, 40))
    means = df.groupby("c")["x"].mean().to_numpy()  # equal cluster sizes: mean of rows = mean of cluster means
    manual = np.quantile(means[draws].mean(1), [0.025, 0.975])
    assert ci.low == pytest.approx(manual[0], abs=1e-9) and ci.high == pytest.approx(manual[1], abs=1e-9)


def test_clusters_widen_the_interval_compared_with_rows():
    rng = np.random.default_rng(2)
    df = _clustered(rng)
    by_cluster = cluster_bootstrap_ci(df, lambda t: t["x"].mean(), "c", n_resamples=400)
    by_row = cluster_bootstrap_ci(df.assign(r=np.arange(len(df))), lambda t: t["x"].mean(), "r", n_resamples=400)
    assert (by_cluster.high - by_cluster.low) > 1.5 * (by_row.high - by_row.low)


def test_coverage_of_a_clustered_mean_is_near_nominal():
    rng = np.random.default_rng(3)
    hits = 0
    trials = 150
    for t in range(trials):
        df = _clustered(rng, k=30, per=4)
        ci = cluster_bootstrap_ci(df, lambda f: f["x"].mean(), "c", n_resamples=300, seed=t)
        hits += ci.low <= 0.0 <= ci.high
    assert 0.85 <= hits / trials <= 0.99  # nominal 0.95; percentile intervals are a little narrow at k = 30


def test_undefined_statistic_gives_a_reason_not_an_error():
    df = pd.DataFrame({"c": [1, 1], "x": [1.0, 2.0]})
    ci = cluster_bootstrap_ci(df, lambda t: t["x"].mean(), "c")
    assert np.isnan(ci.low) and "only 1" in ci.reason
    df = pd.DataFrame({"c": [1, 2, 3], "x": [1.0, 1.0, 1.0]})
    ci = cluster_bootstrap_ci(df, lambda t: float("nan"), "c", n_resamples=50)
    assert np.isnan(ci.high) and "undefined" in ci.reason
