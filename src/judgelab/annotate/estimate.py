"""A few human ratings and the judge on every item: corrected estimates, the Alt-Test and the planner.

For each system and criterion (pure: a ratings table in, the frozen dataclasses of
:mod:`judgelab.annotate.estimate_results` out):

* **PPI++ mean** (Angelopoulos et al. 2023, Science 382:669; Angelopoulos, Duchi & Zrnic 2024,
  arXiv:2311.01453) through :func:`judgelab.stats.ppi.ppi_mean`: the judge's prediction for an
  item is the mean of its successful samples, the human label the mean over the annotators who
  rated it. Items with a human label are the labelled set; items the judge rated and no person
  did are the unlabelled set. Beside it the human-only and the (biased) judge-only intervals.
* **The difference between two systems** through :func:`judgelab.stats.ppi.ppi_mean_difference`
  (each system's own power-tuning weight). When the two systems share item ids (the same prompt
  or source for both) the design is paired and the interval, which ignores the pairing, is
  conservative when the pairing correlates positively; the result says so.
* **The Alternative Annotator Test** (Calderon, Reichart & Dror, ACL 2025) through
  :func:`judgelab.stats.alternative_annotator.alt_test`, per criterion over all systems' items, when at
  least three annotators rated common items; otherwise the reason it cannot run.
* **The planner** (:func:`judgelab.stats.ppi_plan.plan_ppi_mean`, :func:`plan_ppi_difference`): how
  many human-rated items a target half-width needs, from the pairs rated so far as the pilot
  (the number of judge-only items is held at today's; the prediction ignores the noise of the
  pilot's moments), and from which number on the interval keeps its level (``valid_from``).

The intervals are small-sample t intervals by default (``quantile="t"``: about 95% coverage at
10 human-rated items per system in simulation); ``quantile="normal"`` gives ppi-python's normal
intervals, which cover 87–90% at 10 and are trusted from 50 (docs/intervals.md).

PPI is valid only when the human-rated items are a uniform random sample of each system's
items the judge rated (``judgelab annotate --sample random:N --stratify-by-system``); a
selection by disagreement or by hand is not, and the results carry that warning.
"""
from __future__ import annotations

import itertools
import math
from typing import Sequence

import numpy as np
import pandas as pd

from judgelab.annotate.estimate_results import (AltTestOutcome, DifferenceEstimate, HumanEstimates, PlanOutcome,
                                                SystemEstimate)
from judgelab.errors import JudgelabError
from judgelab.ratings import is_human, item_means
from judgelab.raters import human_mask
from judgelab.stats.alternative_annotator import alt_test
from judgelab.stats.ppi import ppi_mean, ppi_mean_difference
from judgelab.stats.ppi_core import minimum_sizes
from judgelab.stats.ppi_plan import PPIPlan, plan_ppi_difference, plan_ppi_mean

__all__ = ["human_estimates", "choose_judge"]


def choose_judge(ratings: pd.DataFrame, judge: str | None = None) -> str:
    """The judge (non-human rater) to use: the one given, or the only one in the ratings."""
    judges = sorted({str(r) for r in ratings["rater"].unique() if not is_human(r)})
    if judge is not None:
        if judge not in judges:
            raise JudgelabError(f"no ratings by judge {judge!r}; the ratings have: {', '.join(judges) or 'no judge'}")
        return judge
    if not judges:
        raise JudgelabError("no judge ratings (a rater not named human:<id>): run `judgelab rate` on the same items first")
    if len(judges) > 1:
        raise JudgelabError(f"the ratings hold several judges ({', '.join(judges)}); choose one with --judge-rater")
    return judges[0]


def _series(means: pd.DataFrame, criterion: str, system: str) -> pd.Series:
    sub = means[(means["criterion"] == criterion) & (means["system"] == system)]
    return sub.set_index("item_id")["score"].dropna().sort_index()


