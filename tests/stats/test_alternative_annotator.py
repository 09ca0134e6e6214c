"""Alternative annotator test: a worked example by hand, scipy/statsmodels as oracles, edge cases."""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st
from statsmodels.stats.multitest import multipletests

from judgelab.stats import alt_test, by_adjust

# Three annotators and a judge on ten items (1–5 ratings).
TABLE = pd.DataFrame(
    {
        "A": [4, 3, 5, 2, 1, 4, 3, 5, 2, 4],
        "B": [4, 2, 5, 3, 2, 4, 4, 4, 2, 5],
        "C": [5, 3, 4, 3, 1, 4, 2, 4, 3, 5],
    },
    index=[f"item{i}" for i in range(1, 11)],
)
JUDGE = [4, 3, 4, 3, 2, 3, 3, 4, 2, 5]

# By hand, neg_rmse: compare sums of squared differences to the two other annotators
# (RMSE is monotone in it). E.g. annotator A, item 4: A=2 vs B=3, C=3 → 1+1 = 2; judge 3 → 0:
# the judge wins. Item 6: A=4 vs 4, 4 → 0; judge 3 → 2: the annotator wins. Ties win for both.
# d = W_h - W_f per item:
D_BY_HAND = {
    "A": [0, 0, 0, -1, 0, 1, 0, -1, 0, -1],  # judge wins items 4, 8, 10; A wins item 6
    "B": [0, -1, 0, 0, 0, 1, -1, 0, 0, 0],   # judge wins items 2, 7; B wins item 6
    "C": [-1, 0, 0, 0, 0, 1, -1, 0, -1, 0],  # judge wins items 1, 7, 9; C wins item 6
}
RHO_JUDGE = {"A": 0.9, "B": 0.9, "C": 0.9}  # the judge loses only item 6, to everyone
RHO_HUMAN = {"A": 0.7, "B": 0.8, "C": 0.7}


def test_worked_example_ten_items():
    eps = 0.2
    res = alt_test(TABLE, JUDGE, epsilon=eps, min_items=10)
    # A and C: d has three -1, one +1, six 0 → mean -0.2, var = 3.6/9 = 0.4, se = sqrt(0.4/10) = 0.2,
    # t = (-0.2 - 0.2)/0.2 = -2 exactly. B: mean -0.1, var = 2.9/9, t = -0.3/sqrt(2.9/90).
    t_hand = {"A": -2.0, "B": -0.3 / math.sqrt(2.9 / 90), "C": -2.0}
    p_hand = {k: st.t.cdf(v, 9) for k, v in t_hand.items()}
    # BY by hand, m = 3, H_3 = 11/6: sorted p = (p_A, p_C, p_B);
    # raw p_(i) * 3 * H_3 / i, then the cumulative minimum from the largest down.
    c = 3 * 11 / 6
    raw = [p_hand["A"] * c / 1, p_hand["C"] * c / 2, p_hand["B"] * c / 3]
    adj_b = raw[2]
    adj_c = min(raw[1], adj_b)
    adj_a = min(raw[0], adj_c)
    by_hand = {"A": adj_a, "B": adj_b, "C": adj_c}
    assert [cmp.annotator for cmp in res.comparisons] == ["A", "B", "C"]
    for cmp in res.comparisons:
        a = cmp.annotator
        assert cmp.n_items == 10
        assert cmp.rho_judge == pytest.approx(RHO_JUDGE[a])
        assert cmp.rho_human == pytest.approx(RHO_HUMAN[a])
        assert cmp.t == pytest.approx(t_hand[a], rel=1e-12)
        assert cmp.p_value == pytest.approx(p_hand[a], rel=1e-12)
        # scipy oracles: one-sample t-test of d against epsilon, and the paired form
        d = np.array(D_BY_HAND[a], dtype=float)
        assert cmp.p_value == pytest.approx(st.ttest_1samp(d, eps, alternative="less").pvalue, rel=1e-10)
        w_f = (d <= 0).astype(float)
        w_h = (d >= 0).astype(float)
        assert cmp.p_value == pytest.approx(st.ttest_rel(w_h, w_f + eps, alternative="less").pvalue, rel=1e-10)
        assert cmp.p_adjusted == pytest.approx(by_hand[a], rel=1e-12)
    assert p_hand["A"] == pytest.approx(0.03828, abs=1e-5)  # t-table: t = 2, 9 df, one-sided 0.0383
    assert by_hand["A"] == pytest.approx(0.10526, abs=1e-5)  # > 0.05: ten items are too few
    assert res.winning_rate == 0.0 and not res.passed
    assert res.advantage_probability == pytest.approx(0.9)


