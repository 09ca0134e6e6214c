"""Agreement and Welch's t against independent implementations (krippendorff, scipy)."""
import krippendorff
import numpy as np
import pytest
from scipy import stats as st

from judgelab.stats import exact_agreement, krippendorff_alpha, welch_t


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff_package(level, seed):
    # krippendorff_alpha now calls the package: this checks the wrapper (orientation, missing values,
    # levels); the published example below is the test that does not depend on the package
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 6, size=(3 + seed % 3, 30 + seed)).astype(float)
    data[1] = np.where(rng.random(data.shape[1]) < 0.6, data[0], data[1])
    data[rng.random(data.shape) < 0.15] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-9)


def test_alpha_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 coders × 12 units example:
    # nominal alpha = 0.743, interval 0.849 (his rounding).
    nan = np.nan
    data = np.array([
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ])
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)


def test_alpha_degenerate():
    assert np.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, 3]]))
    assert np.isnan(krippendorff_alpha([[1, np.nan], [np.nan, 2]]))


def test_exact_agreement():
    data = np.array([[1, 2, 3, np.nan], [1, 2, 4, 5], [1, 3, 3, np.nan]], dtype=float)
    assert exact_agreement(data) == pytest.approx(1 / 3)  # the last item has one rating: left out


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_welch_matches_scipy(seed, alternative):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(3, 1, 40 + seed), rng.normal(3.3, 1.6, 25)
    res = welch_t(x, y, alternative=alternative)
    ref = st.ttest_ind(x, y, equal_var=False, alternative=alternative)
    t, p = res  # unpacks like scipy's result
    assert t == pytest.approx(ref.statistic, abs=1e-9) and p == pytest.approx(ref.pvalue, abs=1e-9)
    assert res.df == pytest.approx(ref.df, rel=1e-12)
    assert res.confidence_interval(0.9) == pytest.approx(tuple(ref.confidence_interval(0.9)), rel=1e-9)
    assert (res.n_x, res.n_y, res.alternative) == (x.size, y.size, alternative)
    assert res.to_dict()["mean_x"] == pytest.approx(x.mean())


def test_welch_degenerate():
    with pytest.raises(ValueError, match="alternative must be one of"):
        welch_t([1.0, 2.0], [2.0, 3.0], alternative="bigger")
    assert all(np.isnan(v) for v in (*welch_t([1.0], [2.0, 3.0]), welch_t([1.0], [2.0, 3.0]).df))


def test_no_stats_submodule_shadows_an_exported_name():
    """judgelab.stats exports lazily; a submodule named like an export would replace it once imported."""
    import pkgutil

    import judgelab.stats as stats_package

    submodules = {m.name for m in pkgutil.iter_modules(stats_package.__path__)}
    assert not submodules & set(stats_package.__all__)
    for name in stats_package.__all__:
        assert callable(getattr(stats_package, name)) or isinstance(getattr(stats_package, name), type)
