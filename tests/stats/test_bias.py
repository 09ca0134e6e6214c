"""judgelab.stats.bias and judgelab.stats.wboot: hand computations, statsmodels, the scipy-based
bootstrap, label matching and the errors-in-variables correction."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.errors import JudgelabError
from judgelab.stats.bias import length_bias, scale_use, self_preference
from judgelab.stats.position import position_bias
from judgelab.stats.bootstrap import cluster_bootstrap_ci
from judgelab.stats.wboot import cluster_weights, weighted_ci


def _tidy(rows):
    return pd.DataFrame([{"item_id": i, "system": s, "group": None, "criterion": "q", "rater": r, "sample": 0,
                          "score": float(v), "status": "ok"} for i, s, r, v in rows])


def _effect(effects, bias, rater):
    (e,) = [e for e in effects if e.bias == bias and e.rater == rater]
    return e


def test_cluster_weights_are_multinomial_counts():
    w = cluster_weights(7, 300, seed=1)
    assert w.shape == (300, 7) and (w.sum(1) == 7).all()
    assert abs(w.mean() - 1) < 0.05


def test_weighted_ci_agrees_with_the_scipy_cluster_bootstrap():
    """Same scheme (clusters with all their rows, percentile): the bounds agree within Monte-Carlo error."""
    rng = np.random.default_rng(0)
    k = 60
    cluster = np.repeat(np.arange(k), 3)
    x = rng.normal(0, 1, k)[cluster] + rng.normal(0, 1, 3 * k)
    frame = pd.DataFrame({"c": cluster, "x": x})
    ref = cluster_bootstrap_ci(frame, lambda t: t["x"].mean(), "c", n_resamples=4000, seed=1)
    mine = weighted_ci(lambda w: (w[:, cluster] * x).sum(1) / w[:, cluster].sum(1), k, 4000, seed=2)
    width = ref.high - ref.low
    assert abs(mine.low - ref.low) < 0.06 * width and abs(mine.high - ref.high) < 0.06 * width


def test_weighted_ci_refuses_few_clusters_and_zero_width():
    assert "at least 5" in weighted_ci(lambda w: w.sum(1), 4, 100).reason
    assert "same value" in weighted_ci(lambda w: np.zeros(len(w)), 30, 100).reason


def test_scale_use_by_hand():
    rows = []
    for i in range(6):
        rows += [(f"i{i}", "s", "human:1", 2 + i % 3), (f"i{i}", "s", "human:2", 3 + i % 3), (f"i{i}", "s", "judge", 5)]
    effects = scale_use(_tidy(rows), n_resamples=200)
    h = np.array([[2 + i % 3, 3 + i % 3] for i in range(6)], dtype=float)
    lenient = _effect(effects, "leniency", "judge")
    assert lenient.estimate == pytest.approx(np.mean(5 - h.mean(1)))
    assert _effect(effects, "spread_ratio", "judge").estimate == 0.0  # a constant judge
    # a human against the other human: human:1 is one point below human:2 everywhere
    assert _effect(effects, "leniency", "human:1").estimate == pytest.approx(-1.0)
    assert _effect(effects, "spread_ratio", "human:1").estimate == pytest.approx(1.0)
    point5 = _effect(effects, "scale_point:5", "judge")
    assert point5.estimate == pytest.approx(1 - np.mean(h == 5))
    assert {e.bias for e in effects if e.rater == "judge"} >= {f"scale_point:{p}" for p in range(2, 6)}


def test_scale_use_leaves_out_a_criterion_no_human_rated():
    """From Python too (the command filters such criteria first): a criterion only judges rated gives
    no effect, the others theirs (it raised ValueError: the humans' lowest rating of nothing is NaN)."""
    rows = []
    for i in range(6):
        rows += [(f"i{i}", "s", "human:1", 2 + i % 3), (f"i{i}", "s", "human:2", 3 + i % 3), (f"i{i}", "s", "judge", 5)]
    df = _tidy(rows)
    judge_only = df[df["rater"] == "judge"].assign(criterion="r")
    effects = scale_use(pd.concat([df, judge_only], ignore_index=True), n_resamples=100)
    assert {e.criterion for e in effects} == {"q"}
    assert _effect(effects, "leniency", "judge").estimate == pytest.approx(
        _effect(scale_use(df, n_resamples=100), "leniency", "judge").estimate)


def test_scale_use_matches_by_label_not_position():
    rng = np.random.default_rng(3)
    rows = [(f"i{i}", "s", r, rng.integers(1, 6)) for i in range(30) for r in ("human:1", "human:2", "judge")]
    df = _tidy(rows)
    a = scale_use(df, n_resamples=100)
    b = scale_use(df.sample(frac=1, random_state=1).reset_index(drop=True), n_resamples=100)
    assert [e.estimate for e in a] == pytest.approx([e.estimate for e in b])


def test_scale_use_needs_humans_and_known_criteria():
    with pytest.raises(JudgelabError, match="no human ratings"):
        scale_use(_tidy([("i", "s", "judge", 3)]))
    with pytest.raises(JudgelabError, match="unknown criterion"):
        scale_use(_tidy([("i", "s", "human:1", 3)]), "nope")


def _length_data(n, rho, beta, seed=0, humans=3):
    rng = np.random.default_rng(seed)
    zq = rng.standard_normal(n)
    q = 3 + 0.8 * zq
    words = 300 + 100 * (rho * zq + math.sqrt(1 - rho ** 2) * rng.standard_normal(n))
    h = q[None, :] + 0.7 * rng.standard_normal((humans, n))
    j = q + beta * (words - 300) / 100 + 0.5 * rng.standard_normal(n)
    rows = [(f"i{i}", "s", f"human:{r + 1}", h[r, i]) for r in range(humans) for i in range(n)]
    rows += [(f"i{i}", "s", "judge", j[i]) for i in range(n)]
    return _tidy(rows), pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "length": words}), h, j, words


