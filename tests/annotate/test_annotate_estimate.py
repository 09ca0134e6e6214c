"""The estimates wiring: per-item judge means and human means into judgelab.stats (PPI++, Alt-Test, planner)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgelab.annotate.estimate import human_estimates
from judgelab.errors import JudgelabError
from judgelab.stats.alternative_annotator import alt_test
from judgelab.stats.ppi import ppi_mean, ppi_mean_difference
from judgelab.stats.ppi_plan import plan_ppi_difference, plan_ppi_mean

RNG = np.random.default_rng(13)


def _table(n_items=40, n_human=15, annotators=("ann", "bob", "cy"), systems=("A", "B"), samples=2, shared_ids=False,
           judge="judge@t"):
    """Judge: biased and noisy (two samples); humans: truth plus noise, on the first ``n_human`` items."""
    rows = []
    for s, system in enumerate(systems):
        for k in range(n_items):
            item = f"i{k}" if shared_ids else f"{system}{k}"
            truth = 2.5 + s * 0.6 + RNG.normal(0, 0.8)
            for j in range(samples):
                rows.append((item, system, "q", judge, j, float(np.clip(round(0.6 * truth + 0.4 + RNG.normal(0, 0.4)), 1, 5))))
            if k < n_human:
                for a in annotators:
                    rows.append((item, system, "q", f"human:{a}", 0, float(np.clip(round(truth + RNG.normal(0, 0.5)), 1, 5))))
    df = pd.DataFrame(rows, columns=["item_id", "system", "criterion", "rater", "sample", "score"])
    df["group"], df["status"] = None, "ok"
    return df


def _by_item(df, system, rater_is_human):
    sub = df[(df["system"] == system) & (df["rater"].str.startswith("human:") == rater_is_human) & (df["status"] == "ok")]
    if rater_is_human:
        return sub.groupby(["item_id", "rater"])["score"].mean().groupby("item_id").mean()
    return sub.groupby("item_id")["score"].mean()


def _direct(df, system):
    j, h = _by_item(df, system, False), _by_item(df, system, True)
    lab = sorted(set(j.index) & set(h.index))
    unl = sorted(set(j.index) - set(h.index))
    return h.loc[lab].to_numpy(), j.loc[lab].to_numpy(), j.loc[unl].to_numpy()


def test_ppi_means_use_judge_sample_means_and_human_annotator_means():
    df = _table()
    est = human_estimates(df)
    assert est.judge == "judge@t" and est.systems == ("A", "B") and est.criteria == ("q",)
    for m in est.means:
        y, yhat, yu = _direct(df, m.system)
        expected = ppi_mean(y, yhat, yu)
        assert (m.n_human, m.n_judge, m.n_annotators) == (15, 40, 3)
        assert m.result.estimate == pytest.approx(expected.estimate)
        assert (m.result.ci_low, m.result.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
        assert m.result.human_only.estimate == pytest.approx(y.mean())
        assert m.result.judge_only.estimate == pytest.approx(np.concatenate([yhat, yu]).mean())


def test_difference_between_two_systems():
    df = _table()
    est = human_estimates(df, systems=["B", "A"])
    (d,) = est.differences
    assert (d.system_a, d.system_b, d.paired) == ("B", "A", False)
    expected = ppi_mean_difference(*_direct(df, "B"), *_direct(df, "A"))
    assert d.result.estimate == pytest.approx(expected.estimate) and d.result.p_value == pytest.approx(expected.p_value)
    assert d.note == ""


def test_shared_item_ids_are_flagged_as_paired():
    est = human_estimates(_table(shared_ids=True))
    assert est.differences[0].paired and "paired" in est.differences[0].note


def test_failed_judgments_and_human_only_items_are_left_out():
    df = _table(n_items=10, n_human=5, systems=("A",))
    df.loc[(df["rater"] == "judge@t") & (df["item_id"] == "A0"), "status"] = "no_rating"
    df.loc[(df["rater"] == "judge@t") & (df["item_id"] == "A0"), "score"] = np.nan
    (m,) = human_estimates(df).means
    assert (m.n_judge, m.n_human) == (9, 4) and "1 human-rated item(s) the judge did not rate" in m.note


def test_too_few_items_say_why():
    df = _table(n_items=5, n_human=5, systems=("A", "B"))  # every item human-rated: no judge-only item
    est = human_estimates(df)
    assert all(m.result is None and "have 5 and 0" in m.note for m in est.means)
    assert est.differences[0].result is None
    rows = est.tables()["estimates"]
    assert np.isnan(rows["ci_low"]).all()


def test_alt_test_runs_with_three_annotators_and_explains_otherwise():
    df = _table(n_items=40, n_human=20)
    est = human_estimates(df, alt_min_items=10, epsilon=0.15)
    (outcome,) = est.alt_tests
    assert outcome.ran and outcome.annotators == ("human:ann", "human:bob", "human:cy")
    humans = df[df["rater"].str.startswith("human:")]
    table = humans.pivot_table(index=["system", "item_id"], columns="rater", values="score", aggfunc="first")
    judge = df[df["rater"] == "judge@t"].groupby(["system", "item_id"])["score"].mean()
    expected = alt_test(table, judge, epsilon=0.15, min_items=10)
    assert outcome.result.winning_rate == expected.winning_rate
    assert outcome.result.advantage_probability == pytest.approx(expected.advantage_probability)
    # The paper's default of 30 items per annotator: 40 items rated here, enough.
    assert human_estimates(df).alt_tests[0].ran
    # Too few items per annotator: the reason from the test itself.
    few = human_estimates(_table(n_items=20, n_human=8)).alt_tests[0]
    assert not few.ran and "30 or more comparable items" in few.reason
    two = human_estimates(_table(annotators=("ann", "bob"))).alt_tests[0]
    assert not two.ran and "at least 3 annotators" in two.reason and "human:ann, human:bob" in two.reason
    row = human_estimates(_table(annotators=("ann", "bob"))).tables()["alt_test"].iloc[0]
    assert "at least 3 annotators" in row["note"]


def test_planner_for_means_and_differences():
    df = _table()
    est = human_estimates(df, target_half_width=0.25)
    plans = {(p.scope, p.systems): p for p in est.plans}
    y, yhat, yu = _direct(df, "A")
    expected = plan_ppi_mean(y, yhat, len(yu), 0.25, yhat_unlabeled=yu)
    got = plans[("mean", ("A",))]
    assert got.plan.n == expected.n and got.more_needed == max(0, expected.n - 15) and got.n_human_now == 15
    ya, yhata, yua = _direct(df, "A")
    yb, yhatb, yub = _direct(df, "B")
    diff = plan_ppi_difference(ya, yhata, len(yua), yb, yhatb, len(yub), 0.25, yhat_unlabeled_a=yua, yhat_unlabeled_b=yub)
    assert plans[("difference", ("A", "B"))].plan.n == diff.n
    # A target below what the items allow is flagged, not hidden.
    tight = human_estimates(df, target_half_width=0.01).plans[0]
    assert not tight.reachable and "add items" in tight.note
    assert "plan" not in human_estimates(df).tables()


def test_json_and_tables_are_numbers():
    est = human_estimates(_table(n_items=12, n_human=4), target_half_width=0.5)
    data = json.loads(json.dumps(est.to_dict(), allow_nan=False))
    assert data["schema"] == 1 and data["means"][0]["result"]["ci_low"] < data["means"][0]["result"]["ci_high"]
    tables = est.tables()
    for name in ("estimates", "differences"):
        assert pd.api.types.is_float_dtype(tables[name]["ci_low"]) and pd.api.types.is_float_dtype(tables[name]["ci_high"])
    assert list(tables["estimates"]["method"][:3]) == ["ppi", "human_only", "judge_only"]


def test_which_judge_and_what_exists():
    df = _table(n_items=8, n_human=3)
    two = pd.concat([df, df[df["rater"] == "judge@t"].assign(rater="other@t")])
    with pytest.raises(JudgelabError, match="several judges"):
        human_estimates(two)
    assert human_estimates(two, judge="other@t").judge == "other@t"
    with pytest.raises(JudgelabError, match="no ratings by judge 'nope'"):
        human_estimates(two, judge="nope")
    with pytest.raises(JudgelabError, match="no human ratings"):
        human_estimates(df[df["rater"] == "judge@t"])
    with pytest.raises(JudgelabError, match="no judge ratings"):
        human_estimates(df[df["rater"] != "judge@t"])
    with pytest.raises(JudgelabError, match="criterion 'x'"):
        human_estimates(df, criteria=["x"])
    with pytest.raises(JudgelabError, match="unknown system 'Z'"):
        human_estimates(df, systems=["A", "Z"])


def test_sampling_design_notes():
    df = _table(n_items=8, n_human=3)
    assert "not drawn uniformly" in human_estimates(df, uniform_sample=False).notes[0]
    assert human_estimates(df, uniform_sample=True).notes == ()
    assert "uniform random sample" in human_estimates(df).notes[0]


# -- small samples: the t interval by default, the normal one on request, the planner's valid_from ---------------


def test_default_is_the_t_interval_and_normal_is_ppi_pythons():
    df = _table()
    t = human_estimates(df)
    normal = human_estimates(df, quantile="normal")
    assert t.quantile == "t" and normal.quantile == "normal" and t.to_dict()["quantile"] == "t"
    for mt, mn in zip(t.means, normal.means):
        y, yhat, yu = _direct(df, mt.system)
        assert (mt.result.ci_low, mt.result.ci_high) == pytest.approx((ppi_mean(y, yhat, yu).ci_low, ppi_mean(y, yhat, yu).ci_high))
        expected = ppi_mean(y, yhat, yu, quantile="normal")
        assert (mn.result.ci_low, mn.result.ci_high) == pytest.approx((expected.ci_low, expected.ci_high))
        assert mt.result.half_width > mn.result.half_width  # 15 human-rated items: t_{13} > z
        # the normal interval is trusted from 50 human-rated items; with 15 the result says so
        assert "fewer than the 50" in mn.note and "fewer than" not in mt.note
    rows = t.tables()["estimates"]
    assert list(rows.loc[rows["method"] == "human_only", "df"]) == [14.0, 14.0]
    assert (t.tables()["differences"]["df"].iloc[0] >= 13)


def test_too_few_human_items_for_the_t_interval_say_why():
    df = _table(n_items=12, n_human=2, systems=("A", "B"))
    est = human_estimates(df)
    assert all(m.result is None and "t interval needs at least 3 human-rated items" in m.note and "have 2 and 10" in m.note
               for m in est.means)
    assert est.differences[0].result is None
    normal = human_estimates(df, quantile="normal")  # ppi-python's formula runs at n = 2, with the caveat
    assert all(m.result is not None and "2 human-rated items, fewer than the 50" in m.note for m in normal.means)
    with pytest.raises(JudgelabError, match="unknown interval 'z'"):
        human_estimates(df, quantile="z")


def test_zero_width_estimates_have_no_interval():
    df = _table(n_items=20, n_human=6, systems=("A",))
    df.loc[df["rater"].str.startswith("human:"), "score"] = 4.0  # every person says 4
    df.loc[~df["rater"].str.startswith("human:"), "score"] = 3.0  # the judge always 3
    (m,) = human_estimates(df).means
    assert m.result.estimate == 4.0 and np.isnan(m.result.ci_low) and "zero standard error" in m.note
    row = m.rows()[0]
    assert np.isnan(row["ci_low"]) and "zero standard error" in row["note"]
    assert "every human rating is the same" in m.rows()[1]["note"]


def test_planner_says_from_which_n_the_interval_holds():
    df = _table()
    est = human_estimates(df, target_half_width=1.5)  # a wide target: a handful of items would reach it
    plan = est.plans[0]
    assert plan.plan.valid_from >= 5 and plan.plan.n == max(plan.plan.n_for_width, plan.plan.valid_from)
    assert plan.plan.n_for_width < plan.plan.valid_from and "keeps its level only from" in plan.note
    row = est.tables()["plan"].iloc[0]
    assert row["valid_from"] == plan.plan.valid_from and row["n_needed"] == plan.plan.n
    normal = human_estimates(df, target_half_width=1.5, quantile="normal").plans[0]
    assert normal.plan.valid_from >= 50 and normal.plan.n >= 50