def test_worked_example_forty_items_passes():
    # The same ten items four times: same win rates, four times the items, the default min_items=30.
    table = pd.concat([TABLE] * 4, ignore_index=True)
    res = alt_test(table, JUDGE * 4, epsilon=0.2)
    # A: mean -0.2, var = 14.4/39 → t = -0.4 / sqrt(14.4/39/40); B: var = 11.6/39 → t = -0.3 / sqrt(11.6/39/40)
    t_a = -0.4 / math.sqrt(14.4 / 39 / 40)
    t_b = -0.3 / math.sqrt(11.6 / 39 / 40)
    assert [c.t for c in res.comparisons] == pytest.approx([t_a, t_b, t_a], rel=1e-12)
    p = [st.t.cdf(t, 39) for t in (t_a, t_b, t_a)]
    assert max(p) < 1e-3
    assert [c.p_adjusted for c in res.comparisons] == pytest.approx(multipletests(p, method="fdr_by")[1], rel=1e-12)
    assert all(c.rejected for c in res.comparisons)
    assert res.winning_rate == 1.0 and res.passed
    # the same data with epsilon = 0 (no credit for being cheap): BY rejects nobody, BH would reject A and C
    res0 = alt_test(table, JUDGE * 4, epsilon=0.0)
    p0 = [c.p_value for c in res0.comparisons]
    assert p0 == pytest.approx([st.t.cdf(-0.2 / math.sqrt(14.4 / 39 / 40), 39),
                                st.t.cdf(-0.1 / math.sqrt(11.6 / 39 / 40), 39),
                                st.t.cdf(-0.2 / math.sqrt(14.4 / 39 / 40), 39)], rel=1e-12)
    assert list(multipletests(p0, alpha=0.05, method="fdr_bh")[0]) == [True, False, True]
    assert res0.winning_rate == 0.0 and not res0.passed


def _indicators_loop(human: np.ndarray, judge: np.ndarray, j: int, score):
    """Win indicators from the definition, item by item (NaN = not rated)."""
    w_f, w_h = [], []
    for i in range(human.shape[0]):
        if np.isnan(human[i, j]) or np.isnan(judge[i]):
            continue
        others = [human[i, k] for k in range(human.shape[1]) if k != j and not np.isnan(human[i, k])]
        if not others:
            continue
        s_h, s_f = score(human[i, j], others), score(judge[i], others)
        w_f.append(1.0 if s_f >= s_h - 1e-12 else 0.0)
        w_h.append(1.0 if s_h >= s_f - 1e-12 else 0.0)
    return np.array(w_f), np.array(w_h)


@pytest.mark.parametrize("seed", range(12))
def test_random_data_against_scipy_and_statsmodels(seed):
    rng = np.random.default_rng(seed)
    n_items, m = int(rng.integers(40, 120)), int(rng.integers(3, 7))
    truth = rng.integers(1, 6, n_items).astype(float)
    human = np.clip(truth[:, None] + rng.integers(-1, 2, (n_items, m)) * (rng.random((n_items, m)) < 0.5), 1, 5)
    human[rng.random(human.shape) < 0.15] = np.nan
    judge = np.clip(truth + rng.normal(seed % 3 * 0.3, 0.8, n_items), 1, 5)
    judge[rng.random(n_items) < 0.05] = np.nan
    eps = [0.0, 0.1, 0.15, 0.2][seed % 4]
    rmse = lambda x, o: -math.sqrt(np.mean([(x - v) ** 2 for v in o]))  # noqa: E731
    res = alt_test(human, judge, epsilon=eps, min_items=20)
    assert len(res.comparisons) + len(res.skipped) == m
    pvals, rho_f = [], []
    for cmp in res.comparisons:
        w_f, w_h = _indicators_loop(human, judge, int(cmp.annotator), rmse)
        assert cmp.n_items == w_f.size
        assert (cmp.rho_judge, cmp.rho_human) == pytest.approx((w_f.mean(), w_h.mean()))
        expected = st.ttest_1samp(w_h - w_f, eps, alternative="less")
        assert cmp.t == pytest.approx(expected.statistic, rel=1e-9)
        assert cmp.p_value == pytest.approx(expected.pvalue, rel=1e-9, abs=1e-300)
        pvals.append(expected.pvalue)
        rho_f.append(w_f.mean())
    reject, adjusted, _, _ = multipletests(pvals, alpha=0.05, method="fdr_by")
    assert [c.p_adjusted for c in res.comparisons] == pytest.approx(adjusted, rel=1e-9)
    assert [c.rejected for c in res.comparisons] == list(reject)
    assert res.winning_rate == pytest.approx(reject.mean())
    assert res.advantage_probability == pytest.approx(np.mean(rho_f))
    assert res.passed == (reject.mean() >= 0.5)


