"""Selective judging in production (``judgelab escalate``): calibrate a confidence threshold on every
human-rated item, then keep the judge's (or jury's) rating on every item of the table whose
confidence reaches it and send the others to people.

The threshold is :func:`judgelab.stats.selective.calibrate_selective` (Trust-or-Escalate's
fixed-sequence testing with exact binomial tests): with probability at least ``1 − δ`` over the
calibration sample, at least ``1 − α`` of future kept items agree with the humans within
``tolerance`` points. It is calibrated per (rater, criterion); the assumptions are that module's:
the items to be decided are exchangeable with the human-rated ones (the same kind of items, judge
and humans), and the guarantee is about the *rate* over kept items. Human-rated items are decided
like the others (their human rating is not used for their own decision).

Confidence signals (``signal``), all the judge's own, none uses a human rating:

* ``samples``: a single judge sampled several times: the share of its successful samples within
  ``tolerance`` of its rating (their mean), as in ``audit --calibration``
  (:func:`judgelab.audit_results.sample_agreement`). Items with one sample have no confidence and
  go to people.
* ``logprob``: minus the distance between the parsed rating and the expected rating under the
  token distribution at the rating token (``|score_parsed − score_logprob|``, averaged over
  samples): 0 when all the probability sits on the stated label. The ratings file records the
  expectation (``score_logprob``) and the mass outside the scale, not the distribution itself, so
  this is the spread the file allows; it needs parsed answers with their log-probabilities
  (a ``--score logprob`` run records only the expectation and is refused).
* ``jury``: two or more judges: minus the SD of their standardised ratings of the item
  (:func:`judgelab.audit.jury_disagreement`); the rating is the mean jury (``jury:mean``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import is_judge, jury, human_mask
from judgelab.stats.selective import SelectiveThreshold, calibrate_selective, select

__all__ = ["SIGNALS", "ESCALATION_COLUMNS", "GUARANTEE_COLUMNS", "HOLDOUT_COLUMNS", "Escalation", "confidence_table",
           "escalate", "escalation_holdout", "logprob_columns", "read_escalation", "hybrid_ratings"]

SIGNALS = ("samples", "logprob", "jury")
#: The rater of the jury signal's ratings: the mean of the judges (``jury:mean``).
MEAN_JURY = jury("mean").label
ESCALATION_COLUMNS = ["system", "item_id", "criterion", "rater", "rating", "confidence", "decision", "human"]
GUARANTEE_COLUMNS = ["rater", "criterion", "signal", "target_agreement", "delta", "tolerance", "threshold",
                     "n_calibration", "calibration_kept", "calibration_agreement", "p_value", "n_items", "n_kept",
                     "kept_share", "note"]
KEYS = ["system", "item_id", "criterion"]


@dataclass(frozen=True)
class Escalation:
    """Every item's decision and the guarantee behind it.

    Attributes:
        decisions: one row per (system, item_id, criterion, rater) in :data:`ESCALATION_COLUMNS`:
            the rating, its confidence, ``keep`` or ``escalate``, and the mean human rating where
            there is one (NaN otherwise).
        guarantees: one dict per (rater, criterion) in :data:`GUARANTEE_COLUMNS`.
        settings: signal, alpha, delta, tolerance.
    """

    decisions: pd.DataFrame
    guarantees: tuple[dict[str, Any], ...]
    settings: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        return self.decisions.copy()

    def summary(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.guarantees), columns=GUARANTEE_COLUMNS)

    def escalated_keys(self) -> list[tuple[str, str]]:
        """The (system, item_id) with at least one escalated criterion, sorted."""
        d = self.decisions[self.decisions["decision"] == "escalate"]
        return sorted(set(zip(d["system"].astype(str), d["item_id"].astype(str))))

    def ids_text(self) -> str:
        """``escalated_ids.txt``: one ``system<TAB>item_id`` per line (``annotate --sample ids:FILE``)."""
        head = "# items to rate by people (judgelab escalate): system<TAB>item_id\n"
        return head + "".join(f"{s}\t{i}\n" for s, i in self.escalated_keys())

    def lines(self) -> list[str]:
        out = []
        for g in self.guarantees:
            th = "none passed" if not math.isfinite(g["threshold"]) else f"{g['threshold']:.4g}"
            line = (f"{g['criterion']}: {g['rater']}: agreement within {g['tolerance']:g} point(s) >= "
                    f"{g['target_agreement']:.0%} with probability >= {1 - g['delta']:.0%} on kept items; confidence "
                    f"({g['signal']}) threshold {th} from {g['n_calibration']} human-rated items; kept {g['n_kept']} "
                    f"of {g['n_items']} ({g['kept_share']:.1%})" + (", the rest go to people" if g["n_kept"] < g["n_items"] else ""))
            out.append(line + (f" ({g['note']})" if g["note"] else ""))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"settings": dict(self.settings), "guarantees": [dict(g) for g in self.guarantees]}


def logprob_columns(path) -> pd.DataFrame:
    """``score_parsed`` and ``score_logprob`` of a ratings file, keyed like the tidy table
    (rater, criterion, system, item_id, sample); refused when the file has no such columns."""
    from judgelab.ratings import _frame

    df, _ = _frame(path)
    need = {"item_id", "criterion", "rater", "score_parsed", "score_logprob"}
    if not need <= set(df.columns):
        raise JudgelabError(f"{path}: --confidence logprob needs the columns score_parsed and score_logprob (a "
                            "judgelab ratings file of a run that recorded log-probabilities)")
    out = pd.DataFrame({c: df[c].astype(str) for c in ("item_id", "criterion", "rater")})
    out["system"] = df["system"].astype(str) if "system" in df.columns else "default"
    out["sample"] = pd.to_numeric(df["sample"], errors="coerce").fillna(0).astype(int) if "sample" in df.columns else 0
    for c in ("score_parsed", "score_logprob"):
        out[c] = pd.to_numeric(df[c], errors="coerce")
    return out


def _human_means(ratings: pd.DataFrame) -> pd.Series:
    from judgelab.ratings import item_means

    m = item_means(ratings)
    return m[human_mask(m["rater"])].groupby(KEYS)["score"].mean().rename("human")


def confidence_table(ratings: pd.DataFrame, signal: str, tolerance: float = 1.0,
                     logprobs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (system, item_id, criterion, rater): the rating and its confidence (module docstring); no
    human rating is used. Columns ``system, item_id, criterion, rater, rating, confidence``."""
    from judgelab.audit import jury_disagreement
    from judgelab.audit_results import sample_agreement
    from judgelab.ratings import item_means

    cols = ["system", "item_id", "criterion", "rater", "rating", "confidence"]
    judges = sorted(r for r in ratings["rater"].unique() if is_judge(r))
    if signal not in SIGNALS:
        raise JudgelabError(f"unknown --confidence {signal!r}: {', '.join(SIGNALS)}")
    if not judges:
        raise JudgelabError("no judge in the ratings (every rater is human)")
    frames = []
    if signal == "jury":
        from judgelab.stats.jury import jury

        j = jury(ratings, judges, ("mean",))
        means = item_means(ratings)
        for crit, jr in j.ratings.groupby("criterion"):
            conf = jury_disagreement(means[means["criterion"] == crit], judges).rename("confidence")
            t = jr.set_index(["system", "item_id"])[["score"]].rename(columns={"score": "rating"}).join(conf)
            frames.append(t.reset_index().assign(criterion=crit, rater=MEAN_JURY))
    elif signal == "samples":
        for crit in sorted(ratings["criterion"].unique()):
            for rater in judges:
                g = sample_agreement(ratings, rater, crit, tolerance)
                if g.empty:
                    continue
                g["confidence"] = g["confidence"].where(g["samples"] >= 2)
                frames.append(g.reset_index().assign(criterion=crit, rater=rater))
        if not frames or all(f["confidence"].isna().all() for f in frames):
            raise JudgelabError("--confidence samples needs a judge with two or more samples of an item (its "
                                "confidence is the agreement of its samples); this table has one per item")
    else:
        if logprobs is None or not (logprobs["score_parsed"].notna() & logprobs["score_logprob"].notna()).any():
            raise JudgelabError("--confidence logprob needs parsed ratings with their log-probabilities "
                                "(score_parsed and score_logprob in a judgelab ratings file); a --score logprob run "
                                "records only the expected score, not its spread")
        lp = logprobs.assign(gap=(logprobs["score_parsed"] - logprobs["score_logprob"]).abs())
        gap = lp.groupby(["rater", "criterion", "system", "item_id"])["gap"].mean()
        m = item_means(ratings)
        m = m[m["rater"].isin(judges)].set_index(["rater", "criterion", "system", "item_id"])
        t = m[["score"]].rename(columns={"score": "rating"}).join(-gap.rename("confidence"))
        frames.append(t.reset_index())
    out = pd.concat(frames, ignore_index=True)[cols]
    for c in ("system", "item_id", "criterion", "rater"):
        out[c] = out[c].astype(str)
    return out.sort_values(["criterion", "rater", "system", "item_id"], kind="stable").reset_index(drop=True)


