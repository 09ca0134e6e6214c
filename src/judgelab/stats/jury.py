"""A jury rater: several judges' ratings combined into one rater of the tidy table.

Methods (each a rater ``jury:<method>``):

* ``mean`` and ``median`` of the judges' item means (the judges an item has);
* ``majority``: the most frequent scale point among the judges' scores rounded half up; a tie
  goes to the tied point closest to the judges' mean (the lower one when still tied);
* ``weighted``: a linear combination learned from agreement with the humans — non-negative least
  squares of the mean human rating on the judges' scores with an intercept (Lawson–Hanson NNLS,
  :func:`scipy.optimize.nnls`, on centred values) — cross-validated: the human-rated items are
  split into ``folds`` folds by ``item_id`` (all systems of an item together), and each fold's
  jury ratings use weights learned on the other folds, so no item's own human rating sets the
  weight that rates it. Items without a human rating use weights learned on all human-rated items.

:func:`judgelab.jury_agreement.jury_vs_judges` puts the jury's correlation with the humans beside
each single judge's (:func:`judgelab.agree.judge_vs_human`, cluster-bootstrap intervals) and the difference between
the jury and the best single judge with a paired interval (the same resamples for both): the
difference of the two correlations in their rows, each on the texts that rater and the humans rated. The best
judge is chosen on the same data, which favours it: the difference is conservative for the jury.

References:
    Verga et al. (2024). Replacing judges with juries (PoLL), §3.
    Lawson & Hanson (1974). Solving Least Squares Problems, ch. 23 (NNLS).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import is_judge, jury as jury_of, human_mask
from judgelab.ratings import item_means

__all__ = ["JURY_METHODS", "Jury", "jury"]

JURY_METHODS = ("mean", "median", "majority", "weighted")


@dataclass(frozen=True)
class Jury:
    """The jury's ratings and the learned weights.

    Attributes:
        ratings: tidy rows of the raters ``jury:<method>`` (``TIDY_COLUMNS``).
        weights: ``criterion, fold, judge, weight, intercept`` of the weighted jury (fold ``all``:
            the weights for items without a human rating); empty without ``weighted``.
        judges: the judges combined.
    """

    ratings: pd.DataFrame
    weights: pd.DataFrame
    judges: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        return self.ratings

    def to_dict(self) -> dict:
        return {"judges": list(self.judges), "weights": self.weights.to_dict(orient="records")}


def _majority(values: np.ndarray) -> np.ndarray:
    out = np.full(len(values), np.nan)
    for i, row in enumerate(values):
        row = row[~np.isnan(row)]
        if row.size == 0:
            continue
        pts, counts = np.unique(np.floor(row + 0.5), return_counts=True)
        tied = pts[counts == counts.max()]
        out[i] = tied[np.argmin(np.abs(tied - row.mean()))]  # argmin: the lower of two equally close
    return out


def _nnls_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from scipy.optimize import nnls

    mx, my = x.mean(0), y.mean()
    w, _ = nnls(x - mx, y - my)
    return w, float(my - mx @ w)


def jury(df: pd.DataFrame, judges: list[str] | None = None, methods=JURY_METHODS, folds: int = 5,
         seed: int = 0) -> Jury:
    """Combine judges into jury raters (see the module docstring).

    Args:
        df: the tidy ratings table.
        judges: the judges to combine (default: every rater that is not human).
        methods: among :data:`JURY_METHODS`.
        folds: cross-validation folds of the weighted jury (over human-rated items).
        seed: seeds the assignment of items to folds.

    Returns:
        A :class:`Jury`.

    Raises:
        JudgelabError: fewer than two judges, an unknown judge or method, or ``weighted`` without
            enough human-rated items for ``folds`` folds.
    """
    known = sorted(r for r in df["rater"].unique() if is_judge(r))
    judges = known if judges is None else list(judges)
    unknown = [j for j in judges if j not in known]
    if unknown:
        raise JudgelabError(f"jury: no judge {', '.join(map(repr, unknown))}; judges: {', '.join(known)}")
    if len(judges) < 2:
        raise JudgelabError(f"jury: needs two or more judges, got {len(judges)}")
    bad = [m for m in methods if m not in JURY_METHODS]
    if bad:
        raise JudgelabError(f"jury: unknown method {', '.join(bad)}: {', '.join(JURY_METHODS)}")
    if "weighted" in methods and folds < 2:
        raise JudgelabError("jury: the weighted jury needs two or more folds")
    means = item_means(df)
    rows, weights = [], []
    for crit in sorted(means["criterion"].unique()):
        m = means[means["criterion"] == crit]
        wide = m[m["rater"].isin(judges)].pivot_table(index=["system", "item_id"], columns="rater", values="score")
        if wide.empty:
            continue
        wide = wide.reindex(columns=judges)
        group = m.groupby(["system", "item_id"])["group"].first()
        x = wide.to_numpy(float)
        out: dict[str, np.ndarray] = {}
        with np.errstate(all="ignore"):
            if "mean" in methods:
                out["mean"] = np.nanmean(x, axis=1)
            if "median" in methods:
                out["median"] = np.nanmedian(x, axis=1)
        if "majority" in methods:
            out["majority"] = _majority(x)
        if "weighted" in methods:
            h = m[human_mask(m["rater"])].groupby(["system", "item_id"])["score"].mean()
            out["weighted"], w = _weighted(wide, h.reindex(wide.index), folds, seed, crit, judges)
            weights += w
        for method, values in out.items():
            rows.append(pd.DataFrame({
                "item_id": wide.index.get_level_values("item_id"), "system": wide.index.get_level_values("system"),
                "group": group.reindex(wide.index).to_numpy(), "criterion": crit, "rater": jury_of(method).label,
                "sample": 0, "score": values, "status": np.where(np.isnan(values), "missing", "ok")}))
    ratings = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(df.columns))
    wcols = ["criterion", "fold", "judge", "weight", "intercept"]
    return Jury(ratings, pd.DataFrame(weights, columns=wcols), tuple(judges))


def _weighted(wide: pd.DataFrame, human: pd.Series, folds: int, seed: int, crit: str, judges: list[str]):
    x = wide.to_numpy(float)
    h = human.to_numpy(float)
    complete = ~np.isnan(x).any(axis=1)
    rated = complete & ~np.isnan(h)
    items = np.asarray(wide.index.get_level_values("item_id"))
    rated_items = np.unique(items[rated])
    if len(rated_items) < 2 * folds:
        raise JudgelabError(f"jury: criterion {crit!r} has {len(rated_items)} human-rated items with every judge's "
                            f"score; the weighted jury needs at least {2 * folds} for {folds} folds")
    rng = np.random.default_rng(seed)
    fold_of = dict(zip(rng.permutation(rated_items), np.arange(len(rated_items)) % folds))
    fold = np.array([fold_of.get(i, -1) for i in items])
    pred = np.full(len(x), np.nan)
    table = []
    for f in [*range(folds), -1]:
        train = rated & (fold != f) if f >= 0 else rated
        w, b = _nnls_fit(x[train], h[train])
        target = complete & (fold == f) if f >= 0 else complete & (fold == -1)
        pred[target] = x[target] @ w + b
        table += [{"criterion": crit, "fold": str(f) if f >= 0 else "all", "judge": j, "weight": float(wj),
                   "intercept": b} for j, wj in zip(judges, w)]
    return pred, table
