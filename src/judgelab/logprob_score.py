"""Log-probability scores (G-Eval's probability-weighted rating): the expected rating under the
judge's next-token distribution over the scale points, and the token that carries a parsed rating
(so that its distribution can be read).

Moved out of :mod:`judgelab.parse`, which reads ratings from text; this module reads them from
token log-probabilities.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["expected_score", "rating_token_index", "preference_probability"]


def rating_token_index(tokens: Sequence[tuple[str, float, Any]], text: str, start: int | None) -> int | None:
    """Index of the generated token that carries the character at ``start`` of ``text``.

    ``None`` when there is no position, or when the tokens do not spell the text exactly
    (then no position can be trusted and no log-probability is read).

    Args:
        tokens: ``(token, logprob, alternatives)`` per generated token.
        text: the answer the tokens spell.
        start: the character offset of the rating (:attr:`ParseResult.start`).

    Returns:
        The token index, or ``None``.

    Example:
        >>> rating_token_index([("I rate", 0.0, {}), (" 4", 0.0, {})], "I rate 4", 7)
        1
    """
    if start is None or "".join(t[0] for t in tokens) != text:
        return None
    position = 0
    for index, token in enumerate(tokens):
        end = position + len(token[0])
        if position <= start < end:
            return index
        position = end
    return None


def _label_value(token: str, labels: Mapping[str, float]) -> float | None:
    stripped = token.strip().lstrip("▁Ġ")
    return labels.get(stripped)


def expected_score(
    token_logprobs: Mapping[str, float] | Iterable[tuple[str, float]],
    scale: tuple[int, int] = (1, 5),
) -> tuple[float | None, float, dict[str, float]]:
    """Probability-weighted score over the scale's labels (G-Eval style).

    ``token_logprobs`` maps candidate next tokens to log-probabilities. Tokens that
    spell a label after stripping white space ("4", " 4", "▁4") are pooled. The
    label probabilities are renormalised to sum to one; the mass that fell outside
    the labels is returned so that it can be reported, never hidden.

    Returns ``(expected score or None when no label has mass, mass outside labels,
    {label: renormalised probability})``.

    Args:
        token_logprobs: ``{token: logprob}`` or ``(token, logprob)`` pairs of the next token.
        scale: the integer scale (lowest, highest).

    Example:
        >>> import math
        >>> expected_score({"4": math.log(0.5), " 5": math.log(0.25), "the": math.log(0.25)}, (1, 5))[:2]
        (4.333333333333333, 0.25)
    """
    items = token_logprobs.items() if isinstance(token_logprobs, Mapping) else token_logprobs
    labels = {str(v): float(v) for v in range(int(scale[0]), int(scale[1]) + 1)}
    mass: dict[str, float] = {k: 0.0 for k in labels}
    total_seen = 0.0
    for token, logprob in items:
        p = math.exp(logprob)
        total_seen += p
        value = _label_value(token, labels)
        if value is not None:
            mass[str(int(value))] += p  # labels are the scale's integers
    inside = sum(mass.values())
    outside = max(0.0, 1.0 - inside)
    if inside <= 0:
        return None, outside, {}
    probs = {k: v / inside for k, v in mass.items()}
    return sum(labels[k] * p for k, p in probs.items()), outside, probs


def preference_probability(token_logprobs: Mapping[str, float] | Iterable[tuple[str, float]],
                           choices: tuple[str, str] = ("A", "B")) -> tuple[float | None, float]:
    """The probability that the first response is better, from the next token (AlpacaEval's weighted
    annotators): the mass on the first's choice token over the mass on both choice tokens.

    Tokens that spell a choice after stripping white space (``"A"``, ``" A"``, ``"▁A"``) are pooled; a tie
    token's mass, like any other token's, is left out and returned as the mass outside the two choices.

    Returns:
        ``(p_first or None when neither choice has mass, mass outside the two choices)``.

    Example:
        >>> import math
        >>> p, outside = preference_probability({"A": math.log(0.6), " B": math.log(0.2), "tie": math.log(0.2)})
        >>> round(p, 6), round(outside, 6)
        (0.75, 0.2)
    """
    items = token_logprobs.items() if isinstance(token_logprobs, Mapping) else token_logprobs
    first = second = 0.0
    for token, logprob in items:
        label = token.strip().lstrip("▁Ġ")
        if label == choices[0]:
            first += math.exp(logprob)
        elif label == choices[1]:
            second += math.exp(logprob)
    outside = max(0.0, 1.0 - first - second)
    if first + second <= 0:
        return None, outside
    return first / (first + second), outside
