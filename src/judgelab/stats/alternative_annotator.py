"""The Alternative Annotator Test (alt-test): may the judge replace one of the human annotators?

Calderon, Reichart & Dror (ACL 2025). Our reading of the procedure, which this module
implements (it agrees with the authors' reference code in every step listed):

1. **Leave one annotator out.** For each annotator ``j`` and each item ``i`` that ``j``,
   the judge and at least one other annotator rated, score how well the judge and how well
   annotator ``j`` represent the *other* annotators on that item with an alignment function
   ``S(pred, others)``: ``"accuracy"`` (share of the others that gave the same label, for
   categorical labels) or ``"neg_rmse"`` (minus the root mean squared difference to the
   others' ratings, for numeric ratings; with one other annotator it is minus the absolute
   difference). ``"neg_mae"`` (minus the mean absolute difference) or any callable may be
   used instead.
2. **Win indicators.** ``W_f[i] = 1`` when ``S(judge) >= S(annotator j)`` and
   ``W_h[i] = 1`` when ``S(annotator j) >= S(judge)``; a tie is a win for both. The
   estimated probabilities are ``rho_f_j = mean(W_f)`` and ``rho_h_j = mean(W_h)``.
3. **One-sided test per annotator.** ``H0: rho_f_j <= rho_h_j - epsilon`` against
   ``H1: rho_f_j > rho_h_j - epsilon``, by a one-sample t-test on the paired differences
   ``d = W_h - W_f`` (equivalently a paired t-test of ``W_h`` against ``W_f + epsilon``):
   ``t = (mean(d) - epsilon) / (sd(d) / sqrt(n_j))`` with ``n_j - 1`` degrees of freedom and
   ``p = P(T <= t)``. ``epsilon`` is the cost-benefit margin credited to the judge for
   being cheap and fast; the authors' rule of thumb: 0.2 for expert annotators, 0.15 for
   skilled annotators (e.g. trained students), 0.1 for crowd-workers, smaller when the
   annotators agree little among themselves.
4. **Multiple testing.** The ``m`` p-values are adjusted with Benjamini–Yekutieli (FDR
   control under arbitrary dependence; the tests share annotators), level ``q = 0.05``.
5. **Decision.** The winning rate ``omega`` is the share of annotators whose null is
   rejected; the judge passes (may replace the annotators) when ``omega >= 0.5``. The
   advantage probability ``rho = mean_j rho_f_j`` — the chance that the judge is at least
   as good as a randomly chosen annotator — ranks competing judges (higher is better).

Requirements (from the paper's recommendations): at least three annotators (with two the
"others" are a single person and there is no consensus signal) and at least 30 items per
tested annotator for the t-test's normal approximation (the paper suggests 50–100; below
30 it recommends a non-parametric test instead). Annotators with fewer than ``min_items``
comparable items are not tested (they still serve as "others" for the rest) and are
listed in ``skipped``; fewer than three tested annotators is an error.

Two choices of ours, stated because the reference code leaves them implicit: scores that
differ by less than ``1e-9`` (relative) count as a tie, so ``|3.7 - 3.4|`` and
``|3.1 - 3.4|`` tie despite floating-point rounding; and when all ``d`` are equal (zero
variance, the t statistic undefined) the p-value is 0 if ``mean(d) < epsilon`` and 1
otherwise — the limit of the t-test as the spread vanishes (conservatively 1 on the
boundary ``mean(d) = epsilon``).

References:
    Calderon, Reichart & Dror (2025). The Alternative Annotator Test for LLM-as-a-Judge:
    How to Statistically Justify Replacing Human Annotators with LLMs. ACL 2025,
    pp. 16051–16081. arXiv:2501.10970.
    Benjamini & Yekutieli (2001). The control of the false discovery rate in multiple
    testing under dependency. Annals of Statistics 29(4):1165–1188.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = ["AnnotatorComparison", "AltTestResult", "alt_test", "by_adjust", "SCORINGS"]

SCORINGS = ("neg_rmse", "neg_mae", "accuracy")
MIN_ANNOTATORS = 3
_TIE_RTOL = 1e-9


@dataclass(frozen=True)
class AnnotatorComparison:
    """The judge against one left-out annotator.

    Attributes:
        annotator: the left-out annotator's label.
        n_items: items compared (rated by the annotator, the judge and >= 1 other annotator).
        rho_judge: share of items where the judge represents the others at least as well.
        rho_human: share of items where the annotator does at least as well as the judge.
        t: t statistic of ``mean(W_h - W_f) - epsilon`` (``±inf`` when the spread is 0).
        p_value: one-sided p-value for H0: ``rho_judge <= rho_human - epsilon``.
        p_adjusted: Benjamini–Yekutieli adjusted p-value over all tested annotators.
        rejected: H0 rejected at level ``q`` — the judge "wins" against this annotator.
    """

    annotator: Hashable
    n_items: int
    rho_judge: float
    rho_human: float
    t: float
    p_value: float
    p_adjusted: float
    rejected: bool

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AltTestResult:
    """Outcome of the alternative annotator test.

    Attributes:
        winning_rate: ``omega``, share of tested annotators whose null was rejected.
        advantage_probability: ``rho``, mean of ``rho_judge`` over tested annotators.
        passed: ``winning_rate >= 0.5``.
        epsilon: cost-benefit margin used.
        q: false discovery rate level of the Benjamini–Yekutieli procedure.
        scoring: alignment function name (``"callable"`` for a custom one).
        min_items: minimum items per tested annotator.
        comparisons: one :class:`AnnotatorComparison` per tested annotator, input order.
        skipped: annotators not tested for having fewer than ``min_items`` items.
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    epsilon: float
    q: float
    scoring: str
    min_items: int
    comparisons: tuple[AnnotatorComparison, ...]
    skipped: tuple[Hashable, ...] = ()

    @property
    def n_annotators(self) -> int:
        return len(self.comparisons)

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("comparisons", "skipped")}
        d["comparisons"] = [c.to_dict() for c in self.comparisons]
        d["skipped"] = list(self.skipped)
        return d

    def to_frame(self) -> pd.DataFrame:
        """One row per tested annotator, with the overall decision repeated on each row."""
        rows = [{**c.to_dict(), "epsilon": self.epsilon, "q": self.q, "winning_rate": self.winning_rate,
                 "advantage_probability": self.advantage_probability, "passed": self.passed}
                for c in self.comparisons]
        return pd.DataFrame(rows)


