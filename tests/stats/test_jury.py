"""judgelab.stats.jury: combinations by hand, the cross-validation's no-leak promise, recovered weights,
and the jury-vs-best-judge difference."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.errors import JudgelabError
from judgelab.ratings import combine
from judgelab.jury_agreement import jury_vs_judges
from judgelab.stats.jury import jury


def _tidy(scores: dict[str, np.ndarray], systems: int = 4) -> pd.DataFrame:
    """Raters → scores over items ``g<k>`` × systems ``s<j>`` (group = the item, as HANNA's story prompts)."""
    frames = []
    for rater, v in scores.items():
        n = len(v)
        frames.append(pd.DataFrame({"item_id": [f"g{i // systems}" for i in range(n)],
                                    "system": [f"s{i % systems}" for i in range(n)],
                                    "group": [f"g{i // systems}" for i in range(n)], "criterion": "q",
                                    "rater": rater, "sample": 0, "score": v, "status": "ok"}))
    return pd.concat(frames, ignore_index=True)


def _jury_scores(j, method):
    r = j.ratings[j.ratings["rater"] == f"jury:{method}"]
    return r.set_index(["system", "item_id"])["score"]


def test_mean_median_majority_by_hand():
    df = _tidy({"a": np.array([1.0, 2, 5, 4]), "b": np.array([2.0, 2, 4, 4]), "c": np.array([2.4, 4.6, 1, 3.5]),
                "human:1": np.array([1.0, 2, 3, 4])})
    j = jury(df, methods=("mean", "median", "majority"))
    key = [("s0", "g0"), ("s1", "g0"), ("s2", "g0"), ("s3", "g0")]
    assert _jury_scores(j, "mean").loc[key].to_numpy() == pytest.approx([5.4 / 3, 8.6 / 3, 10 / 3, 11.5 / 3])
    assert _jury_scores(j, "median").loc[key].to_numpy() == pytest.approx([2, 2, 4, 4])
    # item s2: points 5, 4, 1 all tied once: the one closest to the mean 3.33 is 4; s3: 4, 4, 4 (3.5 rounds up)
    assert _jury_scores(j, "majority").loc[key].to_numpy() == pytest.approx([2, 2, 4, 4])
    assert set(j.judges) == {"a", "b", "c"}


def _simulated(n_items=60, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(3, 1, n_items * 4)
    judges = {f"j{k}": q + rng.normal(0, 0.8, q.size) + k * 0.3 for k in range(3)}
    humans = {f"human:{r}": q + rng.normal(0, 0.5, q.size) for r in range(2)}
    return _tidy({**judges, **humans}), q


def test_weighted_jury_no_item_sets_its_own_weight():
    """Changing one item's human ratings changes no jury rating of that item (its fold's weights were
    learned without it), but does change the ratings of items in other folds."""
    df, _ = _simulated()
    before = _jury_scores(jury(df, methods=("weighted",), folds=5, seed=1), "weighted")
    changed = df.copy()
    hit = changed["rater"].str.startswith("human") & (changed["item_id"] == "g7")
    changed.loc[hit, "score"] = changed.loc[hit, "score"] + 10
    after = _jury_scores(jury(changed, methods=("weighted",), folds=5, seed=1), "weighted")
    own = before.index.get_level_values("item_id") == "g7"
    assert (before[own] == after[own]).all()
    assert (before[~own] != after[~own]).sum() > 0.5 * (~own).sum()  # the other folds learned from it


def test_weighted_jury_recovers_the_planted_combination():
    rng = np.random.default_rng(2)
    n = 400
    a, b, c = rng.normal(3, 1, n), rng.normal(3, 1, n), rng.normal(3, 1, n)
    human = 0.5 + 0.6 * a + 0.3 * b + rng.normal(0, 0.05, n)
    j = jury(_tidy({"a": a, "b": b, "c": c, "human:1": human}), methods=("weighted",))
    w = j.weights[j.weights["fold"] == "all"].set_index("judge")["weight"]
    assert w["a"] == pytest.approx(0.6, abs=0.02) and w["b"] == pytest.approx(0.3, abs=0.02)
    assert w["c"] == pytest.approx(0.0, abs=0.02)  # non-negative: no weight for a judge that adds nothing


def test_jury_vs_judges_difference_is_jury_minus_best():
    df, _ = _simulated(80)
    j = jury(df, methods=("mean",))
    table = jury_vs_judges(combine([df, j.ratings]), ["jury:mean"], "group", n_resamples=199)
    r = table.set_index("rater")["r"]
    best = max(r[k] for k in ("j0", "j1", "j2"))
    (diff_label,) = [k for k in r.index if " - " in k]
    assert r[diff_label] == pytest.approx(r["jury:mean"] - best)
    row = table.set_index("rater").loc[diff_label]
    assert row["ci_low"] < row["r"] < row["ci_high"] and "best single judge" in row["note"]
    assert r["jury:mean"] > best  # three independent noisy judges: their mean is better than each
    overall = jury_vs_judges(combine([df, j.ratings]), ["jury:mean"], "overall", n_resamples=199)
    assert overall["level"].eq("overall").all() and overall["ci_low"].notna().all()


def test_jury_refusals():
    df, _ = _simulated(10)
    with pytest.raises(JudgelabError, match="two or more judges"):
        jury(df, judges=["j0"])
    with pytest.raises(JudgelabError, match="no judge 'x'"):
        jury(df, judges=["j0", "x"])
    with pytest.raises(JudgelabError, match="unknown method"):
        jury(df, methods=("vote",))
    with pytest.raises(JudgelabError, match="at least 10"):
        jury(df[df["item_id"].isin(["g0", "g1", "g2"])], methods=("weighted",))
