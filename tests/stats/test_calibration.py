"""judgelab.stats.calibration against scikit-learn (reliability curve, Brier) and a hand-computed ECE;
calibrated and overconfident judges in simulation."""
from __future__ import annotations

import numpy as np
import pytest

from judgelab.errors import JudgelabError
from judgelab.stats.calibration import calibration


def test_bins_and_brier_match_scikit_learn():
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    rng = np.random.default_rng(0)
    p = rng.random(500)
    y = (rng.random(500) < p ** 1.5).astype(int)
    r = calibration(p, y, n_bins=10, n_resamples=0)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="uniform")
    bins = r.to_frame()
    assert bins["agreement"].to_numpy() == pytest.approx(prob_true)
    assert bins["mean_confidence"].to_numpy() == pytest.approx(prob_pred)
    assert r.brier == pytest.approx(brier_score_loss(y, p))
    ece = sum(n / 500 * abs(a - c) for n, a, c in zip(bins["n"], bins["agreement"], bins["mean_confidence"]))
    assert r.ece == pytest.approx(ece)


def test_calibrated_and_overconfident_judges():
    rng = np.random.default_rng(1)
    p = rng.random(4000)
    calibrated = calibration(p, rng.random(4000) < p, n_resamples=300)
    over = calibration(p, rng.random(4000) < 0.5 + 0.4 * (p - 0.5), n_resamples=300)
    assert calibrated.ece < 0.03 and calibrated.ece_ci_low < calibrated.ece < calibrated.ece_ci_high
    assert over.ece_ci_low > calibrated.ece_ci_high  # an overconfident judge is told apart
    assert over.brier > calibrated.brier


def test_clusters_and_refusals():
    r = calibration([0.9, 0.8, 0.3, 0.6] * 10, [1, 1, 0, 0] * 10, clusters=np.repeat(np.arange(10), 4),
                    n_resamples=200)
    assert r.n == 40 and r.n_clusters == 10 and "items per bin" in r.note
    for args, message in [(([0.5, 1.2], [1, 0]), "probability"), (([0.5, 0.2], [1, 2]), "0 or 1"),
                          (([0.5], [1, 0]), "equally long")]:
        with pytest.raises(JudgelabError, match=message):
            calibration(*args)