def test_length_coefficient_without_correction_is_statsmodels_ols():
    import statsmodels.api as sm

    df, lengths, h, j, words = _length_data(300, 0.3, 0.2, seed=1)
    (e,) = length_bias(df, lengths, correct_error=False, n_resamples=0)
    fit = sm.OLS(j, sm.add_constant(np.column_stack([words / 100, h.mean(0)]))).fit()
    assert e.estimate == pytest.approx(fit.params[1], rel=1e-9)


def test_length_correction_removes_the_leak_of_quality_into_length():
    """With length correlated with quality and no length bias, the plain regression finds one (the noisy
    human mean under-adjusts for quality); the errors-in-variables correction does not."""
    df, lengths, *_ = _length_data(20000, 0.5, 0.0, seed=2)
    (plain,) = length_bias(df, lengths, correct_error=False, n_resamples=0)
    (fixed,) = length_bias(df, lengths, n_resamples=200)
    assert plain.estimate > 0.05
    assert abs(fixed.estimate) < 0.02 and fixed.covers(0.0)


def test_length_correction_by_hand():
    df, lengths, h, j, words = _length_data(100, 0.3, 0.1, seed=4)
    (e,) = length_bias(df, lengths, n_resamples=0)
    X = np.column_stack([np.ones(100), words / 100, h.mean(0)])
    A = X.T @ X
    A[2, 2] -= (h.var(0, ddof=1) / 3).sum()
    assert e.estimate == pytest.approx(np.linalg.solve(A, X.T @ j)[1])


def test_length_without_individual_humans_says_it_is_not_corrected():
    df, lengths, h, j, words = _length_data(50, 0.3, 0.1, humans=1)
    (e,) = length_bias(df, lengths, n_resamples=0)
    assert "not corrected" in e.note
    with pytest.raises(JudgelabError, match="need columns"):
        length_bias(df, lengths.rename(columns={"length": "words"}))


def test_self_preference_by_hand():
    rows = []
    for i in range(20):
        sysname = "mine" if i % 2 else "theirs"
        rows += [(f"i{i}", sysname, "human:1", 3), (f"i{i}", sysname, "human:2", 4),
                 (f"i{i}", sysname, "judge@p1", 4.5 if i % 2 else 3.0 + (i % 4) * 0.25)]
    (e,) = self_preference(_tidy(rows), {"judge": "fam"}, {"mine": "fam"}, n_resamples=200)
    own = [4.5 - 3.5] * 10
    other = [3.0 + (i % 4) * 0.25 - 3.5 for i in range(0, 20, 2)]
    assert e.estimate == pytest.approx(np.mean(own) - np.mean(other))
    assert e.detected and "10 own-family and 10 other" in e.note
    (none,) = self_preference(_tidy(rows), {"judge": "fam"}, {}, n_resamples=0)
    assert math.isnan(none.estimate) and "0 of 20" in none.note
    with pytest.raises(JudgelabError, match="no judge 'gpt'"):
        self_preference(_tidy(rows), {"gpt": "x"}, {})


