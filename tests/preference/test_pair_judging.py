"""Judging pairs through ``rate --pairs`` (docs/preference-judging.md): each pair asked in both orders with the
texts byte for byte, verdicts.csv, resume with no call, a changed response asks again only its pairs, the dry
run counts both orders, log-probability preference, the verdict rule, and bad input in one line."""
from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import one_line_error, run_cli
from judgelab.datasets.responses import load_responses
from judgelab.logprob_score import preference_probability
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.parse import parse_preference
from judgelab.preference.pairs import build_pairs, verdicts_of
from judgelab.prompts import load_template
from judgelab.run import RunSpec, run_spec
from judgelab.status import Status
from judgelab.store import Store

# texts a judge must get byte for byte: CRLF, Jinja braces, markup, trailing spaces, non-ASCII
ROWS = [
    {"item_id": "q1", "instruction": "Name a prime number.\r\nOne only.", "system": "base", "response": "Seven.  "},
    {"item_id": "q1", "instruction": "Name a prime number.\r\nOne only.", "system": "m1", "response": "Nine {{ is }} prime."},
    {"item_id": "q1", "instruction": "Name a prime number.\r\nOne only.", "system": "m2", "response": "<b>Two</b> — even & prime"},
    {"item_id": "q2", "instruction": "Spell 'cat' backwards.", "system": "base", "response": "tac"},
    {"item_id": "q2", "instruction": "Spell 'cat' backwards.", "system": "m1", "response": "tca\n"},
    {"item_id": "q2", "instruction": "Spell 'cat' backwards.", "system": "m2", "response": "t-a-c \u00e9\U0001f600"},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def script(path: Path, content: dict) -> str:
    path.write_text(json.dumps(content), encoding="utf-8")
    return f"scripted-test-double:{path}"


def rate_pairs(tmp_path: Path, responses: Path, judge: str, *extra: str):
    return run_cli("rate", "--items", str(responses), "--pairs", "baseline:base", "--template", "pairwise-comparison",
                   "--judge", judge, "--samples", "1", "--out", str(tmp_path / "out"), "--quiet", *extra)


def test_each_pair_is_asked_in_both_orders_with_both_texts_byte_for_byte():
    pairs = build_pairs(load_responses(pd.DataFrame(ROWS)), "baseline:base")
    judge = ScriptedTestJudge(lambda prompt: "The first is better. [[A]]")
    with Store(":memory:") as store:
        stats = run_spec(RunSpec(template="pairwise-comparison", samples=1), pairs.items(), store, backend=judge)
        ratings = store.ratings()
    prompts = [call.messages[-1][1] for call in judge.calls]
    assert stats.calls_made == len(prompts) == 8  # 2 items × 2 systems against the baseline × 2 orders
    by = {(r["item_id"], r["system"]): r for r in ROWS}
    for item in ("q1", "q2"):
        for other in ("m1", "m2"):
            for a, b in (("base", other), (other, "base")):
                shown = (f"[Instruction]\n{by[(item, a)]['instruction']}\n\n[Response A]\n{by[(item, a)]['response']}\n"
                         f"[End of Response A]\n\n[Response B]\n{by[(item, b)]['response']}\n[End of Response B]")
                assert sum(shown in p for p in prompts) == 1, (item, a, b)
    verdicts = verdicts_of(ratings, pairs)
    assert len(verdicts) == 8 and set(verdicts["choice"]) == {"first"}  # a judge that always says A: both orders
    swapped = verdicts.set_index(["item_id", "first", "second"])
    assert {("q1", "base", "m1"), ("q1", "m1", "base")} <= set(swapped.index)
    assert swapped.loc[("q2", "m2", "base"), "second_text"] == "tac"
    assert swapped.loc[("q2", "m2", "base"), "first_text"] == "t-a-c \u00e9\U0001f600"


def test_rate_on_pairs_writes_verdicts_resumes_with_no_call_and_asks_a_changed_response_again(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"rules": [{"contains": "[Response A]\nNine", "reply": "Nine is not prime. [[B]]"},
                                                        {"contains": "[Response B]\nNine", "reply": "[[A]]"}],
                                              "default": "Both do it. [[tie]]"})
    first = rate_pairs(tmp_path, responses, judge)
    assert first.returncode == 0, first.stderr
    assert "calls made 8" in first.stdout
    assert "verdicts of scripted-test-double@pairwise-comparison: 8 (4 pairs × 2 orders): first 1, second 1, tie 6" in first.stdout
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv", keep_default_na=False)
    chosen = {(r.item_id, r.first, r.second): r.choice for r in verdicts.itertuples()}
    assert chosen[("q1", "base", "m1")] == "first" and chosen[("q1", "m1", "base")] == "second"
    assert chosen[("q2", "m1", "base")] == "tie" and len(chosen) == 8
    record = json.loads((tmp_path / "out" / "results.json").read_text())
    step = record["steps"][-1]
    assert step["results"]["verdicts"]["raters"]["scripted-test-double@pairwise-comparison"]["tie"] == 6
    assert any(f["name"] == "verdicts.csv" for f in step["files"])

    again = rate_pairs(tmp_path, responses, judge)
    assert again.returncode == 0 and "calls made 0" in again.stdout and "8 already in the store" in again.stdout

    edited = [dict(r, response="Eleven.") if (r["item_id"], r["system"]) == ("q2", "m1") else r for r in ROWS]
    changed = rate_pairs(tmp_path, write_jsonl(responses, edited), judge)
    assert changed.returncode == 0, changed.stderr
    assert "calls made 2" in changed.stdout  # base vs m1 on q2, in its two orders; no other pair
    assert "2 asked again because their prompt changed" in changed.stdout
    texts = pd.read_csv(tmp_path / "out" / "verdicts.csv", keep_default_na=False)
    assert set(texts.loc[(texts["item_id"] == "q2") & (texts["first"] == "m1"), "first_text"]) == {"Eleven."}


