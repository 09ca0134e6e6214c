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
