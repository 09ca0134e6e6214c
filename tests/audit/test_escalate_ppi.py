"""PPI with the escalation's hybrid predictions (judge on kept items, people on escalated ones): still
unbiased when PPI's labelled set is a random sample drawn apart from the escalation; biased when the
escalated items are used as the labelled set. Simulation, and ``human-estimate --escalation``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from judgelab.escalate import hybrid_ratings
from judgelab.stats.ppi import ppi_mean
from judgelab.stats.selective import calibrate_selective, select

MEAN = 3.0


def _items(rng, n):
    """Human rating y (mean 3), judge rating with a bias and noise that grow with the item's difficulty d;
    the judge's confidence is -d plus noise (informative, not perfect)."""
    d = rng.random(n)
    y = MEAN + rng.normal(0, 0.8, n)
    judge = y + 1.0 * d + rng.normal(0, 0.2 + 1.2 * d)
    return y, judge, -d + rng.normal(0, 0.1, n)


def test_hybrid_predictions_keep_ppi_coverage_and_escalated_items_as_labels_do_not():
    rng = np.random.default_rng(0)
    reps, N, n = 600, 1000, 40
    cover_hybrid, cover_naive, width_hybrid, width_judge = [], [], [], []
    for _ in range(reps):
        y_cal, j_cal, c_cal = _items(rng, 300)  # a separate human-rated calibration set
        th = calibrate_selective(c_cal, j_cal, y_cal, alpha=0.2, delta=0.1)
        y, judge, c = _items(rng, N)
        keep = select(th, c)
        people = y + rng.normal(0, 0.3, N)  # the annotators' ratings of the escalated items
        f = np.where(keep, judge, people)
        lab = np.zeros(N, bool)
        lab[rng.choice(N, n, replace=False)] = True  # PPI's labelled set: uniform random
        r = ppi_mean(y[lab], f[lab], f[~lab])
        cover_hybrid.append(r.ci_low <= MEAN <= r.ci_high)
        width_hybrid.append(r.ci_high - r.ci_low)
        rj = ppi_mean(y[lab], judge[lab], judge[~lab])
        width_judge.append(rj.ci_high - rj.ci_low)
        if (~keep).sum() >= 10 and keep.any():  # wrong: the escalated items as the labelled set
            rn = ppi_mean(y[~keep], judge[~keep], judge[keep])
            cover_naive.append(rn.ci_low <= MEAN <= rn.ci_high)
    se = np.sqrt(0.95 * 0.05 / reps)
    assert abs(np.mean(cover_hybrid) - 0.95) <= 3 * se
    assert np.mean(width_hybrid) < np.mean(width_judge)  # people's ratings on escalated items help
    assert len(cover_naive) > reps / 2 and np.mean(cover_naive) < 0.8


def test_hybrid_ratings_replace_escalated_items_rated_by_people():
    dec = pd.DataFrame({"system": "A", "item_id": ["1", "2", "3"], "criterion": "q", "rater": "judge",
                        "rating": [4.0, 2.0, 5.0], "confidence": [1.0, 0.0, 0.1], "decision": ["keep", "escalate",
                                                                                                 "escalate"]})
    people = pd.DataFrame({"item_id": ["2", "2", "1"], "system": "A", "group": None, "criterion": "q",
                           "rater": ["human:a", "human:b", "human:a"], "sample": 0, "score": [3.0, 4.0, 1.0],
                           "status": "ok"})
    rows, notes = hybrid_ratings(dec, people)
    assert rows.set_index("item_id")["score"].to_dict() == {"1": 4.0, "2": 3.5, "3": 5.0}
    assert set(rows["rater"]) == {"hybrid:judge"}
    assert "1 escalated items not rated yet keep the judge's rating" in notes[0]


def test_human_estimate_with_escalation(tmp_path):
    rng = np.random.default_rng(2)
    N = 200
    y, judge, c = _items(rng, N)
    keep = c > np.quantile(c, 0.3)
    ids = [f"i{k}" for k in range(N)]
    pd.DataFrame({"system": "A", "item_id": ids, "criterion": "q", "rater": "judge", "rating": judge, "confidence": c,
                  "decision": np.where(keep, "keep", "escalate")}).to_csv(tmp_path / "escalation.csv", index=False)
    esc = [i for i, k in zip(ids, keep) if not k]
    pd.DataFrame({"item_id": esc, "system": "A", "criterion": "q", "rater": "a",
                  "score": y[~keep]}).to_csv(tmp_path / "escalated.csv", index=False)
    lab = rng.choice(N, 30, replace=False)
    pd.DataFrame({"item_id": [ids[k] for k in lab], "system": "A", "criterion": "q", "rater": "b",
                  "score": y[lab]}).to_csv(tmp_path / "random.csv", index=False)
    out = tmp_path / "est"
    r = run_cli("human-estimate", "--escalation", str(tmp_path / "escalation.csv"), "--escalated-human",
                str(tmp_path / "escalated.csv"), "--human", str(tmp_path / "random.csv"), "--out", str(out))
    assert r.returncode == 0, r.stderr
    est = pd.read_csv(out / "estimates.csv")
    ppi = est[est["method"].str.contains("ppi", case=False)].iloc[0]
    f = np.where(keep, judge, y)
    mask = np.zeros(N, bool)
    mask[lab] = True
    expected = ppi_mean(y[mask], f[mask], f[~mask])
    assert ppi["estimate"] == pytest.approx(expected.estimate)
    assert "escalated items with the people's rating" in (out / "README.md").read_text()
    r = run_cli("human-estimate", "--escalation", str(tmp_path / "escalation.csv"), "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "random sample" in r.stderr and not (tmp_path / "x").exists()


def test_an_escalated_item_without_any_rating_is_counted_apart():
    """An item escalated because every judgment failed (no rating) and not yet rated by people has no
    prediction at all: the note says it is left out, never that it 'keeps the judge's rating'."""
    dec = pd.DataFrame({"system": "A", "item_id": ["1", "2", "3"], "criterion": "q", "rater": "judge",
                        "rating": [4.0, np.nan, 5.0], "confidence": [1.0, np.nan, 0.1],
                        "decision": ["keep", "escalate", "escalate"]})
    rows, notes = hybrid_ratings(dec)
    assert rows.set_index("item_id")["status"].to_dict() == {"1": "ok", "2": "missing", "3": "ok"}
    assert "1 escalated items not rated yet keep the judge's rating" in notes[0]
    assert "1 escalated items without any rating" in notes[0] and "left out" in notes[0]
