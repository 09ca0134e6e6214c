"""Analysis of the padding probe: does a judge's score rise when a text gets longer without content?

Each text is judged as it is and as padded copies (:mod:`judgelab.perturb.padding`) with the same
template and criteria. For every judge, criterion and padding, :func:`padding_effects` pairs each
padded copy with its original **by label** (item id and system, through the design table of
:func:`judgelab.probes.padding_study.build_padded`; never by position), takes the per-item change
padded − original (samples averaged, failed judgments left out and counted), and reports

* the mean change with a 95% Student-t interval over the pairs
  (:func:`judgelab.stats.describe.mean_interval`'s formula, vectorised here);
* a one-sided Wilcoxon signed-rank test of "the score rises" (scipy, ``zero_method="wilcox"``:
  zero changes dropped, as :func:`judgelab.stats.tests_twosample.wilcoxon`; p = 1 when every change
  is zero) — the DHP test (Wang et al. 2024, §3.3.1) with the direction reversed;
* a plain-language line.

:func:`rise_statistics` computes all of it for many sets of changes at once (rows of a matrix),
so the false-alarm rate of a neutral judge can be simulated in a second (``tests/probes``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["PaddingEffect", "PaddingReport", "RiseStatistics", "rise_statistics", "padding_effects",
           "EFFECT_COLUMNS", "CHANGE_COLUMNS", "DESIGN_COLUMNS"]

DESIGN_COLUMNS = ["item_id", "system", "padding", "padded_system", "words", "added_words", "changed"]
CHANGE_COLUMNS = ["rater", "criterion", "padding", "item_id", "system", "group", "original", "padded", "change",
                  "words", "added_words"]
EFFECT_COLUMNS = ["rater", "criterion", "padding", "n", "left_out", "added_share", "mean_original", "mean_change",
                  "ci_low", "ci_high", "wilcoxon_statistic", "pvalue", "n_zero", "rises", "note", "line"]


@dataclass(frozen=True)
class RiseStatistics:
    """Vectorised results of :func:`rise_statistics`, one entry per row of the input."""

    mean: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    n: np.ndarray
    n_zero: np.ndarray


def rise_statistics(changes, confidence_level: float = 0.95) -> RiseStatistics:
    """Mean change, its t interval and the one-sided Wilcoxon p-value of "the change is positive",
    for every row of ``changes`` (shape ``(..., n)``; NaN entries must not occur).

    The interval is ``mean ± t_{1-α/2, n-1} · s/√n`` (NaN for n < 2 or zero spread, as
    :func:`judgelab.stats.describe.mean_interval`). The test is scipy's ``wilcoxon(d,
    zero_method="wilcox", alternative="greater")`` along the last axis; a row of zeros has p = 1.

    Example:
        >>> r = rise_statistics([[0.5, 1.0, 0.0, 1.5, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]])
        >>> [round(float(v), 3) for v in r.mean], [round(float(p), 4) for p in r.pvalue]
        ([0.8, 0.0], [0.0625, 1.0])
    """
    from scipy import special
    from scipy import stats

    d = np.asarray(changes, dtype=float)
    if d.ndim == 0 or d.shape[-1] == 0:
        raise JudgelabError("no paired changes to test")
    if np.isnan(d).any():
        raise ValueError("changes contain NaN: leave unpaired items out before testing")
    n = d.shape[-1]
    mean = d.mean(axis=-1)
    sd = d.std(axis=-1, ddof=1) if n > 1 else np.full(mean.shape, np.nan)
    q = float(special.stdtrit(n - 1, 1 - (1 - confidence_level) / 2)) if n > 1 else math.nan
    half = np.where(sd > 0, q * sd / math.sqrt(n), np.nan)
    n_zero = (d == 0).sum(axis=-1)
    all_zero = n_zero == n
    with np.errstate(invalid="ignore", divide="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = stats.wilcoxon(np.where(all_zero[..., None], 1.0, d), axis=-1, zero_method="wilcox",
                                 alternative="greater")
    statistic = np.where(all_zero, np.nan, np.asarray(res.statistic, dtype=float))
    pvalue = np.where(all_zero, 1.0, np.asarray(res.pvalue, dtype=float))
    return RiseStatistics(mean, mean - half, mean + half, statistic, pvalue,
                          np.full(mean.shape, n), n_zero)


@dataclass(frozen=True)
class PaddingEffect:
    """The change of one judge's score on one criterion when its texts are padded one way.

    Attributes:
        rater, criterion, padding: the judge, the criterion and the padding (``filler-50``).
        n: items paired (an ok score on the original and on its padded copy).
        left_out: padded copies without a pair (a failed or missing judgment on either side, or a
            text that could not be padded).
        added_share: mean share of words added over the paired items (0.5 = +50%).
        mean_original: mean score of the paired originals.
        mean_change: mean of padded − original; ``ci_low``, ``ci_high`` its 95% t interval.
        wilcoxon_statistic, pvalue, n_zero: one-sided Wilcoxon signed-rank test of a rise
            (sum of the ranks of positive changes; pairs with no change dropped).
        rises: the one-sided test rejects "no rise" at 0.05 (the interval gives the size; it is
            undefined when every item changes by the same amount, e.g. +1 on every item).
        note: caveats (few pairs, undefined interval, pairs sharing a group).
        line: the plain-language sentence.
    """

    rater: str
    criterion: str
    padding: str
    n: int
    left_out: int
    added_share: float
    mean_original: float
    mean_change: float
    ci_low: float
    ci_high: float
    wilcoxon_statistic: float
    pvalue: float
    n_zero: int
    rises: bool
    note: str = ""
    line: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PaddingReport:
    """Every :class:`PaddingEffect` of a probe, the per-item changes behind them and the settings."""

    effects: tuple[PaddingEffect, ...]
    changes: pd.DataFrame = field(repr=False, default_factory=lambda: pd.DataFrame(columns=CHANGE_COLUMNS))
    settings: dict[str, Any] = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per judge × criterion × padding (:data:`EFFECT_COLUMNS`)."""
        return pd.DataFrame([e.to_dict() for e in self.effects], columns=EFFECT_COLUMNS)

    def lines(self) -> list[str]:
        return [e.line for e in self.effects]

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "effects": [_jsonable(e.to_dict()) for e in self.effects], "settings": dict(self.settings)}


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def _words_of(padding: str) -> str:
    kind, _, pct = padding.partition("-")
    return {"filler": f"{pct}% filler sentences are", "repeat": f"{pct}% repeated sentences are"}.get(
        kind, f"padding {padding} is")


