"""The report's first screen: per judge and criterion, how well the judge matches the humans.

It renders what the folder's ``agree`` step recorded — the rows of its correlations and human-baseline
tables, and the per-item pairs those correlations were computed from (results.json's matched means,
:class:`judgelab.agree_results.MatchedMeans`): the judge's mean against the humans' mean, and a
judge-vs-human scatter (or, when both sides are whole numbers on a small scale, a confusion
table). An interval that cannot keep its promise is said in words, never drawn: fewer than
five clusters, a zero-width or degenerate interval, a single group (the reason comes from the
statistics' own notes). Each card leads with one sentence a reviewer can quote (:func:`verdict_words`), and
counts are named by what they count (the units the agree step recorded: "40 summaries (10 articles
resampled)"). A judge and humans on different scales are never drawn on one axis with an equality line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.agree_results import MatchedMeans
from judgelab.missing import finite_or_none
from judgelab.published_results import PublishedComparison, PublishedRow
from judgelab.report.html_model import Figure, Table
from judgelab.report.svg import count_scatter

__all__ = ["HeadlineRow", "Headline", "build_headline", "published_headline", "interval_words", "verdict_words",
           "strength_word", "plural", "STRENGTH", "METHOD_SYMBOL"]

#: Levels in the order the first screen prefers them (the summary level first).
LEVEL_ORDER = ("overall", "system", "group")
#: A confusion table is drawn instead of a scatter when both sides take at most this many whole values.
CONFUSION_MAX_VALUES = 11
#: Words for the size of a correlation |r| (lower bounds), after Schober, Boer & Schwarte (2018), "Correlation
#: coefficients: appropriate use and interpretation", Anesthesia & Analgesia 126(5), Table 1.
STRENGTH = ((0.90, "very strong"), (0.70, "strong"), (0.40, "moderate"), (0.10, "weak"), (0.0, "negligible"))
#: A correlation's name and symbol as the page writes it.
METHOD_SYMBOL = {"kendall": "Kendall τ", "spearman": "Spearman ρ", "pearson": "Pearson r"}
#: Of a recipe's published correlations, the first screen leads with the first of these it has.
METHOD_PREFERENCE = ("spearman", "pearson", "kendall")
#: Fewer clusters than this give no interval (docs/intervals.md); the verdict then says "too few".
MIN_CLUSTERS = 5


@dataclass
class HeadlineRow:
    """One judge and criterion on the first screen (numbers None where undefined; ``words`` says why)."""

    judge: str
    criterion: str
    method: str
    level: str
    r: float | None
    ci_low: float | None
    ci_high: float | None
    n: int | None
    n_clusters: int | None
    interval: str  # "[low, high]" or why there is none
    caveat: str  # a caveat on a defined interval (few clusters), else ""
    baseline: str  # the human–human baseline in words (or why there is none)
    judge_mean: float | None
    human_mean: float | None
    items: int
    figure: Figure | None = None
    confusion: Table | None = None
    verdict: str = ""  # the sentence a reviewer can quote (verdict_words)
    counted: str = ""  # n named: "40 summaries"
    resampled: str = ""  # the clusters named: "10 articles resampled"
    scales: str = ""  # why the means are not compared (different scales), else ""
    items_named: str = ""  # the matched pairs named: "12 summaries"
    published: str = ""  # a recipe's published figure beside ours, in words
    also: list[str] = field(default_factory=list)  # the criterion's other published correlations, one line each


@dataclass
class Headline:
    """The first screen: one row per judge and criterion, and notes on the whole."""

    rows: list[HeadlineRow]
    notes: list[str] = field(default_factory=list)


_num = finite_or_none  # one reader of a recorded number (judgelab.missing)


def _ci_part(note: Any) -> str:
    """The ``ci: …`` part of a correlation's note (the reason for no interval, or its caveat)."""
    if not isinstance(note, str):
        return ""
    for part in note.split("; "):
        if part.startswith("ci: "):
            return part[4:]
    return ""


def interval_words(r: Any, low: Any, high: Any, note: Any, n_clusters: Any, level: str) -> tuple[str, str]:
    """(the interval or why there is none, a caveat on a defined one), in words.

    A single group, an undefined or zero-width interval is never shown as ``[a, b]``.
    """
    k = _num(n_clusters)
    if _num(r) is None:
        return "no correlation: " + (str(note).split("; ")[0].removeprefix("r: ") if isinstance(note, str) and note
                                     else "undefined"), ""
    if level == "group" and k is not None and k <= 1:
        return "no interval: a single group (a per-group correlation needs several groups to vary)", ""
    lo, hi = _num(low), _num(high)
    reason = _ci_part(note)
    if lo is None or hi is None or not hi > lo:
        return "no 95% interval: " + (reason or "not computed"), ""
    return f"95% CI [{lo:.2f}, {hi:.2f}]", reason


