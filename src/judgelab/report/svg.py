"""Small, dependency-free SVG charts for the HTML report.

Every chart is drawn here as inline SVG (no matplotlib, no fonts, no external
references): it carries a ``<title>`` and a ``<desc>`` for screen readers, labelled
axes, and every label taken from data is escaped (and ``://`` written as an entity,
so that no URL text appears literally in a report). Label columns are sized to the
longest label, so names are never truncated.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence, TypeGuard

from markupsafe import escape

__all__ = ["PALETTE", "Point", "BarSeries", "esc", "interval_chart", "bar_chart", "count_scatter", "reliability_diagram", "wrap_label",
           "label_width"]

#: Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")

_CHAR_W = 6.6  # approximate width of one character at 12px in a sans-serif font
_ROW_H = 22
_FONT = 12


def esc(value: object) -> str:
    """Escape text for HTML/SVG, writing ``://`` as ``:&#47;&#47;`` (the page then holds no literal URL)."""
    return str(escape(str(value))).replace("://", ":&#47;&#47;")


def _finite(x: float | None) -> TypeGuard[float]:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def _nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """About ``n`` round tick values covering [lo, hi].

    A range with no spread, or one narrower than floating point resolves at its values (estimates
    equal but for rounding), is widened to one unit: a step below the values' resolution would never
    move a tick (``v + step == v``) and the ticks would grow without end.
    """
    if not hi - lo > max(abs(lo), abs(hi), 1.0) * 1e-12:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, n - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step)
    count = math.floor(hi / step + 1e-9) - start + 1  # ticks are multiples of step, counted, never accumulated
    return [round(k * step, 10) for k in range(start, start + count) if k * step >= lo - step * 1e-9]


def _fmt_tick(v: float) -> str:
    return f"{v:g}"