def _line(rater: str, criterion: str, padding: str, e: dict[str, Any]) -> str:
    what = f"{rater}, {criterion}: when {_words_of(padding)} added (+{e['added_share']:.0%} words on average)"
    if e["n"] == 0:
        return f"{what}: no item has a score for both the original and the padded copy"
    if math.isnan(e["ci_low"]):
        interval = "no interval"
    else:
        interval = f"95% CI [{e['ci_low']:+.2f}, {e['ci_high']:+.2f}]"
    change = f"the score changes by {e['mean_change']:+.2f} points ({interval}; one-sided Wilcoxon p = {e['pvalue']:.3g}, n = {e['n']})"
    if e["rises"]:
        verdict = "it rewards length"
    elif not math.isnan(e["ci_low"]) and e["ci_low"] > 0:
        verdict = "the interval lies above 0 but the rank test does not reject: a rise is not established"
    elif not math.isnan(e["ci_high"]) and e["ci_high"] < 0:
        verdict = "it penalises this padding"
    else:
        verdict = "no rise is detected"
    return f"{what}, {change}: {verdict}"


def padding_effects(ratings: pd.DataFrame, design: pd.DataFrame, criteria: list[str] | None = None,
                    confidence_level: float = 0.95, min_pairs: int = 10) -> PaddingReport:
    """Per judge, criterion and padding: the score change of padded copies against their originals.

    Args:
        ratings: tidy ratings (item_id, system, group, criterion, rater, sample, score, status) of
            the originals (their own system) and the padded copies (system ``padded_system``).
        design: one row per original × padding (:data:`DESIGN_COLUMNS`): ``item_id`` and ``system``
            of the original, ``padding``, the system label of its copy, words and added words, and
            whether a copy was made.
        criteria: default every criterion in ``ratings``.
        confidence_level: of the t interval.
        min_pairs: fewer pairs than this get a note (the interval and test are unreliable).

    Returns:
        :class:`PaddingReport` (``changes``: one row per pair, :data:`CHANGE_COLUMNS`).

    Raises:
        JudgelabError: the design lacks columns, or no rater has a rating of an original.
    """
    from judgelab.ratings import item_means

    missing = [c for c in DESIGN_COLUMNS if c not in design.columns]
    if missing:
        raise JudgelabError(f"the padding design lacks columns {', '.join(missing)}")
    means = item_means(ratings)
    means = means.assign(item_id=means["item_id"].astype(str), system=means["system"].astype(str))
    design = design.assign(item_id=design["item_id"].astype(str), system=design["system"].astype(str),
                           padded_system=design["padded_system"].astype(str))
    crits = list(criteria) if criteria else list(dict.fromkeys(ratings["criterion"]))
    effects: list[PaddingEffect] = []
    change_frames: list[pd.DataFrame] = []
    for rater in sorted(set(ratings["rater"])):
        for criterion in crits:
            m = means[(means["rater"] == rater) & (means["criterion"] == criterion)]
            score = m.set_index(["item_id", "system"])["score"]
            group = m.set_index(["item_id", "system"])["group"]
            for padding, rows in design.groupby("padding", sort=False):
                orig_key = pd.MultiIndex.from_frame(rows[["item_id", "system"]])
                pad_key = pd.MultiIndex.from_arrays([rows["item_id"], rows["padded_system"]])
                frame = pd.DataFrame({
                    "rater": rater, "criterion": criterion, "padding": padding,
                    "item_id": rows["item_id"].to_numpy(), "system": rows["system"].to_numpy(),
                    "group": group.reindex(orig_key).to_numpy(),
                    "original": score.reindex(orig_key).to_numpy(dtype=float),
                    "padded": score.reindex(pad_key).to_numpy(dtype=float),
                    "words": rows["words"].to_numpy(), "added_words": rows["added_words"].to_numpy()})
                frame.loc[~rows["changed"].astype(bool).to_numpy(), "padded"] = np.nan
                frame["change"] = frame["padded"] - frame["original"]
                paired = frame.dropna(subset=["change"])
                change_frames.append(paired[CHANGE_COLUMNS])
                effects.append(_effect(rater, criterion, str(padding), paired, len(frame) - len(paired),
                                       confidence_level, min_pairs))
    changes = pd.concat(change_frames, ignore_index=True) if change_frames else pd.DataFrame(columns=CHANGE_COLUMNS)
    return PaddingReport(tuple(effects), changes, {"confidence_level": confidence_level, "criteria": crits,
                                                    "test": "one-sided Wilcoxon signed-rank (greater), zero_method wilcox",
                                                    "interval": "Student t over the paired items"})


