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

:func:`jury_vs_judges` puts the jury's correlation with the humans beside each single judge's
(:func:`judgelab.agree.judge_vs_human`, cluster-bootstrap intervals) and the difference between
the jury and the best single judge with a paired interval (the same resamples for both): the
difference of the two correlations in their rows, each on the texts that rater and the humans rated. The best
judge is chosen on the same data, which favours it: the difference is conservative for the jury.

References:
    Verga et al. (2024). Replacing judges with juries (PoLL), §3.
    Lawson & Hanson (1974). Solving Least Squares Problems, ch. 23 (NNLS).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import is_judge, is_jury, jury as jury_of
from judgelab.ratings import is_human, item_means

__all__ = ["JURY_METHODS", "Jury", "jury", "jury_vs_judges"]

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
            h = m[m["rater"].map(is_human)].groupby(["system", "item_id"])["score"].mean()
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


def jury_vs_judges(df: pd.DataFrame, jury_raters: list[str], level: str = "group", method: str = "kendall",
                   criteria: list[str] | None = None, n_resamples: int = 999, seed: int = 0) -> pd.DataFrame:
    """The jury beside every single judge: correlation with the mean human rating, and jury − best judge.

    Args:
        df: the tidy table with the jury's rows (:attr:`Jury.ratings` combined with the ratings).
        jury_raters: the juries' labels (e.g. ``["jury:mean", "jury:weighted"]``).
        level, method: as in :func:`judgelab.stats.correlation.level_correlation` (``group`` with
            HANNA's story prompts as groups is its story level).

    Returns:
        :data:`judgelab.agree.CORRELATION_COLUMNS` for every judge and jury, plus for every jury
        the row ``rater = "<jury> - <best judge>"`` with the paired difference of their two rows' ``r``
        and its interval (``n``: the texts, or per group the groups, of either; the note counts each
        one's texts when they differ).
    """
    from judgelab.agree import judge_vs_human

    table = judge_vs_human(df, (method,), (level,), criteria, n_resamples=n_resamples, seed=seed)
    extra = []
    for crit, t in table.groupby("criterion", sort=True):
        singles = t[~t["rater"].map(is_jury).astype(bool)]
        if singles.empty or singles["r"].isna().all():
            continue
        best = singles.loc[singles["r"].idxmax(), "rater"]
        for jury_rater in jury_raters:
            if jury_rater in set(t["rater"]):
                extra.append(_difference(df, crit, jury_rater, best, level, method, n_resamples, seed))
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True) if extra else table


PAIRED_NOTE = "paired difference, jury minus the best single judge (chosen on the same data)"


def _difference(df, crit, a, b, level, method, n_resamples, seed) -> dict:
    """r(a, humans) − r(b, humans), each on its own items as in its row of :func:`jury_vs_judges` (the
    texts it and the humans rated), with a paired cluster-bootstrap interval (the same resampled groups
    or items for both); the note counts the texts of each when they differ."""
    from judgelab.agree import matched_means
    from judgelab.stats.bootstrap import cluster_bootstrap_ci
    from judgelab.stats.bootstrap_schemes import _fast_r, label_table_ci
    from judgelab.stats.correlation import _group_rs, _with_groups

    means = item_means(df)
    fa, fb = (matched_means(df, r, crit, means).dropna(subset=["score_x", "score_y"]) for r in (a, b))
    row = {"rater": f"{a} - {b}", "criterion": crit, "level": level, "method": method}
    if level == "group":
        ra, rb = (_group_rs(_with_groups(f, [("score_x", "score_y")])[0], method, "b", "score_x", "score_y", "exact")
                  for f in (fa, fb))
        table = pd.concat([ra, rb], axis=1, keys=[0, 1], join="outer").sort_index()
        defined = table.notna().any()
        point = float(table[0].mean() - table[1].mean()) if defined.all() else math.nan
        ci = label_table_ci(table, "group", n_resamples, seed=seed, weights=[1, -1]) \
            if n_resamples > 0 and not math.isnan(point) else None
        row["n"] = row["n_clusters"] = len(table)
    elif level == "overall":
        frame = fa.merge(fb, on=["system", "item_id"], how="outer", suffixes=("_a", "_b"))
        xa, xb = frame["score_x_a"].to_numpy(float), frame["score_x_b"].to_numpy(float)
        y = frame["score_y_a"].fillna(frame["score_y_b"]).to_numpy(float)
        point = _fast_r(xa, y, method, "b", "exact") - _fast_r(xb, y, method, "b", "exact")

        def stat(rows, _c):
            return _fast_r(xa[rows], y[rows], method, "b", "exact") - _fast_r(xb[rows], y[rows], method, "b", "exact")
        ci = cluster_bootstrap_ci(frame, stat, "item_id", n_resamples, seed=seed, rows=True) \
            if n_resamples > 0 and not math.isnan(point) else None
        row["n"], row["n_clusters"] = len(frame), frame["item_id"].nunique()
    else:
        raise JudgelabError("jury difference: level overall or group")
    common = len(fa.merge(fb, on=["system", "item_id"]))
    items = "" if common == len(fa) == len(fb) else (
        f"each r on its own texts, as in its row ({a}: {len(fa)}, {b}: {len(fb)}, {common} rated by both)")
    why = ci.message if ci else "no bootstrap" if n_resamples <= 0 or not math.isnan(point) else \
        "r: one of the two has no defined correlation"
    row.update(r=point, p=math.nan, ci_low=ci.low if ci else math.nan, ci_high=ci.high if ci else math.nan,
               note="; ".join(s for s in (why, PAIRED_NOTE, items) if s))
    return row
