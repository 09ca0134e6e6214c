"""The report's "Audit" section: what ``judgelab audit --out`` found, rendered from its ``audit.json``.

The section renders the audit's typed results and computes nothing: each bias effect with its 95%
interval, its no-bias value and plain-language line (tables per kind of bias, and interval charts),
what the audit skipped and why, the jury table, selective judging (the guaranteed level beside the
coverage and agreement measured on held-out items), the calibration of each judge's sample
agreement (a reliability diagram as inline SVG, ECE and Brier with intervals), and the self-check
of ``audit --self-check``. A folder without ``audit.json`` has no Audit section; an ``audit.json``
of another schema is a problem line, not a guess.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judgelab.report.folder import RunFolder
from judgelab.report.html_model import ColumnKind, Figure, Table
from judgelab.report.svg import Point, interval_chart, reliability_diagram

__all__ = ["AuditSection", "build_audit", "AUDIT_TABLES", "AUDIT_TEMPLATE"]

#: The audit's tables the section shows (left out of "Other tables"; results.json names their files).
AUDIT_TABLES = {"leniency", "scale_points", "length", "self_preference", "position", "prompt_sensitivity",
                "jury_agreement", "selective", "calibration", "calibration_bins", "self_check", "escalation_guarantee"}
_KINDS = (("leniency", "Leniency and spread", ("leniency", "spread_ratio")),
          ("scale_points", "Scale use (share of each scale point, rater minus humans)", ("scale_point:",)),
          ("length", "Length", ("length", "prefer_longer")),
          ("self_preference", "Self-preference", ("self_preference",)),
          ("position", "Position", ("position_first", "position_consistency")),
          ("prompt_sensitivity", "Prompt sensitivity", ("prompt_icc", "prompt_shift")))
_CHARTED = {"leniency": "mean shift (points)", "spread_ratio": "spread ratio", "length": "points per length unit",
            "prefer_longer": "share of pairs, judge minus humans", "self_preference": "gap difference (points)",
            "position_first": "first-position preference"}
CHART_LIMIT = 80


@dataclass
class AuditSection:
    """What the Audit section shows (every value read from ``audit.json``)."""

    command: str
    lines: list[str]
    skipped: list[str]
    #: per kind of bias: its table and the interval charts of its effects
    effects: list[tuple[Table, list[Figure]]]
    jury: Table | None = None
    shift: Table | None = None
    selective: Table | None = None
    selective_lines: list[str] = field(default_factory=list)
    calibration: Table | None = None
    reliability: list[Figure] = field(default_factory=list)
    self_check: Table | None = None
    escalation: Table | None = None
    notes: list[str] = field(default_factory=list)


def _kind(bias: str, kinds: tuple[str, ...]) -> bool:
    return any(bias == k or (k.endswith(":") and bias.startswith(k)) for k in kinds)


def _table(table_id: str, caption: str, rows: list[dict[str, Any]], columns: list[tuple[str, str, ColumnKind]],
           note: str = "") -> Table:
    return Table(table_id, caption, [c[1] for c in columns], [c[2] for c in columns],
                 [[r.get(c[0]) for c in columns] for r in rows], note)


def _ci(low: Any, high: Any) -> str:
    """An interval as text, ``[low, high]`` (3 decimals); ``none`` when a bound is missing (the note says why)."""
    return "none" if low is None or high is None else f"[{float(low):.3f}, {float(high):.3f}]"


def _with_cis(rows: list[dict[str, Any]], *prefixes: str) -> list[dict[str, Any]]:
    return [dict(r, **{f"{p}ci": _ci(r.get(f"{p}ci_low"), r.get(f"{p}ci_high")) for p in prefixes}) for r in rows]


_EFFECT_COLUMNS: list[tuple[str, str, ColumnKind]] = [
    ("bias", "bias", "text"), ("rater", "rater", "text"), ("criterion", "criterion", "text"),
    ("estimate", "estimate", "num"), ("ci", "95% CI", "text"), ("null", "no-bias value", "num"), ("detected_text", "detected", "text"), ("n", "n", "int"),
    ("n_clusters", "items resampled", "int"), ("note", "note", "text")]


def _effects(effects: list[dict[str, Any]]) -> list[tuple[Table, list[Figure]]]:
    """One table per kind of bias (the plain-language lines are listed above them), with its charts."""
    out = []
    for name, caption, kinds in _KINDS:
        rows = _with_cis([dict(e, detected_text="yes" if e.get("detected") else "no") for e in effects
                          if _kind(str(e.get("bias")), kinds)], "")
        if not rows:
            continue
        figures = []
        for bias, xlabel in _CHARTED.items():
            mine = [e for e in rows if e.get("bias") == bias][:CHART_LIMIT]
            if not mine:
                continue
            nulls = {e.get("null") for e in mine if e.get("null") is not None}
            points = [Point(f"{e.get('rater')} · {e.get('criterion')}", e.get("estimate"), e.get("ci_low"),
                            e.get("ci_high")) for e in mine]
            figures.append(Figure(f"fig-audit-{bias}", f"{bias}: estimate with 95% interval",
                                  f"{bias} per rater and criterion; the dashed line is the no-bias value",
                                  interval_chart(points, f"fig-audit-{bias}", f"{bias} per rater and criterion",
                                                 f"Dot: the estimate; line: its 95% interval; {len(points)} rows.",
                                                 xlabel, "rater · criterion",
                                                 reference=next(iter(nulls)) if len(nulls) == 1 else None,
                                                 reference_label="no bias")))
        out.append((_table(f"audit-{name}", caption, rows, _EFFECT_COLUMNS), figures))
    return out


def _selective(rows: list[dict[str, Any]]) -> tuple[Table, list[str]]:
    lines = []
    for r in rows:
        target, delta = r.get("target_agreement"), r.get("delta")
        tol = float(r.get("tolerance") or 0)
        head = (f"{r.get('criterion')}: guaranteed ≥ {_pct(target)} agreement within {tol:g} point{'' if tol == 1 else 's'} among "
                f"kept items, with probability ≥ {_pct(None if delta is None else 1 - delta)}")
        if not r.get("test_kept"):
            lines.append(f"{head}: no threshold certified; every item goes to people "
                         f"(held-out agreement of all items {_pct(r.get('test_agreement_all'))}).")
        else:
            lines.append(f"{head}: on {r.get('n_test')} held-out items it kept {_pct(r.get('test_coverage'))}, "
                         f"which agreed {_pct(r.get('test_agreement_kept'))} (all items: "
                         f"{_pct(r.get('test_agreement_all'))}).")
        if r.get("note"):
            lines[-1] += f" Note: {r['note']}"
    cols: list[tuple[str, str, ColumnKind]] = [
        ("criterion", "criterion", "text"), ("target_agreement", "guaranteed agreement", "num"),
        ("delta", "δ", "num"), ("threshold", "threshold", "num"),
        ("n_calibration", "calibration items", "int"), ("calibration_kept", "kept (calibration)", "int"),
        ("n_test", "held-out items", "int"), ("test_kept", "kept (held out)", "int"),
        ("test_coverage", "coverage (held out)", "num"), ("test_agreement_kept", "agreement of kept", "num"),
        ("test_agreement_all", "agreement of all", "num")]
    return _table("audit-selective", "Selective judging: guaranteed level and held-out coverage", rows, cols), lines


_ESCALATION_COLUMNS: list[tuple[str, str, ColumnKind]] = [
    ("rater", "rater", "text"), ("criterion", "criterion", "text"), ("signal", "confidence", "text"),
    ("target_agreement", "guaranteed agreement", "num"), ("delta", "δ", "num"), ("tolerance", "tolerance", "num"),
    ("threshold", "threshold", "num"), ("n_calibration", "calibration items", "int"),
    ("calibration_agreement", "agreement of kept (calibration)", "num"), ("n_items", "items", "int"),
    ("n_kept", "kept", "int"), ("kept_share", "kept share", "num"), ("note", "note", "text")]


def _pct(x: Any) -> str:
    return "—" if x is None else f"{100 * float(x):.1f}%"


def _calibration(results: list[dict[str, Any]]) -> tuple[Table, list[Figure]]:
    cols: list[tuple[str, str, ColumnKind]] = [
        ("rater", "judge", "text"), ("criterion", "criterion", "text"), ("tolerance", "tolerance", "num"),
        ("ece", "ECE", "num"), ("ece_ci", "ECE 95% CI", "text"), ("brier", "Brier", "num"),
        ("brier_ci", "Brier 95% CI", "text"), ("mean_confidence", "mean confidence", "num"),
        ("agreement", "agreement", "num"), ("n", "n", "int"), ("n_clusters", "items resampled", "int"),
        ("note", "note", "text")]
    figures = []
    for k, r in enumerate(results):
        bins = [(b.get("mean_confidence"), b.get("agreement"), int(b.get("n") or 0)) for b in r.get("bins") or []]
        fig_id = f"fig-audit-reliability-{k}"
        title = f"Reliability: {r.get('rater')}, {r.get('criterion')}"
        tol = float(r.get("tolerance") or 0)
        desc = (f"{r.get('rater')}, {r.get('criterion')}: agreement with the humans (within {tol:g} "
                f"point{'' if tol == 1 else 's'}) per bin of the judge's sample "
                f"agreement; ECE {_fixed(r.get('ece'))}, Brier {_fixed(r.get('brier'))}; the diagonal is perfect "
                "calibration.")
        figures.append(Figure(fig_id, title, desc, reliability_diagram(bins, fig_id, title, desc)))
    return (_table("audit-calibration", "Calibration of each judge's sample agreement", _with_cis(results, "ece_", "brier_"),
                   cols), figures)


def _fixed(x: Any) -> str:
    return "—" if x is None else f"{float(x):.3f}"


def build_audit(folder: RunFolder) -> AuditSection | None:
    """The Audit section of ``folder`` (``None`` without ``audit.json``).

    Raises:
        ValueError: an ``audit.json`` that is not the audit's document (the report shows the line).
    """
    from judgelab.report.html_build import table_file

    file = table_file(folder, "audit")
    if file is None:
        return None
    doc = json.loads(file.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("schema") != 1:
        raise ValueError("audit.json is not an audit document of schema 1")
    section = AuditSection(str(doc.get("command") or "audit"), [str(x) for x in doc.get("lines") or []],
                           [f"{k}: {v}" for k, v in (doc.get("skipped") or {}).items()],
                           _effects([e for e in doc.get("effects") or [] if isinstance(e, dict)]))
    settings = doc.get("settings") or {}
    if doc.get("effects"):
        section.notes.append(f"Intervals: {settings.get('interval', 'cluster bootstrap')}, "
                             f"{settings.get('n_resamples', '?')} resamples, seed {settings.get('seed', '?')}. An effect "
                             "is detected when its 95% interval excludes the no-bias value.")
    if doc.get("jury"):
        section.jury = _table("audit-jury", f"Juries and single judges: correlation with the mean human rating "
                              f"({doc.get('jury_level') or ''} level); rows 'A - B' are jury minus the best judge",
                              _with_cis(doc["jury"], ""), [("rater", "rater", "text"), ("criterion", "criterion", "text"),
                                            ("method", "method", "text"), ("r", "r", "num"), ("ci", "95% CI", "text"),
                                            ("n", "n", "int"), ("n_clusters", "clusters", "int"),
                                            ("note", "note", "text")],
                              "The best single judge is chosen on the same data, which favours it.")
    if doc.get("shift"):
        section.shift = _table("audit-shift", "Paired mean shift of the second rater against the first on the same "
                               "texts (e.g. constrained against free output)", _with_cis(doc["shift"], ""),
                               [("first", "first", "text"), ("second", "second", "text"),
                                ("criterion", "criterion", "text"), ("estimate", "shift", "num"),
                                ("ci", "95% CI", "text"), ("n", "items", "int"), ("unpaired", "unpaired", "int"),
                                ("failed_first", "failed, first", "int"), ("failed_second", "failed, second", "int"),
                                ("note", "note", "text")],
                               "t interval over items; texts matched by item_id, system and criterion.")
    if doc.get("selective"):
        section.selective, section.selective_lines = _selective(doc["selective"])
    if doc.get("calibration"):
        section.calibration, section.reliability = _calibration(doc["calibration"])
    if doc.get("escalation"):
        section.escalation = _table("audit-escalation", "Selective judging: the guaranteed level beside the share of "
                                    "items kept (the rest go to people)", doc["escalation"], _ESCALATION_COLUMNS,
                                    "Calibrated on every human-rated item; the guarantee is about the rate of "
                                    "agreement over kept items, with probability 1 − δ over calibration samples.")
    if doc.get("self_check"):
        cols: list[tuple[str, str, ColumnKind]] = [
            ("bias", "bias", "text"), ("planted", "planted", "num"), ("studies", "studies", "int"),
            ("n_items", "items per study", "int"), ("detected", "detected", "num"),
            ("detected_mcse", "detected: MC s.e.", "num"), ("coverage", "covers planted", "num"),
            ("coverage_mcse", "covers: MC s.e.", "num"), ("false_alarms", "false alarms", "num"),
            ("false_alarms_mcse", "false alarms: MC s.e.", "num")]
        section.self_check = _table("audit-self-check", "Self-check: does the audit find planted biases?",
                                    doc["self_check"], cols)
    return section


#: The section's Jinja block (rendered with the page's ``table`` and ``figure`` macros; every value escaped).
AUDIT_TEMPLATE = r"""
{%- if d.audit %}{% set au = d.audit %}
<section id="audit" aria-labelledby="h-audit">
<h2 id="h-audit">Audit</h2>
{%- for note in au.notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- if au.lines %}<h3>In words</h3><ul class="audit-lines">{% for line in au.lines %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{%- if au.skipped %}<p class="note">Not measured: {{ au.skipped | join("; ") }}.</p>{% endif %}
{%- for t, figs in au.effects %}{{ table(t) }}{% for f in figs %}{{ figure(f) }}{% endfor %}{% endfor %}
{%- if au.shift %}<h3>Two raters on the same texts</h3>{{ table(au.shift) }}{% endif %}
{%- if au.jury %}<h3>A jury of judges</h3>{{ table(au.jury) }}{% endif %}
{%- if au.selective %}<h3>Selective judging</h3><ul>{% for line in au.selective_lines %}<li>{{ line }}</li>{% endfor %}</ul>{{ table(au.selective) }}{% endif %}
{%- if au.escalation %}<h3>Selective judging: kept and escalated items</h3>{{ table(au.escalation) }}{% endif %}
{%- if au.calibration %}<h3>Calibration</h3><p class="note">Confidence: the share of the judge's samples within the tolerance of its rating; agreed: its rating within the tolerance of the mean human rating.</p>{{ table(au.calibration) }}{% for f in au.reliability %}{{ figure(f) }}{% endfor %}{% endif %}
{%- if au.self_check %}<h3>Self-check</h3>{{ table(au.self_check) }}{% endif %}
</section>
{%- endif %}
"""