def _with_failed_units(conf: pd.DataFrame, ratings: pd.DataFrame, signal: str) -> pd.DataFrame:
    """``conf`` with a row (no rating, no confidence: escalated) for every unit a judge was asked about
    and has no successful rating of (every sample failed): a decision for every item, never a silent gap."""
    judges = ratings[ratings["rater"].map(is_judge).astype(bool)]
    units = pd.DataFrame({c: judges[c].astype(str) for c in ("system", "item_id", "criterion", "rater")})
    if signal == "jury":
        units = units.assign(rater=MEAN_JURY)
    units = units.drop_duplicates()
    key = ["system", "item_id", "criterion", "rater"]
    missing = units.merge(conf[key], on=key, how="left", indicator=True)
    missing = missing[missing["_merge"] == "left_only"].drop(columns="_merge")
    if missing.empty:
        return conf
    added = missing.assign(rating=math.nan, confidence=math.nan)[conf.columns]
    out = pd.concat([conf, added], ignore_index=True)
    return out.sort_values(["criterion", "rater", "system", "item_id"], kind="stable").reset_index(drop=True)


def escalate(ratings: pd.DataFrame, signal: str = "jury", alpha: float = 0.1, delta: float = 0.1,
             tolerance: float = 1.0, logprobs: pd.DataFrame | None = None, grid: int = 20) -> Escalation:
    """Calibrate on every human-rated item, decide every item (module docstring).

    Args:
        ratings: the tidy ratings table: judges and ``human:<id>`` raters (humans on some items).
        signal: ``samples``, ``logprob`` or ``jury``.
        alpha, delta, tolerance: the promise (:func:`judgelab.stats.selective.calibrate_selective`).
        logprobs: for ``logprob``, :func:`logprob_columns` of the ratings file.

    Returns:
        An :class:`Escalation`; items are matched to human ratings by (system, item_id, criterion).

    Raises:
        JudgelabError: no human ratings, or the signal cannot be computed from the table.
    """

    if not (0 < alpha < 1 and 0 < delta < 1):
        raise JudgelabError("--risk (alpha) and --delta are between 0 and 1")
    if not (math.isfinite(tolerance) and tolerance >= 0):  # NaN compares False with everything
        raise JudgelabError(f"--tolerance is a number, 0 or more (got {tolerance})")
    if not human_mask(ratings["rater"]).any():
        raise JudgelabError("no human ratings (raters named human:<id>) to calibrate the threshold on")
    conf = _with_failed_units(confidence_table(ratings, signal, tolerance, logprobs), ratings, signal)
    human = _human_means(ratings)
    conf = conf.join(human, on=KEYS)
    parts, guarantees = [], []
    for (crit, rater), t in conf.groupby(["criterion", "rater"], sort=True):
        cal = t[t["human"].notna()]
        th: SelectiveThreshold = calibrate_selective(cal["confidence"], cal["rating"], cal["human"], alpha, delta,
                                                     tolerance, grid)
        keep = select(th, t["confidence"]) & t["rating"].notna().to_numpy()
        parts.append(t.assign(decision=np.where(keep, "keep", "escalate")))
        unrated = int(t["rating"].isna().sum())
        note = "; ".join(x for x in (th.note, f"{unrated} items without a successful rating go to people"
                                     if unrated else "") if x)
        guarantees.append({"rater": rater, "criterion": crit, "signal": signal, "target_agreement": 1 - alpha,
                           "delta": delta, "tolerance": tolerance, "threshold": th.threshold,
                           "n_calibration": th.n_calibration, "calibration_kept": th.n_kept,
                           "calibration_agreement": th.agreement, "p_value": th.p_value, "n_items": len(t),
                           "n_kept": int(keep.sum()), "kept_share": float(keep.mean()) if len(t) else math.nan,
                           "note": note})
    decisions = pd.concat(parts, ignore_index=True)[ESCALATION_COLUMNS]
    settings = {"signal": signal, "alpha": alpha, "delta": delta, "tolerance": tolerance, "grid": grid,
                "procedure": "fixed-sequence testing (Trust-or-Escalate), exact binomial tests, per rater and criterion"}
    return Escalation(decisions, tuple(guarantees), settings)


