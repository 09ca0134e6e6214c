"""Agreement of pairwise verdicts with human preferences (``judgelab preference agree``).

Per rater and criterion, the verdicts are compared with **the humans' label** of each pair (one item and two
systems): the majority of the human raters' verdicts on it (each verdict a vote), a human's tie being a vote for a tie; when the
most-voted outcomes are equal in votes the label is a tie. A judge is compared with the majority of all
humans; each human with the majority of the *other* humans (MT-Bench's human baseline, Zheng et al. 2023
§4.2), so a person's own vote never sets their label; a pair with no other human's vote is left out.

The measures (``METRICS``), each over the rater's verdicts with a choice:

* ``accuracy``: share of verdicts that name the label's outcome, both orders of a pair counted (LLMBar's
  ``correct_average``, Zeng et al. 2024 §3: the accuracy in each order, averaged). A tie counts as a
  disagreement unless the label is a tie too (MT-Bench's "with tie" convention).
* ``both_correct``: share of pairs asked in both orders that are right in both (LLMBar's ``correct_both``).
* ``consistency``: share of pairs asked in both orders whose two verdicts name the same winner, a tie being an
  outcome (positional agreement; LLMBar's ``equal``). It needs no human label, but only labelled pairs count.
* ``accuracy_no_ties``, ``consistency_no_ties``: the same with every verdict or pair where either side tied
  left out (MT-Bench's "without tie" convention).
* ``kappa``: Cohen's κ of the rater's verdicts with the label over outcomes {system a, system b, tie}.

Each has a percentile cluster-bootstrap interval over items (:func:`judgelab.stats.bootstrap.cluster_bootstrap_ci`;
fewer than its minimum of items gives no interval, with the reason in ``note``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from judgelab.errors import JudgelabError
from judgelab.preference.agreement_results import BASELINE, METRICS, AgreementRow, Estimate, PreferenceAgreement
from judgelab.preference.orders import KEEP, apply_order_rule, pair_orders

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["preference_agreement", "human_labels", "HUMAN_KINDS", "JUDGE_KINDS"]

#: Rater kinds whose verdicts make the humans' label (:mod:`judgelab.raters`).
HUMAN_KINDS = ("human", "consensus")
#: Rater kinds compared with it as judges.
JUDGE_KINDS = ("judge", "jury")
_OUTCOMES = ("a", "b", "tie")
#: Per item, the counts every measure is a ratio of (numerator, denominator), and the κ table (label × verdict).
_RATIOS = {"accuracy": ("acc", "acc_n"), "both_correct": ("both", "both_n"), "consistency": ("cons", "cons_n"),
           "accuracy_no_ties": ("acc_nt", "acc_nt_n"), "consistency_no_ties": ("cons_nt", "cons_nt_n")}
_KAPPA = [f"k{i}{j}" for i in range(3) for j in range(3)]
#: Why a measure has no value.
_UNDEFINED = {"accuracy": "no verdict with a choice", "both_correct": "no pair asked in both orders",
              "consistency": "no pair asked in both orders", "accuracy_no_ties": "every verdict or label is a tie",
              "consistency_no_ties": "no pair asked in both orders without a tie",
              "kappa": "one outcome only (chance agreement is 1)"}


def human_labels(votes: "pd.DataFrame", leave_out: str | None = None) -> "pd.DataFrame":
    """The humans' label per pair: ``criterion, item_id, system_a, system_b, label`` (``a``, ``b`` or ``tie``).

    ``votes`` has one row per human verdict with ``rater`` and ``outcome`` (``a``, ``b``, ``tie``); ``leave_out``:
    a rater whose votes do not count (a human judged against the others). The label is the outcome with the most
    votes; equal top counts give a tie.
    """
    import pandas as pd

    v = votes if leave_out is None else votes[votes["rater"] != leave_out]
    key = ["criterion", "item_id", "system_a", "system_b"]
    if v.empty:
        return pd.DataFrame(columns=[*key, "label"])
    counts = v.groupby(key)["outcome"].value_counts().unstack(fill_value=0).reindex(columns=list(_OUTCOMES), fill_value=0)
    top = counts.to_numpy()
    best = top.max(axis=1, keepdims=True)
    unique = (top == best).sum(axis=1) == 1
    label = np.where(unique, np.array(_OUTCOMES, dtype=object)[top.argmax(axis=1)], "tie")
    return counts.index.to_frame(index=False).assign(label=label)


def preference_agreement(verdicts: "pd.DataFrame", rule: str = KEEP, n_resamples: int = 999,
                         confidence_level: float = 0.95, seed: int = 0) -> PreferenceAgreement:
    """Agreement of each judge (and each human, against the others) with the humans' label.

    Args:
        verdicts: a verdicts table (:func:`judgelab.preference.verdicts.normalise_verdicts`).
        rule: the both-order rule applied first (:func:`judgelab.preference.orders.apply_order_rule`).
        n_resamples: bootstrap resamples per interval (0: no intervals).
        confidence_level, seed: of the intervals.

    Returns:
        A :class:`PreferenceAgreement`: a row per judge × criterion with labelled pairs, a row per human with
        other humans' votes, and a pooled human row (``humans (each vs the others)``) when there is one.

    Raises:
        JudgelabError: no human rater, no judge, or no pair a judge and the humans both judged.

    Example:
        >>> import pandas as pd
        >>> from judgelab.preference.verdicts import normalise_verdicts
        >>> v = normalise_verdicts(pd.DataFrame({"rater": ["human:a", "j", "j"], "item_id": ["1"] * 3,
        ...     "first": ["x", "x", "y"], "second": ["y", "y", "x"], "choice": ["first", "first", "first"]}))
        >>> r = preference_agreement(v, n_resamples=0).rows[0]
        >>> r.rater, r.n, r.value("accuracy"), r.value("consistency")
        ('j', 1, 0.5, 0.0)
    """
    import pandas as pd

    table, orders = apply_order_rule(verdicts, rule)
    pairs = pair_orders(table)
    kind = dict(zip(table["rater"], table["rater_kind"]))
    pairs["kind"] = pairs["rater"].map(kind)
    humans = pairs[pairs["kind"].isin(HUMAN_KINDS)]
    judges = pairs[pairs["kind"].isin(JUDGE_KINDS)]
    if humans.empty:
        raise JudgelabError("no human rater's verdict in the input: give the humans' preferences as verdicts of raters "
                            "labelled human:<id> (a column rater) beside the judges' verdicts")
    if judges.empty:
        raise JudgelabError("no judge's verdict in the input: give the judges' verdicts beside the humans' "
                            "(raters not labelled human:<id>)")
    votes = _votes(humans)
    everyone = human_labels(votes)
    per_rater: list[tuple[str, str, pd.DataFrame]] = []
    for rater, g in judges.groupby("rater", sort=True):
        per_rater.append((str(rater), "judge", _scored(g, everyone)))
    if not any(len(s) for _, _, s in per_rater):
        raise JudgelabError("no pair (item and two systems, same criterion) was judged by both a judge and a human: "
                            "check that item_id, criterion and the system names match across the files")
    for rater, g in humans.groupby("rater", sort=True):
        per_rater.append((str(rater), "human", _scored(g, human_labels(votes, leave_out=str(rater)))))
    baseline = pd.concat([s for _, k, s in per_rater if k == "human"], ignore_index=True)
    if len(baseline) and baseline["rater"].nunique() > 1:
        per_rater.append((BASELINE, "human", baseline))
    rows = []
    for rater, k, scored in per_rater:
        for criterion, g in scored.groupby("criterion", sort=True):
            rows.append(_row(rater, k, str(criterion), g, n_resamples, confidence_level, seed))
    notes = [] if (humans["rater"].nunique() > 1) else ["one human rater: no human-human baseline (it needs two)"]
    notes += [f"{o.rater} ({o.criterion}): {o.one_order} verdict(s) asked in one order only (kept as given)"
              for o in orders if o.one_order and kind.get(o.rater) in JUDGE_KINDS]
    settings = {"rule": rule, "n_resamples": n_resamples, "confidence_level": confidence_level, "seed": seed,
                "cluster": "item_id", "ci_method": "percentile"}
    return PreferenceAgreement(tuple(rows), rule, tuple(o.to_dict() for o in orders), settings, tuple(notes))


def _outcome(winner: object, a: object, b: object) -> object:
    if winner is None:
        return None
    return "tie" if winner == "tie" else "a" if winner == a else "b"


def _votes(humans: "pd.DataFrame") -> "pd.DataFrame":
    import pandas as pd

    parts = []
    for col in ("winner_ab", "winner_ba"):
        part = humans[humans[col].notna()]
        parts.append(part.assign(outcome=[_outcome(w, a, b) for w, a, b in
                                          zip(part[col], part["system_a"], part["system_b"])]))
    return pd.concat(parts, ignore_index=True)[["rater", "criterion", "item_id", "system_a", "system_b", "outcome"]]


def _scored(pairs: "pd.DataFrame", labels: "pd.DataFrame") -> "pd.DataFrame":
    """Per labelled pair of one rater: the counts each measure is a ratio of."""
    import pandas as pd

    p = pairs.merge(labels, on=["criterion", "item_id", "system_a", "system_b"], how="inner")
    if p.empty:
        return pd.DataFrame(columns=["rater", "criterion", "item_id", *(c for nd in _RATIOS.values() for c in nd), *_KAPPA])
    ab = np.array([_outcome(w, a, b) for w, a, b in zip(p["winner_ab"], p["system_a"], p["system_b"])], dtype=object)
    ba = np.array([_outcome(w, a, b) for w, a, b in zip(p["winner_ba"], p["system_a"], p["system_b"])], dtype=object)
    label = p["label"].to_numpy(dtype=object)
    has_ab, has_ba = ab != None, ba != None  # noqa: E711 (elementwise on object arrays)
    ok_ab, ok_ba = has_ab & (ab == label), has_ba & (ba == label)
    both = has_ab & has_ba
    nt_ab = has_ab & (ab != "tie") & (label != "tie")
    nt_ba = has_ba & (ba != "tie") & (label != "tie")
    out = pd.DataFrame({"rater": p["rater"].to_numpy(), "criterion": p["criterion"].to_numpy(),
                        "item_id": p["item_id"].to_numpy(),
                        "acc": ok_ab.astype(int) + ok_ba, "acc_n": has_ab.astype(int) + has_ba,
                        "both": (both & ok_ab & ok_ba).astype(int), "both_n": both.astype(int),
                        "cons": (both & (ab == ba)).astype(int), "cons_n": both.astype(int),
                        "acc_nt": (nt_ab & ok_ab).astype(int) + (nt_ba & ok_ba), "acc_nt_n": nt_ab.astype(int) + nt_ba,
                        "cons_nt": (both & (ab == ba) & (ab != "tie") & (ba != "tie")).astype(int),
                        "cons_nt_n": (both & (ab != "tie") & (ba != "tie")).astype(int)})
    code = {o: i for i, o in enumerate(_OUTCOMES)}
    lab = np.array([code[x] for x in label])
    for i in range(3):
        for j in range(3):
            out[f"k{i}{j}"] = ((lab == i) & has_ab & (ab == _OUTCOMES[j])).astype(int) + \
                ((lab == i) & has_ba & (ba == _OUTCOMES[j]))
    return out


def _kappa(tables: np.ndarray) -> np.ndarray:
    """Cohen's κ of 3×3 count tables flattened on the last axis (NaN where undefined)."""
    c = tables.reshape(*tables.shape[:-1], 3, 3).astype(float)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(c, axis1=-2, axis2=-1) / n
        pe = (c.sum(axis=-1) * c.sum(axis=-2)).sum(axis=-1) / n ** 2
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def _ratio(num: np.ndarray, den: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    def stat(drawn: np.ndarray) -> np.ndarray:
        d = den[drawn].sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0, num[drawn].sum(axis=-1) / np.where(d > 0, d, 1), np.nan)
    return stat


