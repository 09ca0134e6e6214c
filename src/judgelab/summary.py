"""Run summaries over the tidy ratings table (Chiang & Lee 2023, Table 1 and section 3.3).

Per rater, system and criterion: number of items, the mean (:func:`score_means`: the mean of the
item means, the one mean judgelab reports for a rater × system × criterion), the SD of all
successful ratings, Krippendorff's alpha (interval, see :data:`TABLE1_ALPHA_LEVEL`) over the
samples as annotators, the share of items where all samples give the same rating, and the count of
failed judgments (which never enter the statistics).
Welch's t-test compares two systems on per-item mean scores (items are the independent
units; the samples of one item are not).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judgelab.stats.agreement import exact_agreement, krippendorff_alpha
from judgelab.status import Status

if TYPE_CHECKING:
    from judgelab.summary_results import ScoreSummary

__all__ = ["sample_matrix", "score_means", "summarize", "score_summary", "judges_summary", "human_summary", "humans_label", "compare_systems", "annotator_agreement", "AnnotatorAgreement",
           "TABLE1_ALPHA_LEVEL"]

#: The level of Krippendorff's alpha in Table 1 of Chiang & Lee (2023), decided once for every
#: table that reproduces it (``summarize`` here and ``recipes.tables.table1``). The paper names no
#: level (§3.3, Table 1 caption: "IAA among three annotators using Krippendorff's α"); it reports the
#: same Likert ratings as mean ± SD, i.e. treats them as interval-scale numbers, so alpha is computed
#: on the same footing: interval (also the default of the ``krippendorff`` package). Ordinal alpha
#: remains available (``krippendorff_alpha(m, "ordinal")``) and is what ``agree``'s self-consistency
#: and the annotation overview report, where no paper table is reproduced.
TABLE1_ALPHA_LEVEL = "interval"


@dataclass(frozen=True)
class AnnotatorAgreement:
    """Table 1's inter-annotator agreement of an annotators × items matrix (unpacks as ``alpha, exact_agreement``).

    Attributes:
        alpha: Krippendorff's alpha at ``level`` (NaN with fewer than two annotators).
        exact_agreement: the share of items on which every annotator gave the same rating (NaN
            with fewer than two annotators).
        level: the level of measurement of ``alpha``.
    """

    alpha: float
    exact_agreement: float
    level: str = TABLE1_ALPHA_LEVEL

    def __iter__(self):  # allows ``alpha, agree = annotator_agreement(...)``
        yield self.alpha
        yield self.exact_agreement

    def to_dict(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "exact_agreement": self.exact_agreement, "level": self.level}


def annotator_agreement(matrix: np.ndarray, level: str = TABLE1_ALPHA_LEVEL) -> AnnotatorAgreement:
    """Table 1's IAA of an annotators × items matrix: alpha and the share of items with full agreement.

    NaN for both when fewer than two annotators exist.

    Example:
        >>> annotator_agreement(np.array([[1, 2, 3, 3], [1, 2, 3, 4]], dtype=float)).exact_agreement
        0.75
    """
    if matrix.shape[0] < 2:
        return AnnotatorAgreement(float("nan"), float("nan"), level)
    return AnnotatorAgreement(krippendorff_alpha(matrix, level), exact_agreement(matrix), level)


def sample_matrix(ratings: pd.DataFrame) -> np.ndarray:
    """Samples × items matrix of scores (NaN where a judgment failed or is missing)."""
    wide = ratings.pivot_table(index="sample", columns="item_id", values="score", aggfunc="first", dropna=False)
    return wide.to_numpy(dtype=float)


def score_means(ratings: pd.DataFrame) -> pd.Series:
    """The mean score of each rater, system and criterion: the mean of its item means.

    Each item's successful samples are averaged first (:func:`judgelab.ratings.item_means`), then
    the items, each weighted equally: an item rated 5, 5, 5 and an item with one valid sample 1
    give 3.0, not the 4.0 of all samples pooled. It is the quantity the intervals over items
    estimate and the one compared with humans' per-item means; ``summary.csv``, the report's
    Results table and its charts show it. Items without a successful sample are left out.

    Returns:
        The means, indexed by ``(rater, system, criterion)``.

    Example:
        >>> df = pd.DataFrame({"item_id": ["a", "a", "a", "b"], "system": "s", "group": None, "criterion": "c",
        ...                    "rater": "j", "sample": [0, 1, 2, 0], "score": [5.0, 5.0, 5.0, 1.0], "status": "ok"})
        >>> float(score_means(df).loc[("j", "s", "c")])
        3.0
    """
    from judgelab.ratings import item_means

    means = item_means(ratings).dropna(subset=["score"])
    return means.groupby(["rater", "system", "criterion"], sort=True)["score"].mean()


def summarize(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (rater, system, criterion) with Table 1's columns and failure counts.

    Args:
        ratings: the tidy ratings table of judges (samples are the annotators).

    Returns:
        ``rater, system, criterion, items, samples, mean, sd, alpha, exact_agreement, failed,
        refusals, failure_rate``: ``mean`` is :func:`score_means` (the mean of item means), ``sd``
        the SD of all successful ratings, alpha at :data:`TABLE1_ALPHA_LEVEL` (Chiang & Lee 2023, Table 1).

    Example:
        >>> summarize(store.ratings())  # doctest: +SKIP
    """
    rows = []
    means = score_means(ratings)
    for (rater, system, criterion), grp in ratings.groupby(["rater", "system", "criterion"], sort=True):
        scores = grp["score"].astype(float)
        ok = scores.dropna()
        n_samples = int(grp["sample"].nunique())
        # one sample has no agreement: its samples × items matrix (a million items: 200 MB) is not made
        iaa = annotator_agreement(sample_matrix(grp)) if n_samples > 1 else AnnotatorAgreement(float("nan"), float("nan"))
        rows.append({
            "rater": rater,
            "system": system,
            "criterion": criterion,
            "items": int(grp["item_id"].nunique()),
            "samples": n_samples,
            "mean": float(means.get((rater, system, criterion), float("nan"))),
            "sd": float(ok.std(ddof=1)) if len(ok) > 1 else float("nan"),
            "alpha": iaa.alpha,
            "exact_agreement": iaa.exact_agreement,
            "failed": int((grp["status"] != Status.OK).sum()),
            "refusals": int((grp["status"] == Status.REFUSAL).sum()),
            "failure_rate": float((grp["status"] != Status.OK).mean()),
        })
    return pd.DataFrame(rows)