def test_the_dry_run_counts_both_orders_and_writes_nothing(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"default": "[[A]]"})
    both = rate_pairs(tmp_path, responses, judge, "--dry-run")
    assert both.returncode == 0, both.stderr
    assert "pairs: 4 pairs × 2 orders = 8 prompts per criterion and sample" in both.stdout
    assert "8 calls (0 answered by the store), 8 judgments" in both.stdout
    given = rate_pairs(tmp_path, responses, judge, "--dry-run", "--orders", "given")
    assert "pairs: 4 pairs × 1 order = 4 prompts" in given.stdout and "4 calls" in given.stdout
    priced = [rate_pairs(tmp_path, responses, judge, "--dry-run", "--price-in", "1000", *o).stdout for o in ((), ("--orders", "given"))]
    tokens = [int(re.search(r"total: \d+ calls, \d+ judgments, ~(\d+) prompt tokens", t).group(1)) for t in priced]
    dollars = [float(re.search(r"total: .*\(prompt \$(\d+\.\d+)\)", t).group(1)) for t in priced]
    assert abs(tokens[0] - 2 * tokens[1]) <= 1 and dollars[0] == pytest.approx(2 * dollars[1], abs=0.002)  # both orders paid
    every = run_cli("rate", "--items", str(responses), "--pairs", "all", "--template", "pairwise-comparison", "--judge",
                    judge, "--samples", "1", "--out", str(tmp_path / "out"), "--dry-run")
    assert "pairs: 6 pairs × 2 orders = 12 prompts" in every.stdout and "12 calls" in every.stdout
    assert not (tmp_path / "out").exists()


