"""``judgelab audit``: the workflow on a simulated study with planted biases, its folder, its refusals."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.audit import audit
from judgelab.testing.bias_simulator import JUDGE, MODERATE, simulate_study


@pytest.fixture(scope="module")
def study():
    return simulate_study(200, MODERATE, seed=11)


def _files(tmp_path, study):
    ratings = tmp_path / "ratings.csv"
    study.ratings.to_csv(ratings, index=False)
    pairs = tmp_path / "pairs.csv"
    study.pairs.to_csv(pairs, index=False)
    lengths = tmp_path / "lengths.csv"
    study.lengths.to_csv(lengths, index=False)
    return ratings, pairs, lengths


def test_audit_finds_each_planted_bias(study):
    report = audit(study.ratings, study.pairs, study.lengths, study.judge_family, study.system_family,
                   points=[], n_resamples=499)
    found = {e.bias: e for e in report.effects if e.rater == JUDGE}
    for bias in ("leniency", "length", "self_preference", "position_first"):
        assert found[bias].detected, bias  # coverage of the planted values: tests/audit/test_self_check.py
    assert set(report.skipped) == {"prompt_sensitivity"}  # one variant of the judge
    assert any("picks the first-shown text" in line for line in report.lines())


def test_audit_skips_what_it_was_not_given(study):
    report = audit(study.ratings, n_resamples=0)
    assert set(report.skipped) == {"length", "self_preference", "position", "prompt_sensitivity"}
    assert report.tables()["length"].empty and not report.tables()["leniency"].empty


def test_cli_writes_the_tables_and_a_line_per_bias(tmp_path, study):
    ratings, pairs, lengths = _files(tmp_path, study)
    out = tmp_path / "audit"
    r = run_cli("audit", str(ratings), "--pairs", str(pairs), "--lengths", str(lengths), "--self-family",
                f"{JUDGE}=fam-a", "--system-family", "fam-a-1=fam-a", "--system-family", "fam-a-2=fam-a",
                "--n-resamples", "199", "--format", "json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    biases = {row["bias"] for row in doc["rows"] if row["rater"] == JUDGE}
    assert {"leniency", "spread_ratio", "length", "prefer_longer", "self_preference", "position_first"} <= biases
    for name in ("leniency", "scale_points", "length", "self_preference", "position"):
        assert (out / f"{name}.csv").exists()
    table = pd.read_csv(out / "self_preference.csv")
    assert bool(table.loc[0, "detected"])
    readme = (out / "README.md").read_text()
    assert "Relative to the humans, sim-judge rates quality of its own family" in readme
    assert "judgelab: sim-judge picks the first-shown text" in r.stderr


def test_cli_human_file_and_refusals(tmp_path, study):
    judge = tmp_path / "judge.csv"
    study.ratings[study.ratings["rater"] == JUDGE].to_csv(judge, index=False)
    human = tmp_path / "human.csv"
    h = study.ratings[study.ratings["rater"] != JUDGE].assign(rater=lambda d: d["rater"].str.removeprefix("human:"))
    h[["item_id", "system", "criterion", "rater", "score"]].to_csv(human, index=False)
    r = run_cli("audit", str(judge), "--human", str(human), "--n-resamples", "0", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "length skipped" in r.stderr
    out = tmp_path / "never"
    for args, message in [((str(judge), "--self-family", "gpt"), "expected NAME=FAMILY"),
                          ((str(judge), "--human", str(human), "--self-family", "gpt=openai"), "no judge 'gpt'"),
                          ((str(judge),), "no human ratings"),
                          (("--self-check", str(judge)), "give no ratings"),
                          ((str(judge), "--human", str(human), "--lengths", str(human)), "need columns item_id and length")]:
        r = run_cli("audit", *args, "--out", str(out))
        assert r.returncode == 2 and r.stderr.startswith("judgelab: error: ") and message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
        assert not out.exists()


def test_cli_self_check_small(tmp_path):
    out = tmp_path / "check"
    r = run_cli("audit", "--self-check", "--n-items", "60", "--n-studies", "3", "--n-resamples", "99",
                "--format", "csv", "--out", str(out))
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(out / "self_check.csv")
    assert list(table["bias"]) == ["leniency", "length", "self_preference", "position_first"]
    assert (table["studies"] == 3).all()
    assert "detected in" in r.stderr


def test_failed_judgments_are_left_out_and_counted(study):
    ratings = study.ratings.copy()
    bad = (ratings["rater"] == JUDGE) & ratings["item_id"].isin(["i0", "i1", "i2"])
    ratings.loc[bad, "status"] = "no_rating"
    ratings.loc[bad, "score"] = float("nan")
    report = audit(ratings, n_resamples=0)
    lenient = next(e for e in report.effects if e.rater == JUDGE and e.bias == "leniency")
    assert lenient.n == 197 and "3 of 200 judgments failed" in lenient.note
    clean = next(e for e in audit(study.ratings, n_resamples=0).effects if e.rater == JUDGE and e.bias == "leniency")
    assert "failed" not in clean.note
