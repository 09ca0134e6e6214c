"""The organiser's overview: progress per annotator, agreement between annotators, judge and humans.

Krippendorff's alpha (ordinal) between the annotators per question, as Chiang & Lee (2023,
§3.3, Table 1) report the agreement of their raters, and the correlation of each judge with the
mean human rating on the items rated so far (:func:`judgelab.agree.judge_vs_human`, overall
level). Pure: a ratings table in, a frozen :class:`Overview` out.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

from judgelab.annotate.selection import ItemKey
from judgelab.status import Status

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from judgelab.stats.bootstrap import ConfidenceInterval

__all__ = ["AnnotatorProgress", "CriterionAgreement", "JudgeAgreement", "Overview", "overview_of", "alpha_with_interval",
           "AlphaInterval"]


@dataclass(frozen=True)
class AnnotatorProgress:
    """How far one annotator has come: ``done`` of ``total`` items, and when they last submitted."""

    annotator: str
    done: int
    total: int
    last_submitted: str | None


@dataclass(frozen=True)
class _Estimate:
    """How an estimate on ``items`` items is shown: the number with its interval, or words when n is too small.

    Below :data:`judgelab.stats.bootstrap.MIN_CLUSTERS` items the number is not shown at all (on 2
    items an alpha of -0.417 or an r of -1.000 says nothing); from there on it is shown with its
    bootstrap interval, or with the reason there is none, and the caution the interval carries
    under :data:`judgelab.stats.bootstrap.FEW_CLUSTERS` items.
    """

    estimate: float
    items: int
    ci_low: float
    ci_high: float
    note: str

    @property
    def shown(self) -> bool:
        """Whether the number may be printed: defined, and on enough items."""
        from judgelab.stats.bootstrap import MIN_CLUSTERS

        return self.estimate == self.estimate and self.items >= MIN_CLUSTERS

    @property
    def has_interval(self) -> bool:
        return self.ci_low == self.ci_low and self.ci_high == self.ci_high

    @property
    def in_words(self) -> str:
        """What the table says instead of a number that is not shown ("" when it is shown)."""
        from judgelab.stats.bootstrap import MIN_CLUSTERS

        if self.shown:
            return ""
        if self.items < MIN_CLUSTERS:
            return (f"too few items ({self.items}; at least {MIN_CLUSTERS} needed): no number yet"
                    if self.items else "no common items yet")
        return "undefined"


@dataclass(frozen=True)
class CriterionAgreement(_Estimate):
    """Krippendorff's alpha (ordinal) between the annotators on one criterion (Chiang & Lee 2023, Table 1).

    Attributes:
        criterion: the criterion (question).
        annotators: people who rated it.
        items: items rated by two or more of them (the items alpha uses; the bootstrap resamples them).
        estimate: alpha (NaN when undefined).
        ci_low, ci_high: 95% bootstrap interval over the items (expanded percentile; NaN: see ``note``).
        note: why alpha or its interval is missing, or the caution on the interval.
    """

    criterion: str = ""
    annotators: int = 0

    @property
    def alpha(self) -> float:
        return self.estimate

    @property
    def items_rated_twice(self) -> int:
        return self.items


@dataclass(frozen=True)
class JudgeAgreement(_Estimate):
    """Correlation of a judge's per-item mean with the mean human rating on the items people have rated.

    Attributes:
        rater, criterion, method: the judge, the criterion, ``kendall`` or ``pearson``.
        estimate: the correlation (NaN when undefined); p: its two-sided p-value.
        n: rated texts (system × item) in the correlation; items: items (the bootstrap's clusters).
        ci_low, ci_high: 95% cluster-bootstrap interval (expanded percentile; NaN: see ``note``).
        note: why r or its interval is missing, or the caution on the interval.
    """

    rater: str = ""
    criterion: str = ""
    method: str = ""
    p: float = float("nan")
    n: int = 0

    @property
    def r(self) -> float:
        return self.estimate


@dataclass(frozen=True)
class Overview:
    """The annotation session at a glance (:func:`overview_of`): progress per annotator,
    agreement between annotators per criterion, and each judge against the people so far."""

    total_items: int
    human_ratings: int
    annotators: tuple[AnnotatorProgress, ...]
    agreement: tuple[CriterionAgreement, ...]
    judges: tuple[JudgeAgreement, ...]


@dataclass(frozen=True)
class AlphaInterval:
    """Krippendorff's alpha between annotators with its bootstrap interval over the items (unpacks as ``alpha, ci``).

    Attributes:
        alpha: ordinal alpha (NaN when undefined, e.g. every rating the same).
        ci: the interval (``ci.low``, ``ci.high``; ``ci.message`` says why it is NaN, or its caution).
    """

    alpha: float
    ci: "ConfidenceInterval"

    def __iter__(self):  # allows ``alpha, ci = alpha_with_interval(...)``
        yield self.alpha
        yield self.ci


def alpha_with_interval(wide: "np.ndarray", n_resamples: int = 999, seed: int = 0) -> AlphaInterval:
    """Krippendorff's alpha (ordinal) of a raters × items matrix and its 95% bootstrap interval over the items.

    The items (columns with two or more ratings) are resampled with replacement, each with all its
    ratings (:func:`judgelab.stats.bootstrap.cluster_bootstrap_ci`, expanded percentile), so the
    interval has the stats' own limits: none from fewer than 5 items, a caution under 20.
    """
    import numpy as np
    import pandas as pd

    from judgelab.stats import krippendorff_alpha
    from judgelab.stats.bootstrap import cluster_bootstrap_ci

    matrix = wide[:, (~np.isnan(wide)).sum(axis=0) >= 2]
    alpha = krippendorff_alpha(matrix, "ordinal") if matrix.size else float("nan")
    frame = pd.DataFrame({"item": np.arange(matrix.shape[1])})
    ci = cluster_bootstrap_ci(frame, lambda rows, _clusters: krippendorff_alpha(matrix[:, rows], "ordinal"), "item",
                              n_resamples=n_resamples, seed=seed, method="expanded", rows=True)
    return AlphaInterval(alpha, ci)


def overview_of(ratings: "pd.DataFrame", keys: Sequence[ItemKey], outputs: Sequence[str],
                annotators: Sequence[str], done: Mapping[str, int], last: Mapping[str, str]) -> Overview:
    """Progress per annotator, alpha between annotators and judge–human correlations, on the selected items only.

    Krippendorff's alpha uses :func:`judgelab.stats.krippendorff_alpha` (ordinal; items rated by
    one person only drop out) with a bootstrap interval over the items (:func:`alpha_with_interval`);
    the judge–human correlations are :func:`judgelab.agree.judge_vs_human` at the overall level
    (Kendall's tau-b and Pearson's r, expanded-percentile cluster-bootstrap intervals). Each carries
    the number of items it rests on; with too few the page says so in words (:class:`_Estimate`).
    """
    import numpy as np

    from judgelab.agree import judge_vs_human
    from judgelab.raters import human_mask

    selected = set(keys)
    # a boolean array, not a list: an empty list would select no columns of an empty store's table
    mask = np.fromiter(((s, i) in selected for s, i in zip(ratings["system"], ratings["item_id"])), bool, len(ratings))
    df = ratings.loc[mask]
    df = df[df["criterion"].isin(list(outputs))]
    human = df[human_mask(df["rater"]) & (df["status"] == Status.OK)]
    agreement = []
    nan = float("nan")
    for output in outputs:
        sub = human[human["criterion"] == output]
        wide = sub.pivot_table(index="rater", columns=["system", "item_id"], values="score", aggfunc="first")
        twice = int((wide.notna().sum(axis=0) >= 2).sum()) if not wide.empty else 0
        people = int(wide.shape[0])
        if people < 2 or twice == 0:
            agreement.append(CriterionAgreement(estimate=nan, items=twice, ci_low=nan, ci_high=nan, criterion=output,
                                                annotators=people, note="needs two annotators on a common item"))
            continue
        iaa = alpha_with_interval(wide.to_numpy(dtype=float))
        note = "every rating is the same: alpha is undefined" if np.isnan(iaa.alpha) else iaa.ci.message
        agreement.append(CriterionAgreement(estimate=iaa.alpha, items=twice, ci_low=iaa.ci.low, ci_high=iaa.ci.high, note=note,
                                            criterion=output, annotators=people))
    judges: list[JudgeAgreement] = []
    if not human.empty and (~human_mask(df["rater"])).any():
        present = sorted(set(human["criterion"]) & set(df.loc[~human_mask(df["rater"]), "criterion"]))
        if present:
            table = judge_vs_human(df, ("kendall", "pearson"), ("overall",), criteria=present, ci_method="expanded")
            for row in table.itertuples(index=False):
                judges.append(JudgeAgreement(estimate=float(row.r), items=int(row.n_clusters), ci_low=float(row.ci_low),
                                             ci_high=float(row.ci_high), note=row.note or "", rater=row.rater,
                                             criterion=row.criterion, method=row.method, p=float(row.p), n=int(row.n)))
    progress = tuple(AnnotatorProgress(a, int(done.get(a, 0)), len(keys), last.get(a)) for a in annotators)
    return Overview(len(keys), int(len(human)), progress, tuple(agreement), tuple(judges))
