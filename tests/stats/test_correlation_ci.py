"""The level dispatch (stats.correlation.level_correlation) and its cluster bootstrap CIs."""
import numpy as np
import pandas as pd
import pytest

from judgelab.stats.coefficient import correlate
from judgelab.stats.correlation import level_correlation, matrix_frame, mean_level_correlation


def _clustered_pairs(rng, items=30, systems=4, rho=0.6, item_sd=1.0):
    """x, y with correlation rho inside items plus a shared item effect: rows of one item move together."""
    cov = np.array([[1, rho], [rho, 1]])
    effect = rng.normal(0, item_sd, items)
    xy = rng.multivariate_normal([0, 0], cov, size=items * systems)
    e = np.repeat(effect, systems)
    return pd.DataFrame({"system": np.tile(np.arange(systems).astype(str), items),
                         "item_id": np.repeat(np.arange(items).astype(str), systems),
                         "group": np.repeat(np.arange(items).astype(str), systems),
                         "score_x": xy[:, 0] + e, "score_y": xy[:, 1] + e})


def test_item_clustered_ci_covers_the_population_value():
    rng = np.random.default_rng(3)
    big = _clustered_pairs(np.random.default_rng(99), items=20000)
    truth = correlate(big["score_x"], big["score_y"], "pearson").r  # (0.6 + 1) / 2 = 0.8 with item_sd 1
    assert truth == pytest.approx(0.8, abs=0.01)
    reps, covered = 80, 0
    for rep in range(reps):
        c = level_correlation(_clustered_pairs(rng), "overall", "pearson", n_resamples=200, seed=rep)
        covered += c.ci_low <= truth <= c.ci_high
    assert 0.85 <= covered / reps <= 1.0  # nominal 0.95; 80 replications


def test_resampling_items_is_wider_than_resampling_rows():
    df = _clustered_pairs(np.random.default_rng(4), items=40, item_sd=2.0, rho=0.0)
    by_item = level_correlation(df, "overall", "pearson", n_resamples=400)
    by_row = level_correlation(df.assign(item_id=np.arange(len(df)).astype(str)), "overall", "pearson", n_resamples=400)
    assert (by_item.ci_high - by_item.ci_low) > 1.3 * (by_row.ci_high - by_row.ci_low)


def test_levels_and_ci_contain_the_estimate_and_are_reproducible():
    df = _clustered_pairs(np.random.default_rng(5), items=25, systems=6)
    for level in ("overall", "group", "system"):
        for method in ("kendall", "spearman", "pearson"):
            c = level_correlation(df, level, method, n_resamples=150, seed=1)
            assert c.ci_low <= c.r <= c.ci_high, (level, method)
            assert c == level_correlation(df, level, method, n_resamples=150, seed=1)
    # the per-group statistic: the mean of per-group correlations, checked against pandas
    per = df.groupby("group").apply(lambda d: d["score_x"].corr(d["score_y"], method="spearman"), include_groups=False).mean()
    assert level_correlation(df, "group", "spearman").r == pytest.approx(per, abs=1e-12)


def test_every_nan_has_a_note():
    df = _clustered_pairs(np.random.default_rng(6), items=5)
    g = level_correlation(df, "group", "kendall", n_resamples=50)
    assert np.isnan(g.p) and "per-group p-values" in g.note
    const = df.assign(score_x=1.0)
    c = level_correlation(const, "overall", "pearson", n_resamples=50)
    assert np.isnan(c.r) and "constant" in c.note
    nogroup = df.assign(group=None)
    assert "no group column" in level_correlation(nogroup, "group", "pearson").note
    no_ci = level_correlation(df, "overall", "pearson", n_resamples=0)
    assert np.isnan(no_ci.ci_low) and "ci: no bootstrap" in no_ci.note
    assert set(no_ci.to_dict()) == {"r", "p", "n", "n_clusters", "ci_low", "ci_high", "note"}


def test_matrix_wrappers_and_mean_of_pairs():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(5, 8))
    y = x + rng.normal(size=(5, 8))
    frame = matrix_frame(x, y).assign(z=(x + rng.normal(size=(5, 8))).ravel())
    one = level_correlation(frame, "overall", "pearson").r
    two = level_correlation(frame, "overall", "pearson", y="z").r
    both = mean_level_correlation(frame, [("score_x", "score_y"), ("score_x", "z")], "overall", "pearson", n_resamples=100)
    assert both.r == pytest.approx((one + two) / 2) and both.ci_low <= both.r <= both.ci_high


def test_means_equal_on_paper_are_ties_whatever_the_summation_order():
    """Means that differ only by floating-point rounding (3.0000000000000004 vs 3.0) are ties."""
    from scipy import stats

    a, b = (0.1 + 0.2) * 10, 3.0        # equal on paper, not in floating point
    assert a != b
    human = np.array([a, b, 3.5, 2.0, a])
    judge = np.array([2.0, 3.0, 4.0, 1.0, 2.5])
    exact = [3.0 if v in (a, b) else v for v in human]  # the true values: three ties
    for method, fn in (("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        assert correlate(judge, human, method).r == pytest.approx(fn(judge, exact).statistic, abs=1e-12)
        assert fn(judge, human).statistic != pytest.approx(fn(judge, exact).statistic, abs=1e-6)  # the bug this guards
    assert np.isnan(correlate(judge[:3], np.array([a, b, a]), "pearson").r)  # constant on paper: undefined
