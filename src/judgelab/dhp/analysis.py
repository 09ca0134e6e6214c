"""Step 3 of DHP: from a tidy ratings table to p-values, HMPs and discernment scores.

Wang et al., section 3.3 (see :mod:`judgelab.stats.dhp` for the formulas and the
choices where the paper is ambiguous). For each judge (rater) and perturbation, the scores
of each metric are averaged over samples per item, paired with the same item's original
score (items missing or failed on either side are left out), and tested one-sided with
Wilcoxon's signed-rank test. The metric p-values are combined by Wilson's HMP with equal
weights and with expert weights; D = log_0.05(p); D_avg is level-balanced, D_min the minimum.
A report's ``notes`` say when a perturbation has too few pairs for D to exceed 1 (the exact
one-sided Wilcoxon test cannot go below p = 0.5**n with n pairs, see
:func:`judgelab.stats.dhp.max_discernment`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.datasets.readers import parse_score, read_csv, read_json, record_columns
from judgelab.dhp.task import DhpTask
from judgelab.errors import JudgelabError
from judgelab.stats.dhp import (
    discernment,
    expert_weights,
    harmonic_mean_p,
    harmonic_mean_p_exact,
    level_balanced_mean,
    max_discernment,
)
from judgelab.stats.tests_twosample import wilcoxon
from judgelab.status import Status

__all__ = ["analyze", "analyze_rater", "load_votes", "perturbation_table", "summary_table", "report_json",
           "PerturbationResult", "DhpReport", "REPORT_SCHEMA"]

#: Version of the JSON shape of :func:`report_json` (``discernment.json``, ``dhp analyze --format json``).
REPORT_SCHEMA = 1


@dataclass(frozen=True)
class PerturbationResult:
    """One perturbation of one judge (DHP §3.3).

    Attributes:
        name, level: the perturbation (``typos/minor``) and its level (character, word, sentence).
        pvalues: metric → one-sided Wilcoxon p-value (original > perturbed); ``"p"`` in JSON.
        p_hmp, D: harmonic-mean p over the metrics and its discernment ``log_0.05(p_hmp)``.
        p_hmp_ew, D_ew: the same with expert weights (equal to ``p_hmp``, ``D`` without votes).
        pairs: the most item pairs behind one metric's test.
        max_D: the best D these pairs allow (every metric at the smallest exact p, 0.5**pairs).
        expert_weights: metric → weight, None without votes for this perturbation.
    """

    name: str
    level: str
    pvalues: dict[str, float]
    p_hmp: float
    D: float
    p_hmp_ew: float
    D_ew: float
    pairs: int
    max_D: float
    expert_weights: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON entry: name, level, pairs, p (per metric), p_hmp, D, p_hmp_ew, D_ew (NaN stays NaN)."""
        return {"name": self.name, "level": self.level, "pairs": self.pairs, "p": dict(self.pvalues),
                "p_hmp": self.p_hmp, "D": self.D, "p_hmp_ew": self.p_hmp_ew, "D_ew": self.D_ew}


