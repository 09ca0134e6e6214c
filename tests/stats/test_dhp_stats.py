"""DHP statistics against independent computations with scipy (to 1e-9)."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from judgelab import stats as S
from judgelab.stats.dhp import (
    P_FLOOR, discernment, expert_weights, harmonic_mean_p, harmonic_mean_p_exact, level_balanced_mean, max_discernment,
)
from judgelab.stats.tests_twosample import wilcoxon


def _p_greater(a, b):
    return wilcoxon(a, b, alternative="greater").pvalue


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_matches_scipy_with_ties_and_zeros(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 40).astype(float)
    b = np.clip(a - rng.integers(-1, 3, 40), 1, 5).astype(float)  # ties and zero differences
    ref = st.wilcoxon(a, b, zero_method="wilcox", alternative="greater").pvalue
    assert _p_greater(a, b) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("seed", range(3))
def test_wilcoxon_every_alternative_matches_scipy(seed, alternative):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 30).astype(float)
    b = np.clip(a - rng.integers(-2, 3, 30), 1, 5).astype(float)
    ref = st.wilcoxon(a, b, zero_method="wilcox", alternative=alternative)
    res = wilcoxon(a, b, alternative=alternative)
    w, p = res  # unpacks like scipy's result
    assert w == pytest.approx(ref.statistic, abs=1e-12) and p == pytest.approx(ref.pvalue, abs=1e-12)
    assert (res.n, res.n_zero, res.alternative) == (30, int((a == b).sum()), alternative)
    assert res.to_dict()["pvalue"] == p


def test_wilcoxon_refuses_unknown_alternative_and_unequal_lengths():
    with pytest.raises(ValueError, match="alternative"):
        wilcoxon([1, 2], [0, 1], alternative="bigger")
    with pytest.raises(ValueError, match="differ in length"):
        wilcoxon([1, 2, 3], [0, 1])


def test_wilcoxon_exact_small_sample_matches_scipy():
    a = np.array([4.1, 3.9, 4.4, 3.2, 4.8, 4.0, 3.7])
    b = np.array([3.0, 3.8, 4.2, 3.3, 3.1, 2.2, 3.6])
    assert _p_greater(a, b) == pytest.approx(st.wilcoxon(a - b, alternative="greater", method="exact").pvalue, abs=1e-12)


def test_wilcoxon_all_zero_differences_is_one_and_nan_pairs_dropped():
    assert _p_greater([3, 4, 5], [3, 4, 5]) == 1.0
    same = wilcoxon([3, 4, 5], [3, 4, 5], alternative="less")
    assert (same.pvalue, same.n, same.n_zero) == (1.0, 3, 3) and math.isnan(same.statistic)
    a, b = [5, 4, np.nan, 5, 4, 5], [3, 3, 2, np.nan, 2, 1]
    ref = st.wilcoxon(np.array([5, 4, 4, 5.0]) - np.array([3, 3, 2, 1.0]), alternative="greater").pvalue
    assert _p_greater(a, b) == pytest.approx(ref, abs=1e-12)


def _hmp_reference(p, w=None):
    p = np.asarray(p, float)
    w = np.full(p.size, 1 / p.size) if w is None else np.asarray(w, float)
    return st.hmean(p, weights=w)  # scipy's weighted harmonic mean: sum(w) / sum(w / p)


@pytest.mark.parametrize("seed", range(5))
def test_harmonic_mean_p_matches_scipy_hmean(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(1e-6, 1, 4)
    w = rng.dirichlet(np.ones(4))
    assert harmonic_mean_p(p) == pytest.approx(_hmp_reference(p), abs=1e-12)
    assert harmonic_mean_p(p, w) == pytest.approx(_hmp_reference(p, w), abs=1e-12)


def test_hmp_is_wilsons_not_the_papers_printed_formula():
    p = [0.01, 0.04, 0.2, 0.5]
    papers = 1 / sum(1 / x for x in p)
    assert harmonic_mean_p(p) == pytest.approx(len(p) * papers)  # equal weights 1/M
    assert harmonic_mean_p([0.0, 0.3]) == 0.0


def test_expert_weights_and_zero_weight():
    assert expert_weights({"coherence": 4, "consistency": 1, "fluency": 5}, ["coherence", "consistency", "fluency"]) == pytest.approx([0.4, 0.1, 0.5])
    assert expert_weights({}, ["a", "b"]) == [0.5, 0.5]
    assert harmonic_mean_p([0.01, 0.9], [1.0, 0.0]) == pytest.approx(0.01)


def test_discernment_and_floor():
    assert discernment(0.05) == pytest.approx(1.0)
    assert discernment(0.0025) == pytest.approx(2.0)
    assert discernment(1.0) == 0.0
    assert discernment(0.0) == pytest.approx(math.log(P_FLOOR) / math.log(0.05))
    assert discernment(1e-12) == pytest.approx(np.log(1e-12) / np.log(0.05), abs=1e-12)


@pytest.mark.parametrize("n", range(1, 9))
def test_max_discernment_is_the_best_of_every_sign_pattern(n):
    # all 2**n sign patterns of n distinct differences, each through scipy's one-sided test
    best = min(
        _p_greater(np.array(signs) * np.arange(1, n + 1), np.zeros(n))
        for signs in itertools.product([-1.0, 1.0], repeat=n)
    )
    assert best == pytest.approx(0.5**n, rel=1e-12)
    assert max_discernment(n) == pytest.approx(discernment(best), rel=1e-12)


def test_max_discernment_threshold():
    assert max_discernment(4) == pytest.approx(4 * math.log(0.5) / math.log(0.05)) and max_discernment(4) < 1
    assert max_discernment(5) > 1
    assert max_discernment(0) == 0.0
    with pytest.raises(ValueError):
        max_discernment(-1)


def test_level_balanced_mean():
    # character: two perturbations, word: one, sentence: one -> weights 1/6, 1/6, 1/3, 1/3
    assert level_balanced_mean([1, 3, 2, 6], ["character", "character", "word", "sentence"]) == pytest.approx((1 + 3) / 6 + 2 / 3 + 6 / 3)


def _landau_s0_sf_scipy(x, mu, sigma):
    """R's pLandau(x, mu, sigma, lower.tail=FALSE) (Nolan S0) from scipy, by two routes that must agree."""
    old = st.levy_stable.parameterization
    try:
        st.levy_stable.parameterization = "S0"
        s0 = st.levy_stable.sf(x, 1.0, 1.0, loc=mu, scale=sigma)
        st.levy_stable.parameterization = "S1"  # scipy's cdf in S1 is Nolan's S1: shift the location
        s1 = 1 - st.levy_stable.cdf(x, 1.0, 1.0, loc=mu - (2 / math.pi) * sigma * math.log(sigma), scale=sigma)
    finally:
        st.levy_stable.parameterization = old
    assert s0 == pytest.approx(s1, abs=1e-9)
    return s0


