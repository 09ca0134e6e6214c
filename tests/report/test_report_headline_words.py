"""The report's first screen in words and only what was compared (in-process, no browser):
the verdict sentence's rule, counts named by what they count, the humans' rows restricted to the
texts the judge rated (one mean for the card, the table and the chart), a judge and humans on
different scales never on one axis with an equality line, systems in natural order, labels that fit."""
from __future__ import annotations

import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from judgelab.agree_run import run_agree, unit_noun
from judgelab.report.headline import plural, strength_word, verdict_words
from judgelab.report.html import build_report, render_report
from judgelab.report.html_model import natural_key
from judgelab.report.svg import count_scatter, interval_chart, Point, wrap_label, label_width

JUDGE = "scripted-test-double@geval-summeval"


# -- the wording rule ------------------------------------------------------------------------------
def test_verdict_says_inconclusive_when_the_interval_includes_zero():
    words = verdict_words(0.28, -0.08, 0.56, 40, "summaries", 10, "articles")
    assert words.startswith("Inconclusive: the interval includes 0 with 40 summaries")
    assert "cannot be trusted yet" in words


def test_verdict_says_too_few_without_an_interval_from_few_clusters():
    words = verdict_words(0.5, None, None, 4, "stories", 4, "stories")
    assert words.startswith("Too few stories for an interval (4, with 4 stories)")
    assert "no verdict yet" in verdict_words(0.5, None, None, 40, "texts", 40, "items").lower()


@pytest.mark.parametrize("r,low,word,floor", [(0.95, 0.91, "Very strong", "very strong"), (0.75, 0.45, "Strong", "moderate"),
                                              (0.61, 0.13, "Moderate", "weak"), (0.2, 0.05, "Weak", "negligible")])
def test_verdict_names_the_strength_of_r_and_of_the_interval_lower_end(r, low, word, floor):
    words = verdict_words(r, low, 0.99, 100, "summaries", 10, "articles")
    assert words.startswith(f"{word} agreement: the interval lies above 0 with 100 summaries")
    assert f"is {floor})" in words


def test_verdict_below_zero_and_with_a_caveat():
    words = verdict_words(-0.6, -0.8, -0.3, 30, "texts", 12, "items", caveat="only 12 item_id values")
    assert words.startswith("Moderate disagreement") and "ranks against the humans" in words
    assert "Few items (12): the interval may be too narrow." in words
    assert "No verdict" in verdict_words(None, None, None, 0, "texts")


def test_words_helpers():
    assert [plural(w, 2) for w in ("summary", "story", "article", "day", "box")] == \
        ["summaries", "stories", "articles", "days", "boxes"]
    assert plural("summary", 1) == "summary"
    assert strength_word(0.399) == "weak" and strength_word(-0.4) == "moderate" and strength_word(0.05) == "negligible"
    assert [unit_noun(d) for d in ("the summary to rate", "the source article", "the story fragment ([STORY])",
                                   "the writing prompt the story was based on ([PROMPT]); needed by relevance", "")] == \
        ["summary", "article", "fragment", "prompt", ""]