HOLDOUT_COLUMNS = ["rater", "criterion", "target_agreement", "delta", "threshold", "n_calibration", "n_test",
                   "test_kept", "test_kept_share", "test_agreement_kept", "test_agreement_all"]


def escalation_holdout(ratings: pd.DataFrame, signal: str = "jury", alpha: float = 0.1, delta: float = 0.1,
                       tolerance: float = 1.0, seed: int = 0, logprobs: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`escalate` with the human ratings of a random half of the item ids hidden (seeded), checked
    on that half: the share kept and the kept items' agreement with the hidden humans
    (:data:`HOLDOUT_COLUMNS`, one row per rater and criterion)."""

    items = np.array(sorted(ratings["item_id"].astype(str).unique()))
    hidden_ids = set(np.random.default_rng(seed).permutation(items)[: len(items) // 2])
    is_hidden = ratings["item_id"].astype(str).isin(hidden_ids)
    result = escalate(ratings[~(human_mask(ratings["rater"]) & is_hidden)], signal, alpha, delta, tolerance, logprobs)
    d = result.decisions.drop(columns="human").join(_human_means(ratings), on=KEYS)
    d = d[d["item_id"].isin(hidden_ids) & d["human"].notna()]
    rows = []
    for g in result.guarantees:
        t = d[(d["rater"] == g["rater"]) & (d["criterion"] == g["criterion"])]
        agree = (t["rating"] - t["human"]).abs() <= tolerance + 1e-12
        keep = (t["decision"] == "keep").to_numpy()
        rows.append({"rater": g["rater"], "criterion": g["criterion"], "target_agreement": 1 - alpha, "delta": delta,
                     "threshold": g["threshold"], "n_calibration": g["n_calibration"], "n_test": len(t),
                     "test_kept": int(keep.sum()), "test_kept_share": float(keep.mean()) if len(t) else math.nan,
                     "test_agreement_kept": float(agree[keep].mean()) if keep.any() else math.nan,
                     "test_agreement_all": float(agree.mean()) if len(t) else math.nan})
    return pd.DataFrame(rows, columns=HOLDOUT_COLUMNS)


def read_escalation(path) -> pd.DataFrame:
    """``escalation.csv`` as written by ``judgelab escalate`` (:data:`ESCALATION_COLUMNS`), checked."""
    from judgelab.ratings import _frame

    df, _ = _frame(path)
    missing = [c for c in ("system", "item_id", "criterion", "rater", "rating", "decision") if c not in df.columns]
    if missing:
        raise JudgelabError(f"{path}: not an escalation table of `judgelab escalate` (missing {', '.join(missing)})")
    out = df.copy()
    for c in ("system", "item_id", "criterion", "rater", "decision"):
        out[c] = out[c].astype(str)
    bad = sorted(set(out["decision"]) - {"keep", "escalate"})
    if bad:
        raise JudgelabError(f"{path}: decisions are keep or escalate, got {', '.join(map(repr, bad))}")
    out["rating"] = pd.to_numeric(out["rating"], errors="coerce")
    return out


def hybrid_ratings(decisions: pd.DataFrame, escalated_human: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The predictions of the hybrid rater ``hybrid:<rater>``: the judge's rating on kept items, the mean
    human rating (of ``escalated_human``, the ratings people gave the escalated items) on escalated
    ones; an escalated item nobody has rated yet keeps the judge's rating (counted in the notes).

    The hybrid is a fixed prediction function once the escalation and its annotations are done, so
    PPI stays unbiased with it *provided* PPI's labelled set is a uniform random sample drawn apart
    from the escalation (the escalated items themselves are chosen by confidence, never a PPI
    labelled set; docs/audit.md).

    Returns:
        (tidy ratings rows of the hybrid raters, one note per rater and criterion).
    """
    from judgelab.ratings import item_means
    from judgelab.status import Status

    d = decisions.copy()
    human = None
    if escalated_human is not None:
        m = item_means(escalated_human)
        human = m.groupby(KEYS)["score"].mean().rename("escalated_human")
        d = d.join(human, on=KEYS)
    else:
        d["escalated_human"] = np.nan
    esc = d["decision"] == "escalate"
    rated = esc & d["escalated_human"].notna()
    score = d["rating"].where(~rated, d["escalated_human"])
    rows = pd.DataFrame({"item_id": d["item_id"], "system": d["system"], "group": None, "criterion": d["criterion"],
                         "rater": "hybrid:" + d["rater"], "sample": 0, "score": score,
                         "status": np.where(score.notna(), Status.OK.value, Status.MISSING.value)})
    notes = []
    for (crit, rater), g in d.assign(esc=esc, rated=rated, none=score.isna()).groupby(["criterion", "rater"]):
        n_esc, n_rated, n_none = int(g["esc"].sum()), int(g["rated"].sum()), int(g["none"].sum())
        notes.append(f"{crit}: hybrid:{rater}: {len(g) - n_esc} kept items with the judge's rating, {n_rated} escalated "
                     f"items with the people's rating" + (f", {n_esc - n_rated - n_none} escalated items not rated yet "
                                                          "keep the judge's rating" if n_esc > n_rated + n_none else "")
                     + (f", {n_none} escalated items without any rating (the judge's failed, no person's yet) are "
                        "left out" if n_none else ""))
    return rows, notes
