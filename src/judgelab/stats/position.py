"""Position bias of pairwise verdicts asked in both orders (MT-Bench's measures, with intervals).

See :mod:`judgelab.stats.bias` for the effect type and the item bootstrap.

Reference:
    Zheng et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena, §3.3, Table 2.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats.bias_effect import _NAN, BiasEffect, _ci, _interval_text, _wmean

__all__ = ["position_bias", "length_preference"]


_CHOICE = {"first": 1.0, "second": 0.0, "tie": 0.5, "1": 1.0, "2": 0.0, "0": 0.5}


def _verdicts(pairs: pd.DataFrame) -> pd.DataFrame:
    """The verdicts checked and labelled: ``rater, first, second, criterion`` (``pairwise`` without a
    column), ``c`` (1 = picked the first-shown text, ties 1/2), ``key`` (the pair, order-free),
    ``order`` (``a``: the lower label shown first, ``b``: the other) and ``item_id`` (the cluster;
    default: the pair). One verdict per rater, criterion, pair and order."""
    need = ["rater", "first", "second", "choice"]
    missing = [c for c in need if c not in pairs.columns]
    if missing:
        raise JudgelabError(f"pairs: missing column {', '.join(map(repr, missing))} (need {', '.join(need)})")
    p = pairs.copy()
    for c in ("rater", "first", "second"):
        p[c] = p[c].astype(str)
    p["criterion"] = p["criterion"].astype(str) if "criterion" in p.columns else "pairwise"
    choice = p["choice"].astype(str).str.strip().str.lower().map(_CHOICE)
    if choice.isna().any():
        bad = p.loc[choice.isna(), "choice"].iloc[0]
        raise JudgelabError(f"pairs: choice {bad!r} is not first, second or tie")
    p["c"] = choice
    lo_, hi_ = p[["first", "second"]].min(axis=1), p[["first", "second"]].max(axis=1)
    p["key"] = lo_ + "\x1f" + hi_
    p["order"] = np.where(p["first"] == lo_, "a", "b")
    p["item_id"] = p["item_id"].astype(str) if "item_id" in p.columns else p["key"]
    dup = p.duplicated(["criterion", "rater", "item_id", "key", "order"])
    if dup.any():
        r = p[dup].iloc[0]
        raise JudgelabError(f"pairs: rater {r['rater']!r} judged {r['first']!r} vs {r['second']!r} in this order twice")
    return p


def _both_orders(p: pd.DataFrame, value: str) -> pd.DataFrame:
    """One row per (criterion, rater, item_id, key) with ``value`` of the verdict in each order as
    columns ``a`` and ``b`` (NaN: not asked in that order)."""
    wide = p.pivot_table(index=["criterion", "rater", "item_id", "key"], columns="order", values=value,
                         aggfunc="first").reset_index()
    for col in ("a", "b"):
        if col not in wide.columns:
            wide[col] = np.nan
    return wide


def _one_order_note(single: int) -> str:
    return f"{single} pairs asked in one order only are left out" if single else ""


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
    wide = _both_orders(_verdicts(pairs), "c")
    out: list[BiasEffect] = []
    for (crit, rater), g in wide.groupby(["criterion", "rater"], sort=True):
        both = g.dropna(subset=["a", "b"])
        single = len(g) - len(both)
        omitted = _one_order_note(single)
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
            return _wmean(w, codes, first)

        def cons(w, consistent=consistent, codes=codes):
            return _wmean(w, codes, consistent)
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


def length_preference(pairs: pd.DataFrame, lengths: pd.DataFrame, ratings: pd.DataFrame | None = None,
                      n_resamples: int = 999, seed: int = 0, confidence_level: float = 0.95) -> list[BiasEffect]:
    """How often a judge prefers the longer text of a pair, against how often the humans' ratings do.

    Args:
        pairs: as for :func:`position_bias`; ``first`` and ``second`` are ``item_id`` labels of ``lengths``.
        lengths: ``item_id`` and ``length`` (one row per item id).
        ratings: the tidy ratings table with humans (optional): the humans "prefer" the text with the
            higher mean human rating on the pairs' criterion (equal means: half each); pairs without a
            ``criterion`` column take the humans' criterion when they rated only one.

    Returns:
        Per (criterion, rater): ``prefer_longer``, the judge's share of verdicts for the longer text
        (ties 1/2, both orders averaged so position cancels) minus the humans' share on the same pairs
        (without human ratings: minus 1/2), with a paired item-bootstrap interval. Only pairs asked in
        both orders count: in one order a position bias would read as a length preference. Pairs asked
        in one order only, of equal length, or with a text the lengths or human ratings lack are left
        out and counted in the note.

    Raises:
        JudgelabError: lengths without one length per item id, or human ratings without the pairs' criterion.
    """
    if "length" not in lengths.columns or "item_id" not in lengths.columns:
        raise JudgelabError("lengths: need columns item_id and length")
    ids = lengths["item_id"].astype(str)
    if ids.duplicated().any():
        raise JudgelabError("length preference on pairs needs one length per item_id (pairs name texts by item_id)")
    length = dict(zip(ids, lengths["length"].astype(float)))
    p = _verdicts(pairs)
    human, human_note = _human_means(ratings, sorted(p["criterion"].unique()), "criterion" in pairs.columns)
    lf, ls = p["first"].map(length), p["second"].map(length)
    p["longer"] = np.where(lf > ls, p["c"], 1 - p["c"])  # 1: picked the longer (where the lengths differ)
    usable = lf.notna() & ls.notna() & (lf != ls)
    if human is not None:
        hf = pd.Series([human[c].get(t, np.nan) for c, t in zip(p["criterion"], p["first"])], index=p.index)
        hs = pd.Series([human[c].get(t, np.nan) for c, t in zip(p["criterion"], p["second"])], index=p.index)
        hl = np.where(lf > ls, hf - hs, hs - hf)
        p["human_longer"] = np.where(hl > 0, 1.0, np.where(hl < 0, 0.0, 0.5))
        usable &= hf.notna() & hs.notna()
    else:
        p["human_longer"] = 0.5
    out: list[BiasEffect] = []
    for (crit, rater), g in p.groupby(["criterion", "rater"], sort=True):
        left = int((~usable[g.index]).sum())
        g = g[usable[g.index]]
        per, single = _pair_shares(g)
        n = len(per)
        omitted = "; ".join(s for s in (_one_order_note(single), f"{left} verdicts on pairs of equal length or "
                                        "without a length or human rating left out" if left else "") if s)
        if n == 0:
            out.append(BiasEffect("prefer_longer", rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0,
                                  omitted or "no pair", ""))
            continue
        codes, labels = pd.factorize(per["item_id"], sort=True)
        d = (per["j"] - per["h"]).to_numpy(float)

        def stat(w, d=d, codes=codes):
            return _wmean(w, codes, d)
        est = float(d.mean())
        lo, hi, note = _ci(stat, len(labels), n_resamples, confidence_level, seed)
        who = "the humans' ratings" if human is not None else "no preference (50%; no human ratings given)"
        shares = f"judge {100 * per['j'].mean():.1f}%, humans {100 * per['h'].mean():.1f}%" if human is not None \
            else f"judge {100 * per['j'].mean():.1f}%"
        line = (f"{rater} prefers the longer text in {100 * per['j'].mean():.1f}% of pairs, {abs(100 * est):.1f} points "
                f"{'more' if est >= 0 else 'less'} often than {who} ({_interval_text(lo, hi, points=True)}).")
        out.append(BiasEffect("prefer_longer", rater, crit, est, lo, hi, 0.0, n, len(labels),
                              "; ".join(s for s in (shares, human_note, omitted, note) if s), line))
    return out


def _pair_shares(g: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Per pair asked in both orders (``item_id``, ``key``): ``j``, the judge's share for the longer
    text over both orders, and ``h``, the humans'; and how many pairs were asked in one order only."""
    if g.empty:
        return pd.DataFrame(columns=["item_id", "key", "j", "h"]), 0
    both = _both_orders(g, "longer").dropna(subset=["a", "b"])
    human = g.groupby(["item_id", "key"], as_index=False).agg(h=("human_longer", "first"))
    per = both.assign(j=(both["a"] + both["b"]) / 2).merge(human, on=["item_id", "key"])
    return per[["item_id", "key", "j", "h"]], len(human) - len(per)