@dataclass(frozen=True)
class DhpReport:
    """The discernment report of one judge (DHP §3.3.3).

    Attributes:
        perturbations: one :class:`PerturbationResult` per perturbation with ratings.
        D_avg, D_min: level-balanced mean and minimum of D over the perturbations.
        D_avg_ew, D_min_ew: the same with expert weights.
        notes: caveats (perturbations with too few pairs for D > 1).
        combination: how the metrics' p-values were combined.
        expert_weights: whether expert votes were given.
        failure_rate: share of the judge's ratings that are not ``ok``.
    """

    perturbations: tuple[PerturbationResult, ...]
    D_avg: float
    D_min: float
    D_avg_ew: float
    D_min_ew: float
    notes: tuple[str, ...] = ()
    combination: str = "Wilson's weighted HMP statistic"
    expert_weights: bool = False
    failure_rate: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON of one judge: ``perturbations`` (see :meth:`PerturbationResult.to_dict`),
        ``D_avg``, ``D_min``, ``D_avg_ew``, ``D_min_ew``, ``notes``; NaN is null."""
        return _jsonable({
            "perturbations": [r.to_dict() for r in self.perturbations],
            "D_avg": self.D_avg, "D_min": self.D_min, "D_avg_ew": self.D_avg_ew, "D_min_ew": self.D_min_ew,
            "notes": list(self.notes),
        })

    def to_frame(self, metrics: list[str]) -> pd.DataFrame:
        """One row per perturbation: perturbation, level, pairs, p per metric (NaN where absent), p_hmp, D, p_hmp_ew, D_ew."""
        return pd.DataFrame([{"perturbation": r.name, "level": r.level, "pairs": r.pairs,
                              **{f"p_{m}": r.pvalues.get(m, np.nan) for m in metrics},
                              "p_hmp": r.p_hmp, "D": r.D, "p_hmp_ew": r.p_hmp_ew, "D_ew": r.D_ew}
                             for r in self.perturbations])


def load_votes(path: str | Path, task: DhpTask) -> dict[str, dict[str, float]]:
    """Expert votes: JSON ``{perturbation: {metric: votes}}``, a long CSV ``perturbation,metric,votes``
    or a wide CSV ``perturbation,<metric>,<metric>…`` (one row per perturbation).

    A key may name a perturbation (``typos/minor``) or its family (``typos``: both degrees).
    """
    path = Path(path)
    if not path.exists():
        raise JudgelabError(f"expert-weights file not found: {path}")

    def vote(value: Any, where: str, empty: float | None = None) -> float:
        number = parse_score(value, where, what="vote count")
        if number is None:
            if empty is None:
                raise JudgelabError(f"{where}: no vote count")
            return empty
        if number < 0:
            raise JudgelabError(f"{where}: vote count {value!r} is negative")
        return number

    data: dict[str, dict[str, float]] = {}
    if path.suffix.lower() == ".csv":
        rows = read_csv(path)
        columns = record_columns(rows)
        if {"perturbation", "metric", "votes"} <= set(columns):
            for i, row in enumerate(rows):
                data.setdefault(row["perturbation"], {})[row["metric"]] = vote(row["votes"], f"{path}: {rows.where(i)}")
        elif "perturbation" in columns:
            metrics = [c for c in columns if c != "perturbation"]
            for i, row in enumerate(rows):
                data[row["perturbation"]] = {m: vote(row[m], f"{path}: {rows.where(i)}, column {m!r}", empty=0.0) for m in metrics}
        else:
            raise JudgelabError(f"{path}: expected columns perturbation, metric, votes (or perturbation and one column per metric)")
    else:
        raw = read_json(path)
        if not isinstance(raw, dict):
            raise JudgelabError(f"{path}: expected a JSON object {{perturbation: {{metric: votes}}}}")
        for key, votes in raw.items():
            if not isinstance(votes, dict):
                raise JudgelabError(f"{path}: the votes for {key!r} must be an object {{metric: votes}}")
            data[key] = {m: vote(v, f"{path}: {key!r}, metric {m!r}") for m, v in votes.items()}
    families = {p.name.split("/")[0] for p in task.perturbations} | {p.name for p in task.perturbations}
    for key, votes in data.items():
        if key not in families:
            raise JudgelabError(f"{path}: unknown perturbation {key!r} for task {task.name!r}")
        unknown = [m for m in votes if m not in task.metrics]
        if unknown:
            raise JudgelabError(f"{path}: unknown metric {unknown[0]!r} for task {task.name!r}; metrics: {', '.join(task.metrics)}")
    return data


def _votes_for(votes: dict[str, dict[str, float]] | None, name: str) -> dict[str, float] | None:
    if not votes:
        return None
    return votes.get(name) or votes.get(name.split("/")[0])


def analyze_rater(ratings: pd.DataFrame, task: DhpTask, votes: dict[str, dict[str, float]] | None = None,
                  exact: bool = False) -> DhpReport:
    """The discernment report of one judge (``ratings`` holds one rater)."""
    ok = ratings[ratings["status"] == Status.OK] if "status" in ratings else ratings
    means = ok.groupby(["criterion", "system", "item_id"])["score"].mean()
    metrics = [m for m in task.metrics if m in set(ratings["criterion"])]
    if not metrics:
        raise JudgelabError(f"the ratings have none of the metrics of task {task.name!r} ({', '.join(task.metrics)})")
    perturbations: list[PerturbationResult] = []
    for p in task.perturbations:
        if p.name not in set(ratings["system"]):
            continue
        pvals: dict[str, float] = {}
        pairs = 0
        for metric in metrics:
            try:
                orig = means.loc[(metric, "original")]
                pert = means.loc[(metric, p.name)]
            except KeyError:
                continue
            joined = pd.concat([orig.rename("o"), pert.rename("p")], axis=1, join="inner").dropna()
            pairs = max(pairs, len(joined))
            pvals[metric] = wilcoxon(joined["o"].to_numpy(), joined["p"].to_numpy(), alternative="greater").pvalue
        if not pvals:
            continue
        names = list(pvals)
        values = [pvals[m] for m in names]
        combine = harmonic_mean_p_exact if exact else harmonic_mean_p
        p_hmp = combine(values)
        p_vote = _votes_for(votes, p.name)
        weights = expert_weights(p_vote, names) if p_vote else None
        if weights is not None and sum(w for w in weights) == 0:
            weights = None
        p_hmp_ew = combine(values, weights) if weights is not None else p_hmp
        # the best case: every metric at the smallest exact Wilcoxon p-value 0.5**pairs
        max_d = max_discernment(pairs) if not exact else discernment(combine([0.5**pairs] * len(values)))
        perturbations.append(PerturbationResult(
            name=p.name, level=p.level, pvalues=pvals, p_hmp=p_hmp, D=discernment(p_hmp), p_hmp_ew=p_hmp_ew,
            D_ew=discernment(p_hmp_ew), pairs=pairs, max_D=max_d,
            expert_weights=dict(zip(names, weights)) if weights is not None else None,
        ))
    if not perturbations:
        raise JudgelabError("no perturbation of the task has ratings next to original ones (system 'original')")
    levels = [r.level for r in perturbations]
    return DhpReport(
        perturbations=tuple(perturbations),
        D_avg=level_balanced_mean([r.D for r in perturbations], levels),
        D_min=float(min(r.D for r in perturbations)),
        D_avg_ew=level_balanced_mean([r.D_ew for r in perturbations], levels),
        D_min_ew=float(min(r.D_ew for r in perturbations)),
        notes=tuple(_few_pairs_notes(perturbations)),
        combination="asymptotically exact HMP" if exact else "Wilson's weighted HMP statistic",
        expert_weights=bool(votes),
        failure_rate=float((ratings["status"] != Status.OK).mean()) if "status" in ratings else 0.0,
    )


def _few_pairs_notes(perturbations: list[PerturbationResult]) -> list[str]:
    """One note naming the perturbations whose pairs cannot give D > 1 (none when all can)."""
    few = [r for r in perturbations if r.max_D <= 1]
    if not few:
        return []
    which = ", ".join(f"{r.name} ({r.pairs} pairs, D <= {r.max_D:.2f})" for r in few)
    return [f"too few pairs for D to exceed 1 in {len(few)} of {len(perturbations)} perturbations: {which}; "
            "with n pairs the exact one-sided Wilcoxon test cannot give p below 0.5**n, so D > 1 needs 5 or more pairs: use more items"]


def analyze(ratings: pd.DataFrame, task: DhpTask, votes=None, exact: bool = False) -> dict[str, DhpReport]:
    """One :class:`DhpReport` per rater in the table (rater → report, sorted by rater)."""
    if "original" not in set(ratings["system"]):
        raise JudgelabError("the ratings have no system 'original': DHP compares originals with perturbed copies")
    unknown = sorted(set(ratings["system"]) - {"original"} - {p.name for p in task.perturbations})
    if unknown:
        raise JudgelabError(f"unknown perturbation {unknown[0]!r} for task {task.name!r}; known: {', '.join(p.name for p in task.perturbations)}")
    return {rater: analyze_rater(grp, task, votes, exact) for rater, grp in ratings.groupby("rater", sort=True)}


def perturbation_table(reports: dict[str, DhpReport], metrics: list[str]) -> pd.DataFrame:
    """Flat table: judge, perturbation, level, p per metric, combined p, D, D^EW."""
    frames = [rep.to_frame(metrics).assign(judge=rater) for rater, rep in reports.items()]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    return table[["judge", *[c for c in table.columns if c != "judge"]]]


def summary_table(reports: dict[str, DhpReport]) -> pd.DataFrame:
    """One row per judge: D_avg, D_min and their expert-weighted versions (DHP §3.3).

    Args:
        reports: rater → :func:`analyze_rater`'s report.

    Returns:
        Columns ``judge, D_avg, D_min, D_avg_ew, D_min_ew, failure_rate``.
    """
    return pd.DataFrame([{"judge": r, "D_avg": rep.D_avg, "D_min": rep.D_min, "D_avg_ew": rep.D_avg_ew,
                          "D_min_ew": rep.D_min_ew, "failure_rate": rep.failure_rate} for r, rep in reports.items()])


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, float) and np.isnan(obj):
        return None
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    return obj


def report_json(reports: dict[str, DhpReport], task: str) -> dict[str, Any]:
    """The one JSON shape of DHP results, for any number of judges (schema 1)::

        {"schema": 1, "task": "summarization",
         "judges": {"<rater>": {"perturbations": [...], "D_avg": ..., "D_min": ..., "D_avg_ew": ...,
                                "D_min_ew": ..., "notes": [...]}}}

    Example:
        >>> report_json({}, "summarization")
        {'schema': 1, 'task': 'summarization', 'judges': {}}
    """
    return {"schema": REPORT_SCHEMA, "task": task, "judges": {r: rep.to_dict() for r, rep in reports.items()}}
