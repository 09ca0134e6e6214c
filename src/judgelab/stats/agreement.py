"""Inter-rater agreement: Krippendorff's alpha, the share of exact agreement and Gwet's AC1.

Chiang & Lee (2023), section 3.3 and Table 1: the IAA of three annotators (three
teachers, or three samples of one LLM) as Krippendorff's alpha, with the percentage
of items on which all annotators give exactly the same rating.

**Missing values.** Every agreement and correlation function of :mod:`judgelab.stats` reads the
same kinds of missing value as missing: ``None``, a float NaN of any dtype (``float``,
``numpy.float32``, ``numpy.float64`` …), ``pandas.NA`` and ``NaT`` (:func:`is_missing`,
:func:`as_float_array`). A pandas DataFrame is read as its table of values, rows as rows; an
input that is not a table of the documented shape is a ``TypeError``/``ValueError`` naming what
was expected, never a silent NaN.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, cast

import numpy as np

from judgelab.missing import is_missing

__all__ = ["krippendorff_alpha", "exact_agreement", "gwet_ac1", "is_missing", "as_float_array"]


def as_float_array(data, what: str = "data") -> np.ndarray:
    """``data`` as a float array, every kind of missing value (:func:`is_missing`) as NaN.

    Accepts numbers, sequences, numpy arrays of any numeric or object dtype, pandas Series and
    DataFrames (their values, rows as rows; nullable dtypes with ``pandas.NA`` included).

    Raises:
        TypeError: a value that is neither a number nor missing (named with ``what``).
        ValueError: rows of different lengths.
    """
    if isinstance(data, np.ndarray) and data.dtype.kind in "fiub":
        return data.astype(float, copy=False)
    if hasattr(data, "to_numpy") and type(data).__module__.startswith("pandas"):
        try:  # numeric columns, nullable ones included (pandas.NA becomes NaN)
            return data.to_numpy(dtype=float, na_value=np.nan)
        except (TypeError, ValueError):
            data = data.to_numpy(dtype=object)  # mixed objects: value by value below
    try:
        return np.asarray(data, dtype=float)
    except (TypeError, ValueError):
        pass
    try:
        arr = np.asarray(data, dtype=object)
    except ValueError:
        raise ValueError(f"{what}: rows of different lengths; expected a rectangular table") from None
    out = np.empty(arr.shape, dtype=float)
    for index, value in np.ndenumerate(arr):
        if is_missing(value):
            out[index] = np.nan
            continue
        if isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError(f"{what}: rows of different lengths; expected a rectangular table")
        try:
            out[index] = float(value)
        except (TypeError, ValueError):
            raise TypeError(f"{what}: {value!r} ({type(value).__name__}) is neither a number nor a missing value") from None
    return out


def _as_matrix(data, shape: str) -> np.ndarray:
    arr = as_float_array(data, shape)
    if arr.ndim != 2:
        raise ValueError(f"expected a 2-D table: {shape}; got {arr.ndim}-D")
    return arr


def krippendorff_alpha(data, level: str = "ordinal") -> float:
    """Krippendorff's alpha for ``data`` of shape raters × items; every missing kind marks a missing value.

    Computed by the ``krippendorff`` package (a runtime dependency; the field's implementation,
    Castro 2017), which implements Krippendorff (2011), "Computing Krippendorff's
    alpha-reliability": ``alpha = 1 - D_o / D_e`` from the coincidence matrix, items with fewer
    than two values dropping out. judgelab's part is only the degenerate cases, which the package
    answers with an exception or a division by zero: NaN when no item has two values, or when the
    pairable values are all the same (no variation to agree on).

    Args:
        data: raters × items (``None``/NaN/``pandas.NA`` = missing; a DataFrame: rows are raters).
        level: ``nominal``, ``ordinal``, ``interval`` or ``ratio``.

    Returns:
        alpha as a float (NaN in the degenerate cases above).

    Example:
        >>> krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], "interval") > 0.8
        True
    """
    import krippendorff

    if level not in {"nominal", "ordinal", "interval", "ratio"}:
        raise ValueError(f"unknown level {level!r}: nominal, ordinal, interval or ratio")
    arr = _as_matrix(data, "raters × items")
    pairable = (~np.isnan(arr)).sum(axis=0) >= 2
    arr = arr[:, pairable]
    if arr.size == 0 or np.unique(arr[~np.isnan(arr)]).size < 2:
        return float("nan")
    measurement = cast(Literal["nominal", "ordinal", "interval", "ratio"], level)  # checked above
    return float(krippendorff.alpha(reliability_data=arr, level_of_measurement=measurement))


def exact_agreement(data) -> float:
    """Share of items (raters × items input) on which all raters give the same value.

    Items with fewer than two ratings are left out. Table 1 of Chiang & Lee (2023)
    prints this as a percentage beside alpha. NaN when no item has two ratings.
    """
    arr = _as_matrix(data, "raters × items")
    agree = total = 0
    for u in range(arr.shape[1]):
        col = arr[:, u]
        col = col[~np.isnan(col)]
        if col.size >= 2:
            total += 1
            agree += bool(np.all(col == col[0]))
    return agree / total if total else float("nan")


def _item_rows(data) -> list[list]:
    """The items of an items × raters table, each a list of its ratings (missing ones included)."""
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):  # a DataFrame: rows are items, columns raters
        data = data.to_numpy(dtype=object)
    elif hasattr(data, "to_numpy"):
        raise TypeError("expected items × raters (a 2-D table); got a 1-D pandas Series")
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise ValueError(f"expected items × raters (a 2-D table); got a {data.ndim}-D array")
        return [list(row) for row in data]
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise TypeError(f"expected items × raters (a 2-D table); got {type(data).__name__}")
    rows = []
    for row in data:
        if isinstance(row, (str, bytes, Mapping)) or not isinstance(row, Iterable):
            raise TypeError(f"expected items × raters: each item a sequence of ratings; got an item of type "
                            f"{type(row).__name__}")
        rows.append(list(row))
    return rows


def gwet_ac1(data, categories=None) -> float:
    """Gwet's AC1 for ``data`` of shape items × raters; any hashable categories.

    Gwet (2008), "Computing inter-rater reliability and its variance in the presence of high
    agreement" — used for the error annotations of LLM explanations (HANNA, user study):

    * ``p_a``: mean over items rated at least twice of ``sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))``;
    * ``pi_k``: mean over items rated at least once of ``r_ik / r_i``;
    * ``p_e = sum_k pi_k (1 - pi_k) / (q - 1)`` with q categories (the observed ones unless
      ``categories`` is given);
    * ``AC1 = (p_a - p_e) / (1 - p_e)``.

    Args:
        data: items × raters: a list of rows, a 2-D numpy array or a DataFrame (rows are items,
            columns raters). ``None``, NaN of any float dtype, ``pandas.NA`` and ``NaT`` are missing
            ratings, never a category.
        categories: the possible categories (default: those observed).

    Returns:
        AC1; NaN when no item has two ratings or fewer than two categories exist.

    Raises:
        TypeError, ValueError: ``data`` is not an items × raters table; a rating outside ``categories``.

    Example:
        >>> round(gwet_ac1([[0, 0, None], [1, 1, None], [0, 1, None]]), 6)  # p_a = 2/3, p_e = 1/2
        0.333333
    """
    rows = [[v for v in row if not is_missing(v)] for row in _item_rows(data)]
    rows = [r for r in rows if r]
    cats = list(categories) if categories is not None else sorted({v for r in rows for v in r}, key=repr)
    q = len(cats)
    if q < 2 or not any(len(r) >= 2 for r in rows):
        return float("nan")
    index = {c: i for i, c in enumerate(cats)}
    counts = np.zeros((len(rows), q))
    for i, r in enumerate(rows):
        for v in r:
            if v not in index:
                raise ValueError(f"rating {v!r} is not one of the categories")
            counts[i, index[v]] += 1
    r_i = counts.sum(axis=1)
    multi = r_i >= 2
    p_a = float(np.mean((counts[multi] * (counts[multi] - 1)).sum(axis=1) / (r_i[multi] * (r_i[multi] - 1))))
    pi = (counts / r_i[:, None]).mean(axis=0)
    p_e = float((pi * (1 - pi)).sum() / (q - 1))
    return (p_a - p_e) / (1 - p_e)