# -- a judge that rated some summaries of one system, humans for every system -----------------------------
def _humans(path, systems=("M0", "M1", "M11"), docs=10, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for d in range(docs):
            for s in systems:
                row = {"doc_id": f"doc{d}", "system": s, "source": f"article {d}", "reference": "ref",
                       "summary": f"summary {d} by {s}"}
                row.update({c: round(float(rng.uniform(1, 5)), 2) for c in ("coherence", "consistency", "fluency", "relevance")})
                fh.write(json.dumps(row) + "\n")
    return path


def _judge(human_path, criterion, system, docs, scale_hi, seed=1):
    rng = np.random.default_rng(seed)
    rows = [json.loads(line) for line in human_path.read_text(encoding="utf-8").splitlines()]
    out = []
    for row in rows:
        if row["system"] == system and int(row["doc_id"][3:]) < docs:
            score = float(np.clip(np.round(1 + (scale_hi - 1) * (row[criterion] - 1) / 4 + rng.normal(0, 0.3)), 1, scale_hi))
            out.append({"item_id": row["doc_id"], "system": system, "group": None, "criterion": criterion, "rater": JUDGE,
                        "sample": 0, "score": score, "status": "ok"})
    return pd.DataFrame(out)


@pytest.fixture
def one_system(tmp_path):
    humans = _humans(tmp_path / "experts.jsonl")
    judged = pd.concat([_judge(humans, "coherence", "M11", 8, 5), _judge(humans, "fluency", "M11", 8, 3)], ignore_index=True)
    run = run_agree([judged], humans, methods=("spearman",), n_resamples=199, out=tmp_path / "agreement")
    return run, tmp_path / "agreement"


def test_human_rows_are_only_the_texts_the_judge_rated_with_one_mean(one_system):
    run, _ = one_system
    rows = run.record.human_summary.rows
    assert {r.system for r in rows} == {"M11"} and {r.criterion for r in rows} == {"coherence", "fluency"}
    assert all(r.n == 8 for r in rows)
    by = {m.criterion: m for m in run.record.matched}
    for r in rows:  # the Results row's mean is the card's: the mean over the pairs compared
        assert r.mean == pytest.approx(by[r.criterion].human_mean)


def test_a_file_of_means_is_not_counted_as_one_rater(one_system):
    run, _ = one_system
    labels = {r.rater for r in run.record.human_summary.rows}
    assert labels == {"humans (mean of an unstated number of raters)"}


def test_the_raters_each_mean_pools_are_recorded_and_shown_when_given(tmp_path):
    from judgelab.agree_run import HumanFile
    from judgelab.output.record import read_record
    from judgelab.report.html import build_report, render_report

    humans = _humans(tmp_path / "experts.jsonl")
    judged = _judge(humans, "coherence", "M11", 8, 5)
    run = run_agree([judged], HumanFile(humans, raters_per_mean=3), methods=("spearman",), n_resamples=99,
                    out=tmp_path / "agreement")
    assert {r.rater for r in run.record.human_summary.rows} == {"humans (mean of 3 raters)"}
    [given] = [i for i in read_record(tmp_path / "agreement").step("agree").inputs if i.role == "human"]
    assert given.options["raters_per_mean"] == 3
    page = render_report(build_report(tmp_path / "agreement"))
    assert "humans (mean of 3 raters)" in page and "mean of 1 rater" not in page and "unstated" not in page


def test_raters_per_mean_of_a_file_naming_its_raters_or_below_one_is_one_line(tmp_path):
    from conftest import one_line_error, run_cli

    humans = _humans(tmp_path / "experts.jsonl")
    ratings = tmp_path / "ratings.csv"
    _judge(humans, "coherence", "M11", 8, 5).to_csv(ratings, index=False)
    people = tmp_path / "people.csv"
    people.write_text("item_id,system,rater,criterion,score\n" + "".join(
        f"doc{d},M11,{r},coherence,{1 + (d + k) % 5}\n" for d in range(8) for k, r in enumerate(("ann", "bob"))))
    one_line_error(run_cli("agree", str(ratings), "--human", str(people), "--raters-per-mean", "3", "--n-resamples", "0"),
                   "--raters-per-mean", "names its raters")
    one_line_error(run_cli("agree", str(ratings), "--human", str(humans), "--raters-per-mean", "0", "--n-resamples", "0"),
                   "--raters-per-mean must be 1 or more")


def test_the_record_names_units_and_the_judge_scale(one_system):
    run, _ = one_system
    by = {m.criterion: m for m in run.record.matched}
    assert by["coherence"].text_unit == "summary" and by["coherence"].cluster_unit == "summary"
    assert by["coherence"].judge_scale == (1.0, 5.0) and by["coherence"].same_scale
    assert by["fluency"].judge_scale == (1.0, 3.0) and not by["fluency"].same_scale  # experts' means reach 5


def test_report_names_no_other_system_and_says_the_verdict(one_system):
    _, folder = one_system
    data = build_report(folder)
    assert data.headline is not None
    rows = {r.criterion: r for r in data.headline.rows}
    assert rows["coherence"].counted == "8 summaries" and rows["coherence"].resampled == "each resampled"
    assert all(r.verdict for r in rows.values())
    page = render_report(data)
    assert not re.search(r"\bM(0|1)\b", page)  # only M11 was compared
    assert "Can the judge be trusted yet?" in page and rows["fluency"].verdict in page
    assert "humans (mean of 1 rater)" not in page


def test_different_scales_are_never_one_axis_with_an_equality_line(one_system):
    _, folder = one_system
    data = build_report(folder)
    fluency = next(r for r in data.headline.rows if r.criterion == "fluency")
    coherence = next(r for r in data.headline.rows if r.criterion == "coherence")
    assert fluency.scales.startswith("Not comparable as means: the judge rated on 1–3")
    assert fluency.figure is not None and "stroke-dasharray" not in fluency.figure.svg
    assert "no equality line" in fluency.figure.svg
    page = render_report(data)
    assert f"judge <strong>{fluency.judge_mean:.2f}</strong>" not in page  # the two means are not printed side by side
    assert not coherence.scales
    figure = next(f for f in data.results.figures if "fluency" in f.title)
    assert "different scales (judge on 1–3" in figure.description


def test_results_list_systems_in_natural_order(tmp_path):
    systems = ("M0", "M1", "M2", "M10", "M11")
    humans = _humans(tmp_path / "experts.jsonl", systems=systems)
    judged = pd.concat([_judge(humans, "coherence", s, 6, 5) for s in systems], ignore_index=True)
    run_agree([judged], humans, methods=("spearman",), n_resamples=99, out=tmp_path / "agreement")
    table = build_report(tmp_path / "agreement").results.summary
    judge_rows = [row[1] for row in table.rows if row[0] == JUDGE]
    assert judge_rows == list(systems)
    assert sorted(["M10", "M2", "M1", "M0"], key=natural_key) == ["M0", "M1", "M2", "M10"]


# -- labels that fit -----------------------------------------------------------------------------------
def test_long_axis_labels_are_wrapped_to_the_plot():
    label = "judge (scripted-test-double@geval-summeval+a-long-variant-name), mean of samples"
    lines = wrap_label(label, 300)
    assert " ".join(lines).replace(" ", "") == label.replace(" ", "") and all(label_width(x) <= 300 for x in lines)
    svg = count_scatter([1, 2, 3], [1, 2, 3], "f", "t", "d", label, "humans, mean of raters")
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    assert all(label_width(x) <= width for x in lines)
    assert "<tspan" in svg and "stroke-dasharray" in svg  # same scale: the equality line is drawn


def test_a_note_in_an_interval_chart_fits_its_width():
    note = "no group has a defined correlation (each needs three systems with varied ratings)"
    svg = interval_chart([Point("a", None, note=note)], "f", "t", "d", "r", "rater")
    width = float(re.search(r'width="(\d+)"', svg).group(1))
    left = float(re.search(r'<text x="([\d.]+)" y="[\d.]+" fill="#777">', svg).group(1))
    assert left + label_width(note) <= width


def test_agree_writes_the_human_means_the_page_shows(one_system):
    run, folder = one_system
    csv = pd.read_csv(folder / "human_means.csv")
    assert set(csv["system"]) == {"M11"} and list(csv["items"]) == [8, 8]
    data = build_report(folder)
    card = {r.criterion: r.human_mean for r in data.headline.rows}
    table = {row[2]: row[5] for row in data.results.summary.rows if str(row[0]).startswith("humans")}
    for row in csv.itertuples(index=False):  # one mean per cell: the CSV's, the Results table's and the card's
        assert row.mean == pytest.approx(table[row.criterion]) == pytest.approx(card[row.criterion])
    assert "human_means.csv" not in {t.caption for t in data.other_tables}


# -- ratings collected with annotate beside imported humans --------------------------------------------------
def _annotated(tmp_path_factory, tmp_path):
    import shutil

    from report_helpers import rate_agree_folder

    from judgelab.store import Judgment, Store

    folder = tmp_path / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), folder)
    with Store(folder / "store.sqlite") as store:
        judged = store.ratings()
        first = judged[~judged["rater"].str.startswith("human:")].iloc[0]
        store.put(judgments=[Judgment(str(first.item_id), str(first.system), None, str(first.criterion), "human:alice", 0,
                                      5.0, None, None, None, "ok", None)])
    return folder, first


