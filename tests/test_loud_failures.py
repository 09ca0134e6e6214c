"""A run whose judge fails most judgments ends with exit status 3, in every command that judges."""
from __future__ import annotations

import json

import pytest

from conftest import SHARED_DATA, run_cli


@pytest.fixture()
def mute_judge(tmp_path):
    script = tmp_path / "mute.json"
    script.write_text(json.dumps({"default": "I cannot say."}))
    return f"scripted-test-double:{script}"


def test_dhp_with_a_judge_that_never_rates(tmp_path, mute_judge):
    result = run_cli("dhp", "--task", "summarization", "--judge", mute_judge, "--n-items", "5", "--quiet",
                          "--out", str(tmp_path / "d"))
    assert result.returncode == 3, (result.stdout[-500:], result.stderr)
    assert "failed (100% > --max-failure-rate 50%)" in result.stderr and "example no_rating" in result.stdout
    assert (tmp_path / "d" / "ratings.csv").exists()


def test_nle_recipe_with_a_judge_that_never_writes_the_metric_format(tmp_path, mute_judge):
    data = SHARED_DATA / "nle" / "e-snli.csv"
    if not data.exists():
        pytest.skip(f"shared data not found: {data}")
    result = run_cli("recipe", "nle", "--dataset", "esnli", "--data", str(data), "--n-items", "2", "--samples", "1",
                          "--judge", mute_judge, "--out", str(tmp_path / "n"))
    assert result.returncode == 3, (result.stdout[-800:], result.stderr)
    assert "failed (100% > --max-failure-rate 50%)" in result.stderr
    assert (tmp_path / "n" / "README.md").exists()  # the outputs are written: the failures are data too
