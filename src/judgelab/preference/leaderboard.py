"""A leaderboard of all systems: Bradley–Terry ratings with bootstrap intervals, optionally style-controlled
(``docs/preference.md``).

Per rater and criterion, every verdict with a choice is one observation of ``P(first better) = σ(β_first −
β_second [+ γ·style])`` with the verdict's preference for the first response as a soft target: a tie is half a
win for each side (as Chatbot Arena and Arena-Hard count ties), a soft preference counts as given. The ratings
are maximum-likelihood, on the Elo-like scale ``1000 + 400·β / ln 10`` with the anchor (the baseline) at 1000:
400 points are odds of 10 to 1. ``win_rate_vs_anchor`` = 100·σ(β). The 95% interval is the percentile
bootstrap over items (instructions resampled with replacement with all their verdicts; seeded).

A system that won (or lost) every one of its verdicts has no finite rating; it is listed without one and left
out of the fit, as is a system no chain of verdicts connects with the anchor.

Style control (Arena-Hard's, ``show_result.py``): four covariates per verdict from the two responses' texts —
length ``(ℓ₁ − ℓ₂)/(ℓ₁ + ℓ₂)`` in words, and for markdown headers, list items and bold spans the densities
``c/(ℓ + 1)`` compared as ``(d₁ − d₂)/(d₁ + d₂ + 1)`` (counted outside fenced code blocks) — each standardised
over the verdicts; a covariate without spread, or a copy of the ones before it (a linear combination), is left
out. The ratings then compare systems at equal style.
As Arena-Hard notes, the style coefficients are fitted on the pool of systems compared, so a system's
style-controlled rating depends on which other systems are in the pool.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from judgelab.preference.length_control import fit_soft_logistic
from judgelab.preference.win_rates import preference_values
from judgelab.preference.win_rates_results import Standing
from judgelab.status import Status

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["leaderboard", "style_features", "STYLE_NAMES", "SCALE"]

#: Elo-like points per natural-log unit of odds (400 points = odds of 10).
SCALE = 400 / math.log(10)
STYLE_NAMES = ("length", "headers", "lists", "bold")
_CODE = re.compile(r"```([^`]*)```")
_PATTERNS = {"headers": [re.compile(r"^#{%d}\s" % k, re.MULTILINE) for k in range(1, 7)],
             "lists": [re.compile(r"^\s*\d+\.\s", re.MULTILINE), re.compile(r"^\s*[-*+]\s", re.MULTILINE)],
             "bold": [re.compile(r"\*\*[^*\n]+\*\*"), re.compile(r"__[^_\n]+__")]}


def _counts(text: str) -> list[float]:
    plain = _CODE.sub("", text)
    return [float(len(text.split()))] + [float(sum(len(p.findall(plain)) for p in _PATTERNS[k]))
                                         for k in ("headers", "lists", "bold")]


def style_features(first_texts: list[str], second_texts: list[str]) -> "tuple[np.ndarray, list[str]]":
    """The standardised style covariates of each verdict (first minus second, Arena-Hard's normalisation) and
    their names; a covariate the same in every verdict, or a linear combination of those before it, is left out.

    Example:
        >>> x, names = style_features(["# A\\n- a\\n- b", "short", "**x** y"], ["plain answer", "**b** c", "# B\\n- d"])
        >>> names, x.shape
        (['length', 'headers'], (3, 2))
    """
    import numpy as np

    seen: dict[str, list[float]] = {}  # a baseline's response is compared with every system: counted once
    a = np.array([seen.get(t) or seen.setdefault(t, _counts(t)) for t in map(str, first_texts)])
    b = np.array([seen.get(t) or seen.setdefault(t, _counts(t)) for t in map(str, second_texts)])
    total = a[:, 0] + b[:, 0]
    cols = [np.divide(a[:, 0] - b[:, 0], total, out=np.zeros(len(a)), where=total > 0)]
    da, db = a[:, 1:] / (a[:, :1] + 1), b[:, 1:] / (b[:, :1] + 1)
    cols += list(((da - db) / (da + db + 1)).T)
    keep: list["np.ndarray"] = []
    names: list[str] = []
    for name, c in zip(STYLE_NAMES, cols):
        sd = float(np.std(c, ddof=1)) if len(c) > 1 else 0.0
        z = (c - c.mean()) / sd if sd > 0 else c
        if sd > 0 and np.linalg.matrix_rank(np.column_stack(keep + [z])) == len(keep) + 1:
            keep.append(z)
            names.append(name)
    return (np.column_stack(keep) if keep else np.zeros((len(a), 0))), names


def _finite_systems(first: "np.ndarray", second: "np.ndarray", y: "np.ndarray", anchor: str) -> tuple[set[str], dict[str, str]]:
    """The systems with a finite rating, and a note for each of the others (won or lost everything, or not
    connected with the anchor)."""
    import numpy as np

    alive = set(first) | set(second)
    notes: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        use = np.array([f in alive and s in alive for f, s in zip(first, second)], dtype=bool)
        for system in sorted(alive):
            pref = np.concatenate([y[use & (first == system)], 1 - y[use & (second == system)]])
            if len(pref) and (pref.min() >= 1 or pref.max() <= 0):
                notes[system] = f"{'won' if pref.min() >= 1 else 'lost'} every verdict: no finite rating"
                alive.discard(system)
                changed = True
    neighbours: dict[str, set[str]] = {}
    for f, t in set(zip(first, second)):
        if f in alive and t in alive:
            neighbours.setdefault(f, set()).add(t)
            neighbours.setdefault(t, set()).add(f)
    reached, frontier = {anchor} & alive, [anchor] if anchor in alive else []
    while frontier:
        for b in neighbours.get(frontier.pop(), set()) - reached:
            reached.add(b)
            frontier.append(b)
    for system in alive - reached:
        notes[system] = f"not connected with the anchor {anchor!r} by any chain of verdicts: no rating"
    return reached, notes


class _Design:
    """The model's design for one rater and criterion, built once: a row per verdict (with style covariates), or —
    without them — a row per ordered pair of systems, since then the likelihood depends on a pair's verdicts only
    through their total weight and weighted mean preference (so a resample only reweights)."""

    def __init__(self, first: "np.ndarray", second: "np.ndarray", y: "np.ndarray", others: list[str],
                 style: "np.ndarray") -> None:
        import numpy as np

        index = {s: i for i, s in enumerate(others)}
        self.y = y
        if style.shape[1]:
            self.code = np.arange(len(y))
            rows_first, rows_second = list(first), list(second)
        else:
            names = sorted(set(first) | set(second))
            number = {s: i for i, s in enumerate(names)}
            key = np.array([number[f] * len(names) + number[t] for f, t in zip(first, second)], dtype=np.int64)
            pairs, code = np.unique(key, return_inverse=True)
            self.code = code.ravel()
            rows_first = [names[k // len(names)] for k in pairs]
            rows_second = [names[k % len(names)] for k in pairs]
        self.x = np.zeros((len(rows_first), len(others) + style.shape[1]))
        for systems, sign in ((rows_first, 1.0), (rows_second, -1.0)):
            at = np.array([index.get(s, -1) for s in systems], dtype=int)
            self.x[np.flatnonzero(at >= 0), at[at >= 0]] = sign
        if style.shape[1]:
            self.x[:, len(others):] = style

    def fit(self, w: "np.ndarray", start: "np.ndarray | None" = None) -> "np.ndarray | None":
        import numpy as np

        total = np.bincount(self.code, w, minlength=len(self.x))
        keep = total > 0
        mean = np.bincount(self.code, w * self.y, minlength=len(self.x))[keep] / total[keep]
        return fit_soft_logistic(self.x[keep], mean, total[keep], start=start)


def leaderboard(verdicts: "pd.DataFrame", anchor: str, style_control: bool = False, n_resamples: int = 100,
                seed: int = 0) -> tuple[tuple[Standing, ...], dict[str, dict[str, float]]]:
    """Bradley–Terry ratings of every system per rater and criterion with bootstrap intervals, anchored at
    ``anchor`` (1000), and — with ``style_control`` — the style coefficients per ``"rater|criterion"``."""
    import numpy as np

    judged = verdicts[verdicts["choice"].notna() & (verdicts["status"] == Status.OK.value)]
    standings: list[Standing] = []
    coefs: dict[str, dict[str, float]] = {}
    rng = np.random.default_rng(seed)
    for (rater, criterion), g in judged.groupby(["rater", "criterion"], sort=True):
        first, second = g["first"].astype(str).to_numpy(), g["second"].astype(str).to_numpy()
        y = preference_values(g)
        systems = sorted(set(first) | set(second))
        if anchor not in systems:
            continue
        finite, notes = _finite_systems(first, second, y, anchor)
        use = np.array([f in finite and s in finite for f, s in zip(first, second)], dtype=bool)
        first, second, y, g = first[use], second[use], y[use], g[use]
        style, names = (style_features(g["first_text"].tolist(), g["second_text"].tolist()) if style_control
                        and len(g) and g["first_text"].notna().all() and g["second_text"].notna().all()
                        else (np.zeros((len(y), 0)), []))
        others = sorted(finite - {anchor})
        design = _Design(first, second, y, others, style)
        beta = design.fit(np.ones(len(y))) if len(y) else None
        items = g["item_id"].astype(str).to_numpy()
        codes, inverse = np.unique(items, return_inverse=True)
        boot = []
        for _ in range(n_resamples if beta is not None else 0):
            w = np.bincount(rng.integers(0, len(codes), len(codes)), minlength=len(codes))[inverse].astype(float)
            b = design.fit(w, start=beta)  # a resample's maximum lies near the whole sample's
            boot.append(np.full(len(others), np.nan) if b is None else b[:len(others)])
        draws = np.array(boot) if boot else np.zeros((0, len(others)))
        failed = int(np.isnan(draws[:, 0]).sum()) if draws.size else 0
        counts = {s: int(((first == s) | (second == s)).sum()) for s in systems}
        if beta is not None and names:
            coefs[f"{rater}|{criterion}"] = {n: float(c) for n, c in zip(names, beta[len(others):])}
        rated = {anchor: (0.0, 0.0, 0.0)} if beta is not None else {}
        for i, s in enumerate(others):
            if beta is not None:
                lo, hi = (np.nanpercentile(draws[:, i], [2.5, 97.5]) if len(draws) > failed else (math.nan, math.nan))
                rated[s] = (float(beta[i]), float(lo), float(hi))
        order = sorted(rated, key=lambda s: -rated[s][0])
        note_fit = "" if beta is not None else "no finite fit (the verdicts separate the systems, or a style covariate " \
                                               "is confounded with them)"
        note_boot = f"{failed} of {n_resamples} resamples had no finite fit and were left out" if failed else ""
        for s in systems:
            r = rated.get(s)
            note = notes.get(s) or note_fit or note_boot
            if s == anchor and r is not None:
                note = "the anchor (1000 by definition)"
            standings.append(Standing(str(rater), str(criterion), order.index(s) + 1 if r else None, s,
                                      _elo(r[0]) if r else None, _elo(r[1]) if r else None, _elo(r[2]) if r else None,
                                      100 / (1 + math.exp(-r[0])) if r else None, counts[s], bool(names), note))
    standings.sort(key=lambda s: (s.rater, s.criterion, s.rank if s.rank is not None else 10**9, s.system))
    return tuple(standings), coefs


def _elo(beta: float) -> float | None:
    return 1000 + SCALE * beta if math.isfinite(beta) else None
