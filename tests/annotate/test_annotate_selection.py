"""Which items people rate and in which order: pure, seeded, reproducible."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from judgelab.annotate.selection import (
    SampleSpec,
    allocate,
    annotator_order,
    disagreement_scores,
    parse_sample_spec,
    select_disagreement,
    select_ids,
    select_items,
    select_random,
)
from judgelab.errors import JudgelabError

KEYS = [(s, f"i{k:02d}") for s in ("A", "B", "C") for k in range({"A": 20, "B": 10, "C": 6}[s])]


@pytest.mark.parametrize("text,expected", [
    (None, SampleSpec("all")), ("all", SampleSpec("all")), ("random:30", SampleSpec("random", n=30)),
    ("disagreement:5", SampleSpec("disagreement", n=5)), ("ids:my ids.txt", SampleSpec("ids", path="my ids.txt")),
])
def test_parse_sample_spec(text, expected):
    assert parse_sample_spec(text) == expected
    assert str(parse_sample_spec(str(expected))) == str(expected)


@pytest.mark.parametrize("text,needle", [
    ("random", "random:N"), ("random:x", "whole number"), ("random:0", "at least 1"), ("first:3", "random:N"),
    ("disagreement:-2", "at least 1"), ("ids:", "ids:FILE"),
])
def test_bad_sample_specs_are_one_clear_error(text, needle):
    with pytest.raises(JudgelabError, match=needle):
        parse_sample_spec(text)


def test_random_is_uniform_without_replacement_and_reproducible():
    a = select_random(KEYS, 12, seed=7)
    assert len(set(a.keys)) == 12 and set(a.keys) <= set(KEYS) and a.uniform
    assert select_random(KEYS, 12, seed=7).keys == a.keys
    assert select_random(list(reversed(KEYS)), 12, seed=7).keys == a.keys  # file order does not matter
    assert select_random(KEYS, 12, seed=8).keys != a.keys
    # Uniform: over many seeds every item is chosen about n/N of the time.
    counts = Counter(k for seed in range(3000) for k in select_random(KEYS, 12, seed).keys)
    shares = np.array([counts[k] / 3000 for k in KEYS])
    assert np.allclose(shares, 12 / len(KEYS), atol=0.035)


def test_stratified_random_allocates_in_proportion():
    sel = select_random(KEYS, 18, seed=1, stratify=True)
    per_system = Counter(s for s, _ in sel.keys)
    assert per_system == {"A": 10, "B": 5, "C": 3} and sel.stratified
    assert select_random(KEYS, 18, seed=1, stratify=True).keys == sel.keys
    # Uniform within a system.
    counts = Counter(k for seed in range(2000) for k in select_random(KEYS, 18, seed, stratify=True).keys if k[0] == "B")
    assert np.allclose([counts[("B", f"i{k:02d}")] / 2000 for k in range(10)], 0.5, atol=0.05)


def test_allocate_largest_remainder():
    assert allocate({"a": 10, "b": 5}, 6) == {"a": 4, "b": 2}
    assert allocate({"a": 1, "b": 1, "c": 1}, 2) == {"a": 1, "b": 1, "c": 0}  # ties by name
    assert sum(allocate({"x": 7, "y": 13, "z": 3}, 11).values()) == 11


def test_random_more_than_available_is_an_error():
    with pytest.raises(JudgelabError, match="more items than there are"):
        select_random(KEYS, 100, seed=0)


def test_ids_select_every_system_and_refuse_unknown_ids():
    sel = select_ids(KEYS, ["i01", "i03"])
    assert sel.keys == (("A", "i01"), ("A", "i03"), ("B", "i01"), ("B", "i03"), ("C", "i01"), ("C", "i03"))
    with pytest.raises(JudgelabError, match="'nope'"):
        select_ids(KEYS, ["i01", "nope"])


def test_ids_file(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("# chosen by hand\ni02\n\ni05\n", encoding="utf-8")
    sel = select_items(KEYS, parse_sample_spec(f"ids:{path}"))
    assert {i for _, i in sel.keys} == {"i02", "i05"}
    with pytest.raises(JudgelabError, match="not found"):
        select_items(KEYS, parse_sample_spec(f"ids:{tmp_path / 'missing.txt'}"))


def _ratings(rows):
    base = {"group": None, "status": "ok"}
    return pd.DataFrame([{**base, **dict(zip(("system", "item_id", "criterion", "rater", "sample", "score"), r))} for r in rows])


def test_disagreement_ranks_by_sample_variance_plus_squared_human_gap():
    rows = []
    # i1: samples 1 and 5 (variance 4); i2: samples 3, 3 (0) but a human said 5 (gap 2 → 4 + 0);
    # i3: samples 2, 4 (variance 1); i4: samples 3, 3 and no human (0).
    for item, samples in {"i1": (1, 5), "i2": (3, 3), "i3": (2, 4), "i4": (3, 3)}.items():
        for s, v in enumerate(samples):
            rows.append(("A", item, "q", "judge", s, v))
    rows.append(("A", "i2", "q", "human:ann", 0, 5))
    rows.append(("A", "i2", "q", "human:bob", 0, 5))
    scores = disagreement_scores(_ratings(rows))
    assert scores[("A", "i1")] == pytest.approx(4.0)
    assert scores[("A", "i2")] == pytest.approx(4.0)
    assert scores[("A", "i3")] == pytest.approx(1.0)
    assert scores[("A", "i4")] == pytest.approx(0.0)
    keys = [("A", f"i{k}") for k in range(1, 5)]
    sel = select_disagreement(keys, _ratings(rows), 3, seed=0)
    assert set(sel.keys[:2]) == {("A", "i1"), ("A", "i2")} and sel.keys[2] == ("A", "i3")
    assert sel.scores == pytest.approx((4.0, 4.0, 1.0)) and not sel.uniform
    # Ties are broken by the seed, reproducibly.
    orders = {select_disagreement(keys, _ratings(rows), 2, seed=s).keys for s in range(20)}
    assert orders == {(("A", "i1"), ("A", "i2")), (("A", "i2"), ("A", "i1"))}


def test_disagreement_needs_judge_ratings_with_spread():
    keys = [("A", "i1"), ("A", "i2")]
    with pytest.raises(JudgelabError, match="judgelab rate"):
        select_disagreement(keys, _ratings([("A", "i1", "q", "human:ann", 0, 3)]), 1, seed=0)
    one_sample = _ratings([("A", "i1", "q", "judge", 0, 3), ("A", "i2", "q", "judge", 0, 4)])
    with pytest.raises(JudgelabError, match="nothing to rank by"):
        select_disagreement(keys, one_sample, 1, seed=0)
    with pytest.raises(JudgelabError, match="rated only 2"):
        select_disagreement(keys + [("A", "i3")], one_sample, 3, seed=0)


def test_stratify_only_with_random():
    with pytest.raises(JudgelabError, match="random:N only"):
        select_items(KEYS, parse_sample_spec("all"), stratify=True)


def test_annotator_order_is_a_seeded_permutation_per_annotator():
    a = annotator_order(30, "alice", 1)
    assert sorted(a) == list(range(30))
    assert annotator_order(30, "alice", 1) == a
    assert annotator_order(30, "bob", 1) != a
    assert annotator_order(30, "alice", 2) != a
