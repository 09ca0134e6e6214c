"""The Bradley–Terry leaderboard: ratings equal to an independent logistic fit, style covariates as Arena-Hard
counts them, systems without a finite rating named, seeded intervals."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from judgelab.preference.leaderboard import SCALE, leaderboard, style_features
from judgelab.preference.verdicts import normalise_verdicts

TRUE = {"a": 0.0, "b": 1.0, "c": -0.5, "d": 0.3}


def _verdicts(n: int = 400, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        s1, s2 = rng.choice(list(TRUE), 2, replace=False)
        p = 1 / (1 + math.exp(-(TRUE[s1] - TRUE[s2])))
        u = rng.random()
        choice = "first" if u < 0.9 * p else "tie" if u < 0.9 * p + 0.1 else "second"
        k = int(rng.integers(1, 6))
        rows.append({"rater": "j", "item_id": str(i // 2), "sample": i % 2, "first": s1, "second": s2, "choice": choice,
                     "first_text": "word " * int(rng.integers(5, 60)) + "\n- item" * k,
                     "second_text": "# Title\n" * int(rng.integers(0, 3)) + "**bold** text " * int(rng.integers(1, 20))})
    return normalise_verdicts(pd.DataFrame(rows))


def _sklearn_fit(v: pd.DataFrame, anchor: str, extra: np.ndarray | None = None) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    others = sorted((set(v["first"]) | set(v["second"])) - {anchor})
    x = np.zeros((len(v), len(others)))
    for j, s in enumerate(others):
        x[:, j] = (v["first"] == s).to_numpy() * 1.0 - (v["second"] == s).to_numpy()
    if extra is not None:
        x = np.column_stack([x, extra])
    y = v["choice"].map({"first": 1.0, "second": 0.0, "tie": 0.5}).to_numpy()
    xx, yy, ww = np.vstack([x, x]), np.r_[np.ones(len(y)), np.zeros(len(y))], np.r_[y, 1 - y]
    model = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10000).fit(xx, yy, sample_weight=ww)
    return model.coef_[0]


def test_ratings_equal_an_independent_logistic_fit_with_ties_as_half_wins():
    pytest.importorskip("sklearn")
    v = _verdicts()
    standings, coefs = leaderboard(v, "a", n_resamples=0)
    got = {s.system: s.rating for s in standings}
    expected = _sklearn_fit(v, "a")
    assert got["a"] == 1000 and coefs == {}
    for system, beta in zip(["b", "c", "d"], expected):
        assert got[system] == pytest.approx(1000 + SCALE * beta, abs=1e-4)
    assert [s.rank for s in standings] == [1, 2, 3, 4]
    assert [s.rating for s in standings] == sorted(got.values(), reverse=True)


def test_style_controlled_ratings_equal_the_same_fit_with_arena_hard_covariates():
    pytest.importorskip("sklearn")
    v = _verdicts()
    x, names = style_features(v["first_text"].tolist(), v["second_text"].tolist())
    standings, coefs = leaderboard(v, "a", style_control=True, n_resamples=0)
    expected = _sklearn_fit(v, "a", x)
    assert names == ["length", "headers", "lists", "bold"]
    assert list(coefs["j|preference"].values()) == pytest.approx(list(expected[3:]), abs=1e-5)
    got = {s.system: s.rating for s in standings}
    assert got["b"] == pytest.approx(1000 + SCALE * expected[0], abs=1e-3)
    assert all(s.style_controlled for s in standings)


def test_style_features_by_hand():
    first = ["one two three\n# Head\n- a\n- b\n**x**", "```\n# not a header\n```\nplain words here", "x y",
             "- only\n- list", "**a** **b** c"]
    second = ["short", "a b c d e f", "## H2\n1. one\n2. two\n__u__ and **v**", "plain reply words", "# T\nsome text"]
    x, names = style_features(first, second)
    assert names == ["length", "headers", "lists", "bold"]
    words_a, words_b = np.array([10, 9, 2, 4, 3]), np.array([1, 6, 9, 3, 4])  # counted in the whole text
    counts = {"headers": ([1, 0, 0, 0, 0], [0, 0, 1, 0, 1]),  # the header inside the code block does not count
              "lists": ([2, 0, 0, 2, 0], [0, 0, 2, 0, 0]), "bold": ([1, 0, 0, 0, 2], [0, 0, 2, 0, 0])}
    raw = [(words_a - words_b) / (words_a + words_b)]
    for a, b in counts.values():
        da, db = np.array(a) / (words_a + 1), np.array(b) / (words_b + 1)
        raw.append((da - db) / (da + db + 1))
    for col, r in zip(x.T, raw):
        assert col == pytest.approx((r - r.mean()) / r.std(ddof=1))
    _, fewer = style_features(first[:2], second[:2])
    assert fewer == ["length"]  # two verdicts: every other covariate is a multiple of the first


def test_a_system_that_won_every_verdict_and_an_unconnected_one_have_no_rating():
    v = normalise_verdicts(pd.DataFrame({
        "rater": "j", "item_id": [str(i) for i in range(8)],
        "first": ["a", "b", "a", "b", "w", "w", "p", "p"], "second": ["b", "a", "b", "a", "a", "b", "q", "q"],
        "choice": ["first", "first", "tie", "tie", "first", "first", "first", "second"]}))
    standings, _ = leaderboard(v, "a", n_resamples=20)
    by = {s.system: s for s in standings}
    assert by["w"].rating is None and by["w"].note == "won every verdict: no finite rating"
    assert by["p"].rating is None and "not connected with the anchor 'a'" in by["p"].note
    assert by["b"].rating == pytest.approx(1000.0, abs=1e-6)  # a win, a loss and two ties against a (w left out)


def test_intervals_are_seeded_and_hold_the_estimate():
    v = _verdicts(200)
    one, _ = leaderboard(v, "a", n_resamples=50, seed=7)
    two, _ = leaderboard(v, "a", n_resamples=50, seed=7)
    other, _ = leaderboard(v, "a", n_resamples=50, seed=8)
    assert one == two and one != other
    assert all(s.ci_low <= s.rating <= s.ci_high for s in one)


def test_the_leaderboard_equals_the_nle_study_s_bradley_terry_fit():
    """Two fits of one model: the leaderboard's (maximum likelihood, anchored, room for style covariates) and
    pairwise.bradley_terry's (Hunter's MM, NLE's item scores) agree on every system's log-strength difference, up
    to the MM's pseudo-count (0.1 win per side of each pair met, which shrinks it a little toward 0)."""
    import numpy as np
    import pandas as pd

    from judgelab.pairwise import bradley_terry
    from judgelab.preference.leaderboard import SCALE, leaderboard
    from judgelab.preference.verdicts import normalise_verdicts

    rng = np.random.default_rng(5)
    strength = {"base": 0.0, "a": 0.8, "b": -0.5, "c": 0.3}
    rows = []
    for item in range(150):
        for x, y in [("base", "a"), ("base", "b"), ("base", "c"), ("a", "b"), ("b", "c")]:
            p = 1 / (1 + np.exp(-(strength[x] - strength[y])))
            u = rng.random()
            choice = "tie" if abs(u - p) < 0.05 else ("first" if u < p else "second")
            rows.append({"rater": "j", "item_id": str(item), "first": x, "second": y, "choice": choice})
    v = normalise_verdicts(pd.DataFrame(rows))
    board, _ = leaderboard(v, "base", n_resamples=0)
    ours = {s.system: (s.rating - 1000) / SCALE for s in board}
    outcome = {"first": 1, "second": -1, "tie": 0}
    mm = bradley_terry([(r["first"], r["second"], outcome[r["choice"]]) for r in rows], iterations=5000, tol=1e-13)
    theirs = {s: mm.scores[s] - mm.scores["base"] for s in strength}
    assert mm.converged
    for s in strength:
        assert abs(ours[s] - theirs[s]) < 5e-3, (s, ours[s], theirs[s])
    assert max(abs(ours[s]) for s in strength) > 0.3  # the systems differ: the check is not of zeros
