"""The audit of pairwise judges from verdicts files (``judgelab audit --verdicts``): position preference,
the share of pairs whose winner flips with the order, length preference and self-preference against the
humans' verdicts, on a small verdicts file written here (values worked out by hand), in-process and
through the command line."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from conftest import run_cli

from judgelab.audit_run import run_audit
from judgelab.preference.verdicts import normalise_verdicts
from judgelab.stats.pairwise_bias import pairwise_biases
from judgelab.testing.bias_simulator import MODERATE, simulate_study

# The responses as shown: alpha's is longer on q1-q3, beta's on q4; q5 has no texts.
TEXTS = {("q1", "alpha"): "Boil the water, add the pasta and stir it now and then.",
         ("q1", "beta"): "Boil it.",
         ("q2", "alpha"): "Tides follow the moon because its pull differs across the planet.",
         ("q2", "beta"): "The moon pulls water.",
         ("q3", "alpha"): "Write the tests first, then the smallest code that passes them, then tidy up.",
         ("q3", "beta"): "Test first, then code.",
         ("q4", "alpha"): "Yes.",
         ("q4", "beta"): "Yes, but only when the form has been signed by both parties.",
         ("q6", "alpha"): "Red.", ("q6", "beta"): "Blue is the usual answer."}

# (rater, item, first, second, choice)
JUDGE_ROWS = [("judge-x", "q1", "alpha", "beta", "first"), ("judge-x", "q1", "beta", "alpha", "first"),
              ("judge-x", "q2", "alpha", "beta", "first"), ("judge-x", "q2", "beta", "alpha", "second"),
              ("judge-x", "q3", "alpha", "beta", "second"), ("judge-x", "q3", "beta", "alpha", "first"),
              ("judge-x", "q4", "alpha", "beta", "first"), ("judge-x", "q4", "beta", "alpha", "first"),
              ("judge-x", "q5", "alpha", "beta", "tie"), ("judge-x", "q5", "beta", "alpha", "first"),
              ("judge-x", "q6", "alpha", "beta", "second")]
HUMAN_ROWS = [("human:ann", "q1", "alpha", "beta", "first"), ("human:bo", "q1", "beta", "alpha", "second"),
              ("human:ann", "q2", "alpha", "beta", "second"), ("human:bo", "q2", "alpha", "beta", "first"),
              ("human:ann", "q3", "beta", "alpha", "first"), ("human:bo", "q3", "alpha", "beta", "tie"),
              ("human:ann", "q4", "alpha", "beta", "second"), ("human:ann", "q5", "alpha", "beta", "first"),
              ("human:ann", "q6", "beta", "alpha", "first")]
FAMILIES = ({"judge-x": "fam-x"}, {"alpha": "fam-x", "beta": "fam-y"})


def _rows(with_texts: bool = True, failed: bool = True) -> pd.DataFrame:
    rows = [dict(zip(("rater", "item_id", "first", "second", "choice"), r)) for r in JUDGE_ROWS + HUMAN_ROWS]
    for r in rows:
        if with_texts and r["rater"] == "judge-x":
            r["first_text"], r["second_text"] = TEXTS.get((r["item_id"], r["first"])), TEXTS.get((r["item_id"], r["second"]))
    if failed:
        rows.append({"rater": "judge-x", "item_id": "q7", "first": "alpha", "second": "beta", "choice": None,
                     "status": "error"})
    return pd.DataFrame(rows)


@pytest.fixture
def effects():
    found, skipped = pairwise_biases(normalise_verdicts(_rows()), *FAMILIES, n_resamples=199, seed=1)
    assert skipped == {}
    return {e.bias: e for e in found if e.rater == "judge-x"}, found


def test_position_preference_and_flips_by_hand(effects):
    judge, found = effects
    first = judge["pairwise_first"]
    # decisive verdicts of the five pairs asked in both orders: 7 of 9 pick the first shown; q5's tie left out
    assert first.estimate == pytest.approx(7 / 9 - 0.5)
    assert (first.n, first.n_clusters) == (9, 5)
    assert "1 pairs asked in one order only left out" in first.note and "1 ties left out" in first.note
    assert "1 verdicts failed (no choice)" in first.note
    assert first.ci_low <= first.estimate <= first.ci_high and first.null == 0.0
    flip = judge["pairwise_flip"]
    assert flip.estimate == pytest.approx(3 / 5)  # q1, q4 and q5 (a tie, then beta) change winner
    assert math.isnan(flip.null) and not flip.detected  # no no-bias value: described, never detected
    assert not any(e.rater.startswith("human:") for e in found)  # no human saw a pair in both orders


def test_length_preference_against_the_humans_on_the_same_pairs(effects):
    longer = effects[0]["pairwise_longer"]
    # judge's share for the longer response (orders averaged) q1-q4: 1/2, 1, 0, 1/2; humans': 1, 1/2, 1/4, 1
    assert longer.estimate == pytest.approx((2.0 - 2.75) / 4)
    assert (longer.n, longer.n_clusters) == (4, 4)
    assert "1 pairs without both texts left out" in longer.note and "one order only" in longer.note
    assert "judge 50.0%, humans 68.8%" in longer.note
    assert "lengths in words" in longer.note


def test_self_preference_against_the_humans_on_the_same_pairs(effects):
    own = effects[0]["pairwise_own"]
    # alpha is the judge's family: judge 0.5, 1, 0, 0.5, 0.25 for alpha on q1-q5; humans 1, 0.5, 0.25, 0, 1
    assert own.estimate == pytest.approx((2.25 - 2.75) / 5)
    assert own.n == 5
    assert "its own family's (fam-x) response" in own.line


def test_what_cannot_be_measured_is_said():
    v = normalise_verdicts(_rows(with_texts=False))
    found, skipped = pairwise_biases(v, n_resamples=0)
    assert "first_text" in skipped["pairwise_longer"] and "--self-family" in skipped["pairwise_own"]
    judge_only = normalise_verdicts(_rows()[lambda d: ~d["rater"].str.startswith("human:")])
    assert "no human verdicts" in pairwise_biases(judge_only, n_resamples=0)[1]["pairwise_longer"]
    one_order = normalise_verdicts(pd.DataFrame([dict(zip(("rater", "item_id", "first", "second", "choice"), r))
                                                 for r in JUDGE_ROWS[:1] + JUDGE_ROWS[2:3]]))
    e = pairwise_biases(one_order, n_resamples=0)[0][0]
    assert e.bias == "pairwise_first" and math.isnan(e.estimate) and "no pair asked in both orders" in e.note
    assert "2 pairs asked in one order only" in e.note


def _write(tmp_path, frame: pd.DataFrame, name: str = "verdicts.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_cli_audits_a_verdicts_file_and_the_page_shows_it(tmp_path):
    path = _write(tmp_path, _rows())
    out = tmp_path / "audit"
    r = run_cli("audit", "--verdicts", str(path), "--self-family", "judge-x=fam-x", "--system-family", "alpha=fam-x",
                "--system-family", "beta=fam-y", "--n-resamples", "199", "--out", str(out))
    assert r.returncode == 0, r.stderr
    table = pd.read_csv(out / "pairwise.csv").set_index("bias")
    assert table.loc["pairwise_first", "estimate"] == pytest.approx(7 / 9 - 0.5)
    assert table.loc["pairwise_longer", "estimate"] == pytest.approx(-0.1875)
    assert not (out / "leniency.csv").exists()  # no ratings: only the pairwise judges
    doc = json.loads((out / "audit.json").read_text())
    assert {e["bias"] for e in doc["effects"]} == {"pairwise_first", "pairwise_flip", "pairwise_longer", "pairwise_own"}
    page = (out / "report.html").read_text()
    assert "Pairwise judges (verdicts)" in page and 'id="fig-audit-pairwise-first"' in page
    assert "picks first shown (pairs)" in page  # the summary grid names it


def test_verdicts_beside_ratings(tmp_path):
    study = simulate_study(60, MODERATE, seed=3)
    ratings = tmp_path / "ratings.csv"
    study.ratings.to_csv(ratings, index=False)
    run = run_audit([ratings], verdicts=[_write(tmp_path, _rows())], n_resamples=99)
    biases = {e.bias for e in run.report.effects}
    assert {"leniency", "pairwise_first", "pairwise_longer"} <= biases
    assert "pairwise" in [name for _, name, _ in run.written] and "leniency" in [n for _, n, _ in run.written]


def test_cli_refusals_are_one_line(tmp_path):
    verdicts = _write(tmp_path, _rows())
    not_verdicts = _write(tmp_path, pd.DataFrame({"a": [1]}), "other.csv")
    for args, says in ((["--pairwise"], "--pairwise goes with --self-check"),
                       (["--verdicts", str(verdicts), "--jury", "mean"], "verdicts alone have none"),
                       (["--verdicts", str(verdicts), "--pairs", str(verdicts)], "--pairs and --lengths go with"),
                       (["--verdicts", str(not_verdicts)], "not a file of verdicts"),
                       (["--verdicts", str(verdicts), "--judges", "nobody*"], "matches no judge of the verdicts"),
                       (["--self-check", "--verdicts", str(verdicts)], "--self-check simulates")):
        r = run_cli("audit", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert says in r.stderr and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_empty_cells_of_a_verdicts_file_take_the_defaults(tmp_path):
    """A CSV's empty status, sample or criterion cell is a value not given (status ok), not a failed verdict."""
    from judgelab.preference.formats import read_verdicts

    path = _write(tmp_path, _rows())  # only q7's row has a status: the other cells are empty
    v = read_verdicts(path)
    assert (v["status"] == "ok").sum() == len(JUDGE_ROWS) + len(HUMAN_ROWS)
    assert set(v["criterion"]) == {"preference"} and set(v["sample"]) == {0}


def test_map_criteria_and_judges_apply_to_verdicts(tmp_path):
    path = _write(tmp_path, _rows())
    run = run_audit(verdicts=[path], mapping={"preference": "helpfulness"}, judges="judge-*", n_resamples=0)
    assert {e.criterion for e in run.report.effects} == {"helpfulness"}
    other = run_audit(verdicts=[path], criteria=["other"], n_resamples=0).report
    assert not other.effects and other.skipped["pairwise"] == "no verdicts on the criteria asked for (other)"
    humans_only = _write(tmp_path, _rows()[lambda d: d["rater"].str.startswith("human:")], "humans.csv")
    assert "no judge" in run_audit(verdicts=[humans_only], n_resamples=0).report.skipped["pairwise"]
