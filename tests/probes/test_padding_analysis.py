"""The padding probe's statistics: checked against scipy/judgelab per row, paired by labels, and by simulation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.probes.padding import padding_effects, rise_statistics
from judgelab.stats.describe import mean_interval
from judgelab.stats.tests_twosample import wilcoxon


def test_rise_statistics_equal_the_one_row_implementations():
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 3, size=(40, 25)).astype(float)
    d[0] = 0.0          # no change at all: p = 1, no interval
    d[1] = 1.0          # the same change everywhere: p small, no interval
    d[2, :5] = 0.0
    r = rise_statistics(d)
    for k, row in enumerate(d):
        w = wilcoxon(row, np.zeros_like(row), alternative="greater")
        m = mean_interval(row)
        assert r.pvalue[k] == pytest.approx(w.pvalue, rel=1e-12)
        assert r.n_zero[k] == w.n_zero
        assert r.mean[k] == pytest.approx(m.mean)
        if np.isnan(m.low):
            assert np.isnan(r.ci_low[k]) and np.isnan(r.ci_high[k])
        else:
            assert (r.ci_low[k], r.ci_high[k]) == pytest.approx((m.low, m.high))
    assert r.pvalue[0] == 1.0 and r.pvalue[1] < 1e-4


def _study(rng, n_studies, n_items, shift):
    """A judge scoring 1-5 (rounded latent quality + noise); the padded copy gets ``shift`` more."""
    quality = rng.normal(3, 0.8, size=(n_studies, n_items))
    original = np.clip(np.round(quality + rng.normal(0, 0.6, quality.shape)), 1, 5)
    padded = np.clip(np.round(quality + shift + rng.normal(0, 0.6, quality.shape)), 1, 5)
    return padded - original


def test_neutral_judge_false_alarms_and_coverage_by_simulation():
    rng = np.random.default_rng(20261124)
    studies = 4000
    r = rise_statistics(_study(rng, studies, 30, 0.0))
    false_alarm = float((r.pvalue < 0.05).mean())
    se = np.sqrt(0.05 * 0.95 / studies)
    assert false_alarm <= 0.05 + 3 * se, false_alarm  # measured 0.0505 (coverage 0.949) with this seed
    defined = ~np.isnan(r.ci_low)
    covers = float(((r.ci_low <= 0) & (0 <= r.ci_high))[defined].mean())
    assert 0.93 <= covers <= 0.97, covers


def test_planted_rise_is_detected_by_simulation():
    rng = np.random.default_rng(5)
    r = rise_statistics(_study(rng, 2000, 30, 0.5))
    assert float((r.pvalue < 0.05).mean()) > 0.8
    covers = ((r.ci_low <= 0.5) & (0.5 <= r.ci_high)).mean()  # the rounded scale shrinks the planted shift a little
    assert covers > 0.85


def _ratings(scores):
    return pd.DataFrame([{"item_id": i, "system": s, "group": g, "criterion": "q", "rater": "j", "sample": 0,
                          "score": v, "status": "ok"} for (i, s, g), v in scores.items()])


def _design(keys, padding="filler-50"):
    return pd.DataFrame([{"item_id": i, "system": s, "padding": padding, "padded_system": f"{s}+pad:{padding}",
                          "words": 10, "added_words": 5, "changed": True} for i, s in keys])


def test_pairs_by_item_and_system_labels_never_by_position():
    scores = {}
    for k in range(12):
        scores[(f"i{k}", "A", f"g{k}")] = 2.0 + k % 3
        scores[(f"i{k}", "A+pad:filler-50", f"g{k}")] = 3.0 + k % 3    # A's copies: +1
        scores[(f"i{k}", "B", f"g{k}")] = 4.0 - k % 2
        scores[(f"i{k}", "B+pad:filler-50", f"g{k}")] = 4.0 - k % 2    # B's copies: no change
    keys = [(f"i{k}", s) for k in range(12) for s in ("A", "B")]
    ratings, design = _ratings(scores), _design(keys)
    report = padding_effects(ratings, design[design["system"] == "A"])
    assert report.effects[0].mean_change == 1.0 and report.effects[0].rises
    report_b = padding_effects(ratings, design[design["system"] == "B"])
    assert report_b.effects[0].mean_change == 0.0 and not report_b.effects[0].rises
    shuffled = padding_effects(ratings.sample(frac=1, random_state=1), design.sample(frac=1, random_state=2))
    both = padding_effects(ratings, design)
    assert shuffled.to_frame().equals(both.to_frame())
    assert both.effects[0].mean_change == pytest.approx(0.5) and both.effects[0].n == 24
    changes = both.changes.set_index(["item_id", "system"])["change"]
    assert (changes.xs("A", level="system") == 1).all() and (changes.xs("B", level="system") == 0).all()
    assert "groups" in both.effects[0].note  # two pairs per group: said


def test_failed_and_missing_copies_are_left_out_and_counted():
    scores = {(f"i{k}", s, f"g{k}"): 3.0 + (s != "A") for k in range(10) for s in ("A", "A+pad:filler-50")}
    del scores[("i3", "A+pad:filler-50", "g3")]
    ratings = _ratings(scores)
    ratings.loc[(ratings["item_id"] == "i4") & (ratings["system"] == "A"), "status"] = "error"
    design = _design([(f"i{k}", "A") for k in range(10)])
    design.loc[design["item_id"] == "i5", "changed"] = False
    e = padding_effects(ratings, design).effects[0]
    assert (e.n, e.left_out) == (7, 3) and "3 padded copies left out" in e.note
    assert "only 7 pairs" in e.note and e.line.endswith("it rewards length")


def test_a_judge_that_penalises_padding_is_not_said_to_reward_it():
    rng = np.random.default_rng(1)
    scores = {}
    for k in range(20):
        base = float(rng.integers(2, 5))
        scores[(f"i{k}", "A", f"g{k}")] = base
        scores[(f"i{k}", "A+pad:filler-50", f"g{k}")] = base - float(rng.integers(0, 2)) - 0.5
    e = padding_effects(_ratings(scores), _design([(f"i{k}", "A") for k in range(20)])).effects[0]
    assert not e.rises and e.ci_high < 0 and e.pvalue > 0.99
    assert e.line.endswith("it penalises this padding")