def _split(judge: pd.Series, human: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    labelled = sorted(set(judge.index) & set(human.index))
    unlabelled = sorted(set(judge.index) - set(human.index))
    return (human.loc[labelled].to_numpy(float), judge.loc[labelled].to_numpy(float),
            judge.loc[unlabelled].to_numpy(float), labelled)


def human_estimates(ratings: pd.DataFrame, *, judge: str | None = None, criteria: Sequence[str] | None = None,
                    systems: Sequence[str] | None = None, target_half_width: float | None = None, alpha: float = 0.05,
                    epsilon: float = 0.2, alt_min_items: int = 30, uniform_sample: bool | None = None,
                    quantile: str = "t") -> HumanEstimates:
    """PPI++ means and differences, the Alt-Test and the planner for one judge against the people.

    Args:
        ratings: the tidy ratings table with the judge's rows and human rows (``human:<id>``).
        judge: the judge's rater label (default: the only non-human rater).
        criteria: criteria to estimate (default: every criterion that has judge and human ratings).
        systems: systems to estimate, in this order; differences are taken for every pair, first
            minus second (default: every system the judge rated, sorted).
        target_half_width: plan how many human ratings reach this half-width (per system mean and
            per difference).
        alpha: error level of the intervals (default 0.05: 95% intervals).
        epsilon: the Alt-Test's cost-benefit margin (0.2 for experts, 0.15 skilled, 0.1 crowd).
        alt_min_items: items an annotator needs to be tested by the Alt-Test (the paper's minimum: 30).
        uniform_sample: whether the human-rated items were drawn uniformly at random (False adds a
            warning; None: unknown, a reminder).
        quantile: ``"t"`` (default): small-sample t intervals (at least 3 human-rated and 2
            judge-only items per system); ``"normal"``: ppi-python's normal intervals (at least 2
            and 1), trusted from 50 human-rated items. See :func:`judgelab.stats.ppi.ppi_mean`.

    Returns:
        :class:`HumanEstimates`.

    Raises:
        JudgelabError: no judge or no human ratings, several judges and none chosen, an unknown
            criterion or system, an unknown ``quantile``.

    Example:
        >>> row = dict(system="A", group=None, criterion="q", sample=0, status="ok")
        >>> rows = [dict(row, item_id=f"i{k}", rater="judge", score=2 + k % 3) for k in range(6)]
        >>> rows += [dict(row, item_id=f"i{k}", rater="human:ann", score=3 + k % 3) for k in range(4)]
        >>> est = human_estimates(pd.DataFrame(rows))
        >>> est.means[0].n_human, est.means[0].n_judge, round(est.means[0].result.estimate, 2)
        (4, 6, 3.96)
    """
    if ratings.empty:
        raise JudgelabError("no ratings")
    if quantile not in ("t", "normal"):
        raise JudgelabError(f"unknown interval {quantile!r}: t or normal")
    n_min, N_min = minimum_sizes(quantile)
    judge = choose_judge(ratings, judge)
    humans = ratings[human_mask(ratings["rater"])]
    if humans.empty:
        raise JudgelabError("no human ratings (raters named human:<id>): annotate some items first (judgelab annotate)")
    judged = ratings[ratings["rater"] == judge]
    means = item_means(pd.concat([judged, humans], ignore_index=True))
    j_means = means[means["rater"] == judge]
    h_rows = means[human_mask(means["rater"])]
    h_means = h_rows.groupby(["criterion", "system", "item_id"], as_index=False)["score"].mean()

    both = sorted(set(j_means["criterion"]) & set(h_means["criterion"]))
    if criteria is None:
        if not both:
            raise JudgelabError(f"no criterion has both judge ({judge}) and human ratings")
        chosen_criteria = both
    else:
        unknown = [c for c in criteria if c not in both]
        if unknown:
            raise JudgelabError(f"criterion {', '.join(map(repr, unknown))} lacks judge or human ratings; "
                                f"both exist for: {', '.join(both) or 'none'}")
        chosen_criteria = list(criteria)
    known_systems = sorted(set(j_means["system"]))
    if systems is None:
        chosen_systems = known_systems
    else:
        unknown = [s for s in systems if s not in known_systems]
        if unknown:
            raise JudgelabError(f"unknown system {', '.join(map(repr, unknown))}; the judge rated: {', '.join(known_systems)}")
        chosen_systems = list(dict.fromkeys(systems))

    notes = []
    if uniform_sample is False:
        notes.append("the human-rated items were not drawn uniformly at random (e.g. --sample disagreement): "
                     "PPI and human-only intervals assume they were and may be biased")
    elif uniform_sample is None:
        notes.append("PPI assumes the human-rated items are a uniform random sample of each system's items")

    mean_results: list[SystemEstimate] = []
    data: dict[tuple[str, str], tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]] = {}
    for criterion in chosen_criteria:
        for system in chosen_systems:
            j = _series(j_means, criterion, system)
            h = _series(h_means, criterion, system)
            y, yhat, yhat_u, labelled = _split(j, h)
            data[(criterion, system)] = (y, yhat, yhat_u, labelled)
            raters = h_rows[(h_rows["criterion"] == criterion) & (h_rows["system"] == system)]["rater"].nunique()
            only_human = len(set(h.index) - set(j.index))
            extra = f"; {only_human} human-rated item(s) the judge did not rate are left out" if only_human else ""
            if y.size < n_min or yhat_u.size < N_min:
                why = (f"the PPI {quantile} interval needs at least {n_min} human-rated items and {N_min} items rated "
                       f"by the judge only; have {y.size} and {yhat_u.size}")
                mean_results.append(SystemEstimate(system, criterion, int(j.size), int(y.size), int(raters), None, why + extra))
                continue
            try:
                result = ppi_mean(y, yhat, yhat_u, alpha=alpha, quantile=quantile)
            except ValueError as exc:
                mean_results.append(SystemEstimate(system, criterion, int(j.size), int(y.size), int(raters), None, str(exc)))
                continue
            note = "; ".join(n for n in (result.note, extra.lstrip("; ")) if n)
            mean_results.append(SystemEstimate(system, criterion, int(j.size), int(y.size), int(raters), result, note))

    differences: list[DifferenceEstimate] = []
    for criterion in chosen_criteria:
        for a, b in itertools.combinations(chosen_systems, 2):
            ya, yhata, yua, la = data[(criterion, a)]
            yb, yhatb, yub, lb = data[(criterion, b)]
            ids_a = set(_series(j_means, criterion, a).index)
            ids_b = set(_series(j_means, criterion, b).index)
            paired = bool(ids_a & ids_b)
            note = ("the systems share item ids (a paired design); this interval treats them as independent "
                    "samples, which is conservative when the pairing correlates positively") if paired else ""
            if min(ya.size, yb.size) < n_min or min(yua.size, yub.size) < N_min:
                differences.append(DifferenceEstimate(criterion, a, b, None, paired,
                                                      "needs each system's PPI estimate (see the means)"))
                continue
            try:
                difference = ppi_mean_difference(ya, yhata, yua, yb, yhatb, yub, alpha=alpha, quantile=quantile)
            except ValueError as exc:
                differences.append(DifferenceEstimate(criterion, a, b, None, paired, str(exc)))
                continue
            note = "; ".join(n for n in (difference.note, note) if n)
            differences.append(DifferenceEstimate(criterion, a, b, difference, paired, note))

    alt_tests = [_alt_test(h_rows, j_means, criterion, chosen_systems, epsilon, alt_min_items) for criterion in chosen_criteria]

    plans: list[PlanOutcome] = []
    if target_half_width is not None:
        if not (math.isfinite(target_half_width) and target_half_width > 0):
            raise JudgelabError(f"--target-half-width must be a positive number, got {target_half_width}")
        for criterion in chosen_criteria:
            for system in chosen_systems:
                plans.append(_plan_mean(criterion, system, data[(criterion, system)], target_half_width, alpha, quantile))
            for a, b in itertools.combinations(chosen_systems, 2):
                plans.append(_plan_difference(criterion, a, b, data[(criterion, a)], data[(criterion, b)],
                                              target_half_width, alpha, quantile))

    return HumanEstimates(judge, alpha, tuple(chosen_criteria), tuple(chosen_systems), tuple(mean_results),
                          tuple(differences), tuple(alt_tests), tuple(plans), target_half_width, tuple(notes), quantile)


