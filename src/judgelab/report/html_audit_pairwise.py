"""The pairwise judges in the report's Audit section (``judgelab audit --verdicts``), rendered from ``audit.json``.

The audit records per pairwise judge and criterion its position preference (``pairwise_first``), the
share of pairs whose winner flips with the order (``pairwise_flip``), and its preference for the longer
response and for its own family's against the humans' (``pairwise_longer``, ``pairwise_own``). This
module gives them their kind of the section (interval charts and the raw table, as every other kind)
and their names in the summary grid; it computes nothing.
"""
from __future__ import annotations

from typing import Any

from judgelab.report.html_audit_effects import _EFFECT_COLUMNS, AuditGrid, EffectKind, _chart, _ordered, ci_text, clean_note
from judgelab.report.html_model import Table

__all__ = ["PAIRWISE_NAMES", "pairwise_kind", "name_pairwise"]

#: The pairwise biases as the page names them (grid, chart titles).
PAIRWISE_NAMES = {"pairwise_first": "picks first shown (pairs)", "pairwise_flip": "winner flips with order",
                  "pairwise_longer": "picks longer (pairs)", "pairwise_own": "picks own family (pairs)"}
_AXES = {"pairwise_first": "share of decisive verdicts for the first shown, minus 1/2",
         "pairwise_flip": "share of pairs asked in both orders",
         "pairwise_longer": "share of pairs for the longer response, judge minus humans",
         "pairwise_own": "share of pairs for its own family's response, judge minus humans"}
_HEADING = "Pairwise judges (verdicts): position, length and self-preference"


def pairwise_kind(effects: list[dict[str, Any]]) -> EffectKind | None:
    """The section's kind for the pairwise effects (``None`` when the audit recorded none)."""
    rows = [dict(e, detected_text="yes" if e.get("detected") else "no", ci=ci_text(e.get("ci_low"), e.get("ci_high")),
                 note=clean_note(e.get("note"))) for e in effects if e.get("bias") in PAIRWISE_NAMES]
    if not rows:
        return None
    table = Table("audit-pairwise", f"{_HEADING}: every effect", [c[1] for c in _EFFECT_COLUMNS],
                  [c[2] for c in _EFFECT_COLUMNS], [[r.get(c[0]) for c in _EFFECT_COLUMNS] for r in rows])
    figures = []
    for bias, title in PAIRWISE_NAMES.items():
        mine = _ordered([r for r in rows if r.get("bias") == bias])
        if mine:
            figures.append(_chart(mine, f"fig-audit-{bias.replace('_', '-')}", f"{title}: estimate with 95% interval",
                                  _AXES[bias], "rater · criterion",
                                  lambda e: f"{e.get('rater')} · {e.get('criterion') or 'all criteria'}"))
    return EffectKind(_HEADING, table, figures)


def name_pairwise(grid: AuditGrid | None) -> AuditGrid | None:
    """The summary grid with the pairwise biases under their page names (the grid names the biases it knows)."""
    if grid is None:
        return None
    for _, cells in grid.rows:
        for cell in cells:
            if cell is None:
                continue
            cell.detected = [(PAIRWISE_NAMES.get(name, name), marks) for name, marks in cell.detected]
            for _, marks in cell.detected:
                for m in marks:
                    if m.bias in PAIRWISE_NAMES and m.title.startswith(m.bias):
                        m.title = PAIRWISE_NAMES[m.bias] + m.title[len(m.bias):]
    return grid