def test_log_probability_preference_is_the_mass_on_the_first_choice_token_over_both(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {
        "rules": [{"contains": "[Response A]\nNine", "probs": {"A": 0.1, " B": 0.7, "tie": 0.2}},
                  {"contains": "[Response A]\ntac\n", "probs": {"the": 1.0}}],  # no mass on A or B: no verdict
        "default_probs": {"A": 0.6, "B": 0.2, "tie": 0.2}})
    result = rate_pairs(tmp_path, responses, judge, "--score", "logprob", "--max-failure-rate", "0.5")
    assert result.returncode == 0, result.stderr
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv", keep_default_na=False, na_values=[""])
    by = verdicts.set_index(["item_id", "first", "second"])
    assert by.loc[("q1", "m1", "base"), "p_first"] == pytest.approx(0.125)
    assert by.loc[("q1", "m1", "base"), "choice"] == "second"
    assert by.loc[("q1", "base", "m2"), "p_first"] == pytest.approx(0.75)
    assert by.loc[("q1", "base", "m2"), "choice"] == "first"
    failed = verdicts[verdicts["status"] != "ok"]
    assert len(failed) == 2 and set(failed["status"]) == {Status.NO_LABEL_MASS.value}  # base first on q2, both pairs
    assert failed["choice"].isna().all() and failed["p_first"].isna().all()
    assert "2 failed (no verdict read)" in result.stdout
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert ratings["score"].dropna().between(-1, 1).all()


def test_more_failed_verdicts_than_allowed_exit_3_with_the_files_written(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"rules": [{"contains": "[Response A]\nSeven", "reply": "Hard to say."}],
                                              "default": "[[B]]"})
    result = rate_pairs(tmp_path, responses, judge, "--max-failure-rate", "0.1")
    assert result.returncode == 3
    assert "2 failed (no verdict read)" in result.stdout
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv", keep_default_na=False, na_values=[""])
    assert (verdicts["status"] == "no_rating").sum() == 2


def test_ties_offered_or_not_and_multi_turn_context():
    rows = [{"item_id": "t", "instruction": "And in French?", "system": s, "response": r,
             "turns": [{"role": "user", "content": "Say hello."}, {"role": "assistant", "content": hello}]}
            for s, r, hello in (("a", "Bonjour.", "Hello."), ("b", "Salut !", "Hi!"))]
    responses = load_responses(pd.DataFrame(rows))
    comparison, multi = load_template("pairwise-comparison"), load_template("pairwise-multi-turn")
    with_ties = build_pairs(responses, "all").items()[0]
    without = build_pairs(responses, "all", ties=False).items()[0]
    assert "[[tie]]" in comparison.render("preference", with_ties.fields())
    assert "[[tie]]" not in comparison.render("preference", without.fields())
    prompt = multi.render("preference", with_ties.fields())
    assert "User: Say hello.\nAssistant A: Hello.\nUser: And in French?\nAssistant A: Bonjour." in prompt
    assert "User: Say hello.\nAssistant B: Hi!\nUser: And in French?\nAssistant B: Salut !" in prompt


def test_responses_from_a_dataframe_csv_and_jsonl_are_the_same(tmp_path):
    rows = [dict(r, turns=[{"role": "user", "content": "Earlier, with a \"quote\"."}]) for r in ROWS]
    jsonl = write_jsonl(tmp_path / "r.jsonl", rows)
    csv = tmp_path / "r.csv"
    pd.DataFrame([dict(r, turns=json.dumps(r["turns"])) for r in rows]).to_csv(csv, index=False)
    frame = load_responses(pd.DataFrame(rows))
    assert load_responses(jsonl).rows == load_responses(csv).rows == frame.rows
    assert frame.get("q1", "base").instruction == "Name a prime number.\r\nOne only."
    assert frame.systems == ("base", "m1", "m2")


