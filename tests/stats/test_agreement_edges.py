"""Krippendorff's alpha through the krippendorff package: the degenerate cases judgelab answers itself."""
import math

import numpy as np

from judgelab.stats import krippendorff_alpha


def test_no_variation_or_no_pairable_item_is_nan_not_an_error():
    assert math.isnan(krippendorff_alpha([[3, 3, 3], [3, 3, 3]], "ordinal"))
    assert math.isnan(krippendorff_alpha([[1, np.nan, 3], [np.nan, 2, np.nan]], "interval"))
    # a value only in an unpairable item does not count as variation
    assert math.isnan(krippendorff_alpha([[2, 2, 5], [2, 2, np.nan]], "nominal"))


def test_perfect_agreement_is_one():
    assert krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4], [1, 2, 3, 4]], "ordinal") == 1.0


# --- every missing-value kind is missing (issue 18, item 9) ---------------------------------------------------------

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from judgelab.stats import correlate, exact_agreement, gwet_ac1, icc  # noqa: E402

MISSING_KINDS = [None, float("nan"), np.float32("nan"), np.float64("nan"), pd.NA, pd.NaT]


@pytest.mark.parametrize("missing", MISSING_KINDS, ids=repr)
def test_ac1_reads_every_missing_kind_as_missing(missing):
    """By hand: items (0,0), (1,1), (0,1), the third rater missing everywhere. p_a = (1 + 1 + 0) / 3 = 2/3;
    pi_0 = (1 + 0 + 1/2) / 3 = 1/2 = pi_1, so p_e = 2 * 1/2 * 1/2 / (2 - 1) = 1/2; AC1 = (2/3 - 1/2) / (1/2) = 1/3."""
    assert gwet_ac1([[0, 0, missing], [1, 1, missing], [0, 1, missing]]) == pytest.approx(1 / 3, abs=1e-12)


def test_ac1_float32_arrays_and_dataframes():
    f32 = np.array([[0, 0, np.nan], [1, 1, np.nan], [0, 1, np.nan]], dtype=np.float32)
    assert gwet_ac1(f32) == pytest.approx(1 / 3, abs=1e-12)
    frame = pd.DataFrame({"r1": [0, 1, 0], "r2": [0, 1, 1], "r3": pd.array([pd.NA] * 3, dtype="Int64")})
    assert gwet_ac1(frame) == pytest.approx(1 / 3, abs=1e-12)  # rows are items, columns raters
    labels = pd.DataFrame({"a": ["yes", "no", "yes"], "b": ["yes", "no", "no"], "c": [pd.NA, None, np.nan]})
    assert gwet_ac1(labels) == pytest.approx(1 / 3, abs=1e-12)
    with pytest.raises(TypeError, match="items × raters"):
        gwet_ac1(pd.Series([0, 1, 1]))
    with pytest.raises(TypeError, match="each item a sequence"):
        gwet_ac1([0, 1, 1])


def test_alpha_icc_exact_agreement_and_correlate_read_every_missing_kind():
    base = np.array([[1.0, 2.0, 3.0, 4.0, 2.0], [1.0, 2.0, 4.0, 4.0, np.nan], [2.0, 2.0, 3.0, 5.0, 1.0]])
    expected_alpha = krippendorff_alpha(base, "interval")
    expected_icc = icc(base.T)
    for missing in MISSING_KINDS:
        data = base.astype(object)
        data[1, 4] = missing
        assert krippendorff_alpha(data, "interval") == pytest.approx(expected_alpha, abs=1e-12)
        assert krippendorff_alpha(pd.DataFrame(data), "interval") == pytest.approx(expected_alpha, abs=1e-12)
        assert tuple(icc(data.T).average) == pytest.approx(tuple(expected_icc.average))
        assert exact_agreement(data) == pytest.approx(exact_agreement(base))
        x = [1.0, 2.0, missing, 4.0, 5.0]
        assert correlate(x, [2, 1, 9, 4, 3], "kendall").r == pytest.approx(correlate([1, 2, 4, 5], [2, 1, 4, 3], "kendall").r)
    nullable = pd.Series([1, 2, None, 4, 5], dtype="Int64")
    assert correlate(nullable, [2, 1, 9, 4, 3], "pearson").n == 4
    with pytest.raises(TypeError, match="'high'.*neither a number nor a missing value"):
        krippendorff_alpha([[1, 2, "high"], [1, 2, 3]])
