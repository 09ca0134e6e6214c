"""Pairwise comparison by score gap (NLE quality study, section 5 and figures 2-3).

Pairs are built from human scores: the gap Δ = |s_a - s_b| is rounded half up to an integer
bin; for every Δ that exists, up to ``per_delta`` pairs are drawn (all of them when fewer
exist), seeded. Which item comes first is drawn too. The true outcome is "first higher"
(+1), "equal" (0, Δ bin 0) or "first lower" (-1). A judge answers Yes / No / Neutral
(+1 / -1 / 0); F1 per Δ is the weighted F1 of its outcomes against the truth.

Beyond the paper: each pair is asked in both orders and the share of pairs whose two verdicts
are mirror images is the position consistency; per-item scores are estimated from all
comparisons with a Bradley–Terry model (Hunter's 2004 MM algorithm, ties as half a win each)
and correlated with the human scores.
"""
from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab.stats.scales import weighted_f1

__all__ = ["Pair", "delta_bin", "sample_pairs", "f1_by_delta", "position_consistency", "bradley_terry",
           "BradleyTerry"]


@dataclass(frozen=True)
class Pair:
    """Two items compared (NLE study, §4.3): their ids, the score gap bin and the human order."""

    first: str
    second: str
    delta: int
    truth: int  # +1 first higher, 0 equal, -1 first lower


def delta_bin(a: float, b: float) -> int:
    """The score gap of two human scores, rounded half up to a whole bin (the NLE study's Δ).

    Example:
        >>> delta_bin(5.0, 3.4), delta_bin(2.0, 2.4)
        (2, 0)
    """
    return int(math.floor(abs(a - b) + 0.5))


def sample_pairs(scores: Mapping[str, float], per_delta: int = 100, seed: int = 0) -> list[Pair]:
    """Up to ``per_delta`` pairs for every score gap that exists; reproducible from ``seed``."""
    ids = sorted(k for k, v in scores.items() if v is not None and not math.isnan(v))
    by_delta: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for a, b in itertools.combinations(ids, 2):
        by_delta[delta_bin(scores[a], scores[b])].append((a, b))
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for delta in sorted(by_delta):
        candidates = by_delta[delta]
        chosen = candidates if len(candidates) <= per_delta else rng.sample(candidates, per_delta)
        for a, b in chosen:
            if rng.random() < 0.5:
                a, b = b, a
            truth = 0 if delta == 0 else (1 if scores[a] > scores[b] else -1)
            pairs.append(Pair(a, b, delta, truth))
    return pairs


def f1_by_delta(pairs: list[Pair], verdicts: Mapping[tuple[str, str], float]) -> pd.DataFrame:
    """Weighted F1 of the judge's outcomes per Δ (pairs without a verdict are counted and left out).

    Returns:
        One row per Δ: ``delta, pairs, answered, f1, accuracy, note``; ``note`` says why ``f1`` and
        ``accuracy`` are NaN (no pair of the Δ got a verdict), else it is empty.
    """
    rows = []
    for delta in sorted({p.delta for p in pairs}):
        group = [p for p in pairs if p.delta == delta]
        answered = [p for p in group if verdicts.get((p.first, p.second)) is not None]
        truth = [p.truth for p in answered]
        pred = [int(np.sign(verdicts[(p.first, p.second)])) for p in answered]
        rows.append({"delta": delta, "pairs": len(group), "answered": len(answered),
                     "f1": weighted_f1(truth, pred) if answered else float("nan"),
                     "accuracy": float(np.mean(np.array(truth) == np.array(pred))) if answered else float("nan"),
                     "note": "" if answered else f"no verdict for any of its {len(group)} pairs"})
    return pd.DataFrame(rows)


def position_consistency(pairs: list[Pair], verdicts: Mapping[tuple[str, str], float]) -> float:
    """Share of pairs asked in both orders whose verdicts mirror each other (v(a,b) = -v(b,a))."""
    both = [(verdicts[(p.first, p.second)], verdicts[(p.second, p.first)]) for p in pairs
            if verdicts.get((p.first, p.second)) is not None and verdicts.get((p.second, p.first)) is not None]
    if not both:
        return float("nan")
    return float(np.mean([np.sign(x) == -np.sign(y) for x, y in both]))


@dataclass(frozen=True)
class BradleyTerry:
    """Bradley–Terry log-strengths of the compared items.

    Attributes:
        scores: item → log-strength (strengths normalised to geometric mean 1, so the scores
            average 0); empty without comparisons.
        iterations: MM iterations run.
        converged: the largest change of a strength in the last iteration was below ``tol``
            (False when ``iterations`` ran out first).
    """

    scores: dict[str, float]
    iterations: int
    converged: bool

    def to_frame(self) -> pd.DataFrame:
        """One row per item: ``item, score``."""
        return pd.DataFrame({"item": list(self.scores), "score": list(self.scores.values())})


def bradley_terry(comparisons: list[tuple[str, str, float]], iterations: int = 500, tol: float = 1e-10) -> BradleyTerry:
    """Log-strengths from (first, second, outcome ∈ {+1, 0, -1}) by Hunter's MM algorithm.

    A tie gives each side half a win. Strengths are normalised to geometric mean 1. Items
    that never win (or never lose) get a small pseudo-count (0.1 wins against every opponent
    they met) so the estimate stays finite.

    Returns:
        :class:`BradleyTerry` (``scores``: item → log-strength; ``converged``).

    Example:
        >>> bt = bradley_terry([("a", "b", 1), ("b", "c", 1), ("a", "c", 1)])
        >>> sorted(bt.scores, key=bt.scores.get), bt.converged
        (['c', 'b', 'a'], True)
    """
    wins: dict[str, float] = defaultdict(float)
    games: dict[tuple[str, str], float] = defaultdict(float)
    items: set[str] = set()
    for a, b, outcome in comparisons:
        items.update((a, b))
        key = (min(a, b), max(a, b))
        games[key] += 1
        if outcome > 0:
            wins[a] += 1
        elif outcome < 0:
            wins[b] += 1
        else:
            wins[a] += 0.5
            wins[b] += 0.5
    if not items:
        return BradleyTerry({}, 0, True)
    for (a, b), n in list(games.items()):
        wins[a] += 0.1
        wins[b] += 0.1
        games[(a, b)] = n + 0.2
    order = sorted(items)  # a fixed order: the estimate is the same in every process (no hash-order float sums)
    strength = {i: 1.0 for i in order}
    opponents: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (a, b), n in games.items():
        opponents[a].append((b, n))
        opponents[b].append((a, n))
    done, converged = 0, False
    for _ in range(iterations):
        done += 1
        new = {}
        for i in order:
            denom = sum(n / (strength[i] + strength[j]) for j, n in opponents[i])
            new[i] = wins[i] / denom if denom else strength[i]
        g = math.exp(np.mean([math.log(v) for v in new.values()]))
        new = {k: v / g for k, v in new.items()}
        change = max(abs(new[k] - strength[k]) for k in order)
        strength = new
        if change < tol:
            converged = True
            break
    return BradleyTerry({k: math.log(v) for k, v in strength.items()}, done, converged)
