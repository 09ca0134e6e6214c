"""The report's Preference judging section (report/html_preference.py, report/preference_words.py): its data from
the records of real ``rate --pairs``, ``preference agree``, ``preference win-rates`` and ``audit --verdicts`` runs
(the scripted stand-in judge, human verdicts written here), and the headline rule's cases."""
from __future__ import annotations

import html
import json
import math

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.preference.agreement_results import BASELINE, AgreementRow, Estimate
from judgelab.report.html import build_report, write_report
from judgelab.report.html_preference import NO_BIAS_RECORDED
from judgelab.report.preference_words import Baseline, human_baseline, preference_verdict
from preference_helpers import preference_folders

NAN = math.nan


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    return preference_folders(tmp_path_factory.mktemp("preference"))


# -- the headline rule -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("low, high, decision, words", [
    (0.80, 0.90, "better", "better than a human rater"),
    (0.40, 0.55, "worse", "below a human rater — not yet a substitute for the humans"),
    (0.55, 0.70, "overlap", "not told apart from a human rater with these pairs (the intervals overlap; more pairs would tell)"),
    (0.60, 0.61, "overlap", "not told apart from a human rater with these pairs (the intervals overlap; more pairs would tell)"),  # touching the baseline's lower end: overlap
])
def test_the_judge_is_set_against_the_human_baseline_by_the_two_intervals(low, high, decision, words):
    line = preference_verdict("j@t", "overall", (low + high) / 2, low, high, 120, 60, Baseline(0.70, 0.61, 0.78, 1))
    assert line.decision == decision and line.words.endswith(words + ".")
    assert "(n = 120 pairs, 60 instructions)" in line.words and "the humans agree with each other on 70% [61%, 78%]" \
        in line.words


def test_no_interval_or_too_few_instructions_is_inconclusive_and_no_pair_is_no_verdict():
    base = Baseline(0.7, 0.6, 0.8, 1)
    few = preference_verdict("j", "c", 0.9, 0.8, 1.0, 8, 4, base)  # an interval from 4 instructions is not trusted
    none = preference_verdict("j", "c", 0.9, NAN, NAN, 40, 20, base)
    for line in (few, none):
        assert line.decision == "inconclusive" and "inconclusive — too few pairs for an interval" in line.words
        assert "human rater" not in line.words
    empty = preference_verdict("j", "c", NAN, NAN, NAN, 0, 0, base)
    assert empty.decision == "none" and "no verdict" in empty.words


def test_without_a_human_baseline_the_figure_is_given_and_no_comparison_made():
    line = preference_verdict("j", "c", 0.7, 0.6, 0.8, 50, 25, None)
    assert line.decision == "no-baseline" and "70% of pairs [60%, 80%]" in line.words
    assert "no human baseline to compare with" in line.words and "told apart" not in line.words


def _row(rater, value, low, high):
    return AgreementRow(rater, "human", "c", 10, 10, 10, {"accuracy": Estimate(value, low, high)})


def test_the_baseline_is_the_pooled_human_row_else_the_span_of_the_humans():
    rows = [_row("human:a", 0.6, 0.5, 0.7), _row("human:b", 0.8, 0.7, 0.9), _row(BASELINE, 0.7, 0.62, 0.78)]
    assert human_baseline(rows) == Baseline(0.7, 0.62, 0.78, 1)
    assert human_baseline(rows[:2]) == Baseline(pytest.approx(0.7), 0.5, 0.9, 2)
    assert human_baseline([_row(BASELINE, 0.7, NAN, NAN), rows[0]]) == Baseline(0.6, 0.5, 0.7, 1)  # no interval pooled
    assert human_baseline([_row("human:a", 0.6, NAN, NAN)]) is None


