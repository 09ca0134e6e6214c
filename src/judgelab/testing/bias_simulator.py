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

Pairwise judges (``judgelab audit --self-check --pairwise``): :func:`simulate_pairwise_study` gives a
verdicts table of a judge that sees each pair in both orders and of unbiased humans, with the biases
of :class:`PairwisePlanted` (a first-shown pick, log-odds per 100 words of length difference, log-odds
for its own family); :func:`pairwise_truth` gives the planted effects in the audit's units.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["PlantedBiases", "MODERATE", "NONE", "SimulatedStudy", "simulate_study", "JUDGE", "JUDGE_FAMILY",
           "PairwisePlanted", "PAIRWISE_POSITION", "PAIRWISE_LENGTH", "PAIRWISE_SELF", "PAIRWISE_NONE",
           "simulate_pairwise_study", "pairwise_truth",
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


# --- pairwise judges -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairwisePlanted:
    """Biases planted in a simulated pairwise judge (0: none).

    Attributes:
        first_position: probability of picking the response shown first whatever the responses.
        length: log-odds of picking a response per 100 words it is longer than the other.
        self_preference: log-odds of picking the response of the judge's own family (``fam-a``).
    """

    first_position: float = 0.0
    length: float = 0.0
    self_preference: float = 0.0


PAIRWISE_POSITION = PairwisePlanted(first_position=0.2)
"""A first-shown pick in 20% of the verdicts (the ratings self-check's size)."""
PAIRWISE_LENGTH = PairwisePlanted(length=0.6)
"""0.6 log-odds per 100 words: one SD of a length difference (141 words) multiplies the odds by 2.3."""
PAIRWISE_SELF = PairwisePlanted(self_preference=0.75)
"""0.75 log-odds for the judge's own family (odds × 2.1)."""
PAIRWISE_NONE = PairwisePlanted()
#: Ties: the share of verdicts (judge and humans) that are a tie; quality scale of the logistic choice.
PAIRWISE_TIES, PAIRWISE_SCALE = 0.1, 1.0


def _pair_draw(rng: np.random.Generator, n: int, rho: float = 0.3):
    """``n`` pairs: two distinct systems each, their qualities ``N(0, 1)`` and word lengths ``300 + 100 z``
    (``z`` correlated ``rho`` with quality)."""
    i = rng.integers(0, len(SYSTEMS), n)
    j = (i + rng.integers(1, len(SYSTEMS), n)) % len(SYSTEMS)
    q = rng.standard_normal((2, n))
    words = np.maximum(np.round(300 + 100 * (rho * q + np.sqrt(1 - rho ** 2) * rng.standard_normal((2, n)))), 10)
    return np.array(SYSTEMS)[i], np.array(SYSTEMS)[j], q, words


def _logit_first(planted: PairwisePlanted, q, words, own, f: int, s: int):
    """Log-odds that the judge (or, with ``PAIRWISE_NONE``, a human) prefers response ``f`` over ``s``."""
    return ((q[f] - q[s]) / PAIRWISE_SCALE + planted.length * (words[f] - words[s]) / 100
            + planted.self_preference * (own[f].astype(float) - own[s].astype(float)))


def _expected_lo(planted: PairwisePlanted, q, words, own):
    """The judge's expected preference for response 0 over both orders (a tie 1/2), and a human's."""
    sig = 1 / (1 + np.exp(-_logit_first(planted, q, words, own, 0, 1)))
    sig0 = 1 / (1 + np.exp(-_logit_first(PAIRWISE_NONE, q, words, own, 0, 1)))
    p, t = planted.first_position, PAIRWISE_TIES
    return p / 2 + (1 - p) * (t / 2 + (1 - t) * sig), t / 2 + (1 - t) * sig0