@pytest.mark.parametrize("p, w, L", [
    ([0.01, 0.02, 0.3, 0.6], None, None),
    ([0.2, 0.5, 0.9, 0.9], None, None),
    ([0.04, 0.3, 0.5], [0.5, 0.3, 0.2], None),
    ([0.01, 0.2], None, 10),                     # multilevel: two of ten p-values, weights 1/10
    ([0.3] * 100, None, None),
])
def test_exact_hmp_against_scipy_levy_stable(p, w, L):
    L_ = L or len(p)
    wv = np.full(len(p), 1 / L_) if w is None else np.asarray(w, float)
    mu = math.log(L_) + 1 - np.euler_gamma - math.log(2 / math.pi)  # digamma(1) = -Euler's gamma
    ref = wv.sum() * _landau_s0_sf_scipy(float(np.sum(wv / np.asarray(p))), mu, math.pi / 2)
    assert harmonic_mean_p_exact(p, w, L) == pytest.approx(ref, abs=1e-9)


@pytest.mark.parametrize("h, L", [(1e-3, 4), (1e-5, 4), (1e-8, 10), (1e-4, 1000), (1e-100, 1000), (1e-290, 4)])
def test_exact_hmp_tail_follows_the_landau_expansion(h, L):
    # scipy's levy_stable.sf returns 0 this far out; Landau's tail is 1/l + (log l - 1 + gamma)/l^2 + O(log^2 l / l^3)
    lam = 1 / h - (math.log(L) + 1 - np.euler_gamma)
    ref = (1 + (math.log(lam) - 1 + np.euler_gamma) / lam) / lam
    assert harmonic_mean_p_exact([h] * L) == pytest.approx(ref, rel=10 * (math.log(lam) / lam) ** 2 + 1e-12)
    assert harmonic_mean_p_exact([h] * L) > h  # more conservative than the raw HMP


def test_exact_hmp_small_values_close_to_hmp_and_weights():
    assert harmonic_mean_p_exact([1e-6] * 5) == pytest.approx(1e-6, rel=0.2)
    with pytest.raises(ValueError):
        harmonic_mean_p_exact([0.1, 0.2], [0.8, 0.8])


def test_public_names():
    assert S.harmonic_mean_p is harmonic_mean_p and S.harmonic_mean_p_exact is harmonic_mean_p_exact and S.discernment is discernment