def plural(noun: str, n: int | None) -> str:
    """``noun`` for ``n`` things ("summary" → "summaries", "story" → "stories")."""
    if n == 1:
        return noun
    if noun.endswith("y") and noun[-2:-1] not in set("aeiou"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "x", "ch", "sh")) else "s")


def strength_word(r: float) -> str:
    """The size of ``|r|`` in words (:data:`STRENGTH`)."""
    return next(word for bound, word in STRENGTH if abs(r) >= bound)


def verdict_words(r: float | None, low: float | None, high: float | None, n: int | None, units: str,
                  n_clusters: int | None = None, cluster_units: str = "items", caveat: str = "") -> str:
    """One sentence a reviewer can quote, decided from a recorded correlation and its 95% interval (the rule of
    docs/report-and-annotate.md):

    * no correlation → "no verdict"; no interval → "too few …" when under :data:`MIN_CLUSTERS` clusters, else
      "no verdict yet: no interval";
    * the interval includes 0 → "inconclusive: the interval includes 0 with N units — it cannot be trusted yet";
    * the interval lies below 0 → the judge ranks against the humans;
    * above 0 → the strength of r (:data:`STRENGTH`) and of the interval's lower end;
    * a caveat on the interval (few clusters) is added as a warning that it may be too narrow.

    ``units``: what n counts, plural ("summaries"); ``cluster_units`` what the bootstrap resampled ("articles").
    """
    counted = f"{n:,} {units}" if n is not None else units
    if r is None:
        return "No verdict: the correlation is undefined."
    if low is None or high is None or not high > low:
        if n_clusters is not None and n_clusters < MIN_CLUSTERS:
            return (f"Too few {cluster_units} for an interval ({n_clusters:,}, with {counted}): no verdict yet — "
                    "it cannot be trusted yet.")
        return f"No verdict yet: no interval with {counted} — it cannot be trusted yet."
    few = f" Few {cluster_units} ({n_clusters:,}): the interval may be too narrow." if caveat and n_clusters else ""
    if low <= 0 <= high:
        return f"Inconclusive: the interval includes 0 with {counted} — it cannot be trusted yet.{few}"
    if high < 0:
        return (f"{strength_word(r).capitalize()} disagreement: the interval lies below 0 with {counted} — the judge "
                f"ranks against the humans.{few}")
    return (f"{strength_word(r).capitalize()} agreement: the interval lies above 0 with {counted} (its lower end, "
            f"{low:.2f}, is {strength_word(low)}).{few}")


def _baseline_words(baseline: pd.DataFrame | None, criterion: str, level: str, method: str, skipped: str) -> str:
    if baseline is None or baseline.empty or not {"criterion", "level", "method"} <= set(baseline.columns):
        return f"no human baseline: {skipped}" if skipped else "no human baseline"
    b = baseline[(baseline["criterion"].astype(str) == criterion) & (baseline["level"].astype(str) == level)
                 & (baseline["method"].astype(str) == method)]
    if b.empty:
        return "no human baseline for this criterion (it needs two individual human raters)"
    row = b.iloc[0]
    parts = []
    raters = _num(row.get("raters"))
    for key, what in (("pairwise", "two humans agree at"), ("vs_mean", "a human vs the humans' mean (an upper bound)")):
        value = _num(row.get(key))
        if value is None:
            continue
        interval, caveat = interval_words(value, row.get(f"{key}_ci_low"), row.get(f"{key}_ci_high"),
                                          _key_note(row.get("note"), key), row.get(f"{key}_n_clusters"), level)
        parts.append(f"{what} {value:.2f} ({interval})")
    if not parts:
        return "no human baseline: the humans' correlations are undefined here"
    text = "; ".join(parts)
    if raters is not None and raters < 3:
        text += f" — with {int(raters)} raters a human vs the mean of both is inflated; the pairwise value is the baseline"
    return text


def _key_note(note: Any, key: str) -> str:
    """The part of a baseline row's note about ``vs_mean`` or ``pairwise``, in a correlation's note form."""
    if not isinstance(note, str):
        return ""
    return "; ".join(p.removeprefix(f"{key} ") for p in note.split("; ") if p.startswith(f"{key} "))


def _pick_level(corr: pd.DataFrame) -> str:
    levels = [lv for lv in LEVEL_ORDER if lv in set(corr["level"].astype(str))]
    return levels[0] if levels else str(corr["level"].iloc[0])