def test_accuracy_with_labels_and_dict_input():
    rng = np.random.default_rng(4)
    labels = np.array(["pos", "neg", "neu"])
    truth = rng.integers(0, 3, 80)
    ann = {f"h{j}": {f"x{i}": labels[t if rng.random() < 0.8 else rng.integers(0, 3)] for i, t in enumerate(truth)}
           for j in range(4)}
    judge = {f"x{i}": labels[t if rng.random() < 0.85 else rng.integers(0, 3)] for i, t in enumerate(truth)}
    del ann["h3"]["x0"]  # a missing rating
    res = alt_test(ann, judge, scoring="accuracy", epsilon=0.1)
    assert res.scoring == "accuracy" and [c.annotator for c in res.comparisons] == ["h0", "h1", "h2", "h3"]
    assert res.comparisons[3].n_items == 79
    # the accuracy score by hand for item x1, annotator h0
    table = pd.DataFrame(ann)
    others = [table.loc["x1", h] for h in ("h1", "h2", "h3")]
    assert np.mean([judge["x1"] == o for o in others]) in (0, 1 / 3, 2 / 3, 1)
    # a callable scoring gives the same answer as the built-in
    res2 = alt_test(ann, judge, scoring=lambda p, o: float(np.mean([p == v for v in o])), epsilon=0.1)
    assert [c.p_value for c in res2.comparisons] == pytest.approx([c.p_value for c in res.comparisons])
    frame = res.to_frame()
    assert list(frame["annotator"]) == ["h0", "h1", "h2", "h3"] and frame["passed"].nunique() == 1
    assert res.to_dict()["comparisons"][0]["annotator"] == "h0"


def test_ties_count_for_both_and_zero_spread():
    # The judge copies annotator A: against A every item ties (d = 0, zero spread → p = 0 for eps > 0).
    table = TABLE.copy()
    res = alt_test(table, table["A"].to_numpy(), epsilon=0.1, min_items=10)
    a = res.comparisons[0]
    assert (a.rho_judge, a.rho_human, a.p_value, a.t) == (1.0, 1.0, 0.0, -math.inf)
    # floating-point near-ties: |3.7 - 3.4| and |3.1 - 3.4| are a tie
    t2 = pd.DataFrame({"A": [3.1] * 3, "B": [3.4] * 3, "C": [3.4] * 3})
    res2 = alt_test(t2, [3.7] * 3, epsilon=0.0, min_items=3)
    assert res2.comparisons[0].rho_judge == 1.0 and res2.comparisons[0].rho_human == 1.0
    # on the boundary mean(d) = epsilon with zero spread: not rejected
    assert res2.comparisons[0].p_value == 1.0


def test_requirements():
    with pytest.raises(ValueError, match="at least 3 human annotators, got 2"):
        alt_test(TABLE[["A", "B"]], JUDGE, min_items=5)
    # default min_items = 30: ten items are not enough for anybody
    with pytest.raises(ValueError, match="only 0 of 3 have enough"):
        alt_test(TABLE, JUDGE)
    # one annotator with too few items is skipped; three others remain
    table = pd.concat([TABLE] * 4, ignore_index=True)
    table["D"] = np.nan
    table.loc[:9, "D"] = table.loc[:9, "A"]
    res = alt_test(table, JUDGE * 4)
    assert res.skipped == ("D",) and res.n_annotators == 3
    with pytest.raises(ValueError, match="epsilon"):
        alt_test(TABLE, JUDGE, epsilon=1.0)
    with pytest.raises(ValueError, match="min_items"):
        alt_test(TABLE, JUDGE, min_items=1)
    with pytest.raises(ValueError, match="unknown scoring"):
        alt_test(TABLE, JUDGE, scoring="f1")
    with pytest.raises(ValueError, match="one rating per item"):
        alt_test(TABLE, JUDGE[:-1], min_items=5)
    with pytest.raises(ValueError, match="numeric"):
        alt_test(TABLE, ["x"] * 10, min_items=5)
    with pytest.raises(ValueError, match="infinite"):
        alt_test(TABLE, [np.inf] + JUDGE[1:], min_items=5)


def test_by_adjust_matches_statsmodels():
    rng = np.random.default_rng(0)
    for m in (1, 2, 3, 7, 20):
        p = rng.random(m) ** 3
        assert by_adjust(p) == pytest.approx(multipletests(p, method="fdr_by")[1], rel=1e-12)
    with pytest.raises(ValueError):
        by_adjust([0.1, np.nan])


def test_docstring_examples():
    import doctest
    import importlib

    module = importlib.import_module("judgelab.stats.alternative_annotator")  # the package attribute is the function

    assert doctest.testmod(module, extraglobs={"np": np}).failed == 0
