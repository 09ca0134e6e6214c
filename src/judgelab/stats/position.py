"""Position bias of pairwise verdicts asked in both orders (MT-Bench's measures, with intervals).

See :mod:`judgelab.stats.bias` for the effect type and the item bootstrap.

Reference:
    Zheng et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena, §3.3, Table 2.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats.bias import _NAN, BiasEffect, _ci, _interval_text, _wmean

__all__ = ["position_bias"]


_CHOICE = {"first": 1.0, "second": 0.0, "tie": 0.5, "1": 1.0, "2": 0.0, "0": 0.5}


def position_bias(pairs: pd.DataFrame, n_resamples: int = 999, seed: int = 0,
                  confidence_level: float = 0.95) -> list[BiasEffect]:
    """Consistency and first-position preference of pairwise verdicts asked in both orders.

    Args:
        pairs: one row per verdict: ``rater``, ``first``, ``second`` (the two texts' labels as shown),
            ``choice`` (``first``, ``second`` or ``tie``), optional ``item_id`` (the cluster; default:
            the pair) and ``criterion``. A pair is matched with its swapped order by the labels.

    Returns:
        Per (criterion, rater): ``position_first`` (share of verdicts picking the first-shown text
        minus 1/2) and ``position_consistency`` (share of pairs with the same winner in both orders).
    """
    need = ["rater", "first", "second", "choice"]
    missing = [c for c in need if c not in pairs.columns]
    if missing:
        raise JudgelabError(f"pairs: missing column {', '.join(map(repr, missing))} (need {', '.join(need)})")
    p = pairs.copy()
    for c in ("rater", "first", "second"):
        p[c] = p[c].astype(str)
    p["criterion"] = p["criterion"].astype(str) if "criterion" in p.columns else "pairwise"
    p["item_id"] = p["item_id"].astype(str) if "item_id" in p.columns else None
    choice = p["choice"].astype(str).str.strip().str.lower().map(_CHOICE)
    if choice.isna().any():
        bad = p.loc[choice.isna(), "choice"].iloc[0]
        raise JudgelabError(f"pairs: choice {bad!r} is not first, second or tie")
    p["c"] = choice
    lo_, hi_ = p[["first", "second"]].min(axis=1), p[["first", "second"]].max(axis=1)
    p["key"] = lo_ + "\x1f" + hi_
    p["order"] = np.where(p["first"] == lo_, "a", "b")
    if p["item_id"].isna().all():
        p["item_id"] = p["key"]
    dup = p.duplicated(["criterion", "rater", "item_id", "key", "order"])
    if dup.any():
        r = p[dup].iloc[0]
        raise JudgelabError(f"pairs: rater {r['rater']!r} judged {r['first']!r} vs {r['second']!r} in this order twice")
    wide = p.pivot_table(index=["criterion", "rater", "item_id", "key"], columns="order", values="c",
                         aggfunc="first").reset_index()
    for col in ("a", "b"):
        if col not in wide.columns:
            wide[col] = np.nan
    out: list[BiasEffect] = []
    for (crit, rater), g in wide.groupby(["criterion", "rater"], sort=True):
        both = g.dropna(subset=["a", "b"])
        single = len(g) - len(both)
        omitted = f"{single} pairs asked in one order only are left out" if single else ""
        n = len(both)
        if n == 0:
            out.append(BiasEffect("position_first", rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0,
                                  omitted or "no pair asked in both orders"))
            continue
        codes, labels = pd.factorize(both["item_id"], sort=True)
        k = len(labels)
        a, b = both["a"].to_numpy(float), both["b"].to_numpy(float)
        first = (a + b) / 2 - 0.5
        consistent = np.isclose(a, 1 - b).astype(float)

        def pref(w, first=first, codes=codes):
            return _wmean(w[:, codes], first)

        def cons(w, consistent=consistent, codes=codes):
            return _wmean(w[:, codes], consistent)
        est = float(first.mean())
        lo, hi, note = _ci(pref, k, n_resamples, confidence_level, seed)
        line = (f"{rater} picks the first-shown text in {100 * (0.5 + est):.1f}% of its verdicts "
                f"(50% = no position bias; {_interval_text(0.5 + lo, 0.5 + hi, pct=True)}).")
        out.append(BiasEffect("position_first", rater, crit, est, lo, hi, 0.0, n, k,
                              "; ".join(s for s in (omitted, note) if s), line))
        est = float(consistent.mean())
        lo, hi, note = _ci(cons, k, n_resamples, confidence_level, seed + 1)
        line = (f"{rater} gives the same verdict in both orders for {100 * est:.1f}% of pairs "
                f"({_interval_text(lo, hi, pct=True)}).")
        out.append(BiasEffect("position_consistency", rater, crit, est, lo, hi, _NAN, n, k,
                              "; ".join(s for s in (omitted, note) if s), line))
    return out