@dataclass
class Point:
    """One row of an interval chart: an estimate with an optional interval and series index."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    series: int = 0
    note: str = ""


def _svg_open(width: float, height: float, fig_id: str, title: str, desc: str) -> list[str]:
    return [
        f'<svg role="img" aria-labelledby="{esc(fig_id)}-t {esc(fig_id)}-d" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" class="chart" font-size="{_FONT}">',
        f'<title id="{esc(fig_id)}-t">{esc(title)}</title>',
        f'<desc id="{esc(fig_id)}-d">{esc(desc)}</desc>',
    ]


def label_width(text: str, bold: bool = False) -> float:
    """The width a label takes at 12px (:data:`_CHAR_W` per character; bold text a tenth wider)."""
    return _CHAR_W * len(str(text)) * (1.1 if bold else 1.0)


def _fit_width(width: float, left: float, plot_w: float, xlabel: str, ylabel: str, notes: Sequence[str] = ()) -> float:
    """A chart's width widened until its axis labels (bold, the x label centred under the plot, the y label from
    x = 12) and the notes written in rows (from ``left + 4``) fit: no label is clipped by the edge."""
    need = [width, 12 + label_width(ylabel, True) + 8, left + plot_w / 2 + label_width(xlabel, True) / 2 + 8]
    need += [left + 4 + label_width(n) + 8 for n in notes]
    return max(need)


def _x_axis(ticks, sx, top: float, bottom: float, left: float, plot_w: float, xlabel: str, ylabel: str) -> list[str]:
    """Grid lines and labels of the ticks, the x axis with its label, and the y label."""
    out = []
    for t in ticks:
        x = sx(t)
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{x:.1f}" y="{bottom + 16:.1f}" text-anchor="middle">{esc(_fmt_tick(t))}</text>')
    out.append(f'<line x1="{left:.1f}" y1="{bottom:.1f}" x2="{left + plot_w:.1f}" y2="{bottom:.1f}" stroke="#555"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 40:.1f}" text-anchor="middle" font-weight="bold">{esc(xlabel)}</text>')
    out.append(f'<text x="12" y="{top - 8:.1f}" font-weight="bold">{esc(ylabel)}</text>')
    return out


def _legend(names: Sequence[str], x: float, y: float, marker: str = "dot") -> tuple[list[str], float]:
    out = []
    cx = x
    for k, name in enumerate(names):
        colour = PALETTE[k % len(PALETTE)]
        if marker == "dot":
            out.append(f'<circle cx="{cx + 5:.1f}" cy="{y - 4:.1f}" r="4.5" fill="{colour}"/>')
        else:
            out.append(f'<rect x="{cx:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{cx + 14:.1f}" y="{y:.1f}">{esc(name)}</text>')
        cx += 14 + _CHAR_W * len(str(name)) + 18
    return out, cx


def interval_chart(points: Sequence[Point], fig_id: str, title: str, desc: str, xlabel: str, ylabel: str,
                   series_names: Sequence[str] = (), domain: tuple[float, float] | None = None,
                   reference: float | None = None, reference_label: str = "",
                   extra_markers: Sequence[Point] = (), extra_label: str = "", axis_top: bool = False) -> str:
    """Horizontal dot-and-whisker chart: one row per point, the estimate as a dot, its interval as a line.

    ``extra_markers`` (matched to rows by label) are drawn as hollow diamonds (e.g. the
    human baseline beside each judge's correlation); ``reference`` is a dashed vertical line;
    ``axis_top`` repeats the tick labels above the rows (for long charts).
    """
    labels = [p.label for p in points]
    left = 16 + _CHAR_W * max((len(s) for s in labels), default=4) + 8
    plot_w = 420.0
    right = 30.0
    top = 66.0 if axis_top else 48.0
    height = top + _ROW_H * max(1, len(points)) + 56
    width = left + plot_w + right
    width = _fit_width(width, left, plot_w, xlabel, ylabel, [p.note or "undefined" for p in points if not _finite(p.value)])
    values = [v for p in points for v in (p.value, p.low, p.high) if _finite(v)]
    values += [m.value for m in extra_markers if _finite(m.value)]
    if reference is not None:
        values.append(reference)
    if domain is None:
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        pad = (hi - lo) * 0.08 if hi - lo > max(abs(lo), abs(hi), 1.0) * 1e-12 else 0.5  # equal values: ±0.5
        lo, hi = lo - pad, hi + pad
    else:
        lo, hi = domain
    ticks = _nice_ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    leg, cx = _legend(list(series_names), left, 16) if series_names or extra_markers else ([], left)
    width = max(width, cx + (14 + label_width(extra_label) if extra_markers else 0) + 8)  # the legend fits too
    out = _svg_open(width, height, fig_id, title, desc)
    bottom = top + _ROW_H * max(1, len(points))
    if series_names or extra_markers:
        out += leg
        if extra_markers:
            out.append(f'<path d="M{cx + 5:.1f},{16 - 9:.1f} l5,5 l-5,5 l-5,-5 z" fill="white" stroke="#333" stroke-width="1.5"/>')
            out.append(f'<text x="{cx + 14:.1f}" y="16">{esc(extra_label)}</text>')
    out += _x_axis(ticks, sx, top, bottom, left, plot_w, xlabel, ylabel)
    if axis_top:
        out += [f'<text x="{sx(t):.1f}" y="{top - 6:.1f}" text-anchor="middle">{esc(_fmt_tick(t))}</text>' for t in ticks]
        out.append(f'<line x1="{left:.1f}" y1="{top:.1f}" x2="{left + plot_w:.1f}" y2="{top:.1f}" stroke="#555"/>')
    if reference is not None and lo <= reference <= hi:
        x = sx(reference)
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#b00" stroke-dasharray="4 3"/>')
        if reference_label:
            anchor, dx = ("end", -4) if x > left + plot_w * 0.55 else ("start", 4)
            out.append(f'<text x="{x + dx:.1f}" y="{top - (24 if axis_top else 6):.1f}" fill="#b00" '
                       f'text-anchor="{anchor}">{esc(reference_label)}</text>')
    extra = {m.label: m for m in extra_markers}
    for i, p in enumerate(points):
        y = top + _ROW_H * i + _ROW_H / 2
        colour = PALETTE[p.series % len(PALETTE)]
        out.append(f'<text x="{left - 8:.1f}" y="{y + 4:.1f}" text-anchor="end">{esc(p.label)}</text>')
        tip = f"{p.label}: " + (f"{p.value:.3f}" if _finite(p.value) else "undefined")
        if _finite(p.low) and _finite(p.high):
            tip += f" [{p.low:.3f}, {p.high:.3f}]"
            x1, x2 = sx(max(lo, p.low)), sx(min(hi, p.high))
            out.append(f'<line x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="2"/>')
            for xe in (x1, x2):
                out.append(f'<line x1="{xe:.1f}" y1="{y - 5:.1f}" x2="{xe:.1f}" y2="{y + 5:.1f}" stroke="{colour}" stroke-width="2"/>')
        if p.note:
            tip += f" ({p.note})"
        if _finite(p.value):
            out.append(f'<circle cx="{sx(p.value):.1f}" cy="{y:.1f}" r="4.5" fill="{colour}"><title>{esc(tip)}</title></circle>')
        else:
            out.append(f'<text x="{left + 4:.1f}" y="{y + 4:.1f}" fill="#777">{esc(p.note or "undefined")}</text>')
        m = extra.get(p.label)
        if m is not None and _finite(m.value):
            x = sx(m.value)
            out.append(f'<path d="M{x:.1f},{y - 6:.1f} l6,6 l-6,6 l-6,-6 z" fill="white" stroke="#333" stroke-width="1.5">'
                       f'<title>{esc(f"{extra_label}: {m.value:.3f}")}</title></path>')
    out.append("</svg>")
    return "\n".join(out)


@dataclass
class BarSeries:
    """One series of a horizontal bar chart: a name and one value per category."""

    name: str
    values: list[float | None] = field(default_factory=list)


def bar_chart(categories: Sequence[str], series: Sequence[BarSeries], fig_id: str, title: str, desc: str,
              xlabel: str, ylabel: str, threshold: float | None = None, threshold_label: str = "") -> str:
    """Horizontal grouped bars: one group per category, one bar per series; an optional threshold line."""
    left = 16 + _CHAR_W * max((len(s) for s in categories), default=4) + 8
    plot_w = 420.0
    bar_h = 12.0
    group_h = bar_h * max(1, len(series)) + 8
    top = 48.0
    bottom = top + group_h * max(1, len(categories))
    width = _fit_width(left + plot_w + 30, left, plot_w, xlabel, ylabel)
    height = bottom + 56
    values = [v for s in series for v in s.values if _finite(v)] + [0.0]
    if threshold is not None:
        values.append(threshold)
    lo, hi = min(values), max(values)
    hi = hi + (hi - lo) * 0.05 or 1.0
    ticks = _nice_ticks(lo, hi)
    lo, hi = min(lo, ticks[0]), max(hi, ticks[-1])

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * plot_w

    leg, cx = _legend([s.name for s in series], left, 16, marker="rect")
    width = max(width, cx + 8)  # the legend fits too
    out = _svg_open(width, height, fig_id, title, desc)
    out += leg
    out += _x_axis(ticks, sx, top, bottom, left, plot_w, xlabel, ylabel)
    zero = sx(0.0)
    for i, cat in enumerate(categories):
        gy = top + group_h * i
        out.append(f'<text x="{left - 8:.1f}" y="{gy + group_h / 2 + 4:.1f}" text-anchor="end">{esc(cat)}</text>')
        for k, s in enumerate(series):
            v = s.values[i] if i < len(s.values) else None
            y = gy + 4 + bar_h * k
            if not _finite(v):
                out.append(f'<text x="{zero + 4:.1f}" y="{y + bar_h - 2:.1f}" fill="#777" font-size="10">n/a</text>')
                continue
            x1, x2 = sorted((zero, sx(v)))
            colour = PALETTE[k % len(PALETTE)]
            out.append(f'<rect x="{x1:.1f}" y="{y:.1f}" width="{max(0.8, x2 - x1):.1f}" height="{bar_h - 1:.1f}" fill="{colour}">'
                       f'<title>{esc(f"{cat}, {s.name}: {v:.3f}")}</title></rect>')
    if threshold is not None:
        x = sx(threshold)
        out.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="#b00" stroke-dasharray="4 3"/>')
        if threshold_label:
            anchor, dx = ("end", -4) if x > left + plot_w * 0.55 else ("start", 4)
            out.append(f'<text x="{x + dx:.1f}" y="{top - 6:.1f}" fill="#b00" text-anchor="{anchor}">{esc(threshold_label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def wrap_label(text: str, width_px: float) -> list[str]:
    """``text`` in lines of at most ``width_px`` (measured at :data:`_CHAR_W` per character), broken at spaces; a
    word longer than a line is broken inside, so that no label is clipped by the chart's edge."""
    per_line = max(8, int(width_px // _CHAR_W))
    lines: list[str] = []
    for word in str(text).split():
        while len(word) > per_line:
            if lines and len(lines[-1]) + 1 < per_line:
                room = per_line - len(lines[-1]) - 1
                lines[-1] += " " + word[:room]
                word = word[room:]
            else:
                lines.append(word[:per_line])
                word = word[per_line:]
        if lines and len(lines[-1]) + 1 + len(word) <= per_line:
            lines[-1] += " " + word
        elif word:
            lines.append(word)
    return lines or [""]


def _lines(x: float, y: float, lines: Sequence[str], attrs: str = "", step: float = 14.0) -> str:
    """A ``<text>`` of several lines (``tspan`` per line, the first at ``y``)."""
    spans = "".join(f'<tspan x="{x:.1f}" dy="{0 if k == 0 else step:.1f}">{esc(line)}</tspan>' for k, line in enumerate(lines))
    return f'<text x="{x:.1f}" y="{y:.1f}"{attrs}>{spans}</text>'


def count_scatter(x: Sequence[float], y: Sequence[float], fig_id: str, title: str, desc: str, xlabel: str, ylabel: str,
                  size: float = 260.0, grid: int = 40, identity: bool = True,
                  x_domain: tuple[float, float] | None = None) -> str:
    """A scatter of many (x, y) pairs with bounded size: pairs at the same point (after snapping to a
    ``grid`` × ``grid`` lattice of the data's range) are one circle whose area counts them; with ``identity``
    both axes share one range and the dashed diagonal is x = y. Without it (two scales) each axis has its own
    range (``x_domain``, e.g. the judge's scale, else the data's) and no diagonal is drawn. At most ``grid``²
    circles whatever the number of pairs. Axis labels are wrapped to the plot's size, never clipped."""
    import numpy as np

    xv, yv = np.asarray(x, float), np.asarray(y, float)

    def span(values: np.ndarray, given: tuple[float, float] | None = None) -> tuple[float, float, list[float]]:
        lo = float(values.min()) if values.size else 0.0
        hi = float(values.max()) if values.size else 1.0
        if given is not None:
            lo, hi = min(lo, given[0]), max(hi, given[1])
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
        ticks = _nice_ticks(lo, hi, 5)
        return min(lo, ticks[0]), max(hi, ticks[-1]), ticks

    if identity:
        xlo, xhi, xticks = span(np.concatenate([xv, yv]))
        ylo, yhi, yticks = xlo, xhi, xticks
    else:
        (xlo, xhi, xticks), (ylo, yhi, yticks) = span(xv, x_domain), span(yv)
    xstep, ystep = (xhi - xlo) / grid, (yhi - ylo) / grid
    gx, gy = np.round((xv - xlo) / xstep).astype(int), np.round((yv - ylo) / ystep).astype(int)
    cells, counts = np.unique(np.stack([gx, gy], axis=1), axis=0, return_counts=True) if xv.size else (np.empty((0, 2)), np.empty(0))
    xlines, ylines = wrap_label(xlabel, size + 40), wrap_label(ylabel, size)
    left, top = 44.0 + 14.0 * len(ylines), 30.0
    bottom_pad = 34.0 + 14.0 * len(xlines)
    width, height = left + size + 20, top + size + bottom_pad

    def sx(v: float) -> float:
        return left + (v - xlo) / (xhi - xlo) * size

    def sy(v: float) -> float:
        return top + size - (v - ylo) / (yhi - ylo) * size

    out = _svg_open(width, height, fig_id, title, desc)
    out.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{size:.1f}" height="{size:.1f}" fill="none" stroke="#999"/>')
    for t in xticks:
        out.append(f'<text x="{sx(t):.1f}" y="{top + size + 16:.1f}" text-anchor="middle">{_fmt_tick(t)}</text>')
    for t in yticks:
        out.append(f'<text x="{left - 6:.1f}" y="{sy(t) + 4:.1f}" text-anchor="end">{_fmt_tick(t)}</text>')
    if identity:
        out.append(f'<line x1="{sx(xlo):.1f}" y1="{sy(xlo):.1f}" x2="{sx(xhi):.1f}" y2="{sy(xhi):.1f}" stroke="#b00" '
                   'stroke-dasharray="4 3"/>')
    out.append(_lines(left + size / 2, top + size + 36, xlines, ' text-anchor="middle"'))
    rotated = "".join(f'<tspan x="0" dy="{0 if k == 0 else 14:.1f}">{esc(line)}</tspan>' for k, line in enumerate(ylines))
    out.append(f'<text transform="translate(14,{top + size / 2:.1f}) rotate(-90)" x="0" y="0" text-anchor="middle">{rotated}</text>')
    biggest = float(counts.max()) if len(counts) else 1.0
    for (cx, cy), n in zip(cells, counts):
        vx, vy = xlo + cx * xstep, ylo + cy * ystep
        radius = 2.0 + 9.0 * math.sqrt(float(n) / biggest)
        out.append(f'<circle cx="{sx(vx):.1f}" cy="{sy(vy):.1f}" r="{radius:.1f}" fill="{PALETTE[0]}" fill-opacity="0.55">'
                   f'<title>judge {vx:.2f}, human {vy:.2f}: {int(n):,} item{"s" if n != 1 else ""}</title></circle>')
    out.append("</svg>")
    return "\n".join(out)


def reliability_diagram(bins: Sequence[tuple[float, float, int]], fig_id: str, title: str, desc: str,
                        xlabel: str = "confidence (bin mean)", ylabel: str = "agreement rate",
                        size: float = 240.0) -> str:
    """A reliability diagram on [0, 1] × [0, 1]: one dot per bin at (mean confidence, agreement rate),
    its area proportional to the bin's count, joined in order; the dashed diagonal is perfect calibration.
    ``bins``: (mean confidence, agreement rate, count) per non-empty bin."""
    left, top, bottom_pad = 58.0, 30.0, 48.0
    width, height = left + size + 20, top + size + bottom_pad

    def sx(v: float) -> float:
        return left + v * size

    def sy(v: float) -> float:
        return top + size - v * size

    out = _svg_open(width, height, fig_id, title, desc)
    out.append(f'<rect x="{left:.1f}" y="{top:.1f}" width="{size:.1f}" height="{size:.1f}" fill="none" stroke="#999"/>')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{sx(t):.1f}" y1="{top:.1f}" x2="{sx(t):.1f}" y2="{top + size:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{top + size + 16:.1f}" text-anchor="middle">{_fmt_tick(t)}</text>')
        out.append(f'<text x="{left - 6:.1f}" y="{sy(t) + 4:.1f}" text-anchor="end">{_fmt_tick(t)}</text>')
    out.append(f'<line x1="{sx(0):.1f}" y1="{sy(0):.1f}" x2="{sx(1):.1f}" y2="{sy(1):.1f}" stroke="#b00" '
               'stroke-dasharray="4 3"/>')
    out.append(f'<text x="{left + size / 2:.1f}" y="{top + size + 36:.1f}" text-anchor="middle">{esc(xlabel)}</text>')
    out.append(f'<text transform="translate(14,{top + size / 2:.1f}) rotate(-90)" text-anchor="middle">{esc(ylabel)}</text>')
    shown = [(c, a, n) for c, a, n in bins if _finite(c) and _finite(a) and n > 0]
    if len(shown) > 1:
        path = " ".join(f"{sx(c):.1f},{sy(a):.1f}" for c, a, _ in shown)
        out.append(f'<polyline points="{path}" fill="none" stroke="{PALETTE[0]}" stroke-width="1.5"/>')
    biggest = max((n for _, _, n in shown), default=1)
    for c, a, n in shown:
        radius = 2.5 + 8.0 * math.sqrt(n / biggest)
        out.append(f'<circle cx="{sx(c):.1f}" cy="{sy(a):.1f}" r="{radius:.1f}" fill="{PALETTE[0]}" fill-opacity="0.6">'
                   f'<title>confidence {c:.2f}: agreed on {a:.0%} of {int(n):,} item{"s" if n != 1 else ""}</title></circle>')
    out.append("</svg>")
    return "\n".join(out)
