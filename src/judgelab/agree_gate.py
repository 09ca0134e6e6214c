"""The CI gate of ``judgelab agree --fail-under``: every judge's 95% lower bound against a threshold.

``agree --fail-under METHOD:LEVEL[:CRITERION]:VALUE`` exits with status 3 when a judge's interval
lower bound is below VALUE, or when there is no interval to check (a gate cannot be passed without
one). Split from :mod:`judgelab.agree` (which re-exports these names): the gate reads the
correlations table and nothing else.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats.correlation import LEVELS

__all__ = ["Threshold", "parse_threshold", "threshold_failures"]


@dataclass(frozen=True)
class Threshold:
    """A CI gate (``agree --fail-under``): the lower 95% bound of every judge's ``method`` correlation at
    ``level`` (for ``criterion``, or every criterion) must be at least ``value``."""

    method: str
    level: str
    value: float
    criterion: str | None = None

    def __str__(self) -> str:
        return ":".join([self.method, self.level, *([self.criterion] if self.criterion else []), f"{self.value:g}"])


def parse_threshold(text: str, methods=("kendall", "pearson", "spearman"), levels=LEVELS) -> Threshold:
    """``METHOD:LEVEL:VALUE`` or ``METHOD:LEVEL:CRITERION:VALUE`` (e.g. ``kendall:overall:0.3``).

    Raises:
        JudgelabError: one line naming what is wrong (the method and level must be among those computed).

    Example:
        >>> parse_threshold("kendall:overall:0.3")
        Threshold(method='kendall', level='overall', value=0.3, criterion=None)
    """
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise JudgelabError(f"--fail-under {text!r}: expected METHOD:LEVEL:VALUE or METHOD:LEVEL:CRITERION:VALUE, "
                            "e.g. kendall:overall:0.3")
    method, level = parts[0], parts[1]
    if method not in methods:
        raise JudgelabError(f"--fail-under {text!r}: method {method!r} is not computed (--method {','.join(methods)})")
    if level not in levels:
        raise JudgelabError(f"--fail-under {text!r}: level {level!r} is not computed (--level {','.join(levels)})")
    try:
        value = float(parts[-1])
    except ValueError:
        raise JudgelabError(f"--fail-under {text!r}: {parts[-1]!r} is not a number") from None
    if not -1.0 <= value <= 1.0:
        raise JudgelabError(f"--fail-under {text!r}: a correlation bound is between -1 and 1")
    return Threshold(method, level, value, parts[2] if len(parts) == 4 else None)


def threshold_failures(correlations: pd.DataFrame, thresholds: list[Threshold]) -> list[str]:
    """One line per (judge, criterion) whose CI lower bound is below a threshold, or that has no
    interval to check (NaN bound: the gate cannot be passed without one); empty when every gate holds.

    Raises:
        JudgelabError: a threshold naming a criterion the correlations do not have.
    """
    out = []
    for t in thresholds:
        rows = correlations[(correlations["method"] == t.method) & (correlations["level"] == t.level)]
        if t.criterion is not None:
            if t.criterion not in set(correlations["criterion"]):
                raise JudgelabError(f"--fail-under {t}: no criterion {t.criterion!r}; the correlations have: "
                                    f"{', '.join(sorted(set(correlations['criterion'])))}")
            rows = rows[rows["criterion"] == t.criterion]
        for row in rows.itertuples(index=False):
            low = float(row.ci_low)
            where = f"{row.rater}, {row.criterion}, {t.method} at the {t.level} level"
            if math.isnan(low):
                out.append(f"{where}: no 95% interval to check against {t.value:g} ({row.note or 'not computed'})")
            elif low < t.value:
                out.append(f"{where}: CI lower bound {low:.3f} < {t.value:g} (r = {float(row.r):.3f})")
    return out
