"""The shift between two raters on the same items: constrained against free ratings (issue 22, point 5).

Constrained decoding (a grammar, a JSON schema) changes which answers a judge can give, and it is
known to move score distributions; :func:`paired_shift` measures by how much on the items both
raters rated. Units are matched by their labels — ``(item_id, system, criterion)`` — never by
position; a unit enters when both raters have an ``ok`` rating of it (each rater's samples
averaged). The differences (second − first) are averaged within each cluster (``item_id`` by
default: an item with all its systems, as the audit's bootstrap resamples it), and the mean shift
is the mean of the cluster means with Student's t interval over the clusters
(:func:`judgelab.stats.describe.mean_interval`; equal to ``scipy.stats.ttest_rel`` on the
clusters' mean ratings, tested). Each cluster weighs the same; with balanced clusters (every item
with the same systems and criteria) that is the mean over units.

Beside the shift: each rater's failed judgments (a parse failure is a failure; the point of
constraining is to have none), and each scale point's share of the ``ok`` ratings of the paired
units for both raters (scores rounded half up to a point), so that a change of shape (the
constrained judge piling onto one point) is seen, not only a change of mean.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import CONSTRAINED, free_twin, undigested
from judgelab.stats.describe import mean_interval

__all__ = ["PairedShift", "ShiftReport", "paired_shift", "SHIFT_COLUMNS", "POINT_COLUMNS", "CONSTRAINED_SUFFIX",
           "constrained_pairs", "constrained_shift"]

SHIFT_COLUMNS = ["first", "second", "criterion", "estimate", "ci_low", "ci_high", "statistic", "pvalue", "df", "n",
                 "n_clusters", "unpaired", "failed_first", "judgments_first", "failed_second", "judgments_second",
                 "note", "line"]
POINT_COLUMNS = ["first", "second", "criterion", "point", "share_first", "share_second", "difference"]
_KEYS = ["item_id", "system", "criterion"]
_NAN = float("nan")


@dataclass(frozen=True)
class PairedShift:
    """The mean shift of ``second`` against ``first`` on one criterion (or ``all``) of paired units.

    Attributes:
        first, second: the two raters (e.g. the free and the constrained judge).
        criterion: the criterion, or ``all`` (every criterion's units, clustered by item).
        estimate, ci_low, ci_high: the mean of the clusters' mean differences (second − first) and
            its t interval (NaN bounds: ``note`` says why).
        statistic, pvalue, df: the paired t test of no shift over the clusters.
        n: paired units; n_clusters: clusters (items) behind the interval.
        unpaired: units rated ``ok`` by one rater only (left out).
        failed_first, judgments_first, failed_second, judgments_second: each rater's judgments on
            the criterion and those not ``ok`` (parse failures, refusals, errors).
        points: ``(point, share_first, share_second)`` of the paired units' ``ok`` ratings.
        confidence_level: the interval's level.
        note: caveats.
    """

    first: str
    second: str
    criterion: str
    estimate: float
    ci_low: float
    ci_high: float
    statistic: float
    pvalue: float
    df: int
    n: int
    n_clusters: int
    unpaired: int
    failed_first: int
    judgments_first: int
    failed_second: int
    judgments_second: int
    points: tuple[tuple[float, float, float], ...] = ()
    confidence_level: float = 0.95
    note: str = ""

    @property
    def line(self) -> str:
        """One plain-language sentence."""
        fails = (f"failed judgments: {self.failed_first} of {self.judgments_first} ({self.first}), "
                 f"{self.failed_second} of {self.judgments_second} ({self.second})")
        if math.isnan(self.estimate):
            return f"{self.criterion}: {self.second} vs {self.first}: no shift ({self.note}); {fails}"
        level = f"{self.confidence_level:.0%}"
        if math.isnan(self.ci_low):
            interval = f"no {level} interval: {self.note}"
        else:
            interval = f"{level} CI {self.ci_low:+.2f} to {self.ci_high:+.2f}" + (f"; {self.note}" if self.note else "")
        return (f"{self.criterion}: {self.second} rates {self.estimate:+.2f} points against {self.first} on the "
                f"same {self.n} texts of {self.n_clusters} items ({interval}); {fails}")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["points"] = [list(p) for p in self.points]
        out["line"] = self.line
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row in :data:`SHIFT_COLUMNS`."""
        row = {k: v for k, v in self.to_dict().items() if k in SHIFT_COLUMNS}
        return pd.DataFrame([row], columns=SHIFT_COLUMNS)

    def points_frame(self) -> pd.DataFrame:
        """The scale points' shares, one row per point (:data:`POINT_COLUMNS`)."""
        rows = [{"first": self.first, "second": self.second, "criterion": self.criterion, "point": p,
                 "share_first": a, "share_second": b, "difference": b - a} for p, a, b in self.points]
        return pd.DataFrame(rows, columns=POINT_COLUMNS)


def paired_shift(ratings: pd.DataFrame, first: str, second: str, criteria: list[str] | None = None,
                 cluster: str = "item_id", confidence_level: float = 0.95) -> list[PairedShift]:
    """The shift of ``second`` against ``first`` per criterion and over all criteria (module docstring).

    Args:
        ratings: the tidy ratings table (``item_id, system, criterion, rater, sample, score, status``).
        first, second: the raters (the shift is second − first).
        criteria: the criteria (default: every criterion either rater rated).
        cluster: the column whose values are independent units (``item_id``; ``system`` pairs
            within an item are not independent).
        confidence_level: the interval's level.

    Returns:
        One :class:`PairedShift` per criterion, then ``all`` when there are two or more criteria.

    Raises:
        JudgelabError: a rater is not in the table, or the two are the same.

    Example:
        >>> import pandas as pd
        >>> rows = [dict(item_id=str(i), system="s", criterion="c", rater=r, sample=0, score=s, status="ok")
        ...         for i in range(6) for r, s in (("free", 3 + i % 2), ("free+constrained", 4 + i % 3 // 2))]
        >>> shift = paired_shift(pd.DataFrame(rows), "free", "free+constrained")[0]
        >>> round(shift.estimate, 3), shift.n, shift.n_clusters
        (0.833, 6, 6)
    """
    if first == second:
        raise JudgelabError(f"compare two different raters, not {first!r} with itself")
    for rater in (first, second):
        if rater not in set(ratings["rater"]):
            raise JudgelabError(f"rater {rater!r} is not in the ratings (raters: {', '.join(sorted(set(ratings['rater'])))})")
    both = ratings[ratings["rater"].isin([first, second])].copy()
    for column in _KEYS + [cluster]:
        if column not in both.columns:
            raise JudgelabError(f"the ratings have no {column!r} column")
    both["system"] = both["system"].fillna("").astype(str)
    both["item_id"] = both["item_id"].astype(str)
    chosen = criteria or sorted(set(both["criterion"]))
    unknown = sorted(set(chosen) - set(both["criterion"]))
    if unknown:
        raise JudgelabError(f"{first} and {second} have no ratings of {', '.join(map(repr, unknown))} (criteria: "
                            f"{', '.join(sorted(set(both['criterion'])))})")
    out = [_shift(both, first, second, [c], c, cluster, confidence_level) for c in chosen]
    if len(chosen) > 1:
        out.append(_shift(both, first, second, chosen, "all", cluster, confidence_level))
    return out


def _shift(both: pd.DataFrame, first: str, second: str, criteria: list[str], name: str, cluster: str,
           confidence_level: float) -> PairedShift:
    rows = both[both["criterion"].isin(criteria)]
    ok = rows[(rows["status"] == "ok") & rows["score"].notna()]
    counts = {r: (int((rows["rater"] == r).sum()), int(((rows["rater"] == r) & (rows["status"] != "ok")).sum()))
              for r in (first, second)}
    levels = _KEYS + ([cluster] if cluster not in _KEYS else [])
    means = ok.groupby(["rater"] + levels)["score"].mean()
    wide = (means.unstack("rater") if len(means) else  # every judgment failed: no unit, the same index names
            pd.DataFrame(columns=[first, second], index=pd.MultiIndex.from_tuples([], names=levels), dtype=float))
    for r in (first, second):
        if r not in wide.columns:
            wide[r] = np.nan
    paired = wide.dropna(subset=[first, second])
    unpaired = int(wide[[first, second]].notna().sum(axis=1).eq(1).sum())
    notes: list[str] = []
    if unpaired:
        notes.append(f"{unpaired} texts rated ok by one rater only left out")
    keys = paired.index.to_frame(index=False)
    diffs = pd.Series((paired[second] - paired[first]).to_numpy(float), index=keys[cluster].astype(str).to_numpy())
    by_cluster = diffs.groupby(level=0).mean()
    interval = mean_interval(by_cluster.to_numpy(), confidence_level)
    k = int(by_cluster.size)
    statistic = pvalue = _NAN
    if k == 0:
        notes.insert(0, "no text rated ok by both raters")
    elif interval.reason:
        notes.append(interval.reason)
    elif k >= 2:
        sd = float(by_cluster.std(ddof=1))
        statistic = interval.mean / (sd / math.sqrt(k))
        from scipy import special

        pvalue = float(2 * special.stdtr(k - 1, -abs(statistic)))
        if k < 5:
            notes.append(f"{k} items: the t interval rests on the per-item differences being near normal")
    points = _points(ok, paired.index, first, second, cluster)
    return PairedShift(first, second, name, interval.mean, interval.low, interval.high, statistic, pvalue,
                       max(k - 1, 0), int(len(paired)), k, unpaired, counts[first][1], counts[first][0],
                       counts[second][1], counts[second][0], points, confidence_level, "; ".join(notes))


def _points(ok: pd.DataFrame, units: pd.Index, first: str, second: str, cluster: str) -> tuple[tuple[float, float, float], ...]:
    """Each scale point's share of the paired units' ok ratings, for both raters (rounded half up)."""
    if not len(units):
        return ()
    names = list(units.names)
    keyed = ok.set_index(names)
    inside = keyed[keyed.index.isin(units)]
    rounded = np.floor(inside["score"].to_numpy(float) + 0.5)
    table = pd.crosstab(inside["rater"].to_numpy(), rounded)
    shares = table.div(table.sum(axis=1), axis=0)
    return tuple((float(p), float(shares.loc[first, p]) if first in shares.index else _NAN,
                  float(shares.loc[second, p]) if second in shares.index else _NAN) for p in sorted(shares.columns))


@dataclass(frozen=True)
class ShiftReport:
    """The shifts of every compared pair of raters (:func:`constrained_shift`)."""

    shifts: tuple[PairedShift, ...]
    pairs: tuple[tuple[str, str], ...] = ()

    def tables(self) -> dict[str, pd.DataFrame]:
        """``constrained_shift`` (one row per pair and criterion) and ``constrained_points`` (the
        scale points' shares)."""
        shift = (pd.concat([s.to_frame() for s in self.shifts], ignore_index=True) if self.shifts
                 else pd.DataFrame(columns=SHIFT_COLUMNS))
        points = (pd.concat([s.points_frame() for s in self.shifts], ignore_index=True) if self.shifts
                  else pd.DataFrame(columns=POINT_COLUMNS))
        return {"constrained_shift": shift, "constrained_points": points}

    def lines(self) -> list[str]:
        """One plain-language line per pair and criterion."""
        return [s.line for s in self.shifts]

    def to_dict(self) -> dict[str, Any]:
        return {"pairs": [list(p) for p in self.pairs], "shifts": [s.to_dict() for s in self.shifts]}


# -- which raters to compare: a free judge and its constrained twin (``audit --compare``) ------------

#: The label suffix of a constrained run (:meth:`judgelab.spec.RunSpec.preferred_label`).
CONSTRAINED_SUFFIX = "+" + CONSTRAINED


def constrained_pairs(raters) -> list[tuple[str, str]]:
    """(free, constrained) pairs found by label: every ``X+constrained…`` whose free twin ``X…`` is present.
    A label's ``#digest`` suffix (a preferred label already taken by other settings) is ignored when
    exactly one free rater then matches; with several, name the pair with ``--compare``.

    Example:
        >>> constrained_pairs(["m@t", "m@t+constrained", "other+constrained"])
        [('m@t', 'm@t+constrained')]
        >>> constrained_pairs(["m@t#1a2b3c", "m@t+constrained"])
        [('m@t#1a2b3c', 'm@t+constrained')]
    """
    present = {str(r) for r in raters}
    out = []
    for label in sorted(present):
        free = free_twin(label)
        if free is None:
            continue
        if free in present:
            out.append((free, label))
            continue
        base = undigested(free)
        twins = [r for r in present if free_twin(r) is None and undigested(r) == base]
        if len(twins) == 1:
            out.append((twins[0], label))
    return out


def constrained_shift(ratings: pd.DataFrame, compare: list[tuple[str, str]] | None = None,
                      criteria: list[str] | None = None, confidence_level: float = 0.95):
    """The shift of each constrained rater against its free twin on the same texts
    (:func:`paired_shift`: matched by item, system and criterion; t
    interval over items), plus each one's failed judgments and scale-point shares.

    Args:
        ratings: the tidy ratings table.
        compare: ``(first, second)`` rater pairs (the shift is second − first); default: every
            rater with its ``+constrained`` twin (:func:`constrained_pairs`).
        criteria: the criteria (default: all).

    Returns:
        A :class:`ShiftReport` (no shifts when no pair is found).
    """
    pairs = compare if compare is not None else constrained_pairs(ratings["rater"].unique())
    shifts = [s for first, second in pairs
              for s in paired_shift(ratings, first, second, criteria, confidence_level=confidence_level)]
    return ShiftReport(tuple(shifts), tuple(pairs))