# -- the section from real runs' records ----------------------------------------------------------------------------
def test_a_pairs_run_with_agree_and_win_rates_written_into_it(folders):
    run, _ = folders
    data = build_report(run)
    assert not data.problems and data.sections()[0] == ("preference", "Preference judging")
    p = data.preference
    agreement = pd.read_csv(run / "preference_agreement.csv").set_index("rater")
    judge = agreement.loc["scripted-test-double@pairwise-comparison"]
    [line] = p.lines
    assert line.judge == "scripted-test-double@pairwise-comparison" and line.criterion == "preference"
    assert f"on {100 * judge['accuracy']:.0f}% of pairs [{100 * judge['accuracy_ci_low']:.0f}%, " in line.words
    assert f"(n = {judge['n']} pairs, {judge['items']} instructions)" in line.words
    pooled = agreement.loc[BASELINE]
    assert f"each other on {100 * pooled['accuracy']:.0f}% [{100 * pooled['accuracy_ci_low']:.0f}%" in line.words
    # the agreement table holds the judge; the human baseline is apart, its pooled row included
    assert [r[0] for r in p.agreement.rows] == ["scripted-test-double@pairwise-comparison"]
    assert [r[0] for r in p.human_baseline.rows] == ["human:ana", "human:ben", BASELINE]
    assert p.agreement.rows[0][4:7] == [judge["accuracy"], judge["accuracy_ci_low"], judge["accuracy_ci_high"]]
    # win rates as recorded, with the standard error beside each
    rates = pd.read_csv(run / "win_rates.csv")
    assert len(p.win_rates.rows) == len(rates) == 6
    shown = {(r[0], r[2]): (r[3], r[4]) for r in p.win_rates.rows}
    for r in rates.itertuples():
        assert shown[(r.rater, r.system)] == (pytest.approx(r.win_rate), pytest.approx(r.standard_error))
    # a leaderboard chart per rater, the judge's first, its systems by rating, titled
    board = pd.read_csv(run / "leaderboard.csv")
    assert len(p.figures) == 3 and p.figures[0].title.endswith("judged by scripted-test-double@pairwise-comparison")
    mine = board[board["rater"].str.startswith("scripted")].sort_values("rating", ascending=False)
    svg = p.figures[0].svg
    positions = [svg.index(f">{s}</text>") for s in mine["system"]]
    assert positions == sorted(positions) and "<title" in svg
    # both orders from preference agree (no audit here), with the command that measures the biases named
    orders = pd.read_csv(run / "preference_orders.csv").set_index("rater").loc[line.judge]
    assert p.bias.id == "pref-orders" and p.bias.rows[0][2:4] == [orders["both_orders"], orders["disagree"]]
    assert p.bias_note == NO_BIAS_RECORDED
    # the run's verdicts by choice and failures per rater
    verdicts = pd.read_csv(run / "verdicts.csv")
    [counts] = p.counts.rows
    assert counts[0] == line.judge and counts[1] == len(verdicts)
    assert counts[2:6] == [int((verdicts["choice"] == c).sum()) for c in ("first", "second", "tie")] + [0]
    # the section's tables are not repeated under "Other tables"; the verdicts stay there as data
    assert "preference_agreement.csv" not in [t.caption for t in data.other_tables]
    write_report(run)
    page = (run / "report.html").read_text(encoding="utf-8")
    assert html.escape(line.words, quote=False).replace("'", "&#39;") in page
    assert page.index('id="preference"') < page.index('id="results"')


def test_a_win_rates_folder_alone_says_what_adds_the_agreement(folders):
    _, rates = folders
    p = build_report(rates).preference
    assert p is not None and not p.lines and p.agreement is None and p.counts is None
    assert "judgelab preference agree" in p.notes[0] and p.bias_note == NO_BIAS_RECORDED and p.bias is None
    assert len(p.win_rates.rows) == 6 and p.figures and p.leaderboard is not None
    assert any("instruction-difficulty term" in n for n in p.win_rate_notes)


