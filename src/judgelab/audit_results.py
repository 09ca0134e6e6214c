"""The audit's typed results as one document (``audit.json``, read by the HTML report), and the
calibration of a judge's sample agreement (``judgelab audit --calibration``).

**Calibration from samples.** A ratings table holds no stated probability, but a judge asked
several times states one implicitly: its *confidence* on an item is the share of its samples within
``tolerance`` points of its rating (the mean of its successful samples, as everywhere in the
audit), and it *agreed* when that rating is within ``tolerance`` of the mean human rating. A
well-calibrated judge agrees with the humans on 80% of the items where 80% of its samples agree
with each other. :func:`judgelab.stats.calibration.calibration` gives the reliability bins, ECE and
Brier score with intervals that resample items (all systems of an item together). With ``k``
samples the confidence takes at most ``k + 1`` values; the diagram has one bin per value that
occurs, up to ``n_bins`` bins (``audit --bins``, default 20; more values: that many equal-width bins,
said in the note).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats.calibration import BIN_COLUMNS, CalibrationResult, calibration

__all__ = ["JudgeCalibration", "sample_calibration", "calibration_tables", "audit_document", "self_check_document",
           "AUDIT_JSON", "AUDIT_JSON_SCHEMA", "CALIBRATION_COLUMNS", "sample_agreement", "escalation_document",
           "jury_lines"]

AUDIT_JSON = "audit.json"
AUDIT_JSON_SCHEMA = 1
CALIBRATION_COLUMNS = ["rater", "criterion", "tolerance", "ece", "ece_ci_low", "ece_ci_high", "brier", "brier_ci_low",
                       "brier_ci_high", "n", "n_clusters", "agreement", "mean_confidence", "note"]


@dataclass(frozen=True)
class JudgeCalibration:
    """The calibration of one judge's sample agreement on one criterion."""

    rater: str
    criterion: str
    tolerance: float
    result: CalibrationResult
    agreement: float
    mean_confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"rater": self.rater, "criterion": self.criterion, "tolerance": self.tolerance,
                "agreement": self.agreement, "mean_confidence": self.mean_confidence, **self.result.to_dict()}


def sample_agreement(ratings: pd.DataFrame, rater: str, criterion: str, tolerance: float) -> pd.DataFrame:
    """Per (system, item) the judge rated (index): ``rating`` (mean of its successful samples),
    ``confidence`` (share of those samples within ``tolerance`` of it) and ``samples`` (how many)."""
    from judgelab.status import Status

    mine = ratings[(ratings["status"] == Status.OK) & (ratings["criterion"] == criterion) & (ratings["rater"] == rater)]
    rating = mine.groupby(["system", "item_id"])["score"].transform("mean")
    close = (mine["score"] - rating).abs() <= tolerance + 1e-9
    per_item = pd.DataFrame({"rating": rating, "close": close, "system": mine["system"], "item_id": mine["item_id"]})
    return per_item.groupby(["system", "item_id"]).agg(rating=("rating", "first"), confidence=("close", "mean"),
                                                       samples=("close", "size"))


def sample_confidence(ratings: pd.DataFrame, rater: str, criterion: str, tolerance: float) -> pd.DataFrame:
    """Per (system, item) the judge rated at least twice and the humans rated: ``confidence`` (share of
    its successful samples within ``tolerance`` of their mean), ``agreed`` (that mean within ``tolerance``
    of the mean human rating), matched by label."""
    from judgelab.raters import human_mask
    from judgelab.status import Status

    g = sample_agreement(ratings, rater, criterion, tolerance)
    g = g[g["samples"] >= 2]
    ok = ratings[(ratings["status"] == Status.OK) & (ratings["criterion"] == criterion)]
    human = ok[human_mask(ok["rater"])].groupby(["system", "item_id"])["score"].mean().rename("human")
    t = g.join(human, how="inner").reset_index()
    t["agreed"] = ((t["rating"] - t["human"]).abs() <= tolerance + 1e-9).astype(float)
    return t


def sample_calibration(ratings: pd.DataFrame, tolerance: float = 1.0, n_bins: int = 20, criteria: list[str] | None = None,
                       n_resamples: int = 999, seed: int = 0) -> list[JudgeCalibration]:
    """The calibration of every judge with two or more samples per item, per criterion (module docstring),
    with one bin per distinct confidence value when there are at most ``n_bins`` of them, else
    ``n_bins`` equal-width bins (the note says so).

    Raises:
        JudgelabError: no judge has two samples of an item that the humans rated.
    """
    from judgelab.ratings import is_human

    out = []
    for criterion in criteria or sorted(ratings["criterion"].unique()):
        for rater in sorted(r for r in ratings["rater"].unique() if not is_human(r)):
            t = sample_confidence(ratings, rater, criterion, tolerance)
            if t.empty:
                continue
            res = calibration(t["confidence"], t["agreed"], n_bins, clusters=t["item_id"].astype(str),
                              n_resamples=n_resamples, seed=seed, by_value=True)
            out.append(JudgeCalibration(str(rater), str(criterion), tolerance, res, float(t["agreed"].mean()),
                                        float(t["confidence"].mean())))
    if not out:
        raise JudgelabError("--calibration needs a judge with two or more samples of items the humans rated (its "
                            "confidence is the agreement of its samples)")
    return out


