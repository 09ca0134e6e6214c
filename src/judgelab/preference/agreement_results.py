"""What ``judgelab preference agree`` finds, as typed results: per rater and criterion the agreement of its
verdicts with the humans' label, each with its interval (:mod:`judgelab.preference.agreement` computes them).

Pages read the step's record with :meth:`PreferenceAgreement.from_record`; this module imports nothing of the
analysis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["METRICS", "BASELINE", "Estimate", "AgreementRow", "PreferenceAgreement"]

#: The pooled human row's rater: every human against the majority of the others (the baseline a judge is set against).
BASELINE = "humans (each vs the others)"
#: The agreement measures, in the table's order (docs/preference-agreement.md says what each is).
METRICS = ("accuracy", "both_correct", "consistency", "accuracy_no_ties", "consistency_no_ties", "kappa")


@dataclass(frozen=True)
class Estimate:
    """A measure with its interval (NaN bounds with ``note`` saying why; NaN value: undefined, e.g. no pair)."""

    value: float
    ci_low: float = math.nan
    ci_high: float = math.nan
    note: str = ""

    def to_record(self) -> dict[str, Any]:
        return {"value": _num(self.value), "ci_low": _num(self.ci_low), "ci_high": _num(self.ci_high), "note": self.note}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "Estimate":
        return cls(_float(doc.get("value")), _float(doc.get("ci_low")), _float(doc.get("ci_high")), str(doc.get("note") or ""))


@dataclass(frozen=True)
class AgreementRow:
    """One rater and criterion against the humans' label.

    Attributes:
        rater: the rater label; for ``kind == "human"`` a person judged against the majority of the *other* humans.
        kind: ``judge`` or ``human``.
        criterion: the criterion.
        n: pairs compared (a pair: one item and two systems, per sample).
        items: distinct items (the bootstrap's clusters).
        verdicts: verdicts compared (each order of a pair is one).
        measures: :data:`METRICS` → :class:`Estimate`.
    """

    rater: str
    kind: str
    criterion: str
    n: int
    items: int
    verdicts: int
    measures: dict[str, Estimate] = field(default_factory=dict)

    def value(self, metric: str) -> float:
        return self.measures[metric].value if metric in self.measures else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The table row: the measures, then their bounds, then the notes of the intervals."""
        row: dict[str, Any] = {"rater": self.rater, "kind": self.kind, "criterion": self.criterion, "n": self.n,
                               "items": self.items, "verdicts": self.verdicts}
        row.update({m: self.value(m) for m in METRICS})
        for m in METRICS:
            est = self.measures.get(m, Estimate(math.nan))
            row[f"{m}_ci_low"], row[f"{m}_ci_high"] = est.ci_low, est.ci_high
        notes = {est.note for est in self.measures.values() if est.note}
        row["note"] = "; ".join(sorted(notes))
        return row


@dataclass(frozen=True)
class PreferenceAgreement:
    """The record of a ``preference agree`` step: the rows, the both-order rule, how each rater's verdicts fell into
    pairs (``orders``: dicts of :class:`judgelab.preference.orders.OrderSummary`), and the settings."""

    rows: tuple[AgreementRow, ...]
    rule: str = "keep"
    orders: tuple[dict[str, Any], ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_frame(self) -> "pd.DataFrame":
        import pandas as pd

        columns = ["rater", "kind", "criterion", "n", "items", "verdicts", *METRICS,
                   *(f"{m}_ci_{b}" for m in METRICS for b in ("low", "high")), "note"]
        return pd.DataFrame([r.to_dict() for r in self.rows], columns=columns)

    def to_record(self) -> dict[str, Any]:
        return {"rule": self.rule, "settings": dict(self.settings), "notes": list(self.notes),
                "orders": [dict(o) for o in self.orders],
                "rows": [{"rater": r.rater, "kind": r.kind, "criterion": r.criterion, "n": r.n, "items": r.items,
                          "verdicts": r.verdicts, "measures": {m: e.to_record() for m, e in r.measures.items()}}
                         for r in self.rows]}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "PreferenceAgreement":
        rows = tuple(AgreementRow(str(r["rater"]), str(r["kind"]), str(r["criterion"]), int(r["n"]), int(r["items"]),
                                  int(r.get("verdicts") or 0),
                                  {str(m): Estimate.from_record(e) for m, e in (r.get("measures") or {}).items()})
                     for r in doc.get("rows") or [])
        return cls(rows, str(doc.get("rule") or "keep"), tuple(dict(o) for o in doc.get("orders") or []),
                   dict(doc.get("settings") or {}), tuple(map(str, doc.get("notes") or [])))


def _num(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


def _float(v: Any) -> float:
    return math.nan if v is None else float(v)
