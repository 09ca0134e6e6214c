"""Biases of pairwise judges read from the verdicts table (:mod:`judgelab.preference.verdicts`).

Per rater and criterion, each an effect with a percentile cluster-bootstrap interval over ``item_id``
(:mod:`judgelab.stats.wboot`, as every bias of the audit), detected when the interval excludes 0:

* ``pairwise_first`` — position preference: among the decisive verdicts (first or second; ties left
  out) of pairs asked in both orders, the share that picks the response shown first, minus 1/2. A pair
  is two systems on one item (and one ``sample``); asking it in both orders makes the responses' own
  quality cancel, so 0 is no preference. Pairs asked in one order only are left out and counted: there a
  judge that picks the first-shown response would look as if it preferred whichever system was shown
  first.
* ``pairwise_flip`` — among pairs asked in both orders, the share whose winner changes with the order
  (a tie is an outcome of its own). It has no no-bias value (a noisy judge flips without preferring a
  position), so it is described, never "detected".
* ``pairwise_longer`` — length preference of a judge: on pairs the judge saw in both orders (its
  preference for a system averaged over the orders, so position cancels) and the humans labelled, the
  judge's share for the longer response minus the humans' share on the same pairs (a tie 1/2; a soft
  ``p_first`` as given). Lengths are words of ``first_text`` and ``second_text``; pairs without both
  texts, of equal length, without a human verdict, or asked in one order only are left out and counted.
* ``pairwise_own`` — self-preference of a judge with a family (``--self-family``): on pairs of one
  response of its family and one of another (``--system-family``), the judge's share for its own
  family's response minus the humans' share on the same pairs; the same pairs as for length.

A judge that often ties or picks by position moves its shares toward 1/2, so ``pairwise_longer`` and
``pairwise_own`` are slightly attenuated for such a judge (the self-check measures the size).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from judgelab.preference.verdicts import normalise_verdicts, pair_sides
from judgelab.raters import is_human, human_mask
from judgelab.stats.bias import _family
from judgelab.stats.bias_effect import _NAN, BiasEffect, _ci, _interval_text, _wmean
from judgelab.status import Status

__all__ = ["pairwise_biases", "PAIRWISE_BIASES"]

#: The effects of this module.
PAIRWISE_BIASES = ("pairwise_first", "pairwise_flip", "pairwise_longer", "pairwise_own")
_CHOICE_OF_FIRST = {"first": 1.0, "second": 0.0, "tie": 0.5}


def _prepared(verdicts: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[str, str], int]]:
    """The usable verdicts (status ok, a choice) with ``lo``/``hi`` (the pair's systems, sorted), ``order``
    (``a``: ``lo`` shown first), ``key`` (item and pair, order-free), ``c`` (choice of the first, a tie
    1/2), ``p_lo`` (preference for ``lo``, ``p_first`` where given); and the failed verdicts per
    (rater, criterion)."""
    ok = (verdicts["status"] == Status.OK.value) & verdicts["choice"].notna()
    failed = (~ok).groupby([verdicts["rater"], verdicts["criterion"]]).sum()
    v = verdicts[ok].copy()
    v["lo"], v["hi"], lo_first = pair_sides(v)  # the pair's one order-free name (shared with preference.orders)
    v["order"] = np.where(lo_first, "a", "b")
    v["key"] = v["item_id"].astype(str) + "\x1f" + v["lo"] + "\x1f" + v["hi"]
    v["c"] = v["choice"].map(_CHOICE_OF_FIRST).astype(float)
    pref = v["p_first"].where(v["p_first"].notna(), v["c"]).astype(float)
    v["p_lo"] = np.where(v["order"] == "a", pref, 1 - pref)
    v["w_lo"] = np.where(v["order"] == "a", v["c"], 1 - v["c"])  # the winner by choice: 1 lo, 0 hi, 1/2 tie
    return v, {k: int(n) for k, n in failed.items() if n}


def _word_lengths(v: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(item_id, system) → words of the response as shown, from the first verdict row that carries it."""
    out: dict[tuple[str, str], float] = {}
    for side in ("first", "second"):
        rows = v[v[f"{side}_text"].notna()]
        for item, system, text in zip(rows["item_id"].astype(str), rows[side].astype(str), rows[f"{side}_text"]):
            out.setdefault((item, system), float(len(str(text).split())))
    return out


def _both(g: pd.DataFrame, by: list[str]) -> tuple[pd.DataFrame, int]:
    """Rows of ``g`` whose group ``by`` was asked in both orders, and how many groups were asked in one."""
    orders = g.groupby(by)["order"].transform("nunique")
    single = int(g.loc[orders < 2, by].drop_duplicates().shape[0])
    return g[orders == 2], single


def _note(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _one_order(single: int) -> str:
    return f"{single} pairs asked in one order only left out" if single else ""


def _position(rater: str, crit: str, g: pd.DataFrame, common: dict) -> list[BiasEffect]:
    by = ["key", "sample"]
    both, single = _both(g, by)
    if both.empty:
        reason = _note(_one_order(single), "no pair asked in both orders (in one order, the share of first picks "
                                           "mixes position with which system was shown first)")
        return [BiasEffect("pairwise_first", rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0, reason)]
    codes, labels = pd.factorize(both["item_id"].astype(str), sort=True)
    decisive = (both["choice"] != "tie").to_numpy(float)
    first = both["c"].to_numpy(float)
    n_dec = int(decisive.sum())
    out = []
    if n_dec:
        est = float(first[decisive > 0].mean()) - 0.5
        lo, hi, note = _ci(lambda w: _wmean(w, codes, first, decisive) - 0.5, len(labels), **common)
        line = (f"{rater} picks the response shown first in {100 * (0.5 + est):.1f}% of its decisive verdicts on "
                f"{crit} (50% = no position preference; {_interval_text(0.5 + lo, 0.5 + hi, pct=True)}).")
        ties = len(both) - n_dec
        out.append(BiasEffect("pairwise_first", rater, crit, est, lo, hi, 0.0, n_dec, len(labels),
                              _note(_one_order(single), f"{ties} ties left out" if ties else "", note), line))
    else:
        out.append(BiasEffect("pairwise_first", rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0,
                              _note(_one_order(single), "every verdict in both orders is a tie")))
    wide = both.pivot_table(index=["item_id", "key", "sample"], columns="order", values="w_lo", aggfunc="mean")
    flip = (~np.isclose(wide["a"].to_numpy(float), wide["b"].to_numpy(float))).astype(float)
    fcodes, flabels = pd.factorize(wide.index.get_level_values("item_id").astype(str), sort=True)
    est = float(flip.mean())
    lo, hi, note = _ci(lambda w: _wmean(w, fcodes, flip), len(flabels), **common)
    line = (f"{rater}'s winner on {crit} changes with the order in {100 * est:.1f}% of the pairs asked in both "
            f"orders ({_interval_text(lo, hi, pct=True)}).")
    out.append(BiasEffect("pairwise_flip", rater, crit, est, lo, hi, _NAN, len(flip), len(flabels),
                          _note(_one_order(single), "a tie is an outcome of its own", note), line))
    return out


def _judge_pairs(g: pd.DataFrame, human: pd.Series) -> tuple[pd.DataFrame, str]:
    """Per pair the judge saw in both orders: ``item_id, key, lo, hi``, ``j`` (its preference for ``lo``,
    the orders averaged) and ``h`` (the humans' mean preference for ``lo``; NaN: no human verdict), and a
    note counting the pairs asked in one order only."""
    per_order = g.groupby(["item_id", "key", "lo", "hi", "order"])["p_lo"].mean().unstack("order")
    for col in ("a", "b"):
        if col not in per_order.columns:
            per_order[col] = np.nan
    both = per_order.dropna(subset=["a", "b"])
    single = len(per_order) - len(both)
    pairs = both.assign(j=(both["a"] + both["b"]) / 2).reset_index()[["item_id", "key", "lo", "hi", "j"]]
    pairs["h"] = pairs["key"].map(human)
    return pairs, _one_order(single)


def _share_effect(bias: str, rater: str, crit: str, d: np.ndarray, item_ids: pd.Series, j: np.ndarray,
                  h: np.ndarray, what: str, left: str, common: dict) -> BiasEffect:
    if len(d) == 0:
        return BiasEffect(bias, rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0, left or "no pair")
    codes, labels = pd.factorize(item_ids.astype(str), sort=True)
    est = float(d.mean())
    lo, hi, note = _ci(lambda w: _wmean(w, codes, d), len(labels), **common)
    line = (f"{rater} picks {what} in {100 * j.mean():.1f}% of the pairs on {crit}, {abs(100 * est):.1f} points "
            f"{'more' if est >= 0 else 'less'} often than the humans ({100 * h.mean():.1f}%; "
            f"{_interval_text(lo, hi, points=True)}).")
    shares = f"judge {100 * j.mean():.1f}%, humans {100 * h.mean():.1f}%"
    return BiasEffect(bias, rater, crit, est, lo, hi, 0.0, len(d), len(labels), _note(shares, left, note), line)


def _length(rater: str, crit: str, pairs: pd.DataFrame, lengths: dict, one_order: str, common: dict) -> BiasEffect:
    n_lo = np.array([lengths.get((i, s), np.nan) for i, s in zip(pairs["item_id"].astype(str), pairs["lo"])])
    n_hi = np.array([lengths.get((i, s), np.nan) for i, s in zip(pairs["item_id"].astype(str), pairs["hi"])])
    no_text = int((np.isnan(n_lo) | np.isnan(n_hi)).sum())
    equal = int((n_lo == n_hi).sum())
    no_human = int((pairs["h"].isna() & ~np.isnan(n_lo) & ~np.isnan(n_hi) & (n_lo != n_hi)).sum())
    use = (~np.isnan(n_lo) & ~np.isnan(n_hi) & (n_lo != n_hi) & pairs["h"].notna()).to_numpy()
    lo_longer = (n_lo > n_hi)[use]
    p = pairs[use]
    j = np.where(lo_longer, p["j"], 1 - p["j"])
    h = np.where(lo_longer, p["h"], 1 - p["h"])
    left = _note(one_order, f"{no_text} pairs without both texts left out" if no_text else "",
                 f"{equal} pairs of equal length left out" if equal else "",
                 f"{no_human} pairs without a human verdict left out" if no_human else "",
                 "lengths in words of first_text and second_text")
    return _share_effect("pairwise_longer", rater, crit, j - h, p["item_id"], j, h, "the longer response", left,
                         common)


def _own(rater: str, crit: str, fam: str, pairs: pd.DataFrame, system_family: dict[str, str], one_order: str,
         common: dict) -> BiasEffect:
    own_lo = pairs["lo"].map(lambda s: system_family.get(s) == fam).to_numpy(bool)
    own_hi = pairs["hi"].map(lambda s: system_family.get(s) == fam).to_numpy(bool)
    mixed = own_lo != own_hi
    no_human = int((mixed & pairs["h"].isna().to_numpy()).sum())
    use = mixed & pairs["h"].notna().to_numpy()
    p = pairs[use]
    j = np.where(own_lo[use], p["j"], 1 - p["j"])
    h = np.where(own_lo[use], p["h"], 1 - p["h"])
    left = _note(one_order, f"{int((~mixed).sum())} pairs not of one own-family ({fam}) and one other response left "
                            "out" if (~mixed).any() else "",
                 f"{no_human} pairs without a human verdict left out" if no_human else "")
    return _share_effect("pairwise_own", rater, crit, j - h, p["item_id"], j, h,
                         f"its own family's ({fam}) response", left, common)


def _against_humans(rater: str, crit: str, g: pd.DataFrame, hv: pd.DataFrame, lengths: dict,
                    judge_family: dict[str, str], system_family: dict[str, str], skipped: dict[str, str],
                    common: dict) -> list[BiasEffect]:
    """A judge's ``pairwise_longer`` and ``pairwise_own`` against the humans' verdicts ``hv`` of its criterion."""
    fam = _family(rater, judge_family)
    wanted = [b for b, on in (("pairwise_longer", "pairwise_longer" not in skipped), ("pairwise_own", fam is not None))
              if on]
    if not wanted:
        return []
    if hv.empty:
        return [BiasEffect(b, rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0, f"no human verdicts on {crit!r}")
                for b in wanted]
    pairs, one_order = _judge_pairs(g, hv.groupby("key")["p_lo"].mean())
    out = []
    if "pairwise_longer" in wanted:
        out.append(_length(rater, crit, pairs, lengths, one_order, common))
    if fam is not None:
        out.append(_own(rater, crit, fam, pairs, system_family, one_order, common))
    return out


def _with_failed(effects: list[BiasEffect], n_failed: int) -> list[BiasEffect]:
    if not n_failed:
        return effects
    note = f"{n_failed} verdicts failed (no choice) and are left out"
    return [dataclasses.replace(e, note=_note(note, e.note)) for e in effects]


def pairwise_biases(verdicts: pd.DataFrame, judge_family: dict[str, str] | None = None,
                    system_family: dict[str, str] | None = None, n_resamples: int = 999, seed: int = 0,
                    confidence_level: float = 0.95) -> tuple[list[BiasEffect], dict[str, str]]:
    """Position, length and self-preference of every pairwise judge (module docstring).

    Args:
        verdicts: the verdicts table (any frame :func:`judgelab.preference.verdicts.normalise_verdicts` reads;
            it is normalised first); human verdicts are rows of ``human:<id>`` raters.
        judge_family, system_family: judge (label, or its model) → family and system → family, for
            ``pairwise_own`` (as ``audit --self-family``, ``--system-family``).

    Returns:
        The effects (per rater and criterion: ``pairwise_first`` and ``pairwise_flip`` for every judge, and
        for a human rater with a pair in both orders; ``pairwise_longer`` and ``pairwise_own`` for judges
        where humans labelled the criterion), and what could not be measured with the reason.
    """
    common = dict(n_resamples=n_resamples, level=confidence_level, seed=seed)
    v, failed = _prepared(normalise_verdicts(verdicts))
    human = human_mask(v["rater"])
    skipped: dict[str, str] = {}
    if not human.any():
        skipped["pairwise_longer"] = "no human verdicts (raters named human:<id>) to compare the judges with"
    elif not (v["first_text"].notna() | v["second_text"].notna()).any():
        skipped["pairwise_longer"] = "the verdicts carry no first_text and second_text (the responses as shown)"
    if not judge_family:
        skipped["pairwise_own"] = "no judge family given (--self-family JUDGE=FAMILY)"
    lengths = _word_lengths(v) if "pairwise_longer" not in skipped else {}
    out: list[BiasEffect] = []
    for (crit, rater), g in v.groupby(["criterion", "rater"], sort=True):
        is_h = is_human(rater)
        if is_h and _both(g, ["key", "sample"])[0].empty:
            continue
        effects = _position(str(rater), str(crit), g, common)
        if not is_h:
            effects += _against_humans(str(rater), str(crit), g, v[human & (v["criterion"] == crit)], lengths,
                                       judge_family or {}, system_family or {}, skipped, common)
        out += _with_failed(effects, failed.get((rater, crit), 0))
    seen = set(zip(v["rater"], v["criterion"]))
    for (rater, crit), n in sorted(failed.items()):
        if (rater, crit) not in seen:
            out.append(BiasEffect("pairwise_first", str(rater), str(crit), _NAN, _NAN, _NAN, 0.0, 0, 0,
                                  f"all {n} verdicts failed (no choice)"))
    return out, skipped