def calibration_tables(results: list[JudgeCalibration]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``CALIBRATION_COLUMNS`` per judge and criterion, the reliability bins with rater and criterion)."""
    summary = pd.DataFrame([{c: r.to_dict()[c] for c in CALIBRATION_COLUMNS} for r in results],
                           columns=CALIBRATION_COLUMNS)
    bins = [pd.DataFrame({"rater": r.rater, "criterion": r.criterion}, index=range(len(r.result.bins)))
            .join(r.result.to_frame()) for r in results]
    return summary, (pd.concat(bins, ignore_index=True) if bins else
                     pd.DataFrame(columns=["rater", "criterion", *BIN_COLUMNS]))


def _clean(value: Any) -> Any:
    if isinstance(value, pd.DataFrame):
        return [{k: _clean(v) for k, v in row.items()} for row in value.to_dict(orient="records")]
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    return value


_METHOD_NAMES = {"kendall": "Kendall tau", "spearman": "Spearman rho", "pearson": "Pearson r"}


def jury_lines(jury: pd.DataFrame | None) -> list[str]:
    """The jury's verdict, one line per jury and criterion: its correlation with the mean human rating minus
    the best single judge's, with the paired 95% interval (the rows ``"<jury> - <best judge>"`` of
    :func:`judgelab.jury_agreement.jury_vs_judges`); the terminal prints these lines and report.html shows them."""
    if jury is None or jury.empty:
        return []
    out = []
    for _, row in jury[jury["rater"].astype(str).str.contains(" - ", regex=False)].iterrows():
        lo, hi = row.get("ci_low"), row.get("ci_high")
        ci = (f"95% CI {lo:+.3f} to {hi:+.3f}" if pd.notna(lo) and pd.notna(hi)
              else "no 95% interval: see the jury table's note")
        name = _METHOD_NAMES.get(str(row.get("method")), str(row.get("method") or "correlation"))
        out.append(f"{row['criterion']}: {row['rater']}: {name} difference {row['r']:+.3f} ({ci})")
    return out


def audit_document(report: Any, jury: pd.DataFrame | None = None, jury_level: str | None = None,
                   selective: pd.DataFrame | None = None,
                   calibration_results: list[JudgeCalibration] | None = None,
                   shift: pd.DataFrame | None = None, shift_lines: list[str] | None = None) -> dict[str, Any]:
    """``audit.json``: everything the HTML report's Audit section shows, computed by the audit.

    ``{"schema": 1, "command": "audit", "effects": [EFFECT_COLUMNS row, ...], "lines": [...],
    "skipped": {...}, "settings": {...}, "jury": rows | null, "jury_level": ..., "selective": rows | null,
    "calibration": [{rater, criterion, tolerance, ece, ..., bins: [...]}, ...] | null,
    "shift": rows of ``stats.paired_shift.SHIFT_COLUMNS`` | null, "shift_lines": [...],
    "jury_lines": :func:`jury_lines`}``; NaN is null. The settings hold ``per_words``, the length unit.
    """
    return _clean({"schema": AUDIT_JSON_SCHEMA, "command": "audit", "effects": [e.to_dict() for e in report.effects],
                   "lines": report.lines() + list(shift_lines or []), "skipped": report.skipped,
                   "settings": report.settings, "shift": shift if shift is not None and len(shift) else None,
                   "shift_lines": list(shift_lines or []), "jury_lines": jury_lines(jury),
                   "jury": jury, "jury_level": jury_level, "selective": selective,
                   "calibration": None if calibration_results is None else [c.to_dict() for c in calibration_results]})


def self_check_document(result: Any) -> dict[str, Any]:
    """``audit.json`` of ``audit --self-check`` (``--pairwise``: settings ``mode`` pairwise): the rows, lines and
    settings of a ``SelfCheckResult``."""
    command = "audit --self-check" + (" --pairwise" if result.settings.get("mode") == "pairwise" else "")
    return _clean({"schema": AUDIT_JSON_SCHEMA, "command": command, "self_check": result.to_frame(),
                   "lines": result.lines(), "settings": result.settings})


def escalation_document(result: Any) -> dict[str, Any]:
    """``audit.json`` of ``judgelab escalate``: the guarantee per rater and criterion
    (``escalate.GUARANTEE_COLUMNS`` rows under ``escalation``), its lines and settings."""
    return _clean({"schema": AUDIT_JSON_SCHEMA, "command": "escalate", "escalation": result.summary(),
                   "lines": result.lines(), "settings": result.settings})