def _alt_test(h_rows: pd.DataFrame, j_means: pd.DataFrame, criterion: str, systems: Sequence[str], epsilon: float,
              min_items: int) -> AltTestOutcome:
    people = h_rows[(h_rows["criterion"] == criterion) & h_rows["system"].isin(list(systems))]
    table = people.pivot_table(index=["system", "item_id"], columns="rater", values="score", aggfunc="first")
    annotators = tuple(str(c) for c in table.columns)
    if len(annotators) < 3:
        return AltTestOutcome(criterion, annotators, None,
                              f"the Alt-Test needs at least 3 annotators who rated the same items; {criterion!r} has "
                              f"{len(annotators)} ({', '.join(annotators) or 'none'})")
    common = int((table.notna().sum(axis=1) >= 2).sum())
    if common == 0:
        return AltTestOutcome(criterion, annotators, None, "no item was rated by two or more annotators")
    judge = j_means[j_means["criterion"] == criterion].set_index(["system", "item_id"])["score"]
    try:
        result = alt_test(table, judge, epsilon=epsilon, min_items=min_items)
    except ValueError as exc:
        return AltTestOutcome(criterion, annotators, None, str(exc))
    return AltTestOutcome(criterion, annotators, result)


def _raised(plan: PPIPlan) -> str:
    if plan.n <= plan.n_for_width:
        return ""
    return (f"{plan.n_for_width} would reach the half-width, but the {plan.quantile} interval keeps its level only from "
            f"{plan.valid_from} human-rated items (skewed ratings raise this number: Cochran's rule asks for more than 25 g1² items, g1 their skewness)")