@pytest.mark.parametrize("text, score, status", [
    ("A has the error. Final verdict: [[B]]", -1.0, "ok"),
    ("Reply [[A]] or [[B]] ... my verdict: [[A]]", 1.0, "ok"),  # the last verdict counts
    ("[[tie]]", 0.0, "ok"), ("[[C]]", 0.0, "ok"), (" **B**\n", -1.0, "ok"), ("A", 1.0, "ok"),
    ("Response A is better", None, "no_rating"), ("", None, "empty"),
    ("I'm sorry, but I cannot compare these.", None, "refusal"),
])
def test_the_verdict_rule(text, score, status):
    parsed = parse_preference(text)
    assert (parsed.score, parsed.status.value) == (score, status)


def test_preference_probability_pools_spellings_and_reports_the_rest():
    p, outside = preference_probability([("A", math.log(0.3)), ("\u2581A", math.log(0.3)), (" B", math.log(0.2)),
                                         ("tie", math.log(0.2))])
    assert p == pytest.approx(0.75) and outside == pytest.approx(0.2)
    assert preference_probability({"C": 0.0}) == (None, 1.0)  # all the mass elsewhere: no preference


DUPLICATE = [*ROWS, ROWS[0]]
MISSING = [r for r in ROWS if (r["item_id"], r["system"]) != ("q2", "m2")]


@pytest.mark.parametrize("rows, extra, needles", [
    (DUPLICATE, (), ("line 7", "system 'base' answers item 'q1' twice")),
    (MISSING, (), ("system 'm2' has no response to item 'q2'",)),
    (ROWS, ("--pairs", "baseline:gpt"), ("no system 'gpt'", "systems: base, m1, m2")),
    (ROWS, ("--pairs", "best"), ("baseline:SYSTEM, all, or a .csv/.jsonl file",)),
    (ROWS, ("--template", "pairwise-reference"), ("needs the field 'reference'",)),
    ([{k: v for k, v in r.items() if k != "response"} for r in ROWS], (), ("no response column",)),
    ([dict(r, instruction="Other.") if r["system"] == "m2" else r for r in ROWS], (), ("another instruction",)),
    ([dict(r, turns="not json") for r in ROWS], (), ("'turns' is not a JSON list",)),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, rows, extra, needles):
    responses = write_jsonl(tmp_path / "responses.jsonl", rows)
    judge = script(tmp_path / "judge.json", {"default": "[[A]]"})
    result = rate_pairs(tmp_path, responses, judge, *extra)
    one_line_error(result, *needles)
    assert not (tmp_path / "out" / "verdicts.csv").exists()


def test_constrained_answers_are_refused_for_verdict_templates_in_one_line(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    result = run_cli("rate", "--items", str(responses), "--pairs", "all", "--template", "pairwise-comparison", "--judge",
                     "openai:m@http://127.0.0.1:9/v1", "--constrain", "--score", "parsed", "--dry-run")
    one_line_error(result, "asks for a pairwise verdict", "--constrain is offered for ratings")


def test_a_pairs_file_names_the_pairs_and_a_bad_one_is_one_line(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"default": "[[A]]"})
    listed = write_jsonl(tmp_path / "pairs.jsonl", [{"first": "m1", "second": "m2"}, {"item_id": "q1", "first": "m2", "second": "base"}])
    args = ("rate", "--items", str(responses), "--template", "pairwise-comparison", "--judge", judge, "--samples", "1",
            "--out", str(tmp_path / "out"), "--dry-run", "--pairs")
    assert "pairs: 3 pairs × 2 orders = 6 prompts" in run_cli(*args, str(listed)).stdout
    assert "pairs: 3 pairs × 1 order = 3 prompts" in run_cli(*args, str(listed), "--orders", "given").stdout
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"first": "m1", "second": "m9"}])
    one_line_error(run_cli(*args, str(bad)), "bad.jsonl: row 1 (line 1): no system 'm9'")
    twice = write_jsonl(tmp_path / "twice.jsonl", [{"first": "m1", "second": "m2"}, {"first": "m2", "second": "m1"}])
    one_line_error(run_cli(*args, str(twice)), "listed twice")


