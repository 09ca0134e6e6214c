"""The bias effects of the report's Audit section: the summary grid, the lines in words, the charts and tables.

Everything is read from the audit's ``audit.json`` effects as the audit decided them: an effect is
*detected* when the audit's ``detected`` says so (its 95% interval excludes the no-bias value); the
page decides nothing again. The summary is a grid of the judges (rows) by criterion (columns), each
cell naming the biases detected there; "In words" lists the detected effects of the judges, grouped
by judge, with the human raters' rows (each human against the other humans) and the effects not
detected behind toggles. Each kind of bias gets interval charts — judges and humans in two colours
with a legend, long charts split per criterion with their axis above and below the rows — and its
raw table behind a toggle. Lengths are in the unit the command was given (``--per-words``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from judgelab.report.folder import is_human
from judgelab.report.html_model import ColumnKind, Figure, Table
from judgelab.report.svg import Point, interval_chart

__all__ = ["Marked", "GridCell", "AuditGrid", "WordsGroup", "AuditWords", "EffectKind", "audit_grid", "audit_words",
           "effect_kinds", "clean_note", "ci_text", "CHART_LIMIT", "SPLIT_ROWS", "AXIS_TOP_ROWS"]

_KINDS = (("leniency", "Leniency and spread", ("leniency", "spread_ratio")),
          ("scale_points", "Scale use (share of each scale point, rater minus humans)", ("scale_point:",)),
          ("length", "Length", ("length", "prefer_longer")),
          ("self_preference", "Self-preference", ("self_preference",)),
          ("position", "Position", ("position_first", "position_consistency")),
          ("prompt_sensitivity", "Prompt sensitivity", ("prompt_icc", "prompt_shift")))
_NAMES = {"leniency": "leniency", "spread_ratio": "spread", "length": "length", "prefer_longer": "prefers longer",
          "self_preference": "self-preference", "position_first": "first position",
          "position_consistency": "position consistency", "prompt_icc": "prompt ICC", "prompt_shift": "prompt shift"}
#: Rows of one chart above which a chart is drawn per criterion; rows above which the axis is repeated on top.
SPLIT_ROWS = 24
AXIS_TOP_ROWS = 12
#: The most rows one chart draws (the description says how many were left out; the table has them all).
CHART_LIMIT = 80
_JUDGE, _HUMAN = "judge", "human (against the other humans)"


def clean_note(value: Any) -> Any:
    """A note as shown: never beginning with a separator left by an empty first part ("; …")."""
    return value.lstrip("; ").strip() if isinstance(value, str) else value


def _kind(bias: str, kinds: tuple[str, ...]) -> bool:
    return any(bias == k or (k.endswith(":") and bias.startswith(k)) for k in kinds)


def _criterion(e: dict[str, Any]) -> str:
    return str(e.get("criterion") or "all criteria")


def _bias_name(bias: str) -> str:
    return f"scale point {bias.split(':', 1)[1]}" if bias.startswith("scale_point:") else _NAMES.get(bias, bias)


def _fixed(x: Any, fmt: str = "+.2f") -> str:
    return "—" if x is None else format(float(x), fmt)


@dataclass
class Marked:
    """One detected effect in a grid cell: its bias, its estimate as text, and its interval (the cell's tooltip)."""

    bias: str
    text: str
    title: str


@dataclass
class GridCell:
    """One judge on one criterion: the detected biases by kind (scale points together), and how many effects
    were measured."""

    detected: list[tuple[str, list[Marked]]]
    measured: int

    @property
    def count(self) -> int:
        return sum(len(m) for _, m in self.detected)


def _marked(mine: list[dict[str, Any]]) -> list[tuple[str, list[Marked]]]:
    """The detected effects of one cell, by kind: ``(name, [Marked, ...])``; every scale point in one entry."""
    out: dict[str, list[Marked]] = {}
    for e in mine:
        if not e.get("detected"):
            continue
        bias = str(e.get("bias"))
        fmt = ".2f" if bias == "spread_ratio" else "+.2f"
        point = bias.split(":", 1)[1] + " " if bias.startswith("scale_point:") else ""
        name = "scale points" if point else _NAMES.get(bias, bias)
        out.setdefault(name, []).append(Marked(bias, f"{point}{_fixed(e.get('estimate'), fmt)}",
                                               f"{_bias_name(bias)}: 95% CI {_fixed(e.get('ci_low'), fmt)} to "
                                               f"{_fixed(e.get('ci_high'), fmt)}"))
    return list(out.items())


@dataclass
class AuditGrid:
    """Judges (rows) × criteria (columns); ``None``: nothing measured for that judge and criterion."""

    criteria: list[str]
    rows: list[tuple[str, list[GridCell | None]]]
    detected: int
    measured: int
    humans: int


def _raters(effects: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(judges, humans), each in the order of first appearance."""
    seen = list(dict.fromkeys(str(e.get("rater")) for e in effects))
    return [r for r in seen if not is_human(r)], [r for r in seen if is_human(r)]


def audit_grid(effects: list[dict[str, Any]]) -> AuditGrid | None:
    """The summary grid of the judges' effects (``None`` without a judge's effect)."""
    judges, humans = _raters(effects)
    if not judges:
        return None
    criteria = list(dict.fromkeys(_criterion(e) for e in effects))
    rows, n_detected, n_measured = [], 0, 0
    for judge in judges:
        cells: list[GridCell | None] = []
        for crit in criteria:
            mine = [e for e in effects if str(e.get("rater")) == judge and _criterion(e) == crit]
            cell = GridCell(_marked(mine), len(mine))
            cells.append(cell if mine else None)
            n_detected += cell.count
            n_measured += len(mine)
        rows.append((judge, cells))
    return AuditGrid(criteria, rows, n_detected, n_measured, len(humans))


@dataclass
class WordsGroup:
    """The lines in words of one rater, each with whether its effect was detected."""

    rater: str
    lines: list[tuple[str, bool]]


@dataclass
class AuditWords:
    """The effects in words: the judges' detected effects by judge (shown; of the scale points the one the audit
    chose per rater and criterion, the one that differs most); the judges' other effects, and every effect of
    the human raters (each against the other humans), behind toggles; the document's lines that are no
    effect's (the comparison of two raters) as they are."""

    judges: list[WordsGroup] = field(default_factory=list)
    not_detected: list[WordsGroup] = field(default_factory=list)
    humans: list[WordsGroup] = field(default_factory=list)
    other: list[str] = field(default_factory=list)

    @property
    def not_detected_count(self) -> int:
        return sum(len(g.lines) for g in self.not_detected)

    @property
    def other_detected(self) -> int:
        return sum(d for g in self.not_detected for _, d in g.lines)

    @property
    def human_count(self) -> int:
        return sum(len(g.lines) for g in self.humans)

    @property
    def human_detected(self) -> int:
        return sum(d for g in self.humans for _, d in g.lines)


