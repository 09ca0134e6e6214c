"""Analysis entry points return frozen dataclasses with named fields (STYLE.md §1), not bare tuples or dicts."""
from __future__ import annotations

import dataclasses

import krippendorff
import numpy as np
import pandas as pd
import pytest

from judgelab.rate import FailureReport, failure_lines, failure_report
from judgelab.recipes.chiang_lee import sanity_check
from judgelab.recipes.common import RecipeResult, SanityCheck
from judgelab.summary import AnnotatorAgreement, annotator_agreement


def test_annotator_agreement_is_named_and_unpacks():
    m = np.array([[1, 2, 3, 3, 5], [1, 2, 3, 4, 5], [1, 2, 2, 4, 5]], dtype=float)
    iaa = annotator_agreement(m)
    assert isinstance(iaa, AnnotatorAgreement) and iaa.level == "interval"
    assert iaa.alpha == pytest.approx(krippendorff.alpha(reliability_data=m, level_of_measurement="interval"))
    assert iaa.exact_agreement == pytest.approx(3 / 5)
    alpha, agree = iaa
    assert (alpha, agree) == (iaa.alpha, iaa.exact_agreement)
    assert iaa.to_dict() == {"alpha": iaa.alpha, "exact_agreement": 0.6, "level": "interval"}
    one = annotator_agreement(m[:1], "ordinal")
    assert np.isnan(one.alpha) and np.isnan(one.exact_agreement) and one.level == "ordinal"
    with pytest.raises(dataclasses.FrozenInstanceError):
        iaa.alpha = 0.0  # type: ignore[misc]


def _meaning(scores):
    return pd.DataFrame({"system": ["identical"] * len(scores) + ["benign"], "status": "ok",
                         "score": [*scores, 1.0]})


def test_sanity_check_is_a_typed_result_in_the_recipe_result(tmp_path):
    ok = sanity_check(_meaning([5.0, 5.0, 4.0, 5.0]))
    assert isinstance(ok, SanityCheck) and ok.passed and ok.mean == pytest.approx(4.75)
    assert ok.share_top == pytest.approx(0.75) and ok.message.startswith("sanity check passed")
    bad = sanity_check(_meaning([3.0, 4.0]))
    assert not bad.passed and bad.message.startswith("SANITY CHECK FAILED")
    none = sanity_check(_meaning([])[lambda d: d["system"] != "identical"])
    assert not none.passed and np.isnan(none.mean) and none.message == "no identical pair was rated"
    result = RecipeResult(tmp_path, {"story rating": "r"}, sanity=ok)
    assert result.to_dict()["sanity"] == {"passed": True, "mean": 4.75, "share_top": 0.75, "message": ok.message}


def test_failure_report_counts_and_examples():
    ratings = pd.DataFrame({"status": ["ok", "no_rating", "ok", "refusal", "no_rating"],
                            "raw": ["4", "dunno", "5", "I refuse", None]})
    report = failure_report(ratings, examples=2)
    assert isinstance(report, FailureReport)
    assert report.counts == {"no_rating": 2, "ok": 2, "refusal": 1} and report.total == 5 and report.failed == 3
    assert report.examples == (("no_rating", "dunno"), ("refusal", "I refuse"))
    assert report.to_dict() == {"statuses": report.counts, "examples": [["no_rating", "dunno"], ["refusal", "I refuse"]]}
    assert failure_lines(ratings)[0] == "statuses of 5 judgments: no_rating 2, ok 2, refusal 1 — 3 failed"
    assert failure_lines(ratings[ratings["status"] == "ok"]) == ["statuses of 2 judgments: ok 2"]


@pytest.mark.parametrize("name", ["judgelab.summary", "judgelab.pairwise", "judgelab.stats.scales",
                                  "judgelab.stats.coefficient", "judgelab.stats.correlation"])
def test_docstring_examples(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_bradley_terry_is_the_same_in_every_process():
    """The estimate does not depend on the hash order of the item names (PYTHONHASHSEED)."""
    import subprocess
    import sys

    code = ("from judgelab.pairwise import bradley_terry as b; "
            "c=[(f'x{i}', f'x{(i*7)%13}', (-1)**i) for i in range(40) if i != (i*7)%13]; "
            "print(repr(sorted(b(c).scores.items())))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(outs) == 1
