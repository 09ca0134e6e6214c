"""The judge audit (``judgelab audit``): every bias of :mod:`judgelab.stats.bias` over one ratings
table, and the planted-bias self-check that measures the audit's power at a sample size.

:func:`audit` runs what its inputs allow: scale use and leniency always (ratings with humans),
prompt sensitivity when a judge has several variants (``JUDGE@VARIANT``),
length dependence with a table of text lengths, self-preference with a judge → family mapping,
position bias with pairwise verdicts in both orders; what it cannot run is in ``skipped`` with the
reason. :func:`self_check` simulates studies (:mod:`judgelab.testing.bias_simulator`) with moderate
planted biases and without any, and reports for each bias how often the audit detects it (its
interval excludes 0), how often the interval covers the planted value, and how often it raises a
false alarm when nothing is planted, each with its Monte-Carlo standard error.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import jury as jury_rater, human_mask
from judgelab.stats.bias import (
    BiasEffect,
    effects_frame,
    length_bias,
    scale_use,
    self_preference,
)
from judgelab.stats.position import length_preference, position_bias
from judgelab.stats.prompt_sensitivity import prompt_sensitivity, variant_groups

__all__ = ["AuditReport", "audit", "SelfCheckResult", "self_check", "TABLES", "SELF_CHECK_COLUMNS", "select_judges",
           "hanna_ratings", "read_audit_inputs", "jury_report", "selective_holdout", "jury_disagreement", "SELECTIVE_COLUMNS"]

TABLES = {
    "leniency": ("leniency", "spread_ratio"),
    "scale_points": ("scale_point:",),
    "length": ("length", "prefer_longer"),
    "self_preference": ("self_preference",),
    "position": ("position_first", "position_consistency"),
    "prompt_sensitivity": ("prompt_icc", "prompt_shift"),
    "pairwise": ("pairwise_first", "pairwise_flip", "pairwise_longer", "pairwise_own"),
}
"""Table name → the ``bias`` values (or prefixes) it holds."""


def _in_table(bias: str, kinds: tuple[str, ...]) -> bool:
    return any(bias == k or (k.endswith(":") and bias.startswith(k)) for k in kinds)


@dataclass(frozen=True)
class AuditReport:
    """The effects of an audit, what was skipped and why, and its settings."""

    effects: tuple[BiasEffect, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """One table per kind of bias (:data:`TABLES`), rows in ``EFFECT_COLUMNS``."""
        return {name: effects_frame([e for e in self.effects if _in_table(e.bias, kinds)])
                for name, kinds in TABLES.items()}

    def lines(self) -> list[str]:
        """One plain-language line per bias: every leniency, spread, length, self-preference and
        position effect, and per rater and criterion the scale point whose share differs most."""
        out = [e.line for e in self.effects if not e.bias.startswith("scale_point:") and e.line]
        points = [e for e in self.effects if e.bias.startswith("scale_point:") and not math.isnan(e.estimate)]
        best: dict[tuple[str, str], BiasEffect] = {}
        for e in points:
            key = (e.rater, e.criterion)
            if key not in best or abs(e.estimate) > abs(best[key].estimate):
                best[key] = e
        out += [e.line for e in best.values()]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"effects": [e.to_dict() for e in self.effects], "skipped": dict(self.skipped),
                "settings": dict(self.settings)}


def audit(ratings: pd.DataFrame, pairs: pd.DataFrame | None = None, lengths: pd.DataFrame | None = None,
          judge_family: dict[str, str] | None = None, system_family: dict[str, str] | None = None,
          criteria: list[str] | None = None, points: list[float] | None = None, per: float = 100.0,
          n_resamples: int = 999, seed: int = 0, confidence_level: float = 0.95) -> AuditReport:
    """Every bias the inputs allow (see the module docstring).

    Args:
        ratings: the tidy ratings table with judges and ``human:<id>`` raters.
        pairs: pairwise verdicts (:func:`judgelab.stats.bias.position_bias`), or ``None``.
        lengths: ``item_id``, ``system``, ``length`` (:func:`judgelab.stats.bias.length_bias`), or ``None``.
        judge_family, system_family: the families for self-preference, or ``None``.
        criteria, points, per: the criteria, scale points and length unit.

    Returns:
        An :class:`AuditReport`.
    """
    effects: list[BiasEffect] = []
    skipped: dict[str, str] = {}
    criteria = _criteria_with_humans(ratings, criteria, skipped)
    common: dict[str, Any] = dict(n_resamples=n_resamples, seed=seed, confidence_level=confidence_level)
    effects += scale_use(ratings, criteria, points, **common)
    if variant_groups(ratings["rater"]):
        effects += prompt_sensitivity(ratings, criteria, **common)
    else:
        skipped["prompt_sensitivity"] = "no judge with two or more prompt variants (raters named JUDGE@VARIANT)"
    if lengths is not None:
        effects += length_bias(ratings, lengths, criteria, per, **common)
    else:
        skipped["length"] = "no text lengths given (--lengths)"
    if judge_family:
        effects += self_preference(ratings, judge_family, system_family or {}, criteria, **common)
    else:
        skipped["self_preference"] = "no judge family given (--self-family JUDGE=FAMILY)"
    if pairs is not None:
        effects += position_bias(pairs, **common)
        if lengths is not None:
            try:
                effects += length_preference(pairs, lengths, ratings, **common)
            except JudgelabError as exc:
                skipped["prefer_longer"] = str(exc)
    else:
        skipped["position"] = "no pairwise verdicts in both orders given (--pairs)"
    effects = _with_failures(effects, ratings)
    settings = {"n_resamples": n_resamples, "seed": seed, "confidence_level": confidence_level, "per_words": per,
                "interval": "percentile cluster bootstrap over item_id"}
    return AuditReport(tuple(effects), skipped, settings)


def _criteria_with_humans(ratings: pd.DataFrame, criteria: list[str] | None,
                          skipped: dict[str, str]) -> list[str] | None:
    """The criteria to audit: those asked for (default: all) that the humans rated. The judges' criteria
    without human ratings go to ``skipped``; none rated by the humans is an error naming both sets."""

    human = human_mask(ratings["rater"])
    theirs = sorted(set(ratings.loc[human, "criterion"].astype(str)))
    judged = sorted(set(ratings.loc[~human, "criterion"].astype(str)) & set(criteria or ratings["criterion"]))
    missing = [c for c in judged if c not in theirs]
    if not theirs or not missing:
        return criteria
    if len(missing) == len(judged):
        like = [f"--map {h}={j}" for h in theirs for j in judged if j.startswith(h) or h.startswith(j)]
        raise JudgelabError(f"the human ratings share no criterion with the judges: judges rate {', '.join(judged)}; "
                            f"humans rate {', '.join(theirs)}. Rename the human file's criterion columns (or values) "
                            f"to the judges' names, or map them with --map OLD=NEW"
                            + (f" (e.g. {' '.join(like)})" if like else " (repeatable)"))
    skipped["criteria"] = (f"no human ratings of {', '.join(missing)} (humans rate {', '.join(theirs)}): not audited; "
                           "--map OLD=NEW renames a criterion")
    return [c for c in (criteria or sorted(set(ratings["criterion"].astype(str)))) if c in theirs]


def _with_failures(effects: list[BiasEffect], ratings: pd.DataFrame) -> list[BiasEffect]:
    """Each effect's note names its rater's failed judgments on the criterion (left out of every statistic)."""
    from judgelab.status import Status

    failed = ratings["status"] != Status.OK
    counts = failed.groupby([ratings["rater"], ratings["criterion"]]).agg(["sum", "size"])
    out = []
    for e in effects:
        key = (e.rater, e.criterion)
        if key in counts.index and counts.loc[key, "sum"] > 0:
            k, n = int(counts.loc[key, "sum"]), int(counts.loc[key, "size"])
            note = f"{k} of {n} judgments failed (no score) and are left out"
            e = dataclasses.replace(e, note="; ".join(x for x in (note, e.note) if x))
        out.append(e)
    return out


def select_judges(ratings: pd.DataFrame, pattern: str | None) -> pd.DataFrame:
    """The humans and the judges whose label matches the glob ``pattern`` (all judges for ``None``)."""
    import fnmatch

    from judgelab.ratings import is_human

    if not pattern:
        return ratings
    judges = sorted(r for r in ratings["rater"].unique() if not is_human(r))
    keep = [r for r in judges if fnmatch.fnmatchcase(r, pattern)]
    if not keep:
        raise JudgelabError(f"--judges {pattern!r} matches no judge; judges: {', '.join(judges)}")
    return ratings[human_mask(ratings["rater"]) | ratings["rater"].isin(keep)].reset_index(drop=True)


def read_audit_inputs(ratings: list | None, human: list | None = None, human_layout: str = "auto",
                      hanna_scores=None, judges: str | None = None,
                      rename: dict[str, str] | None = None) -> pd.DataFrame:
    """The one ratings table of ``audit`` and ``escalate``: ratings files, HANNA's LLM scores and
    human files (read as by ``agree --human``), stacked (a repeated rating is an error), criteria
    renamed by ``rename`` (``--map OLD=NEW``, as ``agree``), judges selected by the glob ``judges``."""
    from judgelab.ratings import combine, import_human, read_ratings, rename_criteria

    frames = [read_ratings(p) for p in (ratings or [])]
    if hanna_scores is not None:
        frames.append(hanna_ratings(hanna_scores))
    frames += [import_human(h, human_layout) for h in human or []]
    return select_judges(rename_criteria(combine(frames), rename or {}, "inputs"), judges)


def hanna_ratings(path) -> pd.DataFrame:
    """HANNA's ``hanna_metric_scores_llm.csv`` as a tidy table (:func:`judgelab.recipes.hanna.to_ratings`),
    the ten generation systems only (the HANNA recipe's convention: the ``Human`` row left out)."""
    from judgelab.recipes.hanna import load_scores, to_ratings

    df = to_ratings(load_scores(path))
    return df[df["system"] != "Human"].reset_index(drop=True)


def jury_report(ratings: pd.DataFrame, methods: list[str], level: str = "group", method: str = "kendall",
                folds: int = 5, n_resamples: int = 999,
                seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Juries of every judge of ``ratings`` beside each single judge (:mod:`judgelab.stats.jury`).

    Returns:
        The agreement table (:func:`judgelab.jury_agreement.jury_vs_judges`), the learned weights, and the
        juries' ratings (tidy rows of the raters ``jury:<method>``).
    """
    from judgelab.ratings import combine
    from judgelab.jury_agreement import jury_vs_judges
    from judgelab.stats.jury import jury

    j = jury(ratings, None, methods, folds, seed)
    both = combine([ratings, j.ratings])
    table = jury_vs_judges(both, [jury_rater(m).label for m in methods], level, method, n_resamples=n_resamples, seed=seed)
    return table, j.weights, j.ratings


SELF_CHECK_COLUMNS = ["bias", "planted", "studies", "n_items", "detected", "detected_mcse", "coverage",
                      "coverage_mcse", "false_alarms", "false_alarms_mcse", "mean_estimate", "null_coverage"]


@dataclass(frozen=True)
class SelfCheckResult:
    """The audit's power, coverage and false-alarm rate per bias over simulated studies.

    Attributes:
        rows: one dict per bias with :data:`SELF_CHECK_COLUMNS`: the planted effect, the share of
            planted studies where it was detected, the share whose interval covered the planted
            value, the share of no-bias studies where it was "detected" (a false alarm), each with
            its Monte-Carlo standard error, and the mean estimate over the planted studies.
        settings: n_items, studies, seed, n_resamples, the planted biases.
    """

    rows: tuple[dict[str, Any], ...]
    settings: dict[str, Any]

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.rows), columns=SELF_CHECK_COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [dict(r) for r in self.rows], "settings": dict(self.settings)}

    def lines(self) -> list[str]:
        """One plain-language line per bias."""
        return [f"{r['bias']}: planted {r['planted']:.3g}, detected in {100 * r['detected']:.1f}% of {r['studies']} "
                f"studies of {r['n_items']} items (±{100 * r['detected_mcse']:.1f}), interval covers the planted value "
                f"in {100 * r['coverage']:.1f}% (±{100 * r['coverage_mcse']:.1f}), false alarms without a bias "
                f"{100 * r['false_alarms']:.1f}% (±{100 * r['false_alarms_mcse']:.1f})" for r in self.rows]


_CHECKED = ("leniency", "length", "self_preference", "position_first")


def _judge_effects(study, n_resamples: int, seed: int) -> dict[str, BiasEffect]:
    from judgelab.testing.bias_simulator import JUDGE

    common: dict[str, Any] = dict(n_resamples=n_resamples, seed=seed)
    effects = scale_use(study.ratings, points=[], raters=[JUDGE], **common)
    effects += length_bias(study.ratings, study.lengths, **common)
    effects += self_preference(study.ratings, study.judge_family, study.system_family, **common)
    effects += position_bias(study.pairs, **common)
    return {e.bias: e for e in effects if e.rater == JUDGE and e.bias in _CHECKED}


def self_check(n_items: int = 200, n_studies: int = 200, seed: int = 0, n_resamples: int = 999,
               planted: Any = None) -> SelfCheckResult:
    """Run the audit on ``n_studies`` simulated studies with planted biases and as many without.

    Args:
        n_items: items (texts, and pairs) per study.
        n_studies: simulated studies of each kind.
        planted: a :class:`judgelab.testing.bias_simulator.PlantedBiases` (default: ``MODERATE``).

    Returns:
        A :class:`SelfCheckResult`.
    """
    from judgelab.testing.bias_simulator import MODERATE, NONE, simulate_study

    if n_items < 20:
        raise JudgelabError("--n-items: at least 20 items (an item bootstrap needs them)")
    if n_studies < 1:
        raise JudgelabError("--n-studies: at least 1")
    planted = planted or MODERATE
    hits: dict[str, list[bool]] = {b: [] for b in _CHECKED}
    covered: dict[str, list[bool]] = {b: [] for b in _CHECKED}
    alarms: dict[str, list[bool]] = {b: [] for b in _CHECKED}
    null_cov: dict[str, list[bool]] = {b: [] for b in _CHECKED}
    estimates: dict[str, list[float]] = {b: [] for b in _CHECKED}
    truth: dict[str, float] = {}
    for i in range(n_studies):
        study = simulate_study(n_items, planted, seed=seed + 2 * i)
        truth = study.truth
        for b, e in _judge_effects(study, n_resamples, seed + i).items():
            hits[b].append(e.detected)
            covered[b].append(e.covers(truth[b]))
            estimates[b].append(e.estimate)
        null = simulate_study(n_items, NONE, seed=seed + 2 * i + 1)
        for b, e in _judge_effects(null, n_resamples, seed + i).items():
            alarms[b].append(e.detected)
            null_cov[b].append(e.covers(0.0))

    def rate(xs):
        p = float(np.mean(xs))
        return p, math.sqrt(p * (1 - p) / len(xs))
    rows = []
    for b in _CHECKED:
        d, c, f = rate(hits[b]), rate(covered[b]), rate(alarms[b])
        rows.append({"bias": b, "planted": truth[b], "studies": n_studies, "n_items": n_items,
                     "detected": d[0], "detected_mcse": d[1], "coverage": c[0], "coverage_mcse": c[1],
                     "false_alarms": f[0], "false_alarms_mcse": f[1], "mean_estimate": float(np.mean(estimates[b])),
                     "null_coverage": float(np.mean(null_cov[b]))})
    settings = {"n_items": n_items, "studies": n_studies, "seed": seed, "n_resamples": n_resamples,
                "planted": dataclasses.asdict(planted)}
    return SelfCheckResult(tuple(rows), settings)


SELECTIVE_COLUMNS = ["criterion", "target_agreement", "delta", "tolerance", "threshold", "n_calibration",
                     "calibration_kept", "n_test", "test_kept", "test_coverage", "test_agreement_kept",
                     "test_agreement_all", "note"]


def jury_disagreement(means: pd.DataFrame, judges) -> pd.Series:
    """Minus the spread (SD) of the judges' standardised item means per (system, item_id) of one
    criterion's :func:`judgelab.ratings.item_means` rows: the jury's confidence (no human rating used).
    NaN (no confidence: the item goes to people) where a judge has no rating of the item: the SD of
    fewer judges is smaller by construction (0 for one judge, the highest confidence there is)."""
    judges = list(judges)
    wide = means[means["rater"].isin(judges)].pivot_table(index=["system", "item_id"], columns="rater",
                                                          values="score").reindex(columns=judges)
    z = (wide - wide.mean()) / wide.std(ddof=0)
    return (-z.std(axis=1, ddof=0)).where(z.notna().all(axis=1))


def selective_holdout(ratings: pd.DataFrame, alpha: float = 0.1, delta: float = 0.1, tolerance: float = 1.0,
                      seed: int = 0, folds: int = 5) -> pd.DataFrame:
    """Selective judging of the cross-validated weighted jury, calibrated on half of the items and
    checked on the other half (items split by ``item_id``, seeded).

    The jury's weights for the test half are learned on the calibration half only (its human ratings
    are hidden from :func:`judgelab.stats.jury.jury`); the confidence is minus the spread (SD) of the
    judges' standardised scores on the item (jury disagreement; no human rating is used). The
    threshold comes from :func:`judgelab.stats.selective.calibrate_selective`.

    Returns:
        One row per criterion (:data:`SELECTIVE_COLUMNS`): the threshold, items kept, and on the
        held-out half the share kept and their agreement with the humans beside every item's.
    """
    from judgelab.ratings import item_means
    from judgelab.stats.jury import jury
    from judgelab.stats.selective import calibrate_selective, select

    items = np.array(sorted(ratings["item_id"].astype(str).unique()))
    rng = np.random.default_rng(seed)
    test_items = set(rng.permutation(items)[: len(items) // 2])
    is_test = ratings["item_id"].astype(str).isin(test_items)
    hidden = ratings[~(human_mask(ratings["rater"]) & is_test)]
    j = jury(hidden, None, ("weighted",), folds, seed)
    means = item_means(ratings)
    rows = []
    for crit in sorted(j.ratings["criterion"].unique()):
        m = means[means["criterion"] == crit]
        conf = jury_disagreement(m, j.judges)
        human = m[human_mask(m["rater"])].groupby(["system", "item_id"])["score"].mean()
        jr = j.ratings[j.ratings["criterion"] == crit].set_index(["system", "item_id"])["score"]
        t = pd.DataFrame({"conf": conf, "jury": jr.reindex(conf.index), "human": human.reindex(conf.index)}).dropna()
        test = t.index.get_level_values("item_id").isin(list(test_items))
        cal, held = t[~test], t[test]
        th = calibrate_selective(cal["conf"], cal["jury"], cal["human"], alpha, delta, tolerance)
        keep = select(th, held["conf"])
        agree = (held["jury"] - held["human"]).abs() <= tolerance + 1e-12
        rows.append({"criterion": crit, "target_agreement": 1 - alpha, "delta": delta, "tolerance": tolerance,
                     "threshold": th.threshold, "n_calibration": th.n_calibration, "calibration_kept": th.n_kept,
                     "n_test": len(held), "test_kept": int(keep.sum()), "test_coverage": float(keep.mean()),
                     "test_agreement_kept": float(agree[keep].mean()) if keep.any() else float("nan"),
                     "test_agreement_all": float(agree.mean()), "note": th.note})
    return pd.DataFrame(rows, columns=SELECTIVE_COLUMNS)