def _interval(values: np.ndarray) -> tuple[float | None, float | None, str]:
    """The mean's interval over item means (:func:`judgelab.stats.describe.mean_interval`) and why there is none."""
    from judgelab.stats.describe import mean_interval

    r = mean_interval(values)
    ok = bool(np.isfinite(r.low) and np.isfinite(r.high))
    return (r.low, r.high, "") if ok else (None, None, r.reason)


def score_summary(ratings: pd.DataFrame, summary: pd.DataFrame | None = None) -> "ScoreSummary":
    """:func:`summarize`'s rows with the mean's 95% interval over item means and the judgments per status:
    the summary a rate folder's results.json records and its report shows. ``summary``: :func:`summarize`
    of ``ratings`` when already computed.

    Example:
        >>> df = pd.DataFrame({"item_id": ["a", "b", "c"], "system": "s", "group": None, "criterion": "c",
        ...                    "rater": "j", "sample": 0, "score": [1.0, 2.0, 4.0], "status": "ok"})
        >>> row = score_summary(df).rows[0]
        >>> round(row.mean, 3), row.n, row.statuses
        (2.333, 3, {'ok': 3})
    """
    from judgelab.ratings import item_means
    from judgelab.summary_results import ScoreRow, ScoreSummary

    if ratings.empty:
        return ScoreSummary(())
    per_item = item_means(ratings).dropna(subset=["score"]).groupby(["rater", "system", "criterion"])["score"]
    groups = {k: g.to_numpy(float) for k, g in per_item}
    counts_of: dict[tuple, dict[str, int]] = {}
    for (rater, system, criterion, status), n in ratings.groupby(["rater", "system", "criterion", "status"]).size().items():
        counts_of.setdefault((rater, system, criterion), {})[str(status)] = int(n)
    rows = []
    for rec in (summarize(ratings) if summary is None else summary).itertuples(index=False):
        key = (rec.rater, rec.system, rec.criterion)
        values = groups.get(key, np.array([]))
        low, high, why = _interval(values)
        counts = counts_of.get(key, {})
        rows.append(ScoreRow(str(rec.rater), str(rec.system), str(rec.criterion), int(rec.items), int(values.size),
                             int(rec.samples), _num(rec.mean), low, high, why, _num(rec.sd), _num(rec.alpha),
                             _num(rec.exact_agreement), int(rec.failed), _num(rec.failure_rate), counts))
    return ScoreSummary(tuple(rows), alpha_level=TABLE1_ALPHA_LEVEL)


