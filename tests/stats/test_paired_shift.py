"""The paired shift between two raters (constrained − free): checked against scipy's paired t test and a
hand computation; rows are matched by their labels, never by position; failures are counted."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from judgelab.stats.paired_shift import constrained_pairs, constrained_shift
from judgelab.errors import JudgelabError
from judgelab.stats.paired_shift import paired_shift

FREE, CON = "m@t", "m@t+constrained"


def table(rng, n_items=12, systems=("a", "b", "c"), criteria=("x", "y"), samples=2, shift=0.4):
    rows = []
    for i in range(n_items):
        for s in systems:
            quality = rng.normal(3, 0.8)
            for c in criteria:
                for k in range(samples):
                    free = float(np.clip(np.round(quality + rng.normal(0, 0.7)), 1, 5))
                    con = float(np.clip(np.round(quality + shift + rng.normal(0, 0.7)), 1, 5))
                    rows.append(dict(item_id=f"i{i}", system=s, criterion=c, rater=FREE, sample=k, score=free, status="ok"))
                    rows.append(dict(item_id=f"i{i}", system=s, criterion=c, rater=CON, sample=k, score=con, status="ok"))
    return pd.DataFrame(rows)


def cluster_means(df, rater, criteria):
    rows = df[(df["rater"] == rater) & df["criterion"].isin(criteria) & (df["status"] == "ok")]
    per_text = rows.groupby(["item_id", "system", "criterion"])["score"].mean()
    return per_text.groupby(level="item_id").mean()


@pytest.mark.parametrize("criterion", ["x", "all"])
def test_the_shift_and_its_interval_equal_scipys_paired_t_test_on_item_means(criterion):
    df = table(np.random.default_rng(1))
    shifts = {s.criterion: s for s in paired_shift(df, FREE, CON)}
    got = shifts[criterion]
    crits = ["x", "y"] if criterion == "all" else [criterion]
    a, b = cluster_means(df, FREE, crits), cluster_means(df, CON, crits)
    result = stats.ttest_rel(b.loc[a.index], a)
    ci = result.confidence_interval(0.95)
    assert got.estimate == pytest.approx(float(np.mean(b.loc[a.index] - a)), abs=1e-12)
    assert (got.ci_low, got.ci_high) == (pytest.approx(ci.low, abs=1e-12), pytest.approx(ci.high, abs=1e-12))
    assert got.statistic == pytest.approx(result.statistic, abs=1e-10)
    assert got.pvalue == pytest.approx(result.pvalue, abs=1e-12)
    assert got.df == 11 and got.n_clusters == 12 and got.n == 12 * 3 * len(crits)


def test_a_hand_computation_with_unequal_samples_and_systems():
    rows = [  # item 1: two systems; item 2: one system, the free rater with two samples
        ("1", "a", FREE, 0, 2.0), ("1", "a", CON, 0, 3.0),
        ("1", "b", FREE, 0, 4.0), ("1", "b", CON, 0, 4.0),
        ("2", "a", FREE, 0, 1.0), ("2", "a", FREE, 1, 3.0), ("2", "a", CON, 0, 4.0),
        ("3", "a", FREE, 0, 5.0), ("3", "a", CON, 0, 5.0),
    ]
    df = pd.DataFrame([dict(item_id=i, system=s, criterion="c", rater=r, sample=k, score=v, status="ok")
                       for i, s, r, k, v in rows])
    got = paired_shift(df, FREE, CON)[0]
    d = np.array([(1 + 0) / 2, 4 - 2, 0])  # per item: mean over its texts of (constrained − mean of free samples)
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / math.sqrt(3)
    assert got.estimate == pytest.approx(d.mean())
    assert (got.ci_low, got.ci_high) == (pytest.approx(d.mean() - half), pytest.approx(d.mean() + half))
    assert "near normal" in got.note  # 3 items


def test_rows_are_matched_by_label_not_by_position():
    df = table(np.random.default_rng(2))
    before = paired_shift(df, FREE, CON)
    con = df[df["rater"] == CON].sample(frac=1, random_state=0)  # one rater's rows shuffled
    shuffled = pd.concat([df[df["rater"] == FREE], con], ignore_index=True)
    after = paired_shift(shuffled, FREE, CON)
    assert [s.to_dict() for s in after] == [s.to_dict() for s in before]
    # one rater without an item: that item leaves the comparison, nothing shifts onto its neighbour
    dropped = shuffled[~((shuffled["rater"] == CON) & (shuffled["item_id"] == "i0"))]
    got = {s.criterion: s for s in paired_shift(dropped, FREE, CON)}["x"]
    a, b = cluster_means(df, FREE, ["x"]).drop("i0"), cluster_means(df, CON, ["x"]).drop("i0")
    assert got.estimate == pytest.approx(float((b - a).mean()))
    assert got.n_clusters == 11 and got.unpaired == 3 and "one rater only" in got.note


def test_failures_are_counted_and_left_out():
    df = table(np.random.default_rng(3), n_items=6, criteria=("x",), samples=1)
    failed = (df["rater"] == FREE) & (df["item_id"] == "i1") & (df["system"] == "a")
    df.loc[failed, ["score", "status"]] = [None, "no_rating"]
    got = paired_shift(df, FREE, CON)[0]
    assert (got.failed_first, got.judgments_first, got.failed_second, got.judgments_second) == (1, 18, 0, 18)
    assert got.n == 17 and got.unpaired == 1
    assert "failed judgments: 1 of 18" in got.line


def test_the_scale_point_shares_of_both_raters():
    df = pd.DataFrame([dict(item_id=str(i), system="s", criterion="c", rater=r, sample=0, score=v, status="ok")
                       for i, (f, c) in enumerate([(1, 2), (2, 2), (2.5, 3), (5, 3)]) for r, v in ((FREE, f), (CON, c))])
    points = paired_shift(df, FREE, CON)[0].points_frame()
    shares = points.set_index("point")[["share_first", "share_second"]]
    assert shares.to_dict("index") == {1.0: {"share_first": 0.25, "share_second": 0.0},
                                       2.0: {"share_first": 0.25, "share_second": 0.5},
                                       3.0: {"share_first": 0.25, "share_second": 0.5},  # 2.5 rounds half up
                                       5.0: {"share_first": 0.25, "share_second": 0.0}}


def test_no_shift_at_all_has_no_zero_width_interval():
    df = table(np.random.default_rng(4), n_items=5, criteria=("x",), samples=1, shift=0)
    same = df[df["rater"] == FREE].assign(rater=CON)
    got = paired_shift(pd.concat([df[df["rater"] == FREE], same]), FREE, CON)[0]
    assert got.estimate == 0 and math.isnan(got.ci_low) and "zero-width" in got.note


@pytest.mark.slow
def test_coverage_of_the_interval_in_simulation():
    """95% t intervals over items cover the planted shift in about 95% of studies (20 items, 3 systems
    whose differences share an item effect: an interval over texts would be too narrow). About a minute."""
    rng = np.random.default_rng(5)
    studies, covered = 400, 0
    for _ in range(studies):
        n, systems = 20, 3
        item_effect = rng.normal(0.4, 0.3, n)  # the shift varies by item; its mean is 0.4
        d = item_effect[:, None] + rng.normal(0, 0.8, (n, systems))
        rows = [dict(item_id=str(i), system=str(s), criterion="c", rater=r, sample=0, score=v, status="ok")
                for i in range(n) for s in range(systems) for r, v in ((FREE, 0.0), (CON, d[i, s]))]
        got = paired_shift(pd.DataFrame(rows), FREE, CON)[0]
        covered += got.ci_low <= 0.4 <= got.ci_high
    rate = covered / studies
    assert 0.92 <= rate <= 0.98, rate  # Monte-Carlo SE 1.1 points


def test_pairs_are_found_by_label_and_bad_input_is_one_line():
    assert constrained_pairs([FREE, CON, "x+constrained", "human:1"]) == [(FREE, CON)]
    df = table(np.random.default_rng(6), n_items=4, criteria=("x",), samples=1)
    report = constrained_shift(df)
    assert report.pairs == ((FREE, CON),) and set(report.tables()) == {"constrained_shift", "constrained_points"}
    with pytest.raises(JudgelabError, match="not in the ratings"):
        paired_shift(df, FREE, "nobody")
    with pytest.raises(JudgelabError, match="two different raters"):
        paired_shift(df, FREE, FREE)


def test_a_criterion_whose_judgments_all_failed_says_so_and_an_unknown_one_is_refused():
    """Every judgment of both raters failed on one criterion: a shift without value that says why (and
    the failures counted), not a KeyError; a criterion neither rater rated is one clear error."""
    df = table(np.random.default_rng(5))
    df.loc[df["criterion"] == "y", ["score", "status"]] = [np.nan, "parse_failure"]
    shifts = {s.criterion: s for s in paired_shift(df, FREE, CON)}
    y = shifts["y"]
    assert math.isnan(y.estimate) and y.n == 0 and "no text rated ok by both raters" in y.note
    assert y.failed_first == y.judgments_first > 0
    assert not math.isnan(shifts["x"].estimate)
    with pytest.raises(JudgelabError, match="no ratings of 'zz'"):
        paired_shift(df, FREE, CON, ["zz"])