def _human_means(ratings: pd.DataFrame | None, criteria: list[str],
                 named: bool) -> tuple[dict[str, dict[str, float]] | None, str]:
    """Per criterion of the pairs, the mean human rating of each item id on that criterion (``None``
    without human ratings), and a note when the humans' only criterion stands in for unnamed pairs."""
    from judgelab.ratings import item_means
    from judgelab.raters import human_mask

    if ratings is None:
        return None, ""
    m = item_means(ratings)
    h = m[human_mask(m["rater"])]
    if h.empty:
        return None, ""
    rated = sorted(h["criterion"].astype(str).unique())
    out, note = {}, ""
    for crit in criteria:
        use = crit
        if crit not in rated:
            if named or len(rated) != 1:
                where = (f"the pairs' criterion {crit!r} has no human ratings" if named else
                         f"the pairs have no criterion column and the humans rated {len(rated)} criteria")
                raise JudgelabError(f"length preference on pairs: {where} (human criteria: {', '.join(rated)}); "
                                    "name the criterion the verdicts judge in the pairs' criterion column")
            use = rated[0]
            note = f"humans' ratings of {use!r} (the pairs name no criterion)"
        hc = h[h["criterion"].astype(str) == use]
        out[crit] = hc.groupby(hc["item_id"].astype(str))["score"].mean().to_dict()
    return out, note
