"""The asymptotically exact HMP against simulation of its null distribution (DHP section 3.3.2).

Under the null, L independent p-values are uniform. For each L and weighting, one set of draws
gives the Monte Carlo probability P(HMP_stat <= observed HMP), which is compared with
``harmonic_mean_p_exact`` for several observed p-value vectors. The bounds encode what holds
(see the docstring of ``harmonic_mean_p_exact``): p.hmp is asymptotic in L, so it is within Monte
Carlo error for large L and equal weights and in the tail (HMP <= 0.01) always; for small L and
for unequal weights it is conservative, by a bounded amount, for HMP between 0.01 and 0.2.
"""
import math

import numpy as np
import pytest

from judgelab.stats.dhp import harmonic_mean_p, harmonic_mean_p_exact

DRAWS = {4: 400_000, 10: 200_000, 100: 50_000, 1000: 20_000}
OBSERVED_HMP = [0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002]
TAIL = 0.01


def null_hmp(L: int, w: np.ndarray, n: int, seed: int) -> np.ndarray:
    """n draws of Wilson's HMP statistic sum(w) / sum(w / p) for L independent uniform p-values."""
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    block = max(1, 2_000_000 // L)
    for start in range(0, n, block):
        m = min(block, n - start)
        out[start:start + m] = w.sum() / (w / rng.random((m, L))).sum(axis=1)
    return out


def weights_for(kind: str, L: int) -> np.ndarray:
    if kind == "equal":
        return np.full(L, 1.0 / L)
    return np.random.default_rng(1000 + L).dirichlet(np.ones(L))  # unequal, summing to 1


def observed_pvalues(h: float, L: int, w: np.ndarray) -> np.ndarray:
    """An uneven p-value vector whose weighted HMP is h."""
    q = np.linspace(0.5, 1.5, L)
    return q * h / harmonic_mean_p(q, w)


@pytest.mark.parametrize("kind", ["equal", "unequal"])
@pytest.mark.parametrize("L", sorted(DRAWS))
def test_exact_hmp_matches_simulated_null(L, kind):
    w = weights_for(kind, L)
    n = DRAWS[L]
    sims = np.sort(null_hmp(L, w, n, seed=L))
    for h in OBSERVED_HMP:
        p = observed_pvalues(h, L, w)
        assert harmonic_mean_p(p, w) == pytest.approx(h)
        exact = harmonic_mean_p_exact(p, None if kind == "equal" else w)
        mc = np.searchsorted(sims, h, side="right") / n  # P(HMP_stat <= h)
        se = math.sqrt(max(mc * (1 - mc), 1.0 / n) / n)
        what = f"L={L} {kind} HMP={h}: exact {exact:.5f}, Monte Carlo {mc:.5f} ± {se:.5f}"
        if h <= TAIL or (kind == "equal" and L >= 100):
            assert abs(exact - mc) <= 4 * se + 0.02 * mc, what  # within Monte Carlo error
        else:
            # asymptotic in L (equal weights) / location log L above the weights' entropy (unequal):
            # conservative, by at most 12 % (equal) or 35 % (unequal) of the true null probability
            excess = 1.12 if kind == "equal" else 1.35
            assert mc - 4 * se <= exact <= excess * mc + 4 * se, what