def _effect(rater: str, criterion: str, padding: str, paired: pd.DataFrame, left_out: int,
            confidence_level: float, min_pairs: int, alpha: float = 0.05) -> PaddingEffect:
    n = len(paired)
    notes = []
    nan = math.nan
    e: dict[str, Any] = {"n": n, "added_share": nan, "mean_original": nan, "mean_change": nan, "ci_low": nan,
                         "ci_high": nan, "wilcoxon_statistic": nan, "pvalue": nan, "n_zero": 0}
    if n:
        s = rise_statistics(paired["change"].to_numpy(float), confidence_level)
        e.update(added_share=float((paired["added_words"] / paired["words"]).mean()),
                 mean_original=float(paired["original"].mean()), mean_change=float(s.mean),
                 ci_low=float(s.ci_low), ci_high=float(s.ci_high), wilcoxon_statistic=float(s.statistic),
                 pvalue=float(s.pvalue), n_zero=int(s.n_zero))
        if math.isnan(e["ci_low"]):
            notes.append("no interval: fewer than two pairs, or every item changes by the same amount "
                         f"({e['mean_change']:+g})")
        if n < min_pairs:
            notes.append(f"only {n} pairs: the interval and the test are rough")
        shared = paired["group"].dropna()
        if shared.duplicated().any():
            notes.append(f"{n} pairs in {shared.nunique()} groups: pairs of one group (e.g. several systems' texts "
                         "of one document) may not be independent, so the interval may be too narrow")
    if left_out:
        notes.append(f"{left_out} padded copies left out (no ok score on the copy or its original, or not padded)")
    rises = bool(n and e["pvalue"] < alpha)
    e["rises"] = rises
    return PaddingEffect(rater, criterion, padding, n, left_out, e["added_share"], e["mean_original"], e["mean_change"],
                         e["ci_low"], e["ci_high"], e["wilcoxon_statistic"], e["pvalue"], e["n_zero"], rises,
                         "; ".join(notes), _line(rater, criterion, padding, e))