def by_adjust(pvalues) -> np.ndarray:
    """Benjamini–Yekutieli adjusted p-values, same order.

    ``p_(i) * m * H_m / i`` for the i-th smallest of ``m`` p-values, ``H_m = 1 + 1/2 + … + 1/m``,
    made monotone from the largest down (cumulative minimum) and capped at 1. Rejecting
    where the adjusted p-value is at most ``q`` is the BY step-up procedure at FDR ``q``
    (as statsmodels' ``multipletests(method="fdr_by")``).

    Args:
        pvalues: p-values in [0, 1], no NaN.

    Returns:
        The adjusted p-values as a float array.

    References:
        Benjamini & Yekutieli (2001), Annals of Statistics 29(4):1165–1188, Theorem 1.3.

    Example:
        >>> by_adjust([0.01, 0.04, 0.03]).round(4).tolist()
        [0.055, 0.0733, 0.0733]
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    if not np.all((p >= 0) & (p <= 1)):
        raise ValueError("p-values must lie in [0, 1] with none missing.")
    m = p.size
    if m == 0:
        return p
    h_m = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m * h_m / np.arange(1, m + 1)
    ranked = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(ranked, 1.0)
    return out


# --------------------------------------------------------------------------- inputs


def _frame(human) -> pd.DataFrame:
    if isinstance(human, pd.DataFrame):
        df = human
    elif isinstance(human, Mapping):
        df = pd.DataFrame({a: pd.Series(r) for a, r in human.items()})
    else:
        arr = np.asarray(human, dtype=object)
        if arr.ndim != 2:
            raise ValueError("human must be an items × annotators table (2-D), a DataFrame or {annotator: {item: rating}}.")
        df = pd.DataFrame(arr)
    if df.ndim != 2 or df.shape[1] == 0:
        raise ValueError("human must have one column per annotator.")
    if len(set(df.columns)) != df.shape[1]:
        raise ValueError("annotator labels (the columns of human) must be unique.")
    return df


def _judge(judge, df: pd.DataFrame) -> np.ndarray:
    if isinstance(judge, (pd.Series, Mapping)):
        s = pd.Series(judge) if isinstance(judge, Mapping) else judge
        if not s.index.is_unique:
            raise ValueError("judge has duplicate item labels.")
        return s.reindex(df.index).to_numpy(dtype=object)
    arr = np.asarray(judge, dtype=object)
    if arr.ndim != 1 or arr.size != df.shape[0]:
        raise ValueError(f"judge must give one rating per item: expected {df.shape[0]} values, got shape {arr.shape}.")
    return arr


def _numeric(values: np.ndarray, what: str) -> np.ndarray:
    missing = pd.isna(values)
    out = np.full(values.shape, np.nan)
    try:
        out[~missing] = np.asarray(values[~missing], dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numeric for a numeric alignment score; use scoring='accuracy' for labels.") from None
    if np.isinf(out).any():
        raise ValueError(f"{what} contains infinite values.")
    return out


# --------------------------------------------------------------------------- scores


def _scores_numeric(pred: np.ndarray, others: np.ndarray, scoring: str) -> np.ndarray:
    """Row-wise alignment of ``pred`` (items) with ``others`` (items × k, NaN = missing)."""
    diff = others - pred[:, None]
    with np.errstate(invalid="ignore"):
        if scoring == "neg_rmse":
            return -np.sqrt(np.nanmean(diff**2, axis=1))
        return -np.nanmean(np.abs(diff), axis=1)


def _scores_generic(pred: np.ndarray, others: np.ndarray, missing: np.ndarray, fn: Callable) -> np.ndarray:
    out = np.empty(pred.size)
    for i in range(pred.size):
        vals = [v for v, miss in zip(others[i], missing[i]) if not miss]
        out[i] = float(fn(pred[i], vals))
    if not np.all(np.isfinite(out)):
        raise ValueError("the scoring function returned a missing or non-finite score.")
    return out


def _accuracy(pred, others) -> float:
    return float(np.mean([pred == o for o in others]))


def _one_sided_t(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """t and ``P(T <= t)`` for H1: ``mean(d) < epsilon``; the zero-spread limit when sd is 0."""
    n = d.size
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        if mean < epsilon:
            return -math.inf, 0.0
        return (math.inf if mean > epsilon else 0.0), 1.0
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return float(t), float(_st.t.cdf(t, n - 1))


def alt_test(
    human,
    judge,
    *,
    epsilon: float = 0.2,
    q: float = 0.05,
    scoring: str | Callable = "neg_rmse",
    min_items: int = 30,
) -> AltTestResult:
    """The alternative annotator test of Calderon, Reichart & Dror (ACL 2025).

    See the module docstring for the procedure as implemented: leave-one-annotator-out
    alignment, win indicators with ties for both, a one-sided t-test of
    ``rho_judge > rho_human - epsilon`` per annotator, Benjamini–Yekutieli over annotators,
    winning rate ``omega`` (pass at ``>= 0.5``) and advantage probability ``rho``.

    Args:
        human: ratings as an items × annotators table — a DataFrame (index = items,
            columns = annotators), a 2-D array, or ``{annotator: {item: rating}}``. Missing
            ratings are NaN/None. Needs at least three annotators.
        judge: the judge's ratings — a Series or ``{item: rating}`` (aligned on the item
            labels), or a sequence in the table's row order. Items the judge did not rate
            (NaN/None) are left out.
        epsilon: cost-benefit margin in [0, 1): 0.2 for experts, 0.15 for skilled
            annotators, 0.1 for crowd-workers (the authors' rule of thumb).
        q: false discovery rate for the Benjamini–Yekutieli procedure (default 0.05).
        scoring: ``"neg_rmse"`` (numeric ratings, default), ``"neg_mae"``, ``"accuracy"``
            (labels), or a callable ``f(prediction, list_of_other_ratings) -> float``
            (higher = better aligned).
        min_items: items an annotator needs to be tested (default 30, the paper's minimum
            for the t-test; at least 2).

    Returns:
        :class:`AltTestResult` with ``winning_rate``, ``advantage_probability``, ``passed``
        and one :class:`AnnotatorComparison` per tested annotator.

    Raises:
        ValueError: fewer than three annotators (given or testable), mismatched judge
            ratings, non-numeric or infinite ratings for a numeric score, or an invalid
            ``epsilon``/``q``/``scoring``/``min_items``.

    References:
        Calderon, Reichart & Dror (2025), ACL (the procedure; the choice of epsilon and
        of the number of items); Benjamini & Yekutieli (2001).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> truth = rng.integers(1, 6, 60)
        >>> human = np.clip(truth[:, None] + rng.integers(-1, 2, (60, 3)), 1, 5)
        >>> res = alt_test(human, truth, epsilon=0.2)
        >>> res.passed, res.n_annotators
        (True, 3)
    """
    if not (isinstance(epsilon, (int, float)) and 0 <= epsilon < 1):
        raise ValueError(f"epsilon must be in [0, 1), got {epsilon!r}.")
    if not (isinstance(q, (int, float)) and 0 < q < 1):
        raise ValueError(f"q must be in (0, 1), got {q!r}.")
    if isinstance(min_items, bool) or not isinstance(min_items, (int, np.integer)) or min_items < 2:
        raise ValueError(f"min_items must be an integer >= 2, got {min_items!r}.")
    fn: Callable[..., float] | None
    if callable(scoring):
        name, fn = "callable", scoring
    elif scoring in SCORINGS:
        name, fn = scoring, (_accuracy if scoring == "accuracy" else None)
    else:
        raise ValueError(f"unknown scoring {scoring!r}: use one of {', '.join(SCORINGS)} or a callable.")

    df = _frame(human)
    m_all = df.shape[1]
    if m_all < MIN_ANNOTATORS:
        raise ValueError(f"the alt-test needs at least {MIN_ANNOTATORS} human annotators, got {m_all}.")
    f = _judge(judge, df)
    values = df.to_numpy(dtype=object)
    missing = pd.isna(df).to_numpy()
    f_missing = np.asarray(pd.isna(f), dtype=bool)
    if fn is None:  # a numeric score
        values = _numeric(values, "human ratings")
        f = _numeric(f, "judge ratings")

    rows: list[tuple] = []
    skipped: list[Hashable] = []
    for j, annotator in enumerate(df.columns):
        other_cols = [k for k in range(m_all) if k != j]
        n_others = (~missing[:, other_cols]).sum(axis=1)
        items = ~missing[:, j] & ~f_missing & (n_others >= 1)
        n_j = int(items.sum())
        if n_j < min_items:
            skipped.append(annotator)
            continue
        others = values[items][:, other_cols]
        if fn is None:
            s_h = _scores_numeric(values[items, j], others, name)
            s_f = _scores_numeric(f[items], others, name)
        else:
            omiss = missing[items][:, other_cols]
            s_h = _scores_generic(values[items, j], others, omiss, fn)
            s_f = _scores_generic(f[items], others, omiss, fn)
        tie = np.abs(s_f - s_h) <= _TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(s_f), np.abs(s_h)))
        w_f = ((s_f > s_h) | tie).astype(float)
        w_h = ((s_h > s_f) | tie).astype(float)
        t, p = _one_sided_t(w_h - w_f, float(epsilon))
        rows.append((annotator, n_j, float(w_f.mean()), float(w_h.mean()), t, p))

    if len(rows) < MIN_ANNOTATORS:
        raise ValueError(
            f"the alt-test needs at least {MIN_ANNOTATORS} annotators with {min_items} or more comparable items "
            f"each; only {len(rows)} of {m_all} have enough."
        )
    p_adj = by_adjust([r[5] for r in rows])
    comps = tuple(
        AnnotatorComparison(annotator=r[0], n_items=r[1], rho_judge=r[2], rho_human=r[3], t=r[4], p_value=r[5],
                            p_adjusted=float(pa), rejected=bool(pa <= q))
        for r, pa in zip(rows, p_adj)
    )
    omega = sum(c.rejected for c in comps) / len(comps)
    rho = float(np.mean([c.rho_judge for c in comps]))
    return AltTestResult(
        winning_rate=float(omega), advantage_probability=rho, passed=bool(omega >= 0.5), epsilon=float(epsilon),
        q=float(q), scoring=name, min_items=int(min_items), comparisons=comps, skipped=tuple(skipped),
    )
