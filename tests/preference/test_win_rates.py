"""Win rates against a baseline (AlpacaEval's quantities) and the length-controlled win rate."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from alpaca_fixture import annotation, write
from judgelab.errors import JudgelabError
from judgelab.preference.formats import read_verdicts
from judgelab.preference.length_control import length_controlled
from judgelab.preference.verdicts import normalise_verdicts
from judgelab.preference.win_rates import head_to_head, win_rates


def test_alpaca_eval_quantities_by_hand(tmp_path):
    # system preferred 2 (win), 1 (loss), 1.5 (draw), 0 (old draw), 1.75 (soft win), None (dropped), 5 (dropped)
    prefs = [2, 1, 1.5, 0, 1.75, None, 5]
    v = read_verdicts(write(tmp_path / "a.json", [annotation(i, "sys", p) for i, p in enumerate(prefs)]))
    (w,) = win_rates(v, "base", length_control=False)
    kept = np.array([1, 0, 0.5, 0.5, 0.75])
    assert (w.system, w.n_total, w.n_wins, w.n_wins_base, w.n_draws) == ("sys", 5, 2, 1, 2)
    assert w.win_rate == pytest.approx(100 * kept.mean(), abs=1e-12)
    assert w.standard_error == pytest.approx(100 * kept.std(ddof=1) / math.sqrt(5), abs=1e-12)
    assert w.discrete_win_rate == pytest.approx(100 * (2 + 2 / 2) / 5, abs=1e-12)


def test_either_order_is_turned_to_the_systems_side_and_each_verdict_counts():
    v = normalise_verdicts(pd.DataFrame({
        "rater": "j", "item_id": ["1", "1", "2", "2", "3"], "first": ["b", "x", "b", "x", "y"],
        "second": ["x", "b", "x", "b", "b"], "choice": ["second", "first", "first", "tie", "first"],
        "p_first": [np.nan, np.nan, np.nan, np.nan, 0.8]}))
    rates = {w.system: w for w in win_rates(v, "b", length_control=False)}
    assert rates["x"].win_rate == pytest.approx(100 * (1 + 1 + 0 + 0.5) / 4)
    assert (rates["x"].n_wins, rates["x"].n_wins_base, rates["x"].n_draws) == (2, 1, 1)
    assert rates["y"].win_rate == pytest.approx(80.0) and rates["y"].standard_error is None


def test_unknown_baseline_names_the_systems_and_no_judged_verdict_is_an_error():
    v = normalise_verdicts(pd.DataFrame({"rater": "j", "item_id": ["1", "2"], "first": ["a", "c"],
                                         "second": ["b", "b"], "choice": ["first", None]}))
    with pytest.raises(JudgelabError, match=r"baseline 'z' is not a system.*one of: a, b, c"):
        win_rates(v, "z")
    with pytest.raises(JudgelabError, match=r"no verdict with a choice compares a system with the baseline 'c'"):
        win_rates(v, "c")


def test_head_to_head_of_a_single_verdict_has_no_standard_error():
    assert head_to_head([0.25])["standard_error"] is None


def _lc_case(seed: int = 3, n: int = 400):
    rng = np.random.default_rng(seed)
    base_len = rng.integers(400, 800, n)
    sys_len = base_len + rng.integers(-300, 600, n)
    d = (sys_len - base_len) / np.std(sys_len - base_len, ddof=1)
    p = 1 / (1 + np.exp(-(-0.4 + 1.2 * np.tanh(d))))
    y = np.clip(p + rng.normal(0, 0.15, n), 0, 1)  # soft preferences
    return y, ["x" * k for k in sys_len], ["x" * k for k in base_len], d


def test_length_controlled_win_rate_equals_an_independent_glm_fit():
    sm = pytest.importorskip("statsmodels.api")
    y, sys_texts, base_texts, d = _lc_case()
    lc, coef, note = length_controlled(y, sys_texts, base_texts)
    fit = sm.GLM(y, np.column_stack([np.ones_like(y), np.tanh(d)]), family=sm.families.Binomial()).fit(tol=1e-12)
    assert note == ""
    assert lc == pytest.approx(100 / (1 + math.exp(-fit.params[0])), abs=1e-6)
    assert coef == pytest.approx(fit.params[1], abs=1e-6)


def test_length_control_without_texts_or_with_separated_preferences_says_why():
    assert length_controlled([1, 0, 1], [None, "a", "b"], ["a", "b", "c"])[2].startswith("no length control: the verdicts")
    lc, coef, note = length_controlled([1, 1, 0, 0], ["aaaa", "aaa", "a", "a"], ["aa", "aa", "aa", "aa"])
    assert (lc, coef) == (None, None) and "separated" in note


@pytest.mark.parametrize("name", ["judgelab.preference.win_rates", "judgelab.preference.length_control",
                                  "judgelab.preference.leaderboard", "judgelab.preference.formats.alpaca_eval"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
