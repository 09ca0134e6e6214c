"""A run whose judge fails most judgments ends with exit status 3, in every command that judges."""
from __future__ import annotations

import csv
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


def check_nle_with_a_mute_judge(data, out, judge):
    result = run_cli("recipe", "nle", "--dataset", "esnli", "--items", str(data), "--n-items", "2", "--samples", "1",
                     "--judge", judge, "--out", str(out))
    assert result.returncode == 3, (result.stdout[-800:], result.stderr)
    assert "failed (100% > --max-failure-rate 50%)" in result.stderr
    assert (out / "README.md").exists()  # the outputs are written: the failures are data too


@pytest.mark.needs_shared_data("nle/e-snli.csv")
def test_nle_recipe_with_a_judge_that_never_writes_the_metric_format(tmp_path, mute_judge):
    check_nle_with_a_mute_judge(SHARED_DATA / "nle" / "e-snli.csv", tmp_path / "n", mute_judge)


def test_nle_recipe_with_a_mute_judge_on_a_small_file(tmp_path, mute_judge):
    """The same on three rows written here in e-snli.csv's layout (gold_label, Sentence1, Sentence2,
    Explanation_1), so it runs without ../shared/data."""
    data = tmp_path / "e-snli.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gold_label", "Sentence1", "Sentence2", "Explanation_1"])
        w.writerows([["entailment", "A man plays a guitar on stage.", "A man plays music.", "A guitar makes music."],
                     ["contradiction", "Two dogs run in the snow.", "The dogs sleep inside.", "Dogs cannot run and sleep at once."],
                     ["neutral", "A woman reads, in a park.", "She reads a novel.", "Not every book is a novel."]])
    check_nle_with_a_mute_judge(data, tmp_path / "n", mute_judge)
