"""Prompt sensitivity: how much a judge's ratings move across instruction variants.

A judge's variants are the raters whose labels share the part before ``@`` (``model@eval-prompt-1``
… ``model@eval-prompt-4``, or the labels a run's ``--variant`` gives). Per judge and criterion:

* ``prompt_icc``: ICC(2,1) over the items × variants table (:func:`judgelab.stats.icc`, its
  F-based interval): 1 when the variants rank and place every item alike;
* ``prompt_shift``: the largest mean shift between two variants (highest minus lowest variant
  mean over the items all variants rated), with an item-bootstrap interval of the same statistic.
  The range of several noisy means is above 0 even when the variants do not differ, so its
  interval never tests "no sensitivity": read its size against the scale (no ``null``).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from judgelab.raters import model_of, template_part
from judgelab.ratings import item_means
from judgelab.stats.bias import _criteria
from judgelab.stats.bias_effect import _NAN, BiasEffect, _ci

__all__ = ["prompt_sensitivity", "variant_groups"]


def variant_groups(raters) -> dict[str, list[str]]:
    """Judge base name → its variant labels (only bases with two or more variants)."""
    groups: dict[str, list[str]] = {}
    for r in sorted(set(raters)):
        model = model_of(r)
        if model is not None:
            groups.setdefault(model, []).append(r)
    return {b: v for b, v in groups.items() if len(v) >= 2}


def prompt_sensitivity(df: pd.DataFrame, criterion: str | list[str] | None = None, n_resamples: int = 999,
                       seed: int = 0, confidence_level: float = 0.95) -> list[BiasEffect]:
    """ICC across variants and the largest mean shift between variants, per judge and criterion.

    Returns:
        A ``prompt_icc`` and a ``prompt_shift`` effect per (criterion, judge with two or more variants);
        the rater is the judge's base name, the note names the variants.
    """
    from judgelab.stats import icc

    means = item_means(df)
    groups = variant_groups(means["rater"])
    out: list[BiasEffect] = []
    for crit in _criteria(df, criterion):
        m = means[means["criterion"] == crit]
        for base, variants in groups.items():
            wide = m[m["rater"].isin(variants)].pivot_table(index=["system", "item_id"], columns="rater",
                                                            values="score").reindex(columns=variants).dropna()
            n = len(wide)
            which = f"{len(variants)} variants: {', '.join(template_part(v) for v in variants)}"
            if n < 2:
                out.append(BiasEffect("prompt_icc", base, crit, _NAN, _NAN, _NAN, _NAN, n, 0,
                                      f"{n} items rated by every variant; {which}"))
                continue
            res = icc(wide.to_numpy(float), confidence_level).single
            items = wide.index.get_level_values("item_id").nunique()
            out.append(BiasEffect("prompt_icc", base, crit, res.estimate, res.ci_low, res.ci_high, _NAN, n,
                                  items, f"ICC(2,1); its F-based interval treats the {n} rows as independent "
                                  f"items; {which}",
                                  f"{base}'s {crit} ratings under its {len(variants)} prompt variants agree with "
                                  f"ICC(2,1) = {res.estimate:.2f} (95% CI {res.ci_low:.2f} to {res.ci_high:.2f})."))
            x = wide.to_numpy(float)
            codes, labels = pd.factorize(wide.index.get_level_values("item_id"), sort=True)
            k = len(labels)

            sums = np.zeros((k, x.shape[1]))
            np.add.at(sums, codes, x)
            counts = np.bincount(codes, minlength=k).astype(float)

            def spread(w, sums=sums, counts=counts):
                col = (w @ sums) / (w @ counts)[:, None]
                return col.max(1) - col.min(1)
            est = float(spread(np.ones((1, k)))[0])
            col = x.mean(0)
            hi_v, lo_v = variants[int(np.argmax(col))], variants[int(np.argmin(col))]
            lo, hi, note = _ci(spread, k, n_resamples, confidence_level, seed)
            interval = "no interval" if math.isnan(lo) else f"95% CI {lo:.2f} to {hi:.2f}"
            out.append(BiasEffect("prompt_shift", base, crit, est, lo, hi, _NAN, n, k,
                                  "; ".join(s for s in (f"highest {hi_v}, lowest {lo_v}", note) if s),
                                  f"{base}'s mean {crit} rating moves by up to {est:.2f} points between prompt "
                                  f"variants ({template_part(hi_v)} vs {template_part(lo_v)}; {interval})."))
    return out
