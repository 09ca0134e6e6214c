"""PPI / PPI++ for judge + human ratings, against ppi-python (the oracle) and by simulation."""
import math

import numpy as np
import pytest
from scipy import stats as st

from judgelab.stats import plan_ppi_difference, plan_ppi_mean, ppi_mean, ppi_mean_difference
from judgelab.stats.ppi_core import VALID_FROM, minimum_sizes


@pytest.fixture(scope="module")
def ppi_py():
    return pytest.importorskip(
        "ppi_py", reason="ppi-python (the oracle for PPI/PPI++) is not installed: pip install -e '.[test]'"
    )


def _study(rng, n, N, bias=0.5, noise=0.7, probs=(0.1, 0.2, 0.3, 0.25, 0.15)):
    """Human ratings on a 1–5 scale and a judge that is off by ``bias`` with Gaussian noise."""
    y = rng.choice(np.arange(1, 6), size=n + N, p=probs).astype(float)
    f = y + bias + rng.normal(0, noise, n + N)
    return y[:n], f[:n], f[n:]


def _random_case(seed):
    """Inputs of varied size and judge quality: n 10–500, N up to 10,000."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 501))
    N = int(rng.integers(1, 10_001))
    slope = rng.uniform(-0.5, 2.0)
    y = rng.normal(rng.uniform(1, 5), rng.uniform(0.3, 2), n + N)
    f = slope * y + rng.uniform(-1, 1) + rng.normal(0, rng.uniform(0.1, 2), n + N)
    return y[:n], f[:n], f[n:]


def _oracle(ppi_py, y, f, fu, alpha, lam):
    est = float(np.asarray(ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)).ravel()[0])
    lo, hi = (float(np.asarray(v).ravel()[0]) for v in ppi_py.ppi_mean_ci(y, f, fu, alpha=alpha, lam=lam))
    return est, lo, hi


# ------------------------------------------------------------------ agreement with ppi-python


@pytest.mark.parametrize("seed", range(60))
def test_matches_ppi_python_tuned(ppi_py, seed):
    y, f, fu = _random_case(seed)
    alpha = [0.05, 0.1, 0.01][seed % 3]
    est, lo, hi = _oracle(ppi_py, y, f, fu, alpha, None)
    r = ppi_mean(y, f, fu, alpha=alpha, quantile="normal")
    assert r.lam_tuned and 0 <= r.lam <= 1 and r.df == math.inf
    assert r.estimate == pytest.approx(est, abs=1e-6)
    assert r.ci_low == pytest.approx(lo, abs=1e-6)
    assert r.ci_high == pytest.approx(hi, abs=1e-6)


@pytest.mark.parametrize("lam", [1.0, 0.0, 0.37, 1.3])
@pytest.mark.parametrize("seed", range(8))
def test_matches_ppi_python_fixed_lambda(ppi_py, seed, lam):
    y, f, fu = _random_case(100 + seed)
    est, lo, hi = _oracle(ppi_py, y, f, fu, 0.05, lam)
    r = ppi_mean(y, f, fu, alpha=0.05, lam=lam, quantile="normal")
    assert not r.lam_tuned and r.lam == lam
    assert (r.estimate, r.ci_low, r.ci_high) == pytest.approx((est, lo, hi), abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_clipped_lambda_matches_ppi_python(ppi_py, seed):
    rng = np.random.default_rng(200 + seed)
    n, N = 40 + 30 * seed, 500 * (seed + 1)
    y = rng.normal(3, 1, n + N)
    # judge anti-correlated with the humans: the unclipped weight is negative → 0
    f_neg = -y + rng.normal(0, 0.5, n + N)
    # judge compressed towards the middle (slope 0.3): the unclipped weight is ~3 → 1
    f_big = 3 + 0.3 * (y - 3) + rng.normal(0, 0.05, n + N)
    for f, expected_lam in ((f_neg, 0.0), (f_big, 1.0)):
        r = ppi_mean(y[:n], f[:n], f[n:], alpha=0.1, quantile="normal")
        assert r.lam == expected_lam
        tuned = _oracle(ppi_py, y[:n], f[:n], f[n:], 0.1, None)
        fixed = _oracle(ppi_py, y[:n], f[:n], f[n:], 0.1, expected_lam)
        assert (r.estimate, r.ci_low, r.ci_high) == pytest.approx(tuned, abs=1e-6)
        assert tuned == pytest.approx(fixed, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_baselines_match_classical_mean_ci(ppi_py, seed):
    y, f, fu = _random_case(300 + seed)
    r = ppi_mean(y, f, fu, alpha=0.05, quantile="normal")
    lo, hi = ppi_py.classical_mean_ci(y, alpha=0.05)
    assert (r.human_only.ci_low, r.human_only.ci_high) == pytest.approx((float(lo), float(hi)), abs=1e-9)
    assert r.human_only.estimate == pytest.approx(y.mean(), abs=1e-12)
    f_all = np.concatenate([f, fu])
    lo, hi = ppi_py.classical_mean_ci(f_all, alpha=0.05)
    assert (r.judge_only.ci_low, r.judge_only.ci_high) == pytest.approx((float(lo), float(hi)), abs=1e-9)
    # lam = 0 is the human-only interval
    r0 = ppi_mean(y, f, fu, alpha=0.05, lam=0, quantile="normal")
    assert (r0.ci_low, r0.ci_high) == pytest.approx((r.human_only.ci_low, r.human_only.ci_high), abs=1e-12)


def test_power_tuning_is_never_wider_than_human_only_asymptotically():
    rng = np.random.default_rng(7)
    y, f, fu = _study(rng, 200, 5000)
    r = ppi_mean(y, f, fu)
    assert r.se < r.human_only.se
    assert r.effective_n > r.n
    assert r.effective_n == pytest.approx(r.n * r.human_only.se**2 / r.se**2)


def test_result_shapes():
    rng = np.random.default_rng(1)
    y, f, fu = _study(rng, 30, 300)
    r = ppi_mean(y, f, fu, alpha=0.1)
    d = r.to_dict()
    assert d["estimate"] == r.estimate and d["human_only"]["method"] == "human_only"
    assert d["quantile"] == "t" and d["df"] == r.df and d["note"] == ""
    assert d["half_width"] == pytest.approx(st.t.ppf(0.95, r.df) * r.se)
    normal = ppi_mean(y, f, fu, alpha=0.1, quantile="normal")
    assert normal.half_width == pytest.approx(st.norm.ppf(0.95) * normal.se)
    frame = r.to_frame()
    assert list(frame["method"]) == ["ppi", "human_only", "judge_only"]
    assert frame.loc[0, "estimate"] == r.estimate and frame.loc[2, "n_judge"] == 330
    with pytest.raises(Exception):
        r.estimate = 0.0  # frozen


@pytest.mark.parametrize(
    "args, quantile, message",
    [
        (([1.0], [1.0], [1.0, 2.0]), "normal", "at least 2"),
        (([1.0, 2.0], [1.0, 2.0], [1.0, 2.0]), "t", "y needs at least 3 values, got 2 .*degree of freedom on lam"),
        (([1.0, 2.0, 3.0], [1.0, 2.0], [1.0]), "normal", "same items"),
        (([1.0, np.nan, 3.0], [1.0, 2.0, 3.0], [1.0]), "normal", "non-finite"),
        (([1.0, 2.0, 3.0], [1.0, np.inf, 3.0], [1.0, 2.0]), "t", "non-finite"),
        (([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], []), "normal", "yhat_unlabeled needs at least 1"),
        (([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [1.0]), "t", "yhat_unlabeled needs at least 2 .*judge's variance"),
        (([[1.0, 2.0], [3.0, 4.0]], [1.0, 2.0], [1.0]), "normal", "one-dimensional"),
        ((["a", "b"], [1.0, 2.0], [1.0]), "t", "numeric"),
    ],
)
def test_invalid_inputs(args, quantile, message):
    with pytest.raises(ValueError, match=message):
        ppi_mean(*args, quantile=quantile)


def test_invalid_alpha_lambda_and_quantile():
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean([1, 2], [1, 2], [1], alpha=1.5)
    with pytest.raises(ValueError, match="lam"):
        ppi_mean([1, 2], [1, 2], [1], lam=float("nan"))
    with pytest.raises(ValueError, match="quantile must be one of 't', 'normal'"):
        ppi_mean([1, 2, 3], [1, 2, 3], [1, 2], quantile="z")
    # a fixed lam spends no degree of freedom: n = 2 is enough for the t interval
    assert ppi_mean([1, 2], [1, 2], [1, 3], lam=0.5).df == 1.0
    assert minimum_sizes("t") == (3, 2) and minimum_sizes("t", tuned=False) == (2, 2) and minimum_sizes("normal") == (2, 1)


def test_constant_judge_falls_back_to_human_only():
    y = np.array([1.0, 3.0, 4.0, 2.0])
    r = ppi_mean(y, np.full(4, 3.0), np.full(10, 3.0), quantile="normal")
    assert r.lam == 0.0
    assert (r.estimate, r.se) == pytest.approx((y.mean(), r.human_only.se))
    # t: lam was tuned (to 0), so the labelled variance has ddof 2 and the quantile n - 2 df
    r = ppi_mean(y, np.full(4, 3.0), np.full(10, 3.0))
    assert r.se == pytest.approx(np.std(y, ddof=2) / 2) and r.df == 2.0
    assert r.half_width == pytest.approx(st.t.ppf(0.975, 2) * r.se)


def test_t_interval_human_only_is_students():
    rng = np.random.default_rng(4)
    y, f, fu = _study(rng, 12, 200)
    r = ppi_mean(y, f, fu, alpha=0.1)
    ci = st.ttest_1samp(y, 0.0).confidence_interval(0.9)
    assert (r.human_only.ci_low, r.human_only.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert r.human_only.df == 11
    f_all = np.concatenate([f, fu])
    ci = st.ttest_1samp(f_all, 0.0).confidence_interval(0.9)
    assert (r.judge_only.ci_low, r.judge_only.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_t_interval_with_fixed_lambda_is_welchs(seed):
    """With a fixed lam the PPI estimate is mean(y - lam yhat) - mean(-lam yhat_u), a difference of two
    independent means: when the judge-only term carries the fewer degrees of freedom the interval is
    Welch's (scipy's implementation, independent of this module); otherwise the df stop at n - 1."""
    rng = np.random.default_rng(600 + seed)
    lam = [1.0, 0.8, 0.6][seed % 3]
    y, f, fu = _study(rng, 40, 5)  # N = 5: the judge-only term has 4 df, far fewer than n - 1 = 39
    r = ppi_mean(y, f, fu, lam=lam)
    welch = st.ttest_ind(y - lam * f, -lam * fu, equal_var=False)
    ci = welch.confidence_interval(0.95)
    assert r.df == pytest.approx(welch.df) and r.df < 39
    assert (r.estimate, r.ci_low, r.ci_high) == pytest.approx(((ci.low + ci.high) / 2, ci.low, ci.high), abs=1e-10)
    y, f, fu = _study(rng, 8, 2000)  # many judge-only items: Welch's df would exceed n - 1; capped
    r = ppi_mean(y, f, fu, lam=lam)
    assert st.ttest_ind(y - lam * f, -lam * fu, equal_var=False).df > 7 and r.df == 7.0


def test_zero_width_is_no_interval():
    r = ppi_mean([4.0] * 6, [3.0] * 6, [3.0, 3.0, 3.0])  # every human 4, judge constant: se = 0
    assert r.se == 0 and np.isnan(r.ci_low) and np.isnan(r.ci_high) and "zero standard error" in r.note
    assert r.estimate == 4.0 and np.isnan(r.human_only.ci_low) and "every human rating is the same" in r.human_only.note
    assert np.isnan(r.effective_n)
    d = ppi_mean_difference([4.0] * 6, [3.0] * 6, [3.0] * 3, [2.0] * 6, [3.0] * 6, [3.0] * 3)
    assert d.estimate == 2.0 and np.isnan(d.ci_low) and np.isnan(d.p_value) and "zero standard error" in d.note


def test_notes_below_valid_n_and_for_skewed_ratings():
    rng = np.random.default_rng(12)
    f, fu = rng.normal(4, 1, 4), rng.normal(4, 1, 50)
    few = ppi_mean([4.0, 5.0, 3.0, 4.0], f, fu)
    assert few.note.startswith("4 human-rated items, fewer than the 5") and np.isfinite(few.ci_low)
    # nine ratings at the top of the scale and one at the bottom: skewness -2.7, Cochran asks for n > 177
    y = np.array([5.0] * 9 + [1.0])
    skewed = ppi_mean(y, np.full(10, 3.0), np.full(40, 3.0))
    assert "Cochran" in skewed.note and "more than 177 human-rated items" in skewed.note
    even = ppi_mean(np.array([1.0, 2, 3, 4, 5, 1, 2, 3, 4, 5]), np.full(10, 3.0), np.full(40, 3.0))
    assert even.note == ""
    d = ppi_mean_difference(y, np.full(10, 3.0), np.full(40, 3.0), [1.0, 2, 3, 4, 5, 1, 2, 3, 4, 5], np.full(10, 3.0),
                            np.full(40, 3.0))
    assert d.note.startswith("A: skewed")


# ------------------------------------------------------------------ coverage by simulation


def test_coverage_simulation_ppi_vs_naive_judge():
    """Judge Y + 0.5 + N(0, 0.7²) on a 1–5 scale; 1,000 studies with n = 50, N = 1,000."""
    rng = np.random.default_rng(2024)
    probs = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    truth = float(np.dot(np.arange(1, 6), probs))
    hits = {"ppi": 0, "human_only": 0, "judge_only": 0}
    widths = {"ppi": 0.0, "human_only": 0.0}
    studies = 1000
    for _ in range(studies):
        y, f, fu = _study(rng, 50, 1000, probs=probs)
        r = ppi_mean(y, f, fu, alpha=0.05)
        for m in (r.ppi, r.human_only, r.judge_only):
            hits[m.method] += m.ci_low <= truth <= m.ci_high
        widths["ppi"] += r.half_width / studies
        widths["human_only"] += r.human_only.half_width / studies
    coverage = {k: v / studies for k, v in hits.items()}
    assert 0.92 <= coverage["ppi"] <= 0.975, coverage
    assert 0.92 <= coverage["human_only"] <= 0.975, coverage
    # the judge is 0.5 too high: its own narrow interval almost never contains the truth
    assert coverage["judge_only"] < 0.05, coverage
    # and PPI++ is narrower than the human-only interval (the judge's ratings carry information)
    assert widths["ppi"] < 0.8 * widths["human_only"], widths


# ------------------------------------------------------------------ difference of two systems


@pytest.mark.parametrize("seed", range(10))
def test_difference_against_per_system_oracle(ppi_py, seed):
    ya, fa, fua = _random_case(400 + seed)
    yb, fb, fub = _random_case(500 + seed)
    alpha = 0.05
    d = ppi_mean_difference(ya, fa, fua, yb, fb, fub, alpha=alpha, quantile="normal")
    ea, loa, hia = _oracle(ppi_py, ya, fa, fua, alpha, None)
    eb, lob, hib = _oracle(ppi_py, yb, fb, fub, alpha, None)
    z = st.norm.ppf(1 - alpha / 2)
    se_a, se_b = (hia - loa) / (2 * z), (hib - lob) / (2 * z)
    assert d.estimate == pytest.approx(ea - eb, abs=1e-6)
    assert d.half_width == pytest.approx(z * math.sqrt(se_a**2 + se_b**2), abs=1e-6)
    assert (d.ci_low + d.ci_high) / 2 == pytest.approx(ea - eb, abs=1e-6)
    assert d.p_value == pytest.approx(2 * st.norm.sf(abs(d.estimate) / d.se))
    assert (d.p_value < alpha) == (not d.ci_low <= 0 <= d.ci_high)


def test_difference_lambda_forms():
    rng = np.random.default_rng(3)
    a, b = _study(rng, 40, 400), _study(rng, 60, 500, bias=0.2)
    d = ppi_mean_difference(*a, *b, lam=(None, 1.0))
    assert d.a.lam_tuned and d.b.lam == 1.0 and not d.b.lam_tuned
    d0 = ppi_mean_difference(*a, *b, lam=0)
    assert d0.estimate == pytest.approx(a[0].mean() - b[0].mean())
    assert (d0.ci_low, d0.ci_high) == pytest.approx((d0.human_only.ci_low, d0.human_only.ci_high))
    frame = d.to_frame()
    assert list(frame["method"]) == ["ppi", "human_only", "judge_only"] and frame.loc[0, "lam_b"] == 1.0
    assert d.to_dict()["b"]["lam"] == 1.0
    with pytest.raises(ValueError, match="y_b and yhat_b"):
        ppi_mean_difference(*a, [1.0, 2.0, 3.0], [1.0, 2.0], [1.0])


def test_difference_coverage_simulation():
    """Two systems, judges with different biases: the naive judge difference is biased by 0.3."""
    rng = np.random.default_rng(11)
    pa = np.array([0.05, 0.15, 0.3, 0.3, 0.2])
    pb = np.array([0.15, 0.25, 0.3, 0.2, 0.1])
    truth = float(np.dot(np.arange(1, 6), pa - pb))
    studies = 600
    hits = judge_hits = 0
    for _ in range(studies):
        a = _study(rng, 50, 600, bias=0.5, probs=pa)
        b = _study(rng, 50, 600, bias=0.2, probs=pb)
        d = ppi_mean_difference(*a, *b)
        hits += d.ci_low <= truth <= d.ci_high
        judge_hits += d.judge_only.ci_low <= truth <= d.judge_only.ci_high
    assert 0.92 <= hits / studies <= 0.975
    assert judge_hits / studies < 0.2


# ------------------------------------------------------------------ planner


def _brute_half_width(y, f, N, n, alpha, quantile="normal"):
    """Predicted half-width at n labels by grid search over lam in [0, 1] (independent of the planner)."""
    c = np.cov(y, f)
    lam = np.linspace(0, 1, 200_001)
    var = lam**2 * c[1, 1] / N + (c[0, 0] - 2 * lam * c[0, 1] + lam**2 * c[1, 1]) / n
    q = st.norm.ppf(1 - alpha / 2) if quantile == "normal" else st.t.ppf(1 - alpha / 2, min(n - 2, N - 1))
    return q * math.sqrt(var.min())


@pytest.mark.parametrize("quantile", ["normal", "t"])
def test_plan_is_smallest_sufficient_n_and_monotone(quantile):
    rng = np.random.default_rng(5)
    y, f, _ = _study(rng, 200, 0)
    N, alpha = 2000, 0.05
    previous = 0
    for h in (0.4, 0.3, 0.2, 0.15, 0.1, 0.08):
        p = plan_ppi_mean(y, f, N, h, alpha=alpha, quantile=quantile)
        assert p.quantile == quantile and p.n == max(p.n_for_width, p.valid_from)
        assert p.valid_from == VALID_FROM[quantile]  # the pilot's residuals are not skewed
        assert p.predicted_half_width <= h
        assert p.predicted_half_width == pytest.approx(_brute_half_width(y, f, N, p.n, alpha, quantile), rel=1e-6)
        if p.n_for_width > minimum_sizes(quantile)[0]:
            assert _brute_half_width(y, f, N, p.n_for_width - 1, alpha, quantile) > h
        assert p.n_for_width <= p.n_human_only
        assert p.n >= previous  # narrower target, more labels
        previous = p.n
    sd = np.std(y, ddof=1)
    if quantile == "normal":
        assert p.n_human_only == math.ceil((st.norm.ppf(0.975) * sd / 0.08) ** 2)
    else:  # Student's half-width t_{n-1} sd / sqrt(n), smallest n that reaches 0.08
        k = p.n_human_only
        assert st.t.ppf(0.975, k - 1) * sd / math.sqrt(k) <= 0.08 < st.t.ppf(0.975, k - 2) * sd / math.sqrt(k - 1)


def test_plan_t_asks_for_more_than_normal_at_small_n():
    rng = np.random.default_rng(6)
    y, f, _ = _study(rng, 60, 0)
    t = plan_ppi_mean(y, f, 500, 0.45)
    normal = plan_ppi_mean(y, f, 500, 0.45, quantile="normal")
    assert 5 <= t.n_for_width and normal.n_for_width < t.n_for_width  # the t quantile is wider at small n
    assert normal.n == VALID_FROM["normal"] == normal.valid_from  # the normal interval is not trusted below 50


def test_plan_valid_from_follows_cochrans_rule_on_a_skewed_pilot():
    rng = np.random.default_rng(7)
    y = rng.choice([1.0, 2, 3, 4, 5], size=60, p=[0.01, 0.02, 0.04, 0.13, 0.8])  # piled at the top
    f = np.full(60, 3.0)  # a constant judge: lam = 0, the residuals are the ratings themselves
    p = plan_ppi_mean(y, f, 1000, 0.5)
    g1 = st.skew(y)
    assert p.lam == 0.0
    assert p.valid_from == math.floor(25 * g1**2) + 1 > 20
    assert p.n == p.valid_from > p.n_for_width
    assert p.predicted_half_width < 0.5


def test_plan_then_simulate_realised_half_width():
    rng = np.random.default_rng(8)
    y, f, fu = _study(rng, 300, 2000)  # pilot
    N, target = 2000, 0.12
    plan = plan_ppi_mean(y, f, N, target, yhat_unlabeled=fu)
    assert 10 < plan.n < plan.n_human_only
    realised = np.mean([ppi_mean(*_study(rng, plan.n, N)).half_width for _ in range(300)])
    assert realised == pytest.approx(target, rel=0.10)


def test_plan_difference_then_simulate():
    rng = np.random.default_rng(9)
    pilot_a = _study(rng, 300, 0, bias=0.5)
    pilot_b = _study(rng, 300, 0, bias=0.2, noise=0.9)
    target = 0.2
    plan = plan_ppi_difference(pilot_a[0], pilot_a[1], 1500, pilot_b[0], pilot_b[1], 1000, target)
    assert plan.predicted_half_width <= target and plan.n < plan.n_human_only
    assert plan.N == (1500, 1000) and len(plan.lam) == 2
    realised = np.mean([
        ppi_mean_difference(*_study(rng, plan.n, 1500, bias=0.5), *_study(rng, plan.n, 1000, bias=0.2, noise=0.9)).half_width
        for _ in range(300)
    ])
    assert realised == pytest.approx(target, rel=0.10)
    assert plan.to_dict()["N"] == [1500, 1000]
    assert plan.to_frame().shape[0] == 1


def test_plan_invalid():
    with pytest.raises(ValueError, match="half_width"):
        plan_ppi_mean([1, 2, 3], [1, 2, 3], 100, 0)
    with pytest.raises(ValueError, match="N"):
        plan_ppi_mean([1, 2, 3], [1, 2, 3], 0, 0.1)
    with pytest.raises(ValueError, match="at least 2"):
        plan_ppi_mean([1], [1], 100, 0.1)


def test_docstring_examples():
    import doctest
    import importlib

    for name in ("judgelab.stats.ppi", "judgelab.stats.ppi_core", "judgelab.stats.ppi_plan", "judgelab.stats.ppi_results"):
        module = importlib.import_module(name)  # the package attribute of the same name is the function
        assert doctest.testmod(module).failed == 0, name


def test_t_becomes_the_normal_interval_as_n_grows():
    rng = np.random.default_rng(21)
    y, f, fu = _study(rng, 500, 5000)
    t, normal = ppi_mean(y, f, fu), ppi_mean(y, f, fu, quantile="normal")
    assert t.estimate == normal.estimate and t.lam == normal.lam
    assert 1.0 < t.half_width / normal.half_width < 1.006  # about 0.4% wider at n = 500
    y, f, fu = _study(rng, 10, 5000)
    t, normal = ppi_mean(y, f, fu), ppi_mean(y, f, fu, quantile="normal")
    assert t.half_width / normal.half_width > 1.3  # t_8 with ddof 2 against z with ddof 0


def test_difference_t_uses_welch_df_and_its_p_value():
    rng = np.random.default_rng(22)
    a, b = _study(rng, 12, 300), _study(rng, 20, 300, bias=0.2, probs=(0.2, 0.2, 0.3, 0.2, 0.1))
    d = ppi_mean_difference(*a, *b)
    assert d.quantile == "t" and 10 <= d.df <= 10 + 18  # between the smaller labelled df and their sum
    assert d.p_value == pytest.approx(2 * st.t.sf(abs(d.z), d.df))
    assert d.half_width == pytest.approx(st.t.ppf(0.975, d.df) * d.se)
    assert d.z == pytest.approx(d.estimate / d.se)
    h = d.human_only  # Welch's interval on the two human samples (scipy)
    ci = st.ttest_ind(a[0], b[0], equal_var=False).confidence_interval(0.95)
    assert (h.ci_low, h.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-10)


def test_mean_and_difference_share_the_interval_fields_and_keep_their_json_keys():
    from judgelab.stats import PPIInterval

    rng = np.random.default_rng(23)
    a, b = _study(rng, 12, 40), _study(rng, 15, 40, bias=0.3)
    m, d = ppi_mean(*a), ppi_mean_difference(*a, *b)
    assert isinstance(m, PPIInterval) and isinstance(d, PPIInterval)
    for r in (m, d):
        assert r.ppi.to_dict() == {**{k: r.to_dict()[k] for k in ("estimate", "se", "ci_low", "ci_high", "df", "note",
                                                                     "half_width")}, "method": "ppi"}
    # the documented JSON shapes (estimates.json): key order as before the shared base
    assert list(m.to_dict()) == ["estimate", "se", "ci_low", "ci_high", "lam", "lam_tuned", "alpha", "n", "N",
                                 "effective_n", "quantile", "df", "note", "half_width", "human_only", "judge_only"]
    assert list(d.to_dict()) == ["estimate", "se", "ci_low", "ci_high", "half_width", "z", "p_value", "alpha",
                                 "quantile", "df", "note", "a", "b", "human_only", "judge_only"]
    assert list(d.to_frame()["method"]) == ["ppi", "human_only", "judge_only"]
