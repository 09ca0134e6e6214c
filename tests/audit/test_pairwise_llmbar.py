"""The pairwise audit on LLMBar's own evaluator results (princeton-nlp/LLMBar, read where JUDGELAB_LLMBAR_REPO
says: a checkout or a bare git directory): for every result set whose verdicts are all "1" or "2", the share of
pairs whose winner flips with the order is exactly 1 minus LLMBar's published ``equal`` (positional agreement)."""
from __future__ import annotations

import os

import pytest

from judgelab.preference.llmbar_check import collect, published_counts
from judgelab.stats.pairwise_bias import pairwise_biases


def test_flips_are_one_minus_llmbar_published_equal():
    repo = os.environ.get("JUDGELAB_LLMBAR_REPO")
    if not repo:
        pytest.skip("set JUDGELAB_LLMBAR_REPO to a checkout or bare git dir of princeton-nlp/LLMBar")
    sets = collect(repo)
    effects, _ = pairwise_biases(sets.verdicts, n_resamples=0)
    flips = {(e.rater, e.criterion): e for e in effects if e.bias == "pairwise_flip"}
    assert set(flips) == set(sets.published) and len(flips) > 0
    for key, stats in sets.published.items():
        counts = published_counts(stats)
        e = flips[key]
        assert e.n == counts["n"], key
        assert round(e.estimate * e.n) == counts["n"] - counts["equal"], key
