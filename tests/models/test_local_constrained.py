"""The embedded judge with its grammar (``--constrain``) on the demo's texts: no parse failure.

Slow: llama.cpp generates 28 answers (one demo reference and its six rule-based copies, four
criteria) at the demo's settings (dhp-summarization, temperature 0, 16 tokens). Without the
grammar the same calls end as ``truncated`` (the model restates the scale first; measured in
docs/audit.md), so this test fails if the grammar is not applied.
"""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


def test_the_grammar_leaves_no_parse_failure_on_the_demo(tmp_path):
    from judgelab.datasets.dhp_sources import demo_set, load_reference_items
    from judgelab.dhp.build import build_perturbed
    from judgelab.dhp.task import load_task
    from judgelab.models import Sampling
    from judgelab.run import RunSpec, run_spec
    from judgelab.store import Store

    task = load_task("summarization")
    items, _ = build_perturbed(load_reference_items(demo_set(task.name), limit=1), task, 0, None, None)
    spec = RunSpec(judge="local", template=task.template.name, samples=1, score="parsed", constrain=True,
                   sampling=Sampling(temperature=0.0, max_tokens=16))
    with Store(tmp_path / "s.sqlite") as store:
        stats = run_spec(spec, items, store, template=task.template)
        ratings = store.ratings()
    assert stats.rater.endswith("+constrained")
    assert len(ratings) == len(items) * 4 == 28
    assert stats.statuses == {"ok": 28}, stats.statuses
    assert ratings["score"].isin([1.0, 2.0, 3.0, 4.0, 5.0]).all()
    assert ratings["raw"].str.strip().isin(["1", "2", "3", "4", "5"]).all()  # exactly what the grammar admits
