"""The DHP sentence splitter stays the hand-written one; this pins why (see its docstring)."""
import json

import pytest
from conftest import SHARED_DATA

from judgelab.perturb.rules import split_sentences

SUMMEVAL = SHARED_DATA / "summeval" / "summeval_expert_means.jsonl"


@pytest.mark.skipif(not SUMMEVAL.exists(), reason=f"SummEval data not found at {SUMMEVAL}")
def test_tokenised_summeval_summaries_are_split_where_segtok_finds_one_sentence():
    segmenter = pytest.importorskip("segtok.segmenter")
    rows = [json.loads(line) for line in SUMMEVAL.read_text(encoding="utf-8").split("\n") if line.strip()]
    summaries = [r["summary"] for r in rows]
    ours = sum(len(split_sentences(s)) for s in summaries)
    theirs = sum(len([x for x in segmenter.split_single(s.strip()) if x.strip()]) for s in summaries)
    assert len(summaries) == 1600
    assert ours == 4896 and theirs < 1.1 * len(summaries)  # segtok leaves "word . Word" unsplit