def test_the_audits_pairwise_effects_are_the_bias_table_when_recorded(folders, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(folders[0], run)
    humans = folders[0].parent / "humans.csv"
    r = run_cli("audit", "--verdicts", str(run / "verdicts.csv"), "--verdicts", str(humans), "--out", str(run))
    assert r.returncode == 0, r.stderr
    p = build_report(run).preference
    effects = [e for e in json.loads((run / "audit.json").read_text())["effects"] if e["bias"].startswith("pairwise_")]
    assert p.bias.id == "pref-bias" and p.bias_note == "" and len(p.bias.rows) == len(effects) >= 2
    first = next(r for r in p.bias.rows if r[2].startswith("picks the first shown"))
    recorded = next(e for e in effects if e["bias"] == "pairwise_first")
    assert first[3:6] == [recorded["estimate"], recorded["ci_low"], recorded["ci_high"]]


def test_a_folder_without_preference_steps_has_no_section(tmp_path_factory):
    from report_helpers import rate_agree_folder

    assert build_report(rate_agree_folder(tmp_path_factory)).preference is None


def test_the_headline_rules_example_runs():
    import doctest

    import judgelab.report.preference_words as words

    result = doctest.testmod(words, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


XSS = "<img src=x onerror=alert(1)>"


def test_names_from_the_verdicts_are_shown_escaped_and_a_style_controlled_board_says_so(tmp_path):
    rows = []
    for k in range(8):
        styled, plain = f"# Head\n- a **b** {'x ' * k}", f"plain {k}"
        rows += [("j@t", XSS, "base", "first" if k % 3 else "second", styled, plain),
                 ("human:a", XSS, "base", "first", styled, plain),
                 ("human:b", "base", XSS, "second" if k % 4 else "first", plain, styled)]
    verdicts = tmp_path / "v.csv"
    pd.DataFrame([{"rater": r, "item_id": f"i{k // 3}", "first": a, "second": b, "choice": c, "first_text": ta,
                   "second_text": tb} for k, (r, a, b, c, ta, tb) in enumerate(rows)]).to_csv(verdicts, index=False)
    out = tmp_path / "out"
    for args in (("agree", str(verdicts), "--n-resamples", "50"),
                 ("win-rates", str(verdicts), "--baseline", "base", "--style-control", "--n-resamples", "20")):
        r = run_cli("preference", *args, "--out", str(out))
        assert r.returncode == 0, r.stderr
    data = build_report(out)
    p = data.preference
    assert not data.problems and p.lines and any(r[2] == XSS for r in p.win_rates.rows)
    titles = {f.title.rsplit(" judged by ", 1)[1]: f.title for f in p.figures}
    assert titles["j@t"].startswith("Leaderboard (style-controlled): ")  # recorded style-controlled
    assert titles["human:a"].startswith("Leaderboard: ")  # no finite fit: recorded without style control
    assert any("depend on which systems" in n for n in p.win_rate_notes)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert XSS not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_failed_verdicts_of_a_run_are_counted_per_rater(tmp_path):
    from preference_helpers import write_responses

    responses = write_responses(tmp_path / "r.jsonl", 4)
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"rules": [{"contains": "[Response A]\nDo step 1.", "reply": "Hard to say."}],
                                  "default": "[[B]]"}), encoding="utf-8")
    run = tmp_path / "run"
    r = run_cli("rate", "--items", str(responses), "--pairs", "baseline:base", "--template", "pairwise-comparison",
                "--judge", f"scripted-test-double:{script}", "--samples", "1", "--out", str(run), "--quiet",
                "--max-failure-rate", "1")
    assert r.returncode == 0, r.stderr
    p = build_report(run).preference
    [row] = p.counts.rows
    assert row[1:] == [16, 0, 14, 0, 2]  # 4 items × 2 systems × 2 orders; the baseline's text shown first on q1 fails
    assert "judgelab preference agree" in p.notes[0] and p.bias is None and p.bias_note == NO_BIAS_RECORDED
