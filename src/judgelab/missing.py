"""What counts as one missing value, everywhere judgelab reads ratings or scores."""
from __future__ import annotations

import sys

__all__ = ["is_missing", "finite_or_none"]


def is_missing(value) -> bool:
    """Whether one value is missing: ``None``, NaN of any float type, ``pandas.NA``, ``NaT``.

    Example:
        >>> import numpy as np
        >>> [is_missing(v) for v in (None, float("nan"), np.float32("nan"), 0.0, "", "a")]
        [True, True, True, False, False, False]
    """
    if value is None:
        return True
    pandas = sys.modules.get("pandas")  # a pandas.NA exists only once pandas is imported
    if pandas is not None and value is pandas.NA:
        return True
    try:
        return bool(value != value)  # NaN of every float type, pandas.NaT and numpy's NaT
    except (TypeError, ValueError):  # arrays and objects without a truth value are not one missing value
        return False


def finite_or_none(value) -> float | None:
    """A recorded number as a float, or None for a value that is no finite number (None, NaN, inf, text).

    Example:
        >>> [finite_or_none(v) for v in (3, "2.5", None, float("nan"), "n/a")]
        [3.0, 2.5, None, None, None]
    """
    import math

    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
