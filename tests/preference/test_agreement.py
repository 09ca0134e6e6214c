"""preference agree's measures against hand counts, sklearn's kappa, MT-Bench's tie conventions, the human baseline."""
import numpy as np
import pandas as pd
import pytest

from judgelab.errors import JudgelabError
from judgelab.preference.agreement import BASELINE, human_labels, preference_agreement
from judgelab.preference.verdicts import normalise_verdicts


def _table(rows):
    return normalise_verdicts(pd.DataFrame(rows, columns=["rater", "item_id", "first", "second", "choice"]))


def _row(result, rater):
    return next(r for r in result.rows if r.rater == rater)


# humans: item 1 x, item 2 y (shown y first), item 3 tie (one says x, one says y: equal top votes), item 4 x
HUMANS = [("human:a", "1", "x", "y", "first"), ("human:b", "1", "x", "y", "first"),
          ("human:a", "2", "y", "x", "first"), ("human:b", "2", "x", "y", "second"),
          ("human:a", "3", "x", "y", "first"), ("human:b", "3", "x", "y", "second"),
          ("human:a", "4", "x", "y", "first"), ("human:b", "4", "x", "y", "tie")]
JUDGE = [("j", "1", "x", "y", "first"), ("j", "1", "y", "x", "second"),   # x, x: right twice, consistent
         ("j", "2", "x", "y", "first"), ("j", "2", "y", "x", "first"),    # x, y: right once, inconsistent
         ("j", "3", "x", "y", "tie"), ("j", "3", "y", "x", "first"),      # tie, y: label tie -> right once
         ("j", "4", "x", "y", "second")]                                  # y once: wrong, one order only


def test_human_label_is_majority_and_equal_votes_tie():
    votes = pd.DataFrame({"rater": ["a", "b", "c"], "criterion": "c", "item_id": "1", "system_a": "x",
                          "system_b": "y", "outcome": ["a", "b", "a"]})
    assert human_labels(votes)["label"].tolist() == ["a"]
    assert human_labels(votes, leave_out="c")["label"].tolist() == ["tie"]


def test_judge_measures_by_hand():
    r = _row(preference_agreement(_table(HUMANS + JUDGE), n_resamples=0), "j")
    assert (r.n, r.items, r.verdicts) == (4, 4, 7)
    assert r.value("accuracy") == pytest.approx(4 / 7)          # 2 + 1 + 1 + 0 of 7 verdicts
    assert r.value("both_correct") == pytest.approx(1 / 3)      # pairs 1, 2, 3 in both orders; only 1
    assert r.value("consistency") == pytest.approx(1 / 3)
    # without ties: items 3 and 4 (labels tie: a x and b y; a x and b tie) are left out
    assert r.value("accuracy_no_ties") == pytest.approx(3 / 4)  # items 1 (2/2), 2 (1/2)
    assert r.value("consistency_no_ties") == pytest.approx(1 / 2)  # pairs 1, 2


def test_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(4)
    rows = []
    for i in range(40):
        label = rng.choice(["first", "second", "tie"], p=[0.45, 0.45, 0.1])
        rows.append(("human:a", str(i), "x", "y", label))
        for first, second in (("x", "y"), ("y", "x")):
            rows.append(("j", str(i), first, second, rng.choice(["first", "second", "tie"])))
    t = _table(rows)
    r = _row(preference_agreement(t, n_resamples=0), "j")
    lab = {row.item_id: {"first": "x", "second": "y", "tie": "tie"}[row.choice] for row in t[t.rater == "human:a"].itertuples()}
    judge = t[t.rater == "j"]
    won = [{"first": row.first, "second": row.second, "tie": "tie"}[row.choice] for row in judge.itertuples()]
    want = cohen_kappa_score([lab[i] for i in judge["item_id"]], won)
    assert r.value("kappa") == pytest.approx(want, abs=1e-12)


def test_human_baseline_each_against_the_others():
    rows = [("human:a", "1", "x", "y", "first"), ("human:b", "1", "x", "y", "first"), ("human:c", "1", "x", "y", "second"),
            ("human:a", "2", "x", "y", "second"), ("human:b", "2", "x", "y", "second"), ("human:c", "2", "x", "y", "second"),
            ("j", "1", "x", "y", "first")]
    result = preference_agreement(_table(rows), n_resamples=0)
    # c against a+b: item 1 x (c said y: wrong), item 2 y (right)
    assert _row(result, "human:c").value("accuracy") == pytest.approx(0.5)
    # a against b+c: item 1 b x, c y -> tie (a said x: wrong; with a's own vote it would be x and right)
    assert _row(result, "human:a").value("accuracy") == pytest.approx(0.5)
    assert _row(result, BASELINE).n == 6


def test_intervals_over_items_and_too_few_items_said():
    rows = [r for i in range(30) for r in (("human:a", str(i), "x", "y", "first"),
                                           ("j", str(i), "x", "y", "first" if i % 3 else "second"))]
    r = _row(preference_agreement(_table(rows), n_resamples=200), "j")
    acc = r.measures["accuracy"]
    assert acc.ci_low < acc.value < acc.ci_high
    small = _row(preference_agreement(_table(rows[:6]), n_resamples=200), "j").measures["accuracy"]
    assert np.isnan(small.ci_low) and "at least" in small.note


@pytest.mark.parametrize("rows, message", [
    ([("j", "1", "x", "y", "first")], "no human rater"),
    ([("human:a", "1", "x", "y", "first")], "no judge"),
    ([("human:a", "1", "x", "y", "first"), ("j", "2", "x", "y", "first")], "no pair"),
])
def test_refusals(rows, message):
    with pytest.raises(JudgelabError, match=message):
        preference_agreement(_table(rows), n_resamples=0)


def test_one_order_verdicts_are_counted_in_a_note():
    result = preference_agreement(_table(HUMANS + JUDGE), n_resamples=0)
    assert any("j (preference): 1 verdict(s) asked in one order only" in n for n in result.notes)
    assert [(o["both_orders"], o["one_order"]) for o in result.orders if o["rater"] == "j"] == [(3, 1)]
