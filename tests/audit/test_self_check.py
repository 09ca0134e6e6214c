"""The planted-bias self-check: the audit finds moderate planted biases, its intervals cover the planted
values, and without a planted bias it rarely raises a false alarm (judgelab.testing.bias_simulator).

The fast test runs 60 studies of each kind (Monte-Carlo standard error 2.8 points at 95%); its
bounds (at most 8 misses or false alarms of 60) are 3.5 standard errors from the nominal rates, so
a correct audit fails each with probability 0.3% (binomial). The slow one runs the issue's check at
200 items with 1000 studies of each kind (standard error 0.7 points at 95%), where its thresholds
(detection >= 80%, coverage 92-97.5%, false alarms <= 6%) are meaningful; it takes about 5 minutes.
"""
from __future__ import annotations

import numpy as np
import pytest

from judgelab.audit import self_check
from judgelab.testing.bias_simulator import MODERATE, NONE, simulate_study


def test_simulated_truth_is_what_the_model_implies():
    """The planted effects are the population values of the audit's estimands (checked on one huge study)."""
    s = simulate_study(40000, MODERATE, seed=5)
    r = s.ratings.pivot_table(index="item_id", columns="rater", values="score")
    humans = r[["human:1", "human:2", "human:3"]].mean(axis=1)
    assert (r["sim-judge"] - humans).mean() == pytest.approx(s.truth["leniency"], abs=0.01)
    first = (s.pairs["choice"] == "first").mean() - 0.5
    assert first == pytest.approx(s.truth["position_first"], abs=0.01)
    assert simulate_study(100, NONE, seed=1).truth == {"leniency": 0.0, "length": 0.0, "self_preference": 0.0,
                                                       "position_first": 0.0}


def test_self_check_fast():
    result = self_check(n_items=200, n_studies=60, seed=7, n_resamples=499)
    table = result.to_frame().set_index("bias")
    assert list(table.index) == ["leniency", "length", "self_preference", "position_first"]
    for bias, row in table.iterrows():
        assert row["detected"] >= 0.8, bias
        assert row["coverage"] >= 52 / 60, bias
        assert row["false_alarms"] <= 8 / 60, bias
        assert abs(row["mean_estimate"] - row["planted"]) < 0.1 * row["planted"] + 0.01, bias  # about unbiased
    assert np.isclose(table["detected_mcse"], np.sqrt(table["detected"] * (1 - table["detected"]) / 60)).all()


@pytest.mark.slow
def test_self_check_meets_the_issue_thresholds():
    """Issue 22: detection >= 80%, coverage 92-97.5%, false alarms <= 6% per bias (1000 studies each)."""
    result = self_check(n_items=200, n_studies=1000, seed=100000, n_resamples=999)
    for row in result.rows:
        assert row["detected"] >= 0.8, row
        assert 0.92 <= row["coverage"] <= 0.975, row
        assert row["false_alarms"] <= 0.06, row