def _groups(effects: list[dict[str, Any]], raters: list[str]) -> list[WordsGroup]:
    out = []
    for rater in raters:
        lines = list(dict.fromkeys((str(e["line"]), bool(e.get("detected"))) for e in effects
                                   if str(e.get("rater")) == rater and e.get("line")))
        if lines:
            out.append(WordsGroup(rater, lines))
    return out


def audit_words(effects: list[dict[str, Any]], lines: list[str]) -> AuditWords:
    """The lines of ``effects`` (each effect's own ``line``) grouped as :class:`AuditWords`; ``lines`` (the
    document's lines) that belong to no effect are kept as they are."""
    judges, humans = _raters(effects)
    own = {str(e.get("line")) for e in effects}
    chosen = set(lines)  # the audit's lines: of the scale points, the one that differs most per rater and criterion
    shown = [e for e in effects if e.get("detected") and str(e.get("line")) in chosen]
    return AuditWords(_groups(shown, judges), _groups([e for e in effects if not any(e is x for x in shown)], judges),
                      _groups(effects, humans), [line for line in lines if line not in own])


_EFFECT_COLUMNS: list[tuple[str, str, ColumnKind]] = [
    ("bias", "bias", "text"), ("rater", "rater", "text"), ("criterion", "criterion", "text"),
    ("estimate", "estimate", "num"), ("ci", "95% CI", "text"), ("null", "no-bias value", "num"),
    ("detected_text", "detected", "text"), ("n", "n", "int"), ("n_clusters", "items resampled", "int"),
    ("note", "note", "text")]


@dataclass
class EffectKind:
    """One kind of bias: its heading, charts, and raw table (shown behind a toggle)."""

    heading: str
    table: Table
    figures: list[Figure]


def ci_text(low: Any, high: Any) -> str:
    """An interval as text, ``[low, high]`` (3 decimals); ``none`` when a bound is missing (the note says why)."""
    return "none" if low is None or high is None else f"[{float(low):.3f}, {float(high):.3f}]"


def _axis_labels(per_words: float) -> dict[str, str]:
    return {"leniency": "mean shift (points)", "spread_ratio": "spread ratio",
            "length": f"points per {per_words:g} words", "prefer_longer": "share of pairs, judge minus humans",
            "self_preference": "gap difference (points)", "position_first": "first-position preference",
            "scale_point:": "share of ratings, rater minus humans"}