def judges_summary(ratings: pd.DataFrame) -> dict[str, Any]:
    """The record of :func:`score_summary` over the judges' rows of ``ratings`` (human raters left out): what a
    step that rated records as ``results["summary"]`` for its report's Results section."""
    from judgelab.raters import human_mask

    return score_summary(ratings[~human_mask(ratings["rater"])]).to_record()


def human_summary(humans: pd.DataFrame, raters_per_mean: int | None = None) -> "ScoreSummary":
    """The humans' rows of a summary: per system and criterion the mean over items of the human raters' mean
    (each rater's samples averaged first), with its interval; ``system`` ``(any)`` where none was given.
    ``raters_per_mean``: how many raters each mean of a file of means pools, as the user said (None: unstated)."""
    from judgelab.summary_results import ScoreRow, ScoreSummary

    ok = humans[(humans["status"] == Status.OK) & humans["score"].notna()].copy()
    if ok.empty:
        return ScoreSummary(())
    ok["system"] = ok["system"].where(ok["system"].notna(), "(any)")
    per_rater = ok.groupby(["system", "criterion", "item_id", "rater"])["score"].mean()
    per_item = per_rater.groupby(level=["system", "criterion", "item_id"]).mean()
    rows = []
    for (system, criterion), values in per_item.groupby(level=["system", "criterion"]):
        arr = values.to_numpy(float)
        low, high, why = _interval(arr)
        raters = set(ok[(ok["system"] == system) & (ok["criterion"] == criterion)]["rater"])
        rows.append(ScoreRow(humans_label(raters, raters_per_mean), str(system), str(criterion),
                             int(arr.size), int(arr.size), None, float(arr.mean()), low, high, why))
    return ScoreSummary(tuple(rows))


def humans_label(raters: set[str], raters_per_mean: int | None = None) -> str:
    """The humans' row label: ``humans (mean of N raters)`` counting people; a file of means (``human:mean``) gives
    each item's mean of raters it does not name, so it is never counted as one rater: it pools
    ``raters_per_mean`` raters when the user said so (``agree --raters-per-mean``), else an unstated number."""
    from judgelab.raters import parse_label

    def count(n: int) -> str:
        return f"{n} rater{'s' if n != 1 else ''}"

    people = sum(parse_label(r).kind == "human" for r in raters)
    pooled = count(raters_per_mean) if raters_per_mean else "an unstated number of raters"
    if len(raters) == people:
        return f"humans (mean of {count(people)})"
    if not people:
        return f"humans (mean of {pooled})"
    return f"humans (mean of {count(people)} and the file's means of {pooled} each)"


def _num(value: object) -> float | None:
    v = float(value)  # type: ignore[arg-type]
    return v if np.isfinite(v) else None


def _welch_t(*args, **kwargs):  # scipy.stats is imported only when a comparison is asked for
    from judgelab.stats.tests_twosample import welch_t

    return welch_t(*args, **kwargs)


def compare_systems(ratings: pd.DataFrame, system_a: str, system_b: str) -> pd.DataFrame:
    """Welch's t-test of per-item mean scores, system_a vs system_b, per rater and criterion.

    The one Welch comparison of judgelab (Chiang & Lee 2023, §3.3: human-written vs GPT-2
    stories); ``recipes.chiang_lee.welch_by_writer`` calls it with the human raters pooled.
    Failed judgments (NaN scores) are left out of the item means.

    Returns:
        ``rater, criterion, system_a, system_b, mean_a, mean_b, t, p`` (NaN t/p when a system
        has fewer than two items).

    Example:
        >>> compare_systems(ratings, "human", "gpt2")  # doctest: +SKIP
    """
    rows = []
    for (rater, criterion), grp in ratings.groupby(["rater", "criterion"], sort=True):
        item_means = grp.groupby(["system", "item_id"])["score"].mean()
        a = item_means[item_means.index.get_level_values("system") == system_a]
        b = item_means[item_means.index.get_level_values("system") == system_b]
        res = _welch_t(a.to_numpy(dtype=float), b.to_numpy(dtype=float))
        rows.append({"rater": rater, "criterion": criterion, "system_a": system_a, "system_b": system_b,
                     "mean_a": float(np.nanmean(a)) if len(a) else float("nan"),
                     "mean_b": float(np.nanmean(b)) if len(b) else float("nan"),
                     "t": res.statistic, "p": res.pvalue})
    return pd.DataFrame(rows)
