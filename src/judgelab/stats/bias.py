"""Biases of a rater against the humans, each an effect size with a cluster-bootstrap interval.

* **Leniency and scale use** (:func:`scale_use`), for every rater, humans included: the mean
  shift against the mean human rating of the same items (a human rater against the mean of the
  *other* humans), the ratio of spreads (the rater's SD over the SD of the individual human
  ratings of the same items, pooled), and for every scale point the difference between the
  rater's share of ratings at that point and the humans' (scores rounded half up to a point).
* **Length** (:func:`length_bias`): the coefficient of length (per ``per`` words) in the
  regression of the judge's score on length and the mean human score (the AlpacaEval
  length-control idea applied to ratings). The mean human score measures quality with error, so a
  plain regression lets part of a quality–length correlation leak into the length coefficient;
  with two or more human ratings per item the error variance of the mean (within-item variance
  over the number of ratings) is removed from the cross-product matrix (the method-of-moments
  errors-in-variables correction, Fuller 1987, §2.2), which removes that leak.
* **Self-preference** (:func:`self_preference`): with a mapping judge → family and system →
  family, the judge–human gap on the texts of the judge's own family minus the gap on the others.
* **Position** (:func:`judgelab.stats.position.position_bias`): pairwise verdicts asked in both orders; the share of
  pairs whose two verdicts name the same winner (MT-Bench's consistency) and the first-position
  preference, the share of verdicts that pick the first-shown text minus 1/2 (ties count 1/2);
  the texts' own quality cancels because each pair is seen in both orders, so 0 means no bias.

Everything is matched by label (rater, criterion, system, item); the intervals resample
``item_id`` with all its rows (:mod:`judgelab.stats.wboot`), percentile, 95% by default. An
effect is *detected* when its interval excludes the no-bias value (0, or 1 for the spread ratio).

References:
    Zheng et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena, §3.3, Table 2.
    Dubois et al. (2024). Length-controlled AlpacaEval.
    Fuller (1987). Measurement Error Models, §2.2 (error variance known / estimated).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.raters import model_of, human_mask
from judgelab.ratings import is_human, item_means
from judgelab.stats.bias_effect import (_NAN, EFFECT_COLUMNS, BiasEffect, _ci, _csum, _interval_text, _sign_word,
                                        _wmean, _wsd, effects_frame)

__all__ = ["BiasEffect", "effects_frame", "scale_use", "length_bias", "self_preference", "EFFECT_COLUMNS"]

def _criteria(df: pd.DataFrame, criterion: str | list[str] | None) -> list[str]:
    known = sorted(df["criterion"].unique())
    wanted = known if criterion is None else [criterion] if isinstance(criterion, str) else list(criterion)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        raise JudgelabError(f"unknown criterion {', '.join(map(repr, unknown))}; the ratings have: {', '.join(known)}")
    return wanted


def _means(df: pd.DataFrame) -> pd.DataFrame:
    means = item_means(df)
    if not human_mask(means["rater"]).any():
        raise JudgelabError("no human ratings (raters named human:<id>) to compare with")
    return means


def scale_use(df: pd.DataFrame, criterion: str | list[str] | None = None, points: list[float] | None = None,
              raters: list[str] | None = None, n_resamples: int = 999, seed: int = 0, confidence_level: float = 0.95) -> list[BiasEffect]:
    """Leniency (mean shift), spread ratio and scale-point shares of every rater against the humans.

    Args:
        df: the tidy ratings table (judges and ``human:<id>`` raters); samples are averaged per item.
        criterion: one criterion, a list, or ``None`` for all.
        points: the scale points (default: the whole numbers from the lowest to the highest human rating;
            ``[]``: none).
        raters: the raters to audit (default: all, humans included).
        n_resamples, seed, confidence_level: the item bootstrap.

    Returns:
        Per (criterion, rater): a ``leniency``, a ``spread_ratio`` and one ``scale_point:<p>`` effect
        per point (the rater's share minus the humans', with the rater's and the humans' shares in ``note``).
        A criterion no human rated, and a rater with no other human beside it, give none.

    Example:
        >>> effects = scale_use(ratings)  # doctest: +SKIP
    """
    means = _means(df)
    out: list[BiasEffect] = []
    for crit in _criteria(df, criterion):
        m = means[means["criterion"] == crit]
        humans = m[human_mask(m["rater"])][["rater", "system", "item_id", "score"]]
        if humans.empty:  # no human ratings of this criterion: nothing to compare with
            continue
        pts = points
        if pts is None:
            lo, hi = math.floor(humans["score"].min() + 0.5), math.floor(humans["score"].max() + 0.5)
            pts = [float(p) for p in range(int(lo), int(hi) + 1)]
        for rater in sorted(m["rater"].unique()):
            if raters is not None and rater not in raters:
                continue
            ref = humans[humans["rater"] != rater]
            if ref.empty:
                continue
            mine = m[m["rater"] == rater][["system", "item_id", "score"]]
            href = ref.groupby(["system", "item_id"], as_index=False)["score"].mean()
            joined = mine.merge(href, on=["system", "item_id"], suffixes=("", "_h"))
            refrows = ref.merge(joined[["system", "item_id"]], on=["system", "item_id"])
            out.extend(_scale_effects(rater, crit, joined, refrows, pts, n_resamples, seed, confidence_level))
    return out


def _scale_effects(rater, crit, joined, refrows, pts, n_resamples, seed, level) -> list[BiasEffect]:
    n = len(joined)
    if n == 0:
        return [BiasEffect("leniency", rater, crit, _NAN, _NAN, _NAN, 0.0, 0, 0, "no item rated by both")]
    codes, labels = pd.factorize(pd.concat([joined["item_id"], refrows["item_id"]]), sort=True)
    cj, ch = codes[:n], codes[n:]
    k = len(labels)
    x, d = joined["score"].to_numpy(float), (joined["score"] - joined["score_h"]).to_numpy(float)
    h = refrows["score"].to_numpy(float)
    who = "the other humans" if is_human(rater) else "the humans"
    effects = []

    def lenient(w):
        return _wmean(w, cj, d)
    est = float(lenient(np.ones((1, k)))[0])
    lo, hi, note = _ci(lenient, k, n_resamples, level, seed)
    line = (f"{rater} rates {crit} {abs(est):.2f} points {_sign_word(est, 'higher', 'lower')} than {who} on average "
            f"({_interval_text(lo, hi)}).")
    effects.append(BiasEffect("leniency", rater, crit, est, lo, hi, 0.0, n, k, note, line))

    def spread(w):
        with np.errstate(invalid="ignore", divide="ignore"):
            return _wsd(w, cj, x) / _wsd(w, ch, h)
    est = float(spread(np.ones((1, k)))[0])
    lo, hi, note = _ci(spread, k, n_resamples, level, seed + 1)
    line = (f"{rater}'s {crit} ratings spread {est:.2f} times as widely as the individual ratings of {who} "
            f"({_interval_text(lo, hi)}).")
    effects.append(BiasEffect("spread_ratio", rater, crit, est, lo, hi, 1.0, n, k, note, line))

    xr, hr = np.floor(x + 0.5), np.floor(h + 0.5)
    for i, p in enumerate(pts):
        xi, hi_ = (xr == p).astype(float), (hr == p).astype(float)

        def share(w, xi=xi, hi_=hi_):
            return _wmean(w, cj, xi) - _wmean(w, ch, hi_)
        est = float(share(np.ones((1, k)))[0])
        lo, hi, note = _ci(share, k, n_resamples, level, seed + 2 + i)
        mine, theirs = float(xi.mean()), float(hi_.mean())
        label = f"{p:g}"
        shares = f"rater {100 * mine:.1f}%, humans {100 * theirs:.1f}%"
        line = (f"{rater} gives {crit} {label} in {100 * mine:.1f}% of its ratings, {who} in {100 * theirs:.1f}% "
                f"(difference {100 * est:+.1f} points, {_interval_text(lo, hi, points=True)}).")
        effects.append(BiasEffect(f"scale_point:{label}", rater, crit, est, lo, hi, 0.0, n, k,
                                  "; ".join(s for s in (shares, note) if s), line))
    return effects


def _human_rows(m: pd.DataFrame) -> pd.DataFrame:
    """Per (system, item): mean human score, number of human ratings and the error variance of the mean."""
    h = m[human_mask(m["rater"])]
    g = h.groupby(["system", "item_id"])["score"]
    out = g.agg(h_mean="mean", h_n="count", h_var="var").reset_index()
    out["h_err"] = np.where(out["h_n"] >= 2, out["h_var"].fillna(0.0) / out["h_n"], np.nan)
    return out


def length_bias(df: pd.DataFrame, lengths: pd.DataFrame, criterion: str | list[str] | None = None, per: float = 100.0,
                correct_error: bool = True, n_resamples: int = 999, seed: int = 0,
                confidence_level: float = 0.95) -> list[BiasEffect]:
    """Length coefficient of every judge: ``judge ~ 1 + length/per + mean human score``.

    Args:
        df: the tidy ratings table.
        lengths: ``item_id``, optional ``system`` and ``length`` (words) per text, matched by label.
        per: the length unit of the coefficient (default: per 100 words).
        correct_error: remove the error variance of the human mean (needs two or more human ratings
            per item; otherwise the plain regression is used and the note says so).

    Returns:
        One ``length`` effect per (criterion, judge): points of judge score per ``per`` words beyond
        what the human score predicts.
    """
    if "length" not in lengths.columns or "item_id" not in lengths.columns:
        raise JudgelabError("lengths: need columns item_id, length (and system when items have several systems)")
    means = _means(df)
    keys = ["system", "item_id"] if "system" in lengths.columns else ["item_id"]
    lens = lengths.assign(item_id=lengths["item_id"].astype(str))
    if "system" in keys:
        lens = lens.assign(system=lens["system"].astype(str))
    if lens.duplicated(keys).any():
        raise JudgelabError(f"lengths: the same {'/'.join(keys)} twice")
    out: list[BiasEffect] = []
    for crit in _criteria(df, criterion):
        m = means[means["criterion"] == crit]
        hum = _human_rows(m)
        for rater in sorted(r for r in m["rater"].unique() if not is_human(r)):
            j = m[m["rater"] == rater][["system", "item_id", "score"]].merge(hum, on=["system", "item_id"])
            if keys == ["item_id"] and j["item_id"].duplicated().any():
                raise JudgelabError("lengths: items have several systems; give a system column")
            j = j.merge(lens[keys + ["length"]], on=keys)
            j = j[np.isfinite(j["length"].to_numpy(float))]
            out.append(_length_effect(rater, crit, j, per, correct_error, n_resamples, seed, confidence_level))
    return out


def _length_effect(rater, crit, j, per, correct_error, n_resamples, seed, level) -> BiasEffect:
    n = len(j)
    if n < 4:
        return BiasEffect("length", rater, crit, _NAN, _NAN, _NAN, 0.0, n, 0,
                          f"{n} items with a judge score, a human score and a length: too few for the regression")
    codes, labels = pd.factorize(j["item_id"], sort=True)
    k = len(labels)
    X = np.column_stack([np.ones(n), j["length"].to_numpy(float) / per, j["h_mean"].to_numpy(float)])
    y = j["score"].to_numpy(float)
    err = j["h_err"].to_numpy(float)
    notes = []
    if correct_error and np.isnan(err).any():
        notes.append(f"not corrected for the error of the human mean: {int(np.isnan(err).sum())} of {n} items have "
                     "fewer than two human ratings")
        correct_error = False
    err = np.nan_to_num(err) if correct_error else np.zeros(n)
    xx = np.zeros((k, 3, 3))
    np.add.at(xx, codes, np.einsum("np,nq->npq", X, X))
    xy = np.zeros((k, 3))
    np.add.at(xy, codes, X * y[:, None])
    errs = _csum(codes, k, err)

    def coef(w):
        A = np.einsum("bk,kpq->bpq", w, xx)
        A[:, 2, 2] -= w @ errs
        b = w @ xy
        with np.errstate(invalid="ignore"):
            ok = np.linalg.det(A) > 1e-12 * np.abs(A).max(axis=(1, 2)) ** 3
        res = np.full(len(w), np.nan)
        if ok.any():
            res[ok] = np.linalg.solve(A[ok], b[ok][..., None])[:, 1, 0]
        return res
    est = float(coef(np.ones((1, k)))[0])
    if math.isnan(est):
        return BiasEffect("length", rater, crit, _NAN, _NAN, _NAN, 0.0, n, k,
                          "the regression is singular (constant length or human score)")
    lo, hi, note = _ci(coef, k, n_resamples, level, seed)
    notes.append(note)
    word = f"{per:g} words"
    line = (f"Per {word} of length, {rater} scores {crit} {abs(est):.2f} points {_sign_word(est, 'higher', 'lower')} "
            f"than the human score predicts ({_interval_text(lo, hi)}).")
    return BiasEffect("length", rater, crit, est, lo, hi, 0.0, n, k, "; ".join(s for s in notes if s), line)


def _family(name: str, mapping: dict[str, str]) -> str | None:
    """The family of a judge label: exact, else the part before ``@`` (``model@eval-prompt-1``)."""
    if name in mapping:
        return mapping[name]
    return mapping.get(model_of(name) or name)


def self_preference(df: pd.DataFrame, judge_family: dict[str, str], system_family: dict[str, str],
                    criterion: str | list[str] | None = None, n_resamples: int = 999, seed: int = 0,
                    confidence_level: float = 0.95) -> list[BiasEffect]:
    """Judge–human gap on the judge's own family's texts minus the gap on other texts.

    Args:
        df: the tidy ratings table.
        judge_family: judge (rater label, or its part before ``@``) → model family.
        system_family: system → model family (systems not named belong to no judge's family).

    Returns:
        One ``self_preference`` effect per (criterion, judge with a family).

    Raises:
        JudgelabError: a judge in ``judge_family`` that the ratings do not have.
    """
    means = _means(df)
    judges = sorted(r for r in means["rater"].unique() if not is_human(r))
    unknown = [j for j in judge_family if not any(r == j or model_of(r) == j for r in judges)]
    if unknown:
        raise JudgelabError(f"--self-family: no judge {', '.join(map(repr, unknown))} in the ratings; judges: "
                            f"{', '.join(judges)}")
    out: list[BiasEffect] = []
    for crit in _criteria(df, criterion):
        m = means[means["criterion"] == crit]
        hum = _human_rows(m)
        for rater in judges:
            fam = _family(rater, judge_family)
            if fam is None:
                continue
            j = m[m["rater"] == rater][["system", "item_id", "score"]].merge(hum, on=["system", "item_id"])
            own = j["system"].map(lambda s: system_family.get(s) == fam).to_numpy(bool)
            n = len(j)
            if own.all() or not own.any():
                out.append(BiasEffect("self_preference", rater, crit, _NAN, _NAN, _NAN, 0.0, n, 0,
                                      f"{int(own.sum())} of {n} rated texts are of family {fam!r}: the comparison "
                                      "needs texts of its own family and of others"))
                continue
            codes, labels = pd.factorize(j["item_id"], sort=True)
            k = len(labels)
            gap = (j["score"] - j["h_mean"]).to_numpy(float)
            o, t = own.astype(float), (~own).astype(float)

            def diff(w, o=o, t=t, gap=gap, codes=codes):
                return _wmean(w, codes, gap, o) - _wmean(w, codes, gap, t)
            est = float(diff(np.ones((1, k)))[0])
            lo, hi, note = _ci(diff, k, n_resamples, confidence_level, seed)
            line = (f"Relative to the humans, {rater} rates {crit} of its own family ({fam}) {abs(est):.2f} points "
                    f"{_sign_word(est, 'higher', 'lower')} than other texts ({_interval_text(lo, hi)}).")
            extra = f"{int(own.sum())} own-family and {int((~own).sum())} other texts"
            out.append(BiasEffect("self_preference", rater, crit, est, lo, hi, 0.0, n, k,
                                  "; ".join(s for s in (extra, note) if s), line))
    return out