def _unit(folder, first, **kwargs):
    from report_helpers import decode_units, parse

    page = render_report(build_report(folder, **kwargs))
    units = decode_units(parse(page))
    return page, next(u for u in units if (u["item_id"], u["criterion"], u["system"]) ==
                      (str(first.item_id), str(first.criterion), str(first.system)))


def test_annotated_ratings_are_shown_apart_from_imported_humans(tmp_path_factory, tmp_path):
    folder, first = _annotated(tmp_path_factory, tmp_path)
    page, unit = _unit(folder, first)
    names = [name for name, _ in unit["humans"]]
    assert "human:alice (annotate, not in the human mean)" in names
    imported = [v for name, v in unit["humans"] if not name.startswith("human:alice")]
    assert unit["human"] == pytest.approx(sum(imported) / len(imported))  # alice's 5 is not averaged in
    assert "are not in the human mean" in page and "--pool-humans" in page


def test_pooling_annotated_ratings_only_when_asked_and_said(tmp_path_factory, tmp_path):
    folder, first = _annotated(tmp_path_factory, tmp_path)
    page, unit = _unit(folder, first, pool_humans=True)
    values = [v for _, v in unit["humans"]]
    assert ["human:alice", 5.0] in unit["humans"]
    assert unit["human"] == pytest.approx(sum(values) / len(values))
    assert "Pooled as asked (--pool-humans)" in page


def test_humans_are_counted_as_people_never_a_file_of_means_as_one():
    from judgelab.summary import humans_label

    assert humans_label({"human:a", "human:b", "human:c"}) == "humans (mean of 3 raters)"
    assert humans_label({"human:mean"}) == "humans (mean of an unstated number of raters)"
    assert humans_label({"human:mean"}, 3) == "humans (mean of 3 raters)"
    assert humans_label({"human:mean", "human:alice"}) == \
        "humans (mean of 1 rater and the file's means of an unstated number of raters each)"


def test_a_legend_of_long_names_fits_its_chart():
    from judgelab.report.svg import BarSeries, bar_chart

    names = ["scripted-test-double@geval-summeval+variant-one", "humans (mean of an unstated number of raters)"]
    for svg in (interval_chart([Point("a", 0.5, 0.4, 0.6, 0), Point("b", 0.6, 0.5, 0.7, 1)], "f", "t", "d", "r", "rater",
                               series_names=names),
                bar_chart(["a"], [BarSeries(n, [1.0]) for n in names], "g", "t", "d", "D", "perturbation")):
        width = float(re.search(r'width="(\d+)"', svg).group(1))
        last = [m for m in re.finditer(r'<text x="([\d.]+)" y="16(?:\.0)?">([^<]*)</text>', svg)][-1]
        assert float(last.group(1)) + label_width(html.unescape(last.group(2))) <= width
