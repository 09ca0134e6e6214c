"""Inter-rater agreement: Krippendorff's alpha and the share of exact agreement.

Chiang & Lee (2023), section 3.3 and Table 1: the IAA of three annotators (three
teachers, or three samples of one LLM) as Krippendorff's alpha, with the percentage
of items on which all annotators give exactly the same rating.
"""
from __future__ import annotations

from typing import Literal, cast

import numpy as np

__all__ = ["krippendorff_alpha", "exact_agreement", "gwet_ac1"]


def _as_matrix(data) -> np.ndarray:
    arr = np.asarray(data, dtype=float)
    if arr.ndim != 2:
        raise ValueError("expected a 2-D array: raters × items")
    return arr


def krippendorff_alpha(data, level: str = "ordinal") -> float:
    """Krippendorff's alpha for ``data`` of shape raters × items; NaN marks a missing value.

    Computed by the ``krippendorff`` package (a runtime dependency; the field's implementation,
    Castro 2017), which implements Krippendorff (2011), "Computing Krippendorff's
    alpha-reliability": ``alpha = 1 - D_o / D_e`` from the coincidence matrix, items with fewer
    than two values dropping out. judgelab's part is only the degenerate cases, which the package
    answers with an exception or a division by zero: NaN when no item has two values, or when the
    pairable values are all the same (no variation to agree on).

    Args:
        data: raters × items (NaN = missing).
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
    arr = _as_matrix(data)
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
    arr = _as_matrix(data)
    agree = total = 0
    for u in range(arr.shape[1]):
        col = arr[:, u]
        col = col[~np.isnan(col)]
        if col.size >= 2:
            total += 1
            agree += bool(np.all(col == col[0]))
    return agree / total if total else float("nan")


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def gwet_ac1(data, categories=None) -> float:
    """Gwet's AC1 for ``data`` of shape items × raters; ``None``/NaN = missing; any hashable categories.

    Gwet (2008), "Computing inter-rater reliability and its variance in the presence of high
    agreement" — used for the error annotations of LLM explanations (HANNA, user study):

    * ``p_a``: mean over items rated at least twice of ``sum_k r_ik (r_ik - 1) / (r_i (r_i - 1))``;
    * ``pi_k``: mean over items rated at least once of ``r_ik / r_i``;
    * ``p_e = sum_k pi_k (1 - pi_k) / (q - 1)`` with q categories (the observed ones unless
      ``categories`` is given);
    * ``AC1 = (p_a - p_e) / (1 - p_e)``.

    NaN when no item has two ratings or fewer than two categories exist.
    """
    rows = [[v for v in row if not _missing(v)] for row in data]
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