def test_the_command_line_contract_in_a_real_process(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", [*ROWS, ROWS[3]])
    judge = script(tmp_path / "judge.json", {"default": "[[A]]"})
    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    import os

    result = subprocess.run([sys.executable, "-m", "judgelab.cli", "rate", "--items", str(responses), "--pairs", "all",
                             "--template", "pairwise-comparison", "--judge", judge, "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    one_line_error(result, "system 'base' answers item 'q2' twice")


def test_a_run_file_judges_the_same_pairs_with_its_paths_relative_to_it(tmp_path):
    folder = tmp_path / "study"
    folder.mkdir()
    write_jsonl(folder / "responses.jsonl", ROWS)
    write_jsonl(folder / "pairs.jsonl", [{"item_id": "q2", "first": "m1", "second": "m2"}])
    script(folder / "judge.json", {"default": "[[B]]"})
    (folder / "run.yaml").write_text("items: responses.jsonl\npairs: pairs.jsonl\norders: given\noffer_tie: false\n"
                                     "template: pairwise-comparison\njudge: scripted-test-double:judge.json\nsamples: 1\n"
                                     "out: out\n", encoding="utf-8")
    result = run_cli("run", str(folder / "run.yaml"), "--quiet")
    assert result.returncode == 0, result.stderr
    verdicts = pd.read_csv(folder / "out" / "verdicts.csv")
    assert verdicts[["item_id", "first", "second", "choice"]].values.tolist() == [["q2", "m1", "m2", "second"]]
    record = json.loads((folder / "out" / "results.json").read_text())["steps"][-1]["results"]["verdicts"]
    assert (record["pairs"], record["orders"], record["ties"]) == (1, "given", False)


def test_n_items_with_pairs_is_refused_in_one_line(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"default": "[[A]]"})
    one_line_error(rate_pairs(tmp_path, responses, judge, "--n-items", "2"), "--n-items with --pairs")


def test_single_answer_grading_gives_ordinary_ratings_of_each_response(tmp_path):
    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"rules": [{"contains": "[Response]\nNine", "reply": "Wrong: nine is 3 × 3. Rating: [[2]]"}],
                                              "default": "Correct and to the point.\nRating: [[10]]"})
    result = run_cli("rate", "--items", str(responses), "--id-field", "item_id", "--text-field", "response", "--template",
                     "single-answer-grading", "--judge", judge, "--samples", "1", "--out", str(tmp_path / "out"), "--quiet")
    assert result.returncode == 0, result.stderr
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    scores = {(r.item_id, r.system): r.score for r in ratings.itertuples()}
    assert scores[("q1", "m1")] == 2 and scores[("q2", "base")] == 10 and len(scores) == 6
    assert not (tmp_path / "out" / "verdicts.csv").exists()


def test_the_python_way_from_a_dataframe_gives_the_verdicts_of_the_command(tmp_path):
    from judgelab.rate import rate_items

    responses = write_jsonl(tmp_path / "responses.jsonl", ROWS)
    judge = script(tmp_path / "judge.json", {"rules": [{"contains": "[Response A]\nSeven", "reply": "[[A]]"}], "default": "[[B]]"})
    assert rate_pairs(tmp_path, responses, judge).returncode == 0
    pairs = build_pairs(load_responses(pd.DataFrame(ROWS)), "baseline:base")
    result = rate_items(pairs.items(), [RunSpec(judge=judge, template="pairwise-comparison", samples=1)], tmp_path / "api",
                        pairs=pairs, progress=False)
    keep = ["item_id", "first", "second", "choice", "status"]
    command = pd.read_csv(tmp_path / "out" / "verdicts.csv", keep_default_na=False)[keep]
    assert result.files["verdicts"] == tmp_path / "api" / "verdicts.csv"
    pd.testing.assert_frame_equal(result.verdicts[keep].reset_index(drop=True), command, check_dtype=False)
    assert set(result.verdicts["choice"]) == {"first", "second"}
