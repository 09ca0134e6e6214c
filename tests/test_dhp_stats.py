"""DHP statistics against independent computations with scipy (to 1e-9)."""
import math

import numpy as np
import pytest
from scipy import stats as st

from judgelab import stats as S
from judgelab.stats.discernment import (
    P_FLOOR, discernment, expert_weights, harmonic_mean_p, harmonic_mean_p_exact, level_balanced_mean, wilcoxon_greater,
)


@pytest.mark.parametrize("seed", range(6))
def test_wilcoxon_matches_scipy_with_ties_and_zeros(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, 40).astype(float)
    b = np.clip(a - rng.integers(-1, 3, 40), 1, 5).astype(float)  # ties and zero differences
    ref = st.wilcoxon(a, b, zero_method="wilcox", alternative="greater").pvalue
    assert wilcoxon_greater(a, b) == pytest.approx(ref, abs=1e-12)


def test_wilcoxon_exact_small_sample_matches_scipy():
    a = np.array([4.1, 3.9, 4.4, 3.2, 4.8, 4.0, 3.7])
    b = np.array([3.0, 3.8, 4.2, 3.3, 3.1, 2.2, 3.6])
    assert wilcoxon_greater(a, b) == pytest.approx(st.wilcoxon(a - b, alternative="greater", method="exact").pvalue, abs=1e-12)


def test_wilcoxon_all_zero_differences_is_one_and_nan_pairs_dropped():
    assert wilcoxon_greater([3, 4, 5], [3, 4, 5]) == 1.0
    a, b = [5, 4, np.nan, 5, 4, 5], [3, 3, 2, np.nan, 2, 1]
    ref = st.wilcoxon(np.array([5, 4, 4, 5.0]) - np.array([3, 3, 2, 1.0]), alternative="greater").pvalue
    assert wilcoxon_greater(a, b) == pytest.approx(ref, abs=1e-12)


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


def test_level_balanced_mean():
    # character: two perturbations, word: one, sentence: one -> weights 1/6, 1/6, 1/3, 1/3
    assert level_balanced_mean([1, 3, 2, 6], ["character", "character", "word", "sentence"]) == pytest.approx((1 + 3) / 6 + 2 / 3 + 6 / 3)


def test_exact_hmp_against_scipy_levy_stable_and_calibration():
    p = [0.01, 0.02, 0.3, 0.6]
    L = 4
    hmp = harmonic_mean_p(p)
    mu = math.log(L) + 1 + float(np.euler_gamma * -1) - math.log(2 / math.pi)
    loc = mu - (2 / math.pi) * (math.pi / 2) * math.log(math.pi / 2)
    ref = max(hmp, st.levy_stable.sf(1 / hmp, 1.0, 1.0, loc=loc, scale=math.pi / 2))
    assert harmonic_mean_p_exact(p) == pytest.approx(ref, abs=1e-9)
    rng = np.random.default_rng(0)
    draws = np.array([harmonic_mean_p_exact(rng.uniform(size=20)) for _ in range(300)])
    assert 0.02 < np.mean(draws < 0.05) < 0.09  # calibrated under the null


def test_exact_hmp_small_values_close_to_hmp_and_weights():
    assert harmonic_mean_p_exact([1e-6] * 5) == pytest.approx(1e-6, rel=0.2)
    with pytest.raises(ValueError):
        harmonic_mean_p_exact([0.1, 0.2], [0.8, 0.8])


def test_public_names():
    assert S.harmonic_mean_p is harmonic_mean_p and S.harmonic_mean_p_exact is harmonic_mean_p_exact and S.discernment is discernment