def _plan_mean(criterion: str, system: str, data, target: float, alpha: float, quantile: str) -> PlanOutcome:
    y, yhat, yhat_u, _ = data
    N_min = minimum_sizes(quantile)[1]
    if y.size < 2 or yhat_u.size < N_min:
        return PlanOutcome(criterion, "mean", (system,), int(y.size), None, note=f"needs a pilot: at least 2 human-rated "
                           f"items and {N_min} judge-only item(s)")
    try:
        plan = plan_ppi_mean(y, yhat, int(yhat_u.size), target, alpha=alpha,
                             yhat_unlabeled=yhat_u if yhat_u.size >= 2 else None, quantile=quantile)
    except ValueError as exc:
        return PlanOutcome(criterion, "mean", (system,), int(y.size), None, note=str(exc))
    total = int(y.size + yhat_u.size)
    reachable = plan.n <= total
    note = "" if reachable else f"more human-rated items than the {total} items the judge rated: add items or accept a wider interval"
    note = "; ".join(n for n in (note, _raised(plan)) if n)
    return PlanOutcome(criterion, "mean", (system,), int(y.size), plan, max(0, plan.n - int(y.size)), reachable, note)


def _plan_difference(criterion: str, a: str, b: str, da, db, target: float, alpha: float, quantile: str) -> PlanOutcome:
    ya, yhata, yua, _ = da
    yb, yhatb, yub, _ = db
    now = int(min(ya.size, yb.size))
    if min(ya.size, yb.size) < 2 or min(yua.size, yub.size) < minimum_sizes(quantile)[1]:
        return PlanOutcome(criterion, "difference", (a, b), now, None, note="needs a pilot in both systems")
    try:
        plan = plan_ppi_difference(ya, yhata, int(yua.size), yb, yhatb, int(yub.size), target, alpha=alpha,
                                   yhat_unlabeled_a=yua if yua.size >= 2 else None,
                                   yhat_unlabeled_b=yub if yub.size >= 2 else None, quantile=quantile)
    except ValueError as exc:
        return PlanOutcome(criterion, "difference", (a, b), now, None, note=str(exc))
    total = int(min(ya.size + yua.size, yb.size + yub.size))
    reachable = plan.n <= total
    note = "" if reachable else f"more human-rated items per system than the judge rated ({total}): add items or accept a wider interval"
    note = "; ".join(n for n in (note, _raised(plan)) if n)
    return PlanOutcome(criterion, "difference", (a, b), now, plan, max(0, plan.n - now), reachable, note)
