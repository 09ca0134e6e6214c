"""The report's "Audit" section: what ``judgelab audit --out`` found, rendered from its ``audit.json``.

The section renders the audit's typed results and computes nothing. It opens with a summary — the
judges × criteria grid of the biases the audit detected and the jury's verdict lines — then the
detected effects in words, grouped by judge (the rest, and the human raters' rows, behind toggles;
:mod:`judgelab.report.html_audit_effects`), what the audit skipped and why, per kind of bias its
interval charts with the raw table behind a toggle, the jury (charts and table), selective judging
(the guaranteed level beside the coverage and agreement measured on held-out items), the calibration
of each judge's sample agreement (a reliability diagram as inline SVG, ECE and Brier with
intervals), and the self-check of ``audit --self-check``. A folder without ``audit.json`` has no
Audit section; an ``audit.json`` of another schema is a problem line, not a guess.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judgelab.report.folder import RunFolder
from judgelab.report.html_audit_effects import (
    AXIS_TOP_ROWS,
    AuditGrid,
    AuditWords,
    EffectKind,
    audit_grid,
    audit_words,
    ci_text,
    clean_note,
    effect_kinds,
)
from judgelab.report.html_audit_pairwise import name_pairwise, pairwise_kind
from judgelab.report.html_model import ColumnKind, Figure, Table
from judgelab.report.svg import Point, interval_chart, reliability_diagram

__all__ = ["AuditSection", "build_audit", "AUDIT_TABLES", "AUDIT_TEMPLATE"]

#: The audit's tables the section shows (left out of "Other tables"; results.json names their files).
AUDIT_TABLES = {"leniency", "scale_points", "length", "self_preference", "position", "prompt_sensitivity", "pairwise",
                "jury_agreement", "selective", "calibration", "calibration_bins", "self_check", "escalation_guarantee"}


@dataclass
class AuditSection:
    """What the Audit section shows (every value read from ``audit.json``)."""

    command: str
    lines: list[str]
    skipped: list[str]
    #: per kind of bias: its heading, interval charts and raw table
    kinds: list[EffectKind] = field(default_factory=list)
    #: the summary: judges × criteria with the detected biases, and the jury's verdict lines
    grid: AuditGrid | None = None
    words: AuditWords | None = None
    jury_lines: list[str] = field(default_factory=list)
    jury: Table | None = None
    #: the jury's verdict as a chart (jury minus the best single judge; else the juries beside the judges), in the
    #: summary beside the verdict lines; the jury section's other charts below
    jury_verdict: Figure | None = None
    jury_figures: list[Figure] = field(default_factory=list)
    shift: Table | None = None
    selective: Table | None = None
    selective_lines: list[str] = field(default_factory=list)
    calibration: Table | None = None
    reliability: list[Figure] = field(default_factory=list)
    self_check: Table | None = None
    escalation: Table | None = None
    notes: list[str] = field(default_factory=list)


def _table(table_id: str, caption: str, rows: list[dict[str, Any]], columns: list[tuple[str, str, ColumnKind]],
           note: str = "") -> Table:
    return Table(table_id, caption, [c[1] for c in columns], [c[2] for c in columns],
                 [[clean_note(r.get(c[0])) if c[0] == "note" else r.get(c[0]) for c in columns] for r in rows], note)


def _with_cis(rows: list[dict[str, Any]], *prefixes: str) -> list[dict[str, Any]]:
    return [dict(r, **{f"{p}ci": ci_text(r.get(f"{p}ci_low"), r.get(f"{p}ci_high")) for p in prefixes}) for r in rows]


_SYMBOLS = {"kendall": "Kendall τ", "spearman": "Spearman ρ", "pearson": "Pearson r"}


def _jury_figures(rows: list[dict[str, Any]]) -> list[Figure]:
    """The jury table as two interval charts: each judge's and jury's correlation with the mean human
    rating (juries in the second colour), and each jury minus the best single judge (no difference: 0)."""
    from judgelab.raters import is_jury

    singles = [r for r in rows if " - " not in str(r.get("rater"))]
    diffs = [r for r in rows if " - " in str(r.get("rater"))]
    symbol = _SYMBOLS.get(str(next((r.get("method") for r in rows if r.get("method")), "")), "correlation")
    out = []
    if singles:
        points = [Point(f"{r.get('rater')} · {r.get('criterion')}", r.get("r"), r.get("ci_low"), r.get("ci_high"),
                        series=1 if is_jury(str(r.get("rater"))) else 0) for r in singles]
        desc = f"Dot: {symbol} with the mean human rating; line: its 95% interval; {len(points)} rows; juries in orange."
        out.append(Figure("fig-audit-jury", "Juries and single judges", desc, interval_chart(
            points, "fig-audit-jury", "Juries and single judges", desc, f"{symbol} with the mean human rating",
            "rater · criterion", series_names=("single judge", "jury"), axis_top=len(points) > AXIS_TOP_ROWS)))
    if diffs:
        points = [Point(f"{r.get('rater')} · {r.get('criterion')}", r.get("r"), r.get("ci_low"), r.get("ci_high"))
                  for r in diffs]
        desc = (f"Dot: the jury's {symbol} minus the best single judge's; line: the paired 95% interval; the dashed "
                "line is no difference.")
        out.append(Figure("fig-audit-jury-difference", "Jury minus the best single judge", desc, interval_chart(
            points, "fig-audit-jury-difference", "Jury minus the best single judge", desc, f"difference in {symbol}",
            "jury - best judge · criterion", reference=0.0, reference_label="no difference",
            axis_top=len(points) > AXIS_TOP_ROWS)))
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
            lines[-1] += f" Note: {clean_note(r['note'])}"
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
    effects = [e for e in doc.get("effects") or [] if isinstance(e, dict)]
    lines = [str(x) for x in doc.get("lines") or []]
    settings = doc.get("settings") or {}
    section = AuditSection(str(doc.get("command") or "audit"), lines,
                           [f"{k}: {v}" for k, v in (doc.get("skipped") or {}).items()],
                           effect_kinds(effects, float(settings.get("per_words") or 100.0)), audit_grid(effects),
                           audit_words(effects, lines) if effects else None,
                           [str(x) for x in doc.get("jury_lines") or []])
    section.grid, pairwise = name_pairwise(section.grid), pairwise_kind(effects)  # pairwise judges (--verdicts)
    section.kinds += [pairwise] if pairwise else []
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
        figures = _jury_figures(doc["jury"])
        section.jury_verdict = figures[-1]  # the difference chart when there is one: the verdict lines' own
        section.jury_figures = figures[:-1]
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
{%- macro words_list(groups, mark=False) %}<ul class="audit-lines">{% for g in groups %}<li><strong>{{ g.rater }}</strong><ul>{% for line, found in g.lines %}<li{% if found and mark %} class="audit-found"{% endif %}>{% if found and mark %}<strong>detected:</strong> {% endif %}{{ line }}</li>{% endfor %}</ul></li>{% endfor %}</ul>{% endmacro %}
{%- if d.audit %}{% set au = d.audit %}
<section id="audit" aria-labelledby="h-audit">
<h2 id="h-audit">Audit</h2>
{%- if au.grid %}{% set g = au.grid %}
<h3 id="audit-summary">Summary: biases detected per judge and criterion</h3>
<p>{{ g.detected }} of the judges' {{ g.measured }} effects detected (the 95% interval excludes no bias){% if g.humans %}; the {{ g.humans }} human rater{{ "" if g.humans == 1 else "s" }}, each audited against the other humans as the baseline, are under "In words" behind a toggle{% endif %}.</p>
<div class="tablewrap" role="region" aria-label="Biases detected per judge and criterion" tabindex="0">
<table id="t-audit-summary" class="audit-grid">
<caption>Biases detected per judge and criterion (estimates; each interval on hovering, and in the tables below)</caption>
<thead><tr><th scope="col">judge</th>{% for c in g.criteria %}<th scope="col">{{ c }}</th>{% endfor %}</tr></thead>
<tbody>
{%- for judge, cells in g.rows %}
<tr><th scope="row">{{ judge }}</th>{% for cell in cells %}{% if cell is none %}<td class="audit-none">not measured</td>{% elif cell.detected %}<td class="audit-detected" data-detected="{{ cell.count }}"><ul>{% for name, marks in cell.detected %}<li><span aria-hidden="true">▲ </span>{{ name }} {% for m in marks %}<span class="audit-effect" data-bias="{{ m.bias }}" title="{{ m.title }}">{{ m.text }}</span>{% if not loop.last %}, {% endif %}{% endfor %}</li>{% endfor %}</ul></td>{% else %}<td class="audit-clear" data-detected="0">none of {{ cell.measured }} detected</td>{% endif %}{% endfor %}</tr>
{%- endfor %}
</tbody>
</table>
</div>
{%- endif %}
{%- if au.jury_lines or au.jury %}<div id="audit-jury-summary">
{%- if au.jury_lines %}<p class="audit-verdict"><strong>Jury:</strong></p><ul class="audit-verdict">{% for line in au.jury_lines %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{%- if au.jury_verdict %}<div class="audit-figures">{{ figure(au.jury_verdict) }}</div>{% endif %}
{%- if au.jury %}<details class="audit-table"><summary>Table: juries and single judges ({{ au.jury.rows | length }} rows)</summary>{{ table(au.jury) }}</details>{% endif %}
</div>{% endif %}
{%- for note in au.notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- if au.words %}{% set w = au.words %}
<h3>In words: what was detected</h3>
{%- if w.judges %}{{ words_list(w.judges) }}{% else %}<p>No bias of a judge was detected.</p>{% endif %}
{%- if w.not_detected %}<details class="audit-undetected"><summary>The judges' other effects in words: {{ w.not_detected_count }}, of which {{ w.other_detected }} detected (scale points beside the one shown)</summary>{{ words_list(w.not_detected, mark=True) }}</details>{% endif %}
{%- if w.humans %}<details class="audit-humans"><summary>The human raters, each against the other humans (the size of ordinary rater differences): {{ w.human_detected }} of {{ w.human_count }} effects detected</summary>{{ words_list(w.humans, mark=True) }}</details>{% endif %}
{%- elif au.lines %}<h3>In words</h3><ul class="audit-lines">{% for line in au.lines %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}
{%- if au.skipped %}<p class="note">Not measured: {{ au.skipped | join("; ") }}.</p>{% endif %}
{%- for k in au.kinds %}<h3>{{ k.heading }}</h3><div class="audit-figures">{% for f in k.figures %}{{ figure(f) }}{% endfor %}</div><details class="audit-table"><summary>Table: {{ k.heading }} ({{ k.table.rows | length }} rows)</summary>{{ table(k.table) }}</details>{% endfor %}
{%- if au.shift %}<h3>Two raters on the same texts</h3>{% if au.words and au.words.other %}<ul>{% for line in au.words.other %}<li>{{ line }}</li>{% endfor %}</ul>{% endif %}{{ table(au.shift) }}{% endif %}
{%- if au.jury_figures %}<h3>A jury of judges</h3><p class="note">The jury's verdict, its chart and the table are in the summary at the top of this section.</p>{% for f in au.jury_figures %}{{ figure(f) }}{% endfor %}{% endif %}
{%- if au.selective %}<h3>Selective judging</h3><ul>{% for line in au.selective_lines %}<li>{{ line }}</li>{% endfor %}</ul>{{ table(au.selective) }}{% endif %}
{%- if au.escalation %}<h3>Selective judging: kept and escalated items</h3>{{ table(au.escalation) }}{% endif %}
{%- if au.calibration %}<h3>Calibration</h3><p class="note">Confidence: the share of the judge's samples within the tolerance of its rating; agreed: its rating within the tolerance of the mean human rating.</p>{% for f in au.reliability %}{{ figure(f) }}{% endfor %}<details class="audit-table"><summary>Table: calibration ({{ au.calibration.rows | length }} rows)</summary>{{ table(au.calibration) }}</details>{% endif %}
{%- if au.self_check %}<h3>Self-check</h3>{{ table(au.self_check) }}{% endif %}
</section>
{%- endif %}
"""