def pairwise_truth(planted: PairwisePlanted, n: int = 200_000, seed: int = 12345) -> dict[str, float]:
    """The planted effects in the audit's units (population values; expectations over ``n`` drawn pairs):
    ``pairwise_first`` (share of decisive first-shown picks minus 1/2, exact), ``pairwise_longer`` and
    ``pairwise_own`` (judge's expected share minus the humans', the Monte-Carlo error about 0.001)."""
    rng = np.random.default_rng(seed)
    sys0, sys1, q, words = _pair_draw(rng, n)
    own = np.array([[SYSTEM_FAMILY[s] == JUDGE_FAMILY[JUDGE] for s in sys0], [SYSTEM_FAMILY[s] == JUDGE_FAMILY[JUDGE] for s in sys1]])
    j0, h0 = _expected_lo(planted, q, words, own)
    longer0, mixed = words[0] > words[1], own[0] != own[1]
    p, t = planted.first_position, PAIRWISE_TIES
    d_len = np.where(longer0, j0 - h0, h0 - j0)[words[0] != words[1]]
    d_own = np.where(own[0], j0 - h0, h0 - j0)[mixed]
    return {"pairwise_first": p / 2 / (p + (1 - p) * (1 - t)), "pairwise_longer": float(d_len.mean()),
            "pairwise_own": float(d_own.mean())}


def _choices(rng: np.random.Generator, logit, p: float) -> np.ndarray:
    """``first``/``second``/``tie`` per verdict: a first-shown pick with probability ``p``, else a tie with
    probability :data:`PAIRWISE_TIES`, else the logistic choice."""
    u = rng.random((3, len(logit)))
    pick_first = u[2] < 1 / (1 + np.exp(-logit))
    out = np.where(pick_first, "first", "second").astype(object)
    out[u[1] < PAIRWISE_TIES] = "tie"
    out[u[0] < p] = "first"
    return out


def simulate_pairwise_study(n_items: int = 200, planted: PairwisePlanted = PAIRWISE_NONE, seed: int = 0,
                            n_humans: int = 3) -> pd.DataFrame:
    """One pairwise study as a verdicts table: ``n_items`` instructions, each with two responses of two
    different systems (quality ``N(0, 1)``, length ``300 + 100 z`` words with ``z`` correlated 0.3 with
    quality, texts of that many words); the judge ``sim-judge`` (family ``fam-a``) sees each pair in both
    orders with the biases ``planted``; each of ``n_humans`` humans sees it once, in a random order, without
    any bias (the texts on the judge's rows only, as human labels often come without them). A choice is
    logistic in the quality difference (scale 1), with ties in 10% of verdicts.

    Example:
        >>> v = simulate_pairwise_study(30, seed=1)
        >>> sorted(v["rater"].unique()), len(v)
        (['human:1', 'human:2', 'human:3', 'sim-judge'], 150)
    """
    from judgelab.preference.verdicts import normalise_verdicts

    rng = np.random.default_rng(seed)
    sys0, sys1, q, words = _pair_draw(rng, n_items)
    own = np.array([[SYSTEM_FAMILY[s] == JUDGE_FAMILY[JUDGE] for s in sys0], [SYSTEM_FAMILY[s] == JUDGE_FAMILY[JUDGE] for s in sys1]])
    systems, text = np.array([sys0, sys1]), np.array([["w " * int(n) for n in row] for row in words])
    item = np.array([f"q{i}" for i in range(n_items)])
    frames = []
    for f, s in ((0, 1), (1, 0)):
        frames.append(pd.DataFrame({"rater": JUDGE, "item_id": item, "first": systems[f], "second": systems[s],
                                    "choice": _choices(rng, _logit_first(planted, q, words, own, f, s),
                                                       planted.first_position),
                                    "first_text": text[f], "second_text": text[s]}))
    for h in range(n_humans):
        shown = rng.integers(0, 2, n_items)  # which response the human saw first
        logit = np.where(shown == 0, 1, -1) * _logit_first(PAIRWISE_NONE, q, words, own, 0, 1)
        cols = np.arange(n_items)
        frames.append(pd.DataFrame({"rater": f"human:{h + 1}", "item_id": item,
                                    "first": systems[shown, cols], "second": systems[1 - shown, cols],
                                    "choice": _choices(rng, logit, 0.0)}))
    return normalise_verdicts(pd.concat(frames, ignore_index=True))
