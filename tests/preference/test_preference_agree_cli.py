"""judgelab preference agree on the command line: the folder, its table and record, one-line exit-2 errors."""
import json

import pandas as pd
import pytest
from conftest import run_cli

from judgelab.preference.agreement_results import PreferenceAgreement

VERDICTS = """rater,item_id,first,second,choice
human:a,1,x,y,first
human:b,1,x,y,first
human:a,2,x,y,second
human:b,2,y,x,first
j@t,1,x,y,first
j@t,1,y,x,second
j@t,2,x,y,first
j@t,2,y,x,first
"""


@pytest.fixture
def verdicts(tmp_path):
    path = tmp_path / "verdicts.csv"
    path.write_text(VERDICTS)
    return path


def test_agree_writes_table_and_record(verdicts, tmp_path):
    out = tmp_path / "out"
    r = run_cli("preference", "agree", str(verdicts), "--out", str(out), "--n-resamples", "50")
    assert r.returncode == 0, r.stderr
    assert "j@t" in r.stdout
    table = pd.read_csv(out / "preference_agreement.csv")
    assert {"rater", "criterion", "n", "accuracy", "both_correct", "consistency", "accuracy_ci_low",
            "accuracy_ci_high"} <= set(table.columns)
    j = table.set_index("rater").loc["j@t"]
    assert (j["n"], j["accuracy"], j["both_correct"], j["consistency"]) == (2, 0.75, 0.5, 0.5)
    assert "at least" in j["note"]  # two items: no interval, and why
    record = json.loads((out / "results.json").read_text())
    step = next(s for s in record["steps"] if s["kind"] == "preference agree")
    again = PreferenceAgreement.from_record(step["results"])
    assert again.to_frame().fillna(-1).equals(PreferenceAgreement.from_record(again.to_record()).to_frame().fillna(-1))
    assert again.rows[0].value("accuracy") == 0.75
    orders = pd.read_csv(out / "preference_orders.csv").set_index("rater")
    assert orders.loc["j@t", "both_orders"] == 2 and orders.loc["j@t", "disagree"] == 1


def test_mt_bench_rule(verdicts):
    r = run_cli("preference", "agree", str(verdicts), "--order-rule", "mt-bench", "--n-resamples", "0", "--format", "csv")
    assert r.returncode == 0, r.stderr
    j = pd.read_csv(__import__("io").StringIO(r.stdout)).set_index("rater").loc["j@t"]
    assert j["accuracy"] == 0.5  # item 1 x (right), item 2 orders disagree -> tie (label y: wrong)


@pytest.mark.parametrize("content, message", [
    ("rater,item_id,first,second,choice\nj@t,1,x,y,first\n", "no human rater"),
    ("rater,item_id,first,second,choice\nhuman:a,1,x,y,first\n", "no judge"),
    ("rater,item_id,first,second,choice\nhuman:a,1,x,y,maybe\n", "choice 'maybe'"),
    ("a,b\n1,2\n", "not a file of verdicts"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, content, message):
    path = tmp_path / "v.csv"
    path.write_text(content)
    r = run_cli("preference", "agree", str(path), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_missing_file_and_unknown_rule(verdicts, tmp_path):
    r = run_cli("preference", "agree", str(tmp_path / "none.csv"))
    assert r.returncode == 2 and "none.csv: no such file" in r.stderr
    r = run_cli("preference", "agree", str(verdicts), "--order-rule", "vote")
    assert r.returncode == 2 and "keep, mt-bench" in r.stderr and len(r.stderr.strip().splitlines()) == 1