def _picture(pairs: pd.DataFrame, judge: str, criterion: str, k: int,
             m: MatchedMeans | None = None) -> tuple[Figure | None, Table | None]:
    x, y = pairs["score_x"].to_numpy(float), pairs["score_y"].to_numpy(float)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size == 0:
        return None, None
    same = m is None or m.same_scale
    whole = np.all(x == np.round(x)) and np.all(y == np.round(y))
    if same and whole and len(np.unique(x)) <= CONFUSION_MAX_VALUES and len(np.unique(y)) <= CONFUSION_MAX_VALUES:
        xs, ys = sorted({int(v) for v in x}), sorted({int(v) for v in y})
        counts = pd.crosstab(pd.Series(y.astype(int), name="human"), pd.Series(x.astype(int), name="judge"))
        rows = [[f"human {h}", *[int(counts.at[h, j]) if j in counts.columns and h in counts.index else 0 for j in xs]]
                for h in ys]
        table = Table(id=f"confusion-{k}", caption=f"{criterion}: judge ({judge}) vs human, items per score pair",
                      columns=["human ↓ / judge →", *[f"judge {j}" for j in xs]],
                      kinds=["text", *(["int"] * len(xs))], rows=rows,  # type: ignore[list-item]
                      note="Counts of items; the diagonal is exact agreement.")
        return None, table
    fig_id = f"fig-headline-{k}"
    title = f"{criterion}: judge ({judge}) vs mean human rating per item"
    line = ("The dashed line is equality." if same else
            "The judge and the humans rated on different scales: each axis has its own, and there is no equality line.")
    svg = count_scatter(x, y, fig_id, title, f"Each circle is a (judge mean, human mean) pair; its area counts the "
                        f"{x.size:,} items at that point. {line}",
                        f"judge ({judge}), mean of samples", "humans, mean of raters", identity=same,
                        x_domain=None if same or m is None else m.judge_scale)
    return Figure(fig_id, title, f"Judge mean against human mean for {x.size:,} items; circle area = items; "
                                 + ("dashed line: judge = human." if same else
                                    "different scales on the two axes, no equality line."), svg), None


def _scales_words(m: MatchedMeans, pairs: pd.DataFrame) -> str:
    if m.same_scale or m.judge_scale is None:
        return ""
    lo, hi = m.judge_scale
    return (f"Not comparable as means: the judge rated on {lo:g}–{hi:g}, the humans' means run from "
            f"{pairs['score_y'].min():.2f} to {pairs['score_y'].max():.2f} (another scale); only the correlation, "
            "which compares orders, is read across them.")


def _named(m: MatchedMeans | None, n: int | None, k: int | None, level: str) -> tuple[str, str]:
    """(n named, the resampled clusters named): "40 summaries", "10 articles resampled"."""
    text = m.text_unit if m is not None and m.text_unit else "text"
    cluster = "group" if level == "group" else (m.cluster_unit if m is not None and m.cluster_unit else "item")
    counted = f"{n:,} {plural(text, n)}" if n is not None else ""
    resampled = f"{k:,} {plural(cluster, k)} resampled" if k else ""
    if k and k == n and cluster == text:  # one text per item: the texts themselves are resampled
        resampled = "each resampled"
    return counted, resampled


def build_headline(corr: pd.DataFrame | None, baseline: pd.DataFrame | None, skipped: dict[str, str],
                   matched: tuple[MatchedMeans, ...] = ()) -> Headline | None:
    """The first screen from agree's correlations and baseline tables and the matched per-item means its step
    recorded (none: no means, scatter or confusion table — e.g. a folder of an older judgelab)."""
    if corr is None or corr.empty or not {"rater", "criterion", "level", "method", "r"} <= set(corr.columns):
        return None
    by_pair = {(m.rater, m.criterion): m for m in matched}

    level = _pick_level(corr)
    method = str(corr["method"].iloc[0])
    rows: list[HeadlineRow] = []
    notes = [f"Correlation: {method} at the {level} level"
             + (" (every rated text pooled)" if level == "overall" else "")
             + "; other levels and methods are under Agreement with humans."]
    mine = corr[(corr["level"].astype(str) == level) & (corr["method"].astype(str) == method)]
    for k, row in enumerate(mine.itertuples(index=False)):
        judge, criterion = str(row.rater), str(row.criterion)
        interval, caveat = interval_words(row.r, getattr(row, "ci_low", None), getattr(row, "ci_high", None),
                                          getattr(row, "note", ""), getattr(row, "n_clusters", None), level)
        jm = hm = None
        items = 0
        figure, confusion = None, None
        scales = ""
        m = by_pair.get((judge, criterion))
        if m is not None:
            pairs = pd.DataFrame({"score_x": m.judge, "score_y": m.human}, dtype=float).dropna()
            items = len(pairs)
            if items:
                jm, hm = m.judge_mean, m.human_mean  # the record's (None in a record written before)
                figure, confusion = _picture(pairs, judge, criterion, k, m)
                scales = _scales_words(m, pairs)
        r, lo, hi = _num(row.r), _num(getattr(row, "ci_low", None)), _num(getattr(row, "ci_high", None))
        n = int(row.n) if _num(getattr(row, "n", None)) is not None else None
        n_clusters = int(row.n_clusters) if _num(getattr(row, "n_clusters", None)) is not None else None
        counted, resampled = _named(m, n, n_clusters, level)
        text_units = counted.split(" ", 1)[1] if counted else "texts"
        cluster_units = (text_units if resampled == "each resampled" else
                         resampled.split(" ", 1)[1].removesuffix(" resampled") if resampled else "items")
        shown = (lo, hi) if interval.startswith("95% CI") else (None, None)
        rows.append(HeadlineRow(
            judge=judge, criterion=criterion, method=method, level=level, r=r, ci_low=lo, ci_high=hi, n=n,
            n_clusters=n_clusters, interval=interval, caveat=caveat,
            baseline=_baseline_words(baseline, criterion, level, method, skipped.get("human_baseline", "")),
            judge_mean=jm, human_mean=hm, items=items, figure=figure, confusion=confusion,
            verdict=verdict_words(r, *shown, n, text_units, n_clusters, cluster_units, caveat),
            counted=counted, resampled=resampled, scales=scales,
            items_named=f"{items:,} {plural(m.text_unit or 'text', items)}" if m is not None else ""))
    return Headline(rows, notes)


