"""Simulated studies with planted judge biases: the audit's self-check (``judgelab audit --self-check``).

One study: ``n_items`` texts from four systems of two model families (``fam-a``, ``fam-b``; the
judge ``sim-judge`` is of family ``fam-a``; each text's system is drawn, so half of the texts are its
family's in expectation), each with a true
quality ``Q ~ N(3, 0.8)`` and a length in words ``300 + 100 z`` whose ``z`` correlates
``length_quality_corr`` with quality (longer texts are better, as in real data: the error in the
human mean must not be mistaken for a length bias). Three humans rate ``Q + N(0, 0.7)``; the judge
rates::

    Q + leniency + length * (words - 300) / 100 + self_preference * [own family] + N(0, 0.5)

and compares ``n_items`` random pairs of texts in both orders: with probability ``first_position``
it picks the first-shown text whatever it is, otherwise the better text with probability
``logistic((Q_a - Q_b) / 0.5)``. Scores are continuous (not rounded to a scale) so that the planted
values are exactly the effects the audit estimates (:attr:`SimulatedStudy.truth`):

* ``leniency``: the judge's expected mean shift, ``leniency + self_preference / 2``;
* ``length``: points per 100 words (the audit's unit);
* ``self_preference``: the own-minus-other gap;
* ``position_first``: ``first_position / 2`` (the share of first-shown picks above 1/2).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["PlantedBiases", "MODERATE", "NONE", "SimulatedStudy", "simulate_study", "JUDGE", "JUDGE_FAMILY",
           "SYSTEM_FAMILY"]

JUDGE = "sim-judge"
SYSTEMS = ["fam-a-1", "fam-b-1", "fam-a-2", "fam-b-2"]
SYSTEM_FAMILY = {s: s.rsplit("-", 1)[0] for s in SYSTEMS}
JUDGE_FAMILY = {JUDGE: "fam-a"}


@dataclass(frozen=True)
class PlantedBiases:
    """Biases planted in the simulated judge (0: none).

    Attributes:
        leniency: points added to every score.
        length: points per 100 words of length (centred at 300 words).
        self_preference: points added to its own family's texts.
        first_position: probability of picking the first-shown text regardless of the texts.
    """

    leniency: float = 0.0
    length: float = 0.0
    self_preference: float = 0.0
    first_position: float = 0.0


MODERATE = PlantedBiases(leniency=0.25, length=0.2, self_preference=0.4, first_position=0.2)
"""Moderate biases: a quarter point of leniency (0.3 human SD), 0.2 points per 100 words (one SD of
length; 0.2 human SD), 0.4 points
for its own family, and a first-shown pick in 60% of verdicts."""
NONE = PlantedBiases()


@dataclass(frozen=True)
class SimulatedStudy:
    """One simulated study: the inputs of :func:`judgelab.audit.audit` and the planted effects."""

    ratings: pd.DataFrame
    lengths: pd.DataFrame
    pairs: pd.DataFrame
    truth: dict[str, float]
    judge_family: dict[str, str] = field(default_factory=lambda: dict(JUDGE_FAMILY))
    system_family: dict[str, str] = field(default_factory=lambda: dict(SYSTEM_FAMILY))


def simulate_study(n_items: int = 200, planted: PlantedBiases = MODERATE, seed: int = 0, n_humans: int = 3,
                   length_quality_corr: float = 0.3) -> SimulatedStudy:
    """One study with the biases ``planted`` (see the module docstring for the model).

    Example:
        >>> s = simulate_study(50, seed=1)
        >>> sorted(s.ratings["rater"].unique())
        ['human:1', 'human:2', 'human:3', 'sim-judge']
    """
    rng = np.random.default_rng(seed)
    zq = rng.standard_normal(n_items)
    q = 3 + 0.8 * zq
    rho = length_quality_corr
    words = np.maximum(300 + 100 * (rho * zq + np.sqrt(1 - rho ** 2) * rng.standard_normal(n_items)), 10.0)
    system = np.array(SYSTEMS)[rng.integers(0, len(SYSTEMS), n_items)]  # drawn: the bootstrap's model
    own = np.array([SYSTEM_FAMILY[s] == JUDGE_FAMILY[JUDGE] for s in system])
    item = np.array([f"i{i}" for i in range(n_items)])
    humans = q[None, :] + 0.7 * rng.standard_normal((n_humans, n_items))
    judge = (q + planted.leniency + planted.length * (words - 300) / 100 + planted.self_preference * own
             + 0.5 * rng.standard_normal(n_items))
    raters = [f"human:{r + 1}" for r in range(n_humans)] + [JUDGE]
    scores = np.vstack([humans, judge[None, :]])
    ratings = pd.DataFrame({
        "item_id": np.tile(item, len(raters)), "system": np.tile(system, len(raters)), "group": None,
        "criterion": "quality", "rater": np.repeat(raters, n_items), "sample": 0, "score": scores.ravel(),
        "status": "ok"})
    lengths = pd.DataFrame({"item_id": item, "system": system, "length": words})
    a = rng.integers(0, n_items, n_items)
    b = (a + rng.integers(1, n_items, n_items)) % n_items  # a different text
    p_a = 1 / (1 + np.exp(-(q[a] - q[b]) / 0.5))
    bias = rng.random((2, n_items)) < planted.first_position
    pick_a = np.where(bias[0], True, rng.random(n_items) < p_a)  # order a, b: first is a
    pick_b = np.where(bias[1], True, rng.random(n_items) >= p_a)  # order b, a: "first" is b
    pair = np.array([f"p{j}" for j in range(n_items)])
    pairs = pd.DataFrame({
        "rater": JUDGE, "item_id": np.concatenate([pair, pair]),
        "first": np.concatenate([item[a], item[b]]), "second": np.concatenate([item[b], item[a]]),
        "choice": np.where(np.concatenate([pick_a, pick_b]), "first", "second")})
    truth = {"leniency": planted.leniency + planted.self_preference / 2,
             "length": planted.length, "self_preference": planted.self_preference,
             "position_first": planted.first_position / 2}
    return SimulatedStudy(ratings, lengths, pairs, truth)
