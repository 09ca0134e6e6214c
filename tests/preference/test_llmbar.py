"""LLMBar's result.json read into verdicts (a small fixture in its layout, texts written for it), and LLMBar's
published statistics reproduced from its repository when JUDGELAB_LLMBAR_REPO names one."""
import json
import os
import shutil
from pathlib import Path

import pytest

from judgelab.errors import JudgelabError
from judgelab.preference.formats import read_verdict_files, read_verdicts
from judgelab.preference.llmbar_check import collect, compare, published_counts
from judgelab.preference_agree_run import run_preference_agree

DATA = Path(__file__).parent / "data" / "llmbar"
RESULT = DATA / "Dataset" / "Toy" / "Pairs" / "evaluators" / "TinyJudge" / "Vanilla" / "result.json"


def test_reader_maps_both_orders_and_gold():
    t = read_verdicts(RESULT)
    assert set(t["rater"]) == {"TinyJudge@Vanilla", "human:gold"}
    assert set(t["criterion"]) == {"Toy/Pairs"}
    judge = t[(t["rater"] == "TinyJudge@Vanilla") & (t["item_id"] == "1")].set_index("first")
    # instance 2 (item 1): swap = False winner "2" -> output_2 shown second: second; swap = True winner "1" ->
    # output_1, shown second there: second
    assert judge.loc["output_1", "choice"] == "second" and judge.loc["output_2", "choice"] == "second"
    assert judge.loc["output_2", "first_text"] == "Two." and judge.loc["output_2", "instruction"].startswith("Give")
    gold = t[t["rater"] == "human:gold"].set_index("item_id")["choice"].to_dict()
    assert gold == {"0": "first", "1": "second", "2": "first", "3": "second", "4": "first"}
    assert t["rater_kind"][t["rater"] == "human:gold"].unique().tolist() == ["human"]


def test_agree_gives_the_published_statistics_of_the_fixture():
    run = run_preference_agree([RESULT], n_resamples=0)
    row = next(r for r in run.result.rows if r.rater == "TinyJudge@Vanilla")
    stats = json.loads((RESULT.parent / "statistics.json").read_text())
    assert (row.value("accuracy"), row.value("both_correct"), row.value("consistency")) == (0.6, 0.4, 0.6)
    assert published_counts(stats) == {"n": 5, "correct": 6, "both": 2, "equal": 3}
    assert compare(run.result, {("TinyJudge@Vanilla", "Toy/Pairs"): stats}) == []
    wrong = {**stats, "equal": "2 / 5 = 40.0%"}
    assert [m.what for m in compare(run.result, {("TinyJudge@Vanilla", "Toy/Pairs"): wrong})] == \
        ["equal: 3 here, 2 published"]


def test_two_evaluators_share_one_gold_label(tmp_path):
    other = tmp_path / "Dataset" / "Toy" / "Pairs" / "evaluators" / "TinyJudge" / "CoT" / "result.json"
    other.parent.mkdir(parents=True)
    shutil.copy(RESULT, other)
    t = read_verdict_files([RESULT, other])
    assert (t["rater"] == "human:gold").sum() == 5 and t["rater"].nunique() == 3


def test_collect_reads_a_checkout_and_leaves_out_undecided(tmp_path):
    shutil.copytree(DATA, tmp_path / "repo")
    bad = tmp_path / "repo" / "Dataset" / "Toy" / "Pairs" / "evaluators" / "TinyJudge" / "Broken" / "result.json"
    bad.parent.mkdir(parents=True)
    data = json.loads(RESULT.read_text())
    data[0]["results"][-1]["swap = True"]["winner"] = None
    bad.write_text(json.dumps(data))
    sets = collect(tmp_path / "repo")
    assert (sets.total, len(sets.published), sets.not_all_decided) == (2, 1, 1)


def test_bad_instance_is_one_error(tmp_path):
    path = tmp_path / "result.json"
    data = json.loads(RESULT.read_text())
    data[1]["results"] = []
    path.write_text(json.dumps(data))
    with pytest.raises(JudgelabError, match="instance 2 has no results"):
        read_verdicts(path)


def test_published_llmbar_reproduced(tmp_path, capsys):
    repo = os.environ.get("JUDGELAB_LLMBAR_REPO")
    if not repo:
        pytest.skip("set JUDGELAB_LLMBAR_REPO to a checkout or bare git dir of princeton-nlp/LLMBar")
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
    try:
        from reproduce_llmbar import main
    finally:
        sys.path.pop(0)
    assert main([repo, "--out", str(tmp_path)]) == 0  # 1 on any mismatch
    out = capsys.readouterr().out
    compared = int(out.split("all verdicts 1 or 2: ")[1].split(";")[0])
    assert f"matched {compared} of {compared} compared" in out
    if "0 absent from the copy" in out:  # the count: 381 of LLMBar's 499 result sets
        assert compared == 381 and "result sets: 499" in out