# -- a recipe's correlations beside the published ones ---------------------------------------------------------
def _beside(row: PublishedRow, by: str) -> str:
    """The published figure beside ours: where it lies against our interval."""
    if row.published_r is None:
        return ""
    said = f"{by} published {row.published_r:.3f}"
    if row.r is None:
        return said + " (ours is undefined)"
    if row.ci_low is None or row.ci_high is None or not row.ci_high > row.ci_low:
        return said + f" (ours {row.r:.2f}, with no interval to compare it with)"
    where = ("inside our 95% interval" if row.ci_low <= row.published_r <= row.ci_high else
             "above our 95% interval" if row.published_r > row.ci_high else "below our 95% interval")
    return said + f": {where}"


def _published_row(k: int, found: list[PublishedRow], comp: PublishedComparison) -> HeadlineRow:
    p = found[0]
    interval, caveat = interval_words(p.r, p.ci_low, p.ci_high, p.note, p.n_clusters, "overall")
    texts, clusters = plural(p.text_unit, p.n), plural(p.cluster_unit, p.n_clusters)
    same = p.text_unit == p.cluster_unit and p.n == p.n_clusters
    shown = (p.ci_low, p.ci_high) if interval.startswith("95% CI") else (None, None)
    also = []
    for o in found[1:]:
        words = interval_words(o.r, o.ci_low, o.ci_high, o.note, o.n_clusters, "overall")[0]
        value = f"{o.r:.2f} ({words})" if o.r is not None else words
        also.append(f"{METHOD_SYMBOL.get(o.method, o.method)} = {value}; " + _beside(o, comp.published_by))
    return HeadlineRow(
        judge=p.rater, criterion=p.criterion, method=p.method, level=p.level, r=p.r, ci_low=p.ci_low,
        ci_high=p.ci_high, n=p.n, n_clusters=p.n_clusters, interval=interval, caveat=caveat,
        baseline=f"no human baseline: the human scores are {comp.humans}" if comp.humans else "no human baseline",
        judge_mean=None, human_mean=None, items=0,
        verdict=verdict_words(p.r, *shown, p.n, texts, p.n_clusters, clusters, caveat),
        counted=f"{p.n:,} {texts}" if p.n is not None else "",
        resampled="each resampled" if same else f"{p.n_clusters:,} {clusters} resampled" if p.n_clusters else "",
        published=_beside(p, comp.published_by), also=also)


def published_headline(comp: PublishedComparison) -> Headline | None:
    """The first screen of a recipe's folder from the correlations it recorded beside the published ones: per judge
    and criterion the statistic, interval, n named, the verdict in words and the published figure beside ours."""
    groups: dict[tuple[str, str], list[PublishedRow]] = {}
    for row in comp.rows:
        groups.setdefault((row.rater, row.criterion), []).append(row)
    if not groups:
        return None
    order = {m: i for i, m in enumerate(METHOD_PREFERENCE)}
    rows = [_published_row(k, sorted(found, key=lambda r: order.get(r.method, len(order))), comp)
            for k, found in enumerate(groups.values())]
    levels = sorted({r.level for r in rows})
    notes = [f"Correlation at the {', '.join(levels)} level, where {comp.published_by}'s figures were published "
             f"({comp.source}); every level and method is in the tables below."]
    return Headline(rows, notes)
