"""``agree`` and ``audit`` print a summary of about 40 lines (details in their files, ``--verbose`` prints
every table), say each caveat once, and say NaN only where a number is missing; the demo says once
which copies were not made and why."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.agree import AgreeReport

CAVEAT = "only 6 item_id values"
TEXTS = ["The sun rose over the quiet town.", "Rain fell all day on the harbour.", "She closed the book and smiled.",
         "town quiet the over rose sun The.", "harbour the on day all fell Rain.", "smiled and book the closed She."]


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    """README's tour: six texts, two scripted judges (one lenient), two people's ratings, lengths."""
    d = tmp_path_factory.mktemp("tour")
    (d / "items.jsonl").write_text("".join(json.dumps({"id": str(i + 1), "system": "AB"[i // 3], "text": t}) + "\n"
                                           for i, t in enumerate(TEXTS)))
    (d / "judge.json").write_text(json.dumps({"rules": [{"contains": "quiet the over", "reply": "2"},
                                                        {"contains": "the on day", "reply": "1"},
                                                        {"contains": "book the closed", "reply": "2"}],
                                              "default": "Rating: 4"}))
    (d / "lenient.json").write_text(json.dumps({"rules": [{"contains": "quiet the", "replies": ["4", "2", "5"]},
                                                          {"contains": "the on", "reply": "3"},
                                                          {"contains": "the closed", "replies": ["3", "4"]}],
                                                "default": "Rating: 5"}))
    (d / "human.csv").write_text("item_id,system,rater,fluency,coherence\n" + "".join(
        f"{i},{'AB'[(i - 1) // 3]},{r},{f},{c}\n" for r, rows in
        (("ana", [(5, 4), (4, 4), (4, 5), (1, 2), (2, 1), (1, 1)]), ("ben", [(4, 4), (5, 4), (4, 4), (2, 1), (1, 2), (2, 2)]))
        for i, (f, c) in enumerate(rows, 1)))
    (d / "lengths.csv").write_text("item_id,system,length\n1,A,7\n2,A,7\n3,A,6\n4,B,7\n5,B,7\n6,B,6\n")
    for name, extra in (("rate", ()), ("lenient", ("--rater", "lenient"))):
        script = "judge.json" if name == "rate" else "lenient.json"
        r = run_cli("rate", "--items", str(d / "items.jsonl"), "--template", "plain-quality", "--judge",
                    f"scripted-test-double:{d / script}", *extra, "--quiet", "--out", str(d / name))
        assert r.returncode == 0, r.stderr
    return d


def _lines(result) -> list[str]:
    return (result.stdout + result.stderr).strip().splitlines()


def test_agree_says_nan_only_where_a_number_is_missing(tour):
    """Every row of this run has all its numbers, and a caveat in its note: no "NaN in N rows"."""
    r = run_cli("agree", str(tour / "rate" / "ratings.csv"), "--human", str(tour / "human.csv"), "--level", "overall",
                "--method", "spearman", "--format", "json")
    assert r.returncode == 0, r.stderr
    tables = json.loads(r.stdout)["tables"]
    assert all(v is not None for row in tables["correlations"] for k, v in row.items() if k != "note")
    assert CAVEAT in tables["correlations"][0]["note"]
    assert "NaN" not in r.stderr
    without_ci = run_cli("agree", str(tour / "rate" / "ratings.csv"), "--human", str(tour / "human.csv"), "--level",
                         "overall", "--method", "spearman", "--n-resamples", "0", "--format", "csv")
    assert "judgelab: note: correlations: NaN in 2 rows" in without_ci.stderr  # ci_low, ci_high are missing there


def test_nan_notes_are_the_notes_of_rows_with_a_nan():
    caveat, reason = "ci: only 6 item_id values", "r: no items rated by both"
    corr = pd.DataFrame({"rater": ["a", "b", "c"], "r": [0.9, float("nan"), 0.8], "note": [caveat, reason, ""]})
    empty = pd.DataFrame()
    report = AgreeReport(corr, empty, empty, empty)
    assert report.nan_notes() == [("correlations", reason, 1)]
    assert report.notes() == [("correlations", caveat, 1), ("correlations", reason, 1)]
    assert report.to_dict()["notes"] == [f"correlations: {caveat} (1 row)", f"correlations: {reason} (1 row)"]


def test_agree_prints_a_summary_and_verbose_every_table(tour):
    args = ["agree", str(tour / "rate" / "ratings.csv"), str(tour / "lenient" / "ratings.csv"), "--human",
            str(tour / "human.csv"), "--level", "overall", "--method", "pearson", "--standardize", "z"]
    short = run_cli(*args, "--out", str(tour / "agree"))
    assert short.returncode == 0, short.stderr
    lines = _lines(short)
    assert len(lines) <= 45, "\n".join(lines)
    assert sum(CAVEAT in line for line in lines) == 1  # said once, not in every row
    assert f"more rows of standardization (all in {tour / 'agree' / 'standardization.csv'})" in short.stdout
    full = run_cli(*args, "--verbose")
    assert full.returncode == 0 and len(_lines(full)) > 2 * len(lines)
    assert full.stdout.count("only 6") >= 4  # each row's note, in its table


def test_audit_prints_about_40_lines_with_calibration_summarised(tour):
    args = ["audit", str(tour / "rate" / "ratings.csv"), str(tour / "lenient" / "ratings.csv"), "--human",
            str(tour / "human.csv"), "--lengths", str(tour / "lengths.csv"), "--per-words", "10", "--calibration"]
    short = run_cli(*args, "--out", str(tour / "audit"))
    assert short.returncode == 0, short.stderr
    lines = _lines(short)
    assert len(lines) <= 45, "\n".join(lines)
    assert sum(CAVEAT in line for line in lines) == 1
    assert sum("ECE is biased upwards" in line for line in lines) == 1  # calibration's caveat once, not per row
    assert "lenient rates coherence 1.39 points higher" not in short.stderr  # the sentences: --verbose
    table = pd.read_csv(tour / "audit" / "leniency.csv")
    assert len(table) > 0 and (table["note"].astype(str).str.contains(CAVEAT)).all()  # the files keep every note
    full = run_cli(*args, "--verbose")
    assert full.returncode == 0 and len(_lines(full)) > 4 * len(lines)
    assert "lenient rates coherence 1.39 points higher" in full.stderr


def test_a_summary_keeps_to_its_line_budget_and_says_where_the_rest_is(tmp_path):
    from judgelab.cli.summary import Part, summary_lines

    big = pd.DataFrame({"rater": [f"j{i}" for i in range(300)], "r": [0.5] * 300,
                        "note": [f"ci: undefined in {i} of 999 resamples" for i in range(300)]})
    parts = [Part("correlations", big, file=tmp_path / "correlations.csv"), Part("other", big.head(50))]
    out = summary_lines(parts, lines=40)
    printed = sum(len(v) + 2 if kind == "table" else 1 for kind, v in out)  # a table: header, rule, rows
    assert printed <= 40 - 3
    texts = [v for kind, v in out if kind == "line"]
    assert any(t.startswith("… ") and "more rows of correlations" in t and str(tmp_path) in t for t in texts)
    assert any("more rows of other (--verbose prints them, --out writes them)" in t for t in texts)
    assert "note: undefined in 0 to 299 of 999 resamples (350 rows)" in texts


def test_the_demo_says_once_which_copies_were_not_made_and_why(tmp_path):
    (tmp_path / "flat.json").write_text('{"default": "Rating: 3"}')
    r = run_cli("demo", "--judge", f"scripted-test-double:{tmp_path / 'flat.json'}", "--n-items", "2", "--quiet",
                "--out", str(tmp_path / "demo"))
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    report = pd.read_csv(tmp_path / "demo" / "perturbation_report.csv")
    made, not_made = int(report["ok"].sum()), int((~report["ok"]).sum())
    assert f"{made} copies made by {report.loc[report['ok'], 'perturbation'].nunique()} perturbations" in text
    reasons = [line for line in text.splitlines() if line.startswith("  ") and "not made," in line]
    assert "left out" not in text and len(reasons) == 1  # one reason: LLM-based without --generator, said once
    assert f"  {not_made} not made, LLM-based: no generator given (--generator): fictional-entities/" in text
    assert "the embedded judge" not in text  # the demo names the judge it ran
