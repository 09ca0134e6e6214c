"""Both orders of a pair: a rater's two verdicts on one item with the systems swapped.

A judge shown ``x`` then ``y`` and, separately, ``y`` then ``x`` gives two verdicts on one pair. They are
matched by label — the same ``item_id``, ``criterion``, ``rater`` and ``sample``, and the same two systems
``{first, second}`` in either order — never by row position (:func:`pair_orders`). Two rules decide what
the two verdicts become (:func:`apply_order_rule`):

* ``keep``: both verdicts count, each as given (LLMBar's ``correct_average`` averages over them).
* ``mt-bench``: a pair whose two orders name different winners becomes one tie; a pair whose orders agree
  becomes one verdict for that winner (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot
  Arena", §3.4 "conservative approach": a win only when the judge prefers the response in both orders;
  FastChat's ``show_result.py`` counts such a pair as a tie).

A verdict asked in one order only (its swapped twin is absent, or has no choice) cannot be checked for
position; both rules keep it as it is, and :class:`OrderSummary` counts it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgelab.errors import JudgelabError
from judgelab.preference.verdicts import TEXT_FIELDS, VERDICT_COLUMNS, Choice, normalise_verdicts, pair_sides, winner

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KEEP", "MT_BENCH", "ORDER_RULES", "PAIR_KEY", "OrderSummary", "pair_orders", "summarise_orders", "apply_order_rule"]

KEEP = "keep"
MT_BENCH = "mt-bench"
#: The both-order rules, the default first.
ORDER_RULES = (KEEP, MT_BENCH)
#: What names one pair of a rater (with the two systems, sorted: ``system_a`` < ``system_b``).
PAIR_KEY = ["rater", "criterion", "item_id", "sample", "system_a", "system_b"]


@dataclass(frozen=True)
class OrderSummary:
    """How a rater's verdicts fall into pairs asked in both orders.

    Attributes:
        rater, criterion: whose verdicts.
        both_orders: pairs with a choice in both orders.
        one_order: verdicts (with a choice) whose swapped twin is absent or has no choice.
        disagree: pairs of ``both_orders`` whose two orders name different winners (a tie counts as a winner).
    """

    rater: str
    criterion: str
    both_orders: int
    one_order: int
    disagree: int

    def to_dict(self) -> dict[str, object]:
        return {"rater": self.rater, "criterion": self.criterion, "both_orders": self.both_orders,
                "one_order": self.one_order, "disagree": self.disagree}


def pair_orders(verdicts: "pd.DataFrame") -> "pd.DataFrame":
    """One row per pair of a rater (:data:`PAIR_KEY`) with the winner in each order.

    Args:
        verdicts: a verdicts table (:func:`judgelab.preference.verdicts.normalise_verdicts`).

    Returns:
        Columns :data:`PAIR_KEY`, ``winner_ab`` (the winner when ``system_a`` was shown first: a system, ``"tie"``,
        or None when that order was not asked or gave no choice) and ``winner_ba`` (``system_b`` shown first).
        Only verdicts with a choice take part.

    Example:
        >>> import pandas as pd
        >>> v = normalise_verdicts(pd.DataFrame({"rater": ["j", "j"], "item_id": ["1", "1"], "first": ["x", "y"],
        ...                                      "second": ["y", "x"], "choice": ["first", "first"]}))
        >>> pair_orders(v)[["system_a", "winner_ab", "winner_ba"]].values.tolist()
        [['x', 'x', 'y']]
    """
    import pandas as pd

    v = verdicts[verdicts["choice"].notna()]
    if v.empty:
        return pd.DataFrame(columns=[*PAIR_KEY, "winner_ab", "winner_ba"])
    system_a, system_b, a_first = pair_sides(v)
    frame = pd.DataFrame({
        "rater": v["rater"].to_numpy(), "criterion": v["criterion"].to_numpy(), "item_id": v["item_id"].to_numpy(),
        "sample": v["sample"].to_numpy(), "system_a": system_a, "system_b": system_b,
        "order": ["winner_ab" if f else "winner_ba" for f in a_first],
        "winner": [winner(f, s, c) for f, s, c in zip(v["first"], v["second"], v["choice"])]})
    twice = frame.duplicated([*PAIR_KEY, "order"])
    if twice.any():
        row = frame[twice].iloc[0]
        raise JudgelabError(f"rater {row['rater']!r} has two verdicts on item {row['item_id']!r} ({row['criterion']}) "
                            f"in the same order and sample {row['sample']}; give a sample column to tell repeats apart")
    wide = frame.pivot(index=PAIR_KEY, columns="order", values="winner")
    for col in ("winner_ab", "winner_ba"):
        if col not in wide.columns:
            wide[col] = None
    wide = wide[["winner_ab", "winner_ba"]].astype(object)
    return wide.where(wide.notna(), None).reset_index().rename_axis(columns=None)


def summarise_orders(pairs: "pd.DataFrame") -> list[OrderSummary]:
    """Per rater and criterion: pairs in both orders, verdicts in one order only, pairs whose orders disagree."""
    out = []
    for (rater, criterion), g in pairs.groupby(["rater", "criterion"], sort=True):
        both = g["winner_ab"].notna() & g["winner_ba"].notna()
        out.append(OrderSummary(str(rater), str(criterion), int(both.sum()), int((~both).sum()),
                                int((both & (g["winner_ab"] != g["winner_ba"])).sum())))
    return out


def apply_order_rule(verdicts: "pd.DataFrame", rule: str = KEEP) -> tuple["pd.DataFrame", list[OrderSummary]]:
    """The verdicts under a both-order rule, and how each rater's verdicts fell into pairs.

    Args:
        verdicts: a verdicts table.
        rule: ``keep`` (every verdict as given) or ``mt-bench`` (a pair asked in both orders becomes one verdict,
            shown ``system_a`` first: the winner when both orders agree, else a tie; ``p_first`` and ``raw`` of
            the pair's verdicts are dropped, the instruction and the two responses kept).

    Returns:
        The verdicts table under the rule (verdicts without a choice and verdicts in one order only as given) and an
        :class:`OrderSummary` per rater and criterion.

    Raises:
        JudgelabError: an unknown rule (naming the rules).

    Example:
        >>> import pandas as pd
        >>> v = normalise_verdicts(pd.DataFrame({"rater": ["j", "j"], "item_id": ["1", "1"], "first": ["x", "y"],
        ...                                      "second": ["y", "x"], "choice": ["first", "first"]}))
        >>> t, s = apply_order_rule(v, "mt-bench")
        >>> t[["first", "second", "choice"]].values.tolist(), s[0].disagree
        ([['x', 'y', 'tie']], 1)
    """
    import pandas as pd

    if rule not in ORDER_RULES:
        raise JudgelabError(f"unknown both-order rule {rule!r}: {', '.join(ORDER_RULES)}")
    pairs = pair_orders(verdicts)
    summary = summarise_orders(pairs)
    if rule == KEEP or pairs.empty:
        return verdicts, summary
    both = pairs[pairs["winner_ab"].notna() & pairs["winner_ba"].notna()]
    system_a, system_b, a_first = pair_sides(verdicts)
    keys = pd.DataFrame({"rater": verdicts["rater"].to_numpy(), "criterion": verdicts["criterion"].to_numpy(),
                         "item_id": verdicts["item_id"].to_numpy(), "sample": verdicts["sample"].to_numpy(),
                         "system_a": system_a, "system_b": system_b})
    paired = pd.MultiIndex.from_frame(keys).isin(pd.MultiIndex.from_frame(both[PAIR_KEY])) \
        & verdicts["choice"].notna().to_numpy()
    # the texts as shown with system_a first (the merged verdict's order), from that order's verdict
    texts = keys[paired & a_first].assign(**{c: verdicts.loc[paired & a_first, c].to_numpy() for c in TEXT_FIELDS})
    texts = texts.drop_duplicates(PAIR_KEY)
    merged = pd.DataFrame({
        "rater": both["rater"], "criterion": both["criterion"], "item_id": both["item_id"], "sample": both["sample"],
        "first": both["system_a"], "second": both["system_b"],
        "choice": [Choice.TIE.value if ab != ba else _choice_for(ab, a, b)
                   for ab, ba, a, b in zip(both["winner_ab"], both["winner_ba"], both["system_a"], both["system_b"])]})
    merged = merged.merge(texts.rename(columns={"system_a": "first", "system_b": "second"}),
                          on=["rater", "criterion", "item_id", "sample", "first", "second"], how="left")
    kept = verdicts[~paired].drop(columns=[c for c in verdicts.columns if c not in VERDICT_COLUMNS], errors="ignore")
    return normalise_verdicts(pd.concat([kept, merged], ignore_index=True)), summary


def _choice_for(won: str, first: str, second: str) -> str:
    return Choice.TIE.value if won == "tie" else Choice.FIRST.value if won == first else Choice.SECOND.value
