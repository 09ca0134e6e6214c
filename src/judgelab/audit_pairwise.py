"""The audit of pairwise judges (``judgelab audit --verdicts``) and its planted-bias self-check
(``judgelab audit --self-check --pairwise``).

:func:`read_audit_verdicts` reads verdicts files (:func:`judgelab.preference.formats.read_verdict_files`:
judgelab's verdicts files and the other tools' judge outputs, each recognised by its fields) with the
audit's ``--map`` and ``--judges``; :func:`judgelab.stats.pairwise_bias.pairwise_biases` measures position,
length and self-preference. :func:`pairwise_self_check` simulates pairwise studies
(:func:`judgelab.testing.bias_simulator.simulate_pairwise_study`) with a planted position preference, a
planted length preference, a planted self-preference, and no bias, and reports how often the audit
finds each planted bias, how often its interval covers the planted value, and how often the bias-free
judge is flagged, each with its Monte-Carlo standard error.
"""
from __future__ import annotations

import dataclasses
import fnmatch
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from judgelab.audit import SelfCheckResult
from judgelab.errors import JudgelabError
from judgelab.stats.pairwise_bias import pairwise_biases

__all__ = ["read_audit_verdicts", "pairwise_self_check", "PAIRWISE_CHECKED"]

#: The biases the pairwise self-check plants and looks for.
PAIRWISE_CHECKED = ("pairwise_first", "pairwise_longer", "pairwise_own")


def read_audit_verdicts(paths: Sequence[Any], judges: str | None = None,
                        rename: dict[str, str] | None = None) -> pd.DataFrame:
    """The verdicts table of ``audit --verdicts``: the files stacked (a verdict given twice is an error),
    criteria renamed by ``rename`` (``--map OLD=NEW``), judges selected by the glob ``judges`` (the humans kept).

    Raises:
        JudgelabError: a file no verdict format reads, or ``judges`` matching no judge of the verdicts.
    """
    from judgelab.preference.formats import read_verdict_files
    from judgelab.raters import is_human
    from judgelab.raters import human_mask

    v = read_verdict_files(list(paths))
    if rename:
        v = v.assign(criterion=v["criterion"].map(lambda c: rename.get(c, c)))
    if judges:
        names = sorted(r for r in v["rater"].unique() if not is_human(r))
        keep = [r for r in names if fnmatch.fnmatchcase(r, judges)]
        if not keep:
            raise JudgelabError(f"--judges {judges!r} matches no judge of the verdicts; judges: {', '.join(names)}")
        v = v[human_mask(v["rater"]) | v["rater"].isin(keep)].reset_index(drop=True)
    return v


def _judge_effects(verdicts: pd.DataFrame, n_resamples: int, seed: int) -> dict[str, Any]:
    from judgelab.testing.bias_simulator import JUDGE, JUDGE_FAMILY, SYSTEM_FAMILY

    effects, _ = pairwise_biases(verdicts, JUDGE_FAMILY, SYSTEM_FAMILY, n_resamples=n_resamples, seed=seed)
    return {e.bias: e for e in effects if e.rater == JUDGE and e.bias in PAIRWISE_CHECKED}


def _rate(xs: list[bool]) -> tuple[float, float]:
    p = float(np.mean(xs))
    return p, math.sqrt(p * (1 - p) / len(xs))


def pairwise_self_check(n_items: int = 200, n_studies: int = 200, seed: int = 0,
                        n_resamples: int = 999) -> SelfCheckResult:
    """The audit of ``n_studies`` simulated pairwise studies of each kind: a judge with a planted position
    preference, one with a planted length preference, one with a planted self-preference (each alone), and
    a bias-free judge.

    Returns:
        A :class:`judgelab.audit.SelfCheckResult`: per bias the share of its planted studies where it is
        detected, the share whose interval covers the planted value (:func:`pairwise_truth`), and the share
        of the bias-free studies where it is detected (a false alarm); the settings hold the planted biases,
        the share of bias-free studies with any of the three flagged (``null_any_flagged``), and per planted
        study the share where another bias was flagged (``cross_flagged``).
    """
    from judgelab.testing.bias_simulator import (PAIRWISE_LENGTH, PAIRWISE_NONE, PAIRWISE_POSITION, PAIRWISE_SELF,
                                                 pairwise_truth, simulate_pairwise_study)

    if n_items < 20:
        raise JudgelabError("--n-items: at least 20 items (an item bootstrap needs them)")
    if n_studies < 1:
        raise JudgelabError("--n-studies: at least 1")
    planted = dict(zip(PAIRWISE_CHECKED, (PAIRWISE_POSITION, PAIRWISE_LENGTH, PAIRWISE_SELF)))
    truth = {b: pairwise_truth(p)[b] for b in PAIRWISE_CHECKED for p in (planted[b],)}
    hits: dict[str, list[bool]] = {b: [] for b in PAIRWISE_CHECKED}
    covered: dict[str, list[bool]] = {b: [] for b in PAIRWISE_CHECKED}
    estimates: dict[str, list[float]] = {b: [] for b in PAIRWISE_CHECKED}
    alarms: dict[str, list[bool]] = {b: [] for b in PAIRWISE_CHECKED}
    null_cov: dict[str, list[bool]] = {b: [] for b in PAIRWISE_CHECKED}
    cross: dict[str, list[bool]] = {b: [] for b in PAIRWISE_CHECKED}
    any_flag: list[bool] = []
    for i in range(n_studies):
        for k, b in enumerate(PAIRWISE_CHECKED):
            found = _judge_effects(simulate_pairwise_study(n_items, planted[b], seed + 4 * i + k), n_resamples,
                                   seed + i)
            hits[b].append(found[b].detected)
            covered[b].append(found[b].covers(truth[b]))
            estimates[b].append(found[b].estimate)
            cross[b].append(any(e.detected for name, e in found.items() if name != b))
        null = _judge_effects(simulate_pairwise_study(n_items, PAIRWISE_NONE, seed + 4 * i + 3), n_resamples, seed + i)
        for b in PAIRWISE_CHECKED:
            alarms[b].append(null[b].detected)
            null_cov[b].append(null[b].covers(0.0))
        any_flag.append(any(e.detected for e in null.values()))
    rows = []
    for b in PAIRWISE_CHECKED:
        d, c, f = _rate(hits[b]), _rate(covered[b]), _rate(alarms[b])
        rows.append({"bias": b, "planted": truth[b], "studies": n_studies, "n_items": n_items,
                     "detected": d[0], "detected_mcse": d[1], "coverage": c[0], "coverage_mcse": c[1],
                     "false_alarms": f[0], "false_alarms_mcse": f[1], "mean_estimate": float(np.mean(estimates[b])),
                     "null_coverage": float(np.mean(null_cov[b]))})
    settings = {"mode": "pairwise", "n_items": n_items, "studies": n_studies, "seed": seed, "n_resamples": n_resamples,
                "planted": {b: dataclasses.asdict(planted[b]) for b in PAIRWISE_CHECKED},
                "null_any_flagged": _rate(any_flag)[0], "cross_flagged": {b: _rate(cross[b])[0] for b in PAIRWISE_CHECKED}}
    return SelfCheckResult(tuple(rows), settings)
