"""The length-controlled win rate: AlpacaEval's generalised linear model of a preference on the length difference
(``docs/preference.md``; Dubois et al. 2024, "Length-Controlled AlpacaEval").

For one system against the baseline, each verdict's preference for the system ``y`` in [0, 1] is modelled as
``logit P(system better) = b0 + b1 · tanh(d)`` with ``d = (len(system) − len(baseline)) / SD`` — the length
difference in characters divided by its standard deviation over the verdicts (ddof 1, not centred), as
AlpacaEval's ``glm_winrate._get_featurized_data`` makes ``std_delta_len``. The win rate at equal lengths is
read off the model with ``d = 0``: ``100 · σ(b0)``. The fit maximises the Bernoulli log-likelihood with the
preference as a soft target (AlpacaEval duplicates each row with weights y and 1 − y; same likelihood).

How ours differs from AlpacaEval's published ``length_controlled_winrate``: AlpacaEval's model
``length_controlled_v1`` also has an instruction-difficulty term, fitted once on its own leaderboard and
downloaded with the package, and it regularises each model's terms toward two deliberately verbose and
concise "gamed" baselines (weight 0.2), with an L1 penalty chosen by 5-fold cross-validation. Neither the
difficulty term nor the gamed baselines exist for other verdicts, so this is AlpacaEval's
``length_controlled_minimal`` model (length and the system's term) fitted by unpenalised maximum likelihood;
its figures come close to the published ones but are not equal to them.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import numpy as np

__all__ = ["length_controlled", "fit_soft_logistic", "MODEL"]

#: What the model is, in words (results.json's methods).
MODEL = ("AlpacaEval's length GLM without its instruction-difficulty term: logit P(system better) = b0 + b1·tanh("
         "length difference in characters / its SD); length-controlled win rate = 100·σ(b0), unpenalised maximum "
         "likelihood with soft preferences")


def fit_soft_logistic(x: "np.ndarray", y: "np.ndarray", weight: "np.ndarray | None" = None, max_iter: int = 100,
                      tol: float = 1e-10, start: "np.ndarray | None" = None) -> "np.ndarray | None":
    """Coefficients maximising ``Σ w·(y·log σ(xβ) + (1 − y)·log(1 − σ(xβ)))`` (Newton's method with step halving;
    ``w`` 1 by default; Newton starts from ``start``, default 0), or None when the maximum is not finite (the
    preferences are separated) or not reached."""
    import numpy as np

    beta = np.zeros(x.shape[1]) if start is None else np.array(start, dtype=float)
    w = np.ones(len(y)) if weight is None else np.asarray(weight, dtype=float)

    def loglik(b: "np.ndarray") -> float:
        eta = x @ b
        return float(np.sum(w * (y * -np.logaddexp(0, -eta) + (1 - y) * -np.logaddexp(0, eta))))

    current = loglik(beta)
    for _ in range(max_iter):
        mu = 1 / (1 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (y - mu))
        hess = (x * (w * mu * (1 - mu))[:, None]).T @ x
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            return None
        t = 1.0
        while t > 1e-8:
            trial = beta + t * step
            value = loglik(trial)
            if value >= current - 1e-12:
                break
            t /= 2
        beta, previous, current = trial, current, value
        if np.max(np.abs(beta)) > 30:  # a win probability beyond 1 − 1e-13: separated, no finite maximum
            return None
        if abs(current - previous) < tol * (1 + abs(current)) and np.max(np.abs(t * step)) < 1e-8:
            return beta
    return None


def length_controlled(preference: Sequence[float] | "np.ndarray", system_texts: Sequence[str | None],
                      baseline_texts: Sequence[str | None]) -> tuple[float | None, float | None, str]:
    """(length-controlled win rate, the coefficient of tanh(d), a note) for one system's verdicts against the
    baseline; (None, None, why) where there is no fit.

    Example:
        >>> lc, coef, note = length_controlled([1, 0, 1, 0.5, 0, 1], ["aaaa", "a", "aaa", "aa", "aaa", "a"], ["a"] * 6)
        >>> round(lc, 1), round(coef, 2), note
        (47.6, 0.75, '')
    """
    import numpy as np

    if any(t is None for t in system_texts) or any(t is None for t in baseline_texts):
        return None, None, "no length control: the verdicts do not carry both responses' texts"
    y = np.asarray(preference, dtype=float)
    if len(y) < 3:
        return None, None, "no length control: fewer than 3 verdicts"
    delta = np.array([len(str(a)) - len(str(b)) for a, b in zip(system_texts, baseline_texts)], dtype=float)
    sd = float(np.std(delta, ddof=1))
    if not sd > 0:
        return None, None, "no length control: the length difference is the same in every verdict"
    x = np.column_stack([np.ones_like(y), np.tanh(delta / sd)])
    beta = fit_soft_logistic(x, y)
    if beta is None:
        return None, None, "no length control: the preferences are separated by length (no finite fit)"
    return 100 / (1 + math.exp(-float(beta[0]))), float(beta[1]), ""
