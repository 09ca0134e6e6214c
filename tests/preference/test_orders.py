"""Both-order rules: verdicts paired by label (never by row position), keep and MT-Bench's rule."""
import pandas as pd
import pytest

from judgelab.errors import JudgelabError
from judgelab.preference.orders import apply_order_rule, pair_orders
from judgelab.preference.verdicts import normalise_verdicts


def _table(rows):
    return normalise_verdicts(pd.DataFrame(rows, columns=["rater", "item_id", "first", "second", "choice"]))


ROWS = [("j", "1", "x", "y", "first"),   # pair (1, x, y): x both orders -> agree
        ("j", "2", "y", "x", "first"),   # pair (2, x, y): y first then y second -> disagree (first both times)
        ("j", "1", "y", "x", "second"),
        ("j", "2", "x", "y", "first"),
        ("j", "3", "x", "y", "tie")]     # one order only


def test_pairs_are_matched_by_label_not_position():
    shuffled = _table(ROWS).sample(frac=1, random_state=3)
    pairs = pair_orders(shuffled).set_index("item_id")
    assert pairs.loc["1", ["winner_ab", "winner_ba"]].tolist() == ["x", "x"]
    assert pairs.loc["2", ["winner_ab", "winner_ba"]].tolist() == ["x", "y"]
    assert pairs.loc["3", "winner_ab"] == "tie" and pairs.loc["3", "winner_ba"] is None


def test_other_rater_or_sample_is_not_the_twin():
    t = _table([("j", "1", "x", "y", "first"), ("k", "1", "y", "x", "first")])
    pairs = pair_orders(t)
    assert len(pairs) == 2 and pairs[["winner_ab", "winner_ba"]].isna().sum().sum() == 2


def test_keep_leaves_verdicts_and_counts_one_order():
    t = _table(ROWS)
    kept, summary = apply_order_rule(t, "keep")
    assert kept is t
    assert [(s.both_orders, s.one_order, s.disagree) for s in summary] == [(2, 1, 1)]


def test_mt_bench_rule_makes_disagreeing_orders_one_tie():
    out, _ = apply_order_rule(_table(ROWS), "mt-bench")
    got = {r.item_id: (r.first, r.second, r.choice) for r in out.itertuples()}
    assert got == {"1": ("x", "y", "first"), "2": ("x", "y", "tie"), "3": ("x", "y", "tie")}
    assert len(out) == 3


def test_unknown_rule_names_the_rules():
    with pytest.raises(JudgelabError, match="keep, mt-bench"):
        apply_order_rule(_table(ROWS), "vote")


def test_the_same_order_twice_is_one_error():
    t = _table(ROWS)
    twice = pd.concat([t, t.iloc[[0]]], ignore_index=True)  # a table built in code skips the file readers' check
    with pytest.raises(JudgelabError, match="two verdicts on item '1'"):
        pair_orders(twice)


def test_the_mt_bench_rule_keeps_the_texts_of_the_pair():
    """A merged verdict keeps the instruction and both responses as shown system_a first (length control reads them)."""
    import pandas as pd

    from judgelab.preference.orders import apply_order_rule
    from judgelab.preference.verdicts import normalise_verdicts

    v = normalise_verdicts(pd.DataFrame({
        "rater": ["j", "j"], "item_id": ["1", "1"], "first": ["y", "x"], "second": ["x", "y"],
        "choice": ["second", "first"], "instruction": ["say hi", "say hi"],
        "first_text": ["why text", "ex text"], "second_text": ["ex text", "why text"]}))
    merged, _ = apply_order_rule(v, "mt-bench")
    row = merged.iloc[0]
    assert (row["first"], row["second"], row["choice"]) == ("x", "y", "first")
    assert (row["instruction"], row["first_text"], row["second_text"]) == ("say hi", "ex text", "why text")