def _row(rater: str, kind: str, criterion: str, scored: "pd.DataFrame", n_resamples: int, level: float,
         seed: int) -> AgreementRow:
    from judgelab.stats.bootstrap import cluster_bootstrap_ci

    items = scored.groupby("item_id", sort=True).sum(numeric_only=True).reset_index()
    stats: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        m: _ratio(items[n].to_numpy(float), items[d].to_numpy(float)) for m, (n, d) in _RATIOS.items()}
    k = items[_KAPPA].to_numpy(float)
    stats["kappa"] = lambda drawn: _kappa(k[drawn].sum(axis=-2))
    everything = np.arange(len(items))
    measures = {}
    for m in METRICS:
        value = float(stats[m](everything))
        if n_resamples <= 0 or not np.isfinite(value):
            measures[m] = Estimate(value, note="" if np.isfinite(value) else f"no {m}: {_UNDEFINED[m]}")
            continue
        ci = cluster_bootstrap_ci(items, lambda t: float("nan"), "item_id", n_resamples=n_resamples,
                                  confidence_level=level, seed=seed, batch_statistic=stats[m])
        measures[m] = Estimate(value, ci.low, ci.high, ci.message)
    return AgreementRow(rater, kind, criterion, n=len(scored), items=len(items), verdicts=int(items["acc_n"].sum()),
                        measures=measures)