def test_position_bias_by_hand():
    # pair (a,b): a wins both orders (consistent); (c,d): first wins both (biased to first); (e,f): tie / second
    pairs = pd.DataFrame({"rater": "j", "first": ["a", "b", "c", "d", "e", "f", "g"],
                          "second": ["b", "a", "d", "c", "f", "e", "h"],
                          "choice": ["first", "second", "first", "first", "tie", "first", "first"]})
    first, consistent = position_bias(pairs, n_resamples=0)
    assert first.bias == "position_first" and first.n == 3
    assert first.estimate == pytest.approx(np.mean([0.5, 1.0, 0.75]) - 0.5)
    assert consistent.estimate == pytest.approx(1 / 3)
    assert "1 pairs asked in one order only" in first.note
    with pytest.raises(JudgelabError, match="not first, second or tie"):
        position_bias(pairs.assign(choice="left"))
    with pytest.raises(JudgelabError, match="twice"):
        position_bias(pd.concat([pairs, pairs.iloc[:1]]))


def test_prompt_sensitivity_by_hand():
    from judgelab.stats import icc
    from judgelab.stats.prompt_sensitivity import prompt_sensitivity, variant_groups

    rng = np.random.default_rng(5)
    q = rng.normal(3, 1, 40)
    rows = [(f"i{i}", "s", "human:1", q[i]) for i in range(40)]
    for v, shift in ((1, 0.0), (2, 0.5), (3, -0.2)):
        rows += [(f"i{i}", "s", f"m@p{v}", q[i] + shift + rng.normal(0, 0.3)) for i in range(40)]
    rows += [(f"i{i}", "s", "solo@p1", q[i]) for i in range(40)]
    df = _tidy(rows)
    assert variant_groups(df["rater"]) == {"m": ["m@p1", "m@p2", "m@p3"]}
    effects = prompt_sensitivity(df, n_resamples=300)
    ic, shift = _effect(effects, "prompt_icc", "m"), _effect(effects, "prompt_shift", "m")
    wide = df[df["rater"].str.startswith("m@")].pivot(index="item_id", columns="rater", values="score")
    assert ic.estimate == pytest.approx(icc(wide.to_numpy()).single.estimate)
    means = wide.mean()
    assert shift.estimate == pytest.approx(means.max() - means.min())
    assert "highest m@p2, lowest m@p3" in shift.note and shift.ci_low < shift.estimate < shift.ci_high
    assert not shift.detected and math.isnan(shift.null)  # a range has no no-bias value


def test_length_preference_by_hand():
    from judgelab.stats.position import length_preference

    lengths = pd.DataFrame({"item_id": list("abcdef"), "length": [100, 200, 300, 300, 50, 80]})
    ratings = _tidy([(i, "s", "human:1", v) for i, v in zip("abcdef", [4, 3, 2, 2, 1, 5])])
    pairs = pd.DataFrame({"rater": "j", "first": ["a", "b", "c", "d", "e", "f"],
                          "second": ["b", "a", "d", "c", "f", "e"],
                          "choice": ["second", "first", "first", "first", "tie", "tie"]})
    (e,) = length_preference(pairs, lengths, ratings, n_resamples=0)
    # (a, b): b longer, judge picks b in both orders (1); humans prefer a (0). (c, d) equal length: left out.
    # (e, f): f longer, ties (0.5); humans prefer f (1).
    assert e.n == 2 and e.estimate == pytest.approx(np.mean([1 - 0, 0.5 - 1]))
    assert "judge 75.0%, humans 50.0%" in e.note and "2 verdicts on pairs of equal length" in e.note
    (alone,) = length_preference(pairs, lengths, None, n_resamples=0)
    assert alone.estimate == pytest.approx(0.75 - 0.5)
    with pytest.raises(JudgelabError, match="one length per item_id"):
        length_preference(pairs, pd.concat([lengths, lengths]))
