"""The result types of :func:`judgelab.annotate.estimate.human_estimates` (``judgelab human-estimate``).

Frozen dataclasses, one per question the command answers: a system's PPI++ mean
(:class:`SystemEstimate`), a difference of two systems (:class:`DifferenceEstimate`), the
Alternative Annotator Test (:class:`AltTestOutcome`), the planner (:class:`PlanOutcome`), and
:class:`HumanEstimates`, which holds them all. ``to_dict()`` is the documented JSON
(``"schema": 1``, NaN as null); ``rows()``/``tables()`` the CSV tables of numbers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.stats.alternative_annotator import AltTestResult
from judgelab.stats.ppi_plan import PPIPlan
from judgelab.stats.ppi_results import PPIDifference, PPIMean

__all__ = ["SystemEstimate", "DifferenceEstimate", "AltTestOutcome", "PlanOutcome", "HumanEstimates", "SCHEMA"]

SCHEMA = 1
_NAN = float("nan")


def _clean(value: Any) -> Any:
    """JSON-ready: NaN and infinities become None, tuples lists, numpy scalars Python numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


@dataclass(frozen=True)
class SystemEstimate:
    """One system's mean on one criterion.

    Attributes:
        system, criterion: what is estimated.
        n_judge: items the judge rated successfully.
        n_human: of those, items at least one person rated (the labelled set).
        n_annotators: people who rated any of this system's items on this criterion.
        result: the PPI++ estimate with its human-only and judge-only baselines; None when it
            cannot be computed (``note`` says why).
        note: why there is no result, or a caveat.
    """

    system: str
    criterion: str
    n_judge: int
    n_human: int
    n_annotators: int
    result: PPIMean | None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "criterion": self.criterion, "n_judge": self.n_judge, "n_human": self.n_human,
                "n_annotators": self.n_annotators, "result": self.result.to_dict() if self.result else None,
                "note": self.note}

    def rows(self) -> list[dict[str, Any]]:
        """One row per estimator (``ppi``, ``human_only``, ``judge_only``), numbers only."""
        head = {"criterion": self.criterion, "system": self.system}
        if self.result is None:
            return [{**head, "method": "ppi", "estimate": _NAN, "se": _NAN, "ci_low": _NAN, "ci_high": _NAN,
                     "half_width": _NAN, "df": _NAN, "n_human": self.n_human, "n_judge": self.n_judge, "lam": _NAN,
                     "effective_n": _NAN, "note": self.note}]
        frame = self.result.to_frame()
        rows = []
        for row in frame.to_dict(orient="records"):
            ppi = row["method"] == "ppi"
            rows.append({**head, "method": row["method"], "estimate": row["estimate"], "se": row["se"],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"], "half_width": row["half_width"],
                         "df": row["df"], "n_human": int(row["n_human"]), "n_judge": int(row["n_judge"]),
                         "lam": row["lam"], "effective_n": self.result.effective_n if ppi else _NAN,
                         "note": self.note if ppi else row["note"]})
        return rows


@dataclass(frozen=True)
class DifferenceEstimate:
    """``mean(system_a) - mean(system_b)`` on one criterion (PPI++, with the naive baselines)."""

    criterion: str
    system_a: str
    system_b: str
    result: PPIDifference | None
    paired: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "system_a": self.system_a, "system_b": self.system_b, "paired": self.paired,
                "result": self.result.to_dict() if self.result else None, "note": self.note}

    def rows(self) -> list[dict[str, Any]]:
        head = {"criterion": self.criterion, "system_a": self.system_a, "system_b": self.system_b}
        if self.result is None:
            return [{**head, "method": "ppi", "estimate": _NAN, "se": _NAN, "ci_low": _NAN, "ci_high": _NAN,
                     "half_width": _NAN, "df": _NAN, "z": _NAN, "p_value": _NAN, "lam_a": _NAN, "lam_b": _NAN,
                     "note": self.note}]
        rows = []
        for row in self.result.to_frame().to_dict(orient="records"):
            ppi = row["method"] == "ppi"
            rows.append({**head, "method": row["method"], "estimate": row["estimate"], "se": row["se"],
                         "ci_low": row["ci_low"], "ci_high": row["ci_high"], "half_width": row["half_width"],
                         "df": row["df"], "z": self.result.z if ppi else _NAN,
                         "p_value": self.result.p_value if ppi else _NAN, "lam_a": row["lam_a"], "lam_b": row["lam_b"],
                         "note": self.note if ppi else row["note"]})
        return rows