def _ordered(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """By criterion (first appearance), judges before humans, then as recorded."""
    crits = list(dict.fromkeys(_criterion(e) for e in rows))
    return sorted(rows, key=lambda e: (crits.index(_criterion(e)), is_human(str(e.get("rater")))))


def _chart(rows: list[dict[str, Any]], fig_id: str, what: str, xlabel: str, ylabel: str, label) -> Figure:
    shown = rows[:CHART_LIMIT]
    points = [Point(label(e), e.get("estimate"), e.get("ci_low"), e.get("ci_high"),
                    series=1 if is_human(str(e.get("rater"))) else 0) for e in shown]
    has_human = any(p.series for p in points)
    nulls = {e.get("null") for e in shown if e.get("null") is not None}
    left_out = f" The first {len(shown)} of {len(rows)} rows; every row is in the table." if len(rows) > len(shown) else ""
    desc = (f"{what[:1].upper()}{what[1:]}. Dot: the estimate; line: its 95% interval; {len(shown)} rows"
            + ("; judges in blue, humans (each against the other humans) in orange" if has_human else "")
            + f"; the dashed line is no bias.{left_out}")
    svg = interval_chart(points, fig_id, what, desc, xlabel, ylabel,
                         series_names=(_JUDGE, _HUMAN) if has_human else (),
                         reference=next(iter(nulls)) if len(nulls) == 1 else None, reference_label="no bias",
                         axis_top=len(points) > AXIS_TOP_ROWS)
    return Figure(fig_id, what, desc, svg)


def _field(e: dict[str, Any], name: str) -> str:
    """A chart row's label part: the rater, the criterion, or the scale point of a ``scale_point:<p>`` effect."""
    if name == "point":
        return str(e.get("bias")).split(":", 1)[1]
    return _criterion(e) if name == "criterion" else str(e.get(name))


def _figures(name: str, rows: list[dict[str, Any]], per_words: float) -> list[Figure]:
    """The interval charts of one kind of bias: one per bias (scale use: per criterion), split per criterion
    when longer than :data:`SPLIT_ROWS` rows."""
    labels = _axis_labels(per_words)
    if name == "scale_points":
        groups = [("scale_point:", "scale use", list(rows))]
    else:
        groups = [(b, _NAMES.get(b, b), [e for e in rows if e.get("bias") == b]) for b in labels
                  if b in {e.get("bias") for e in rows}]
    out = []
    for bias, title, mine in groups:
        mine = _ordered(mine)
        crits = list(dict.fromkeys(_criterion(e) for e in mine))
        split = bias == "scale_point:" or len(mine) > SPLIT_ROWS
        parts = [(c, [e for e in mine if _criterion(e) == c]) for c in crits] if split and len(crits) > 1 else [("", mine)]
        for k, (crit, part) in enumerate(parts):
            fig_id = f"fig-audit-{bias.rstrip(':').replace('_', '-') if bias == 'scale_point:' else bias}" + (
                f"-{k}" if len(parts) > 1 else "")
            what = f"{title}: estimate with 95% interval" + (f", {crit}" if crit else "")
            fields = ["rater"] + ([] if crit else ["criterion"]) + (["point"] if bias == "scale_point:" else [])
            out.append(_chart(part, fig_id, what, labels[bias], " · ".join(fields),
                              lambda e, f=tuple(fields): " · ".join(_field(e, x) for x in f)))
    return out


def effect_kinds(effects: list[dict[str, Any]], per_words: float) -> list[EffectKind]:
    """One :class:`EffectKind` per kind of bias the audit measured."""
    out = []
    for name, caption, kinds in _KINDS:
        rows = [dict(e, detected_text="yes" if e.get("detected") else "no", ci=ci_text(e.get("ci_low"), e.get("ci_high")),
                     note=clean_note(e.get("note"))) for e in effects if _kind(str(e.get("bias")), kinds)]
        if not rows:
            continue
        heading = caption if name != "length" else f"Length (points per {per_words:g} words" + (
            "; on pairs, the preference for the longer text)" if any(r.get("bias") == "prefer_longer" for r in rows) else ")")
        table = Table(f"audit-{name}", f"{heading}: every effect", [c[1] for c in _EFFECT_COLUMNS],
                      [c[2] for c in _EFFECT_COLUMNS], [[r.get(c[0]) for c in _EFFECT_COLUMNS] for r in rows])
        out.append(EffectKind(heading, table, _figures(name, rows, per_words)))
    return out
