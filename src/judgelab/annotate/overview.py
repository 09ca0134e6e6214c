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
    import pandas as pd

__all__ = ["AnnotatorProgress", "CriterionAgreement", "JudgeAgreement", "Overview", "overview_of"]


@dataclass(frozen=True)
class AnnotatorProgress:
    """How far one annotator has come: ``done`` of ``total`` items, and when they last submitted."""

    annotator: str
    done: int
    total: int
    last_submitted: str | None


@dataclass(frozen=True)
class CriterionAgreement:
    """Krippendorff's alpha (ordinal) between the annotators on one criterion (Chiang & Lee 2023, Table 1)."""

    criterion: str
    annotators: int
    items_rated_twice: int
    alpha: float
    note: str = ""


@dataclass(frozen=True)
class JudgeAgreement:
    """Correlation of a judge's per-item mean with the mean human rating on the items people have rated."""

    rater: str
    criterion: str
    method: str
    r: float
    p: float
    n: int
    note: str = ""


@dataclass(frozen=True)
class Overview:
    """The annotation session at a glance (:func:`overview_of`): progress per annotator,
    agreement between annotators per criterion, and each judge against the people so far."""

    total_items: int
    human_ratings: int
    annotators: tuple[AnnotatorProgress, ...]
    agreement: tuple[CriterionAgreement, ...]
    judges: tuple[JudgeAgreement, ...]


def overview_of(ratings: "pd.DataFrame", keys: Sequence[ItemKey], outputs: Sequence[str],
                annotators: Sequence[str], done: Mapping[str, int], last: Mapping[str, str]) -> Overview:
    """Progress per annotator, alpha between annotators and judge–human correlations, on the selected items only.

    Krippendorff's alpha uses :func:`judgelab.stats.krippendorff_alpha` (ordinal; items rated by
    one person only drop out); the judge–human correlations are
    :func:`judgelab.agree.judge_vs_human` at the overall level (Kendall's tau-b and Pearson's r).
    """
    import numpy as np

    from judgelab.agree import judge_vs_human
    from judgelab.ratings import is_human
    from judgelab.stats import krippendorff_alpha

    selected = set(keys)
    df = ratings[[(s, i) in selected for s, i in zip(ratings["system"], ratings["item_id"])]]
    df = df[df["criterion"].isin(list(outputs))]
    human = df[df["rater"].map(is_human) & (df["status"] == Status.OK)]
    agreement = []
    for output in outputs:
        sub = human[human["criterion"] == output]
        wide = sub.pivot_table(index="rater", columns=["system", "item_id"], values="score", aggfunc="first")
        twice = int((wide.notna().sum(axis=0) >= 2).sum()) if not wide.empty else 0
        if wide.shape[0] < 2 or twice == 0:
            agreement.append(CriterionAgreement(output, int(wide.shape[0]), twice, float("nan"),
                                                "needs two annotators on a common item"))
            continue
        alpha = krippendorff_alpha(wide.to_numpy(dtype=float), "ordinal")
        agreement.append(CriterionAgreement(output, int(wide.shape[0]), twice, alpha,
                                            "" if not np.isnan(alpha) else "every rating is the same"))
    judges: list[JudgeAgreement] = []
    if not human.empty and (~df["rater"].map(is_human)).any():
        present = sorted(set(human["criterion"]) & set(df.loc[~df["rater"].map(is_human), "criterion"]))
        if present:
            table = judge_vs_human(df, ("kendall", "pearson"), ("overall",), criteria=present)
            for row in table.itertuples(index=False):
                judges.append(JudgeAgreement(row.rater, row.criterion, row.method, float(row.r), float(row.p), int(row.n),
                                             row.note or ""))
    people = tuple(AnnotatorProgress(a, int(done.get(a, 0)), len(keys), last.get(a)) for a in annotators)
    return Overview(len(keys), int(len(human)), people, tuple(agreement), tuple(judges))