@dataclass(frozen=True)
class AltTestOutcome:
    """The Alternative Annotator Test on one criterion, or the reason it could not run."""

    criterion: str
    annotators: tuple[str, ...]
    result: AltTestResult | None
    reason: str = ""

    @property
    def ran(self) -> bool:
        return self.result is not None

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "annotators": list(self.annotators), "ran": self.ran,
                "result": self.result.to_dict() if self.result else None, "reason": self.reason}

    def rows(self) -> list[dict[str, Any]]:
        if self.result is None:
            return [{"criterion": self.criterion, "annotator": "", "n_items": 0, "rho_judge": _NAN, "rho_human": _NAN,
                     "t": _NAN, "p_value": _NAN, "p_adjusted": _NAN, "rejected": False, "epsilon": _NAN,
                     "winning_rate": _NAN, "advantage_probability": _NAN, "passed": False, "note": self.reason}]
        r = self.result
        return [{"criterion": self.criterion, "annotator": str(c.annotator), "n_items": c.n_items, "rho_judge": c.rho_judge,
                 "rho_human": c.rho_human, "t": c.t, "p_value": c.p_value, "p_adjusted": c.p_adjusted,
                 "rejected": c.rejected, "epsilon": r.epsilon, "winning_rate": r.winning_rate,
                 "advantage_probability": r.advantage_probability, "passed": r.passed,
                 "note": ("not tested (too few items): " + ", ".join(map(str, r.skipped))) if r.skipped else ""}
                for c in r.comparisons]


@dataclass(frozen=True)
class PlanOutcome:
    """How many human-rated items reach the target half-width (per system for a difference).

    Attributes:
        scope: ``mean`` (one system) or ``difference`` (two systems, ``n`` per system).
        n_human_now: human-rated items so far (the smaller of the two systems for a difference).
        plan: the planner's result; None when there is no pilot (``note`` says why).
        more_needed: ``plan.n - n_human_now`` (0 when the target is reached already).
        reachable: ``plan.n`` is at most the items the judge rated (of each system).

    ``plan.n`` is the larger of the ``n`` the target half-width needs (``plan.n_for_width``) and
    the ``n`` from which the interval keeps its level (``plan.valid_from``); ``note`` says when
    the second decided.
    """

    criterion: str
    scope: str
    systems: tuple[str, ...]
    n_human_now: int
    plan: PPIPlan | None
    more_needed: int | None = None
    reachable: bool = True
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"criterion": self.criterion, "scope": self.scope, "systems": list(self.systems),
                "n_human_now": self.n_human_now, "plan": self.plan.to_dict() if self.plan else None,
                "more_needed": self.more_needed, "reachable": self.reachable, "note": self.note}

    def row(self) -> dict[str, Any]:
        p = self.plan
        return {"criterion": self.criterion, "scope": self.scope, "systems": " - ".join(self.systems),
                "n_human_now": self.n_human_now, "n_needed": p.n if p else _NAN,
                "more_needed": self.more_needed if self.more_needed is not None else _NAN,
                "predicted_half_width": p.predicted_half_width if p else _NAN,
                "target_half_width": p.target_half_width if p else _NAN,
                "n_for_width": p.n_for_width if p else _NAN, "valid_from": p.valid_from if p else _NAN,
                "n_human_only": p.n_human_only if p else _NAN, "reachable": self.reachable, "note": self.note}


@dataclass(frozen=True)
class HumanEstimates:
    """Everything ``judgelab human-estimate`` reports, for one judge."""

    judge: str
    alpha: float
    criteria: tuple[str, ...]
    systems: tuple[str, ...]
    means: tuple[SystemEstimate, ...]
    differences: tuple[DifferenceEstimate, ...]
    alt_tests: tuple[AltTestOutcome, ...]
    plans: tuple[PlanOutcome, ...] = ()
    target_half_width: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    quantile: str = "t"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``"schema": 1``; NaN as null)."""
        return _clean({
            "schema": SCHEMA, "judge": self.judge, "alpha": self.alpha, "quantile": self.quantile,
            "criteria": list(self.criteria),
            "systems": list(self.systems), "target_half_width": self.target_half_width,
            "means": [m.to_dict() for m in self.means], "differences": [d.to_dict() for d in self.differences],
            "alt_test": [a.to_dict() for a in self.alt_tests], "plans": [p.to_dict() for p in self.plans],
            "notes": list(self.notes),
        })

    def tables(self) -> dict[str, pd.DataFrame]:
        """``estimates``, ``differences``, ``alt_test`` and (with a target) ``plan`` as tables of numbers."""
        out = {
            "estimates": pd.DataFrame([r for m in self.means for r in m.rows()]),
            "differences": pd.DataFrame([r for d in self.differences for r in d.rows()]),
            "alt_test": pd.DataFrame([r for a in self.alt_tests for r in a.rows()]),
        }
        if self.plans:
            out["plan"] = pd.DataFrame([p.row() for p in self.plans])
        return out
