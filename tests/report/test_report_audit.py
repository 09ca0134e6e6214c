"""The report's Audit section, built in-process from an `audit --out` folder, and the audit's
audit.json and calibration (`--calibration`) that it renders."""
from __future__ import annotations

import json
import re
from html import escape as html_escape
from html.parser import HTMLParser

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.audit import AuditReport
from judgelab.audit_results import audit_document, sample_calibration, sample_confidence
from judgelab.audit_run import write_audit_folder
from judgelab.output.record import input_file
from judgelab.report.svg import PALETTE
from judgelab.stats.bias_effect import BiasEffect
from judgelab.report.html import build_report, write_report
from report_helpers import XSS, audit_study, audit_study_folder, parse, tour_audit_folder

@pytest.fixture(scope="module")
def audit_folder(tmp_path_factory):
    return audit_study_folder(tmp_path_factory.mktemp("audit"))


def test_audit_json_holds_the_tables_results(audit_folder):
    doc = json.loads((audit_folder / "audit.json").read_text(encoding="utf-8"))
    assert doc["schema"] == 1 and doc["command"] == "audit"
    leniency = pd.read_csv(audit_folder / "leniency.csv")
    effects = {(e["bias"], e["rater"], e["criterion"]): e for e in doc["effects"]}
    for row in leniency.itertuples(index=False):
        e = effects[(row.bias, row.rater, row.criterion)]
        assert e["estimate"] == pytest.approx(row.estimate) and e["ci_low"] == pytest.approx(row.ci_low)
    calib = pd.read_csv(audit_folder / "calibration.csv").set_index("rater")
    for c in doc["calibration"]:
        assert c["ece"] == pytest.approx(calib.loc[c["rater"], "ece"]) and c["bins"]
    assert len(doc["jury"]) == len(pd.read_csv(audit_folder / "jury_agreement.csv"))
    assert doc["selective"][0]["target_agreement"] == pytest.approx(0.9)


def test_report_shows_the_audit_section_escaped(audit_folder):
    html = (audit_folder / "report.html").read_text(encoding="utf-8")  # written by the audit itself
    page = parse(html)
    ids = page.ids()
    assert {"audit", "t-audit-leniency", "t-audit-length", "t-audit-jury", "t-audit-selective",
            "t-audit-calibration", "fig-audit-reliability-0", "fig-audit-leniency"} <= ids
    assert XSS not in html and "lenient&lt;script&gt;" in html
    text = " ".join(" ".join(page.text).split())
    doc = json.loads((audit_folder / "audit.json").read_text(encoding="utf-8"))
    for line in doc["lines"]:
        assert " ".join(line.split()) in text
    for c in doc["calibration"]:  # ECE and Brier with their intervals, as computed by the audit
        assert f"[{c['ece_ci_low']:.3f}, {c['ece_ci_high']:.3f}]" in text
        assert f"ECE {c['ece']:.3f}, Brier {c['brier']:.3f}" in text
    assert "guaranteed ≥ 90.0% agreement within 1 point among kept items, with probability ≥ 90.0%" in text
    # the reliability diagram: one dot per bin, inline SVG
    svg_circles = html.split('id="fig-audit-reliability-0"', 1)[1].split("</figure>", 1)[0].count("<circle")
    assert svg_circles == len(doc["calibration"][0]["bins"])
    data = build_report(audit_folder)
    assert ("audit", "Audit") in data.sections() and not data.problems
    assert not any(t.caption.startswith("leniency") for t in data.other_tables)  # shown once, in the section


def test_a_foreign_audit_json_is_a_problem_line_not_a_section(audit_folder, tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    for name in ("run.json", "leniency.csv"):
        (folder / name).write_bytes((audit_folder / name).read_bytes())
    (folder / "audit.json").write_text(json.dumps({"schema": 99}), encoding="utf-8")
    data = build_report(folder)
    assert data.audit is None and any(p.startswith("Audit: not shown") for p in data.problems)
    assert any(t.id == "leniency" or "leniency" in t.caption for t in data.other_tables)  # still shown, as a table
    write_report(folder)


def test_self_check_folder_shows_the_self_check(tmp_path):
    res = run_cli("audit", "--self-check", "--n-items", "20", "--n-studies", "2", "--n-resamples", "20",
                  "--out", str(tmp_path / "sc"), "--format", "csv")
    assert res.returncode == 0, res.stderr
    page = parse((tmp_path / "sc" / "report.html").read_text(encoding="utf-8"))
    assert "t-audit-self-check" in page.ids()


def test_sample_confidence_by_hand():
    rows = [  # item 1: samples 3, 3, 5 (mean 3.67; the two 3s within 1 point): confidence 2/3; humans 3 -> agreed
        *({"item_id": "1", "system": "s", "criterion": "c", "rater": "j", "sample": k, "status": "ok", "score": v}
          for k, v in enumerate([3, 3, 5])),
        # item 2: samples 1, 1, a failed one: confidence 1; humans 4 and 5 (mean 4.5) -> not agreed
        *({"item_id": "2", "system": "s", "criterion": "c", "rater": "j", "sample": k, "status": st, "score": v}
          for k, (v, st) in enumerate([(1, "ok"), (1, "ok"), (None, "unparsed")])),
        # item 3: one sample only: left out
        {"item_id": "3", "system": "s", "criterion": "c", "rater": "j", "sample": 0, "status": "ok", "score": 3},
        *({"item_id": i, "system": "s", "criterion": "c", "rater": f"human:{h}", "sample": 0, "status": "ok",
           "score": v} for i, h, v in [("1", "a", 3), ("2", "a", 4), ("2", "b", 5), ("3", "a", 3)]),
    ]
    df = pd.DataFrame(rows)
    t = sample_confidence(df, "j", "c", 1.0).set_index("item_id")
    assert list(t.index) == ["1", "2"]
    assert t.loc["1", "confidence"] == pytest.approx(2 / 3) and t.loc["1", "agreed"] == 1.0
    assert t.loc["2", "confidence"] == 1.0 and t.loc["2", "agreed"] == 0.0
    (res,) = sample_calibration(df, 1.0, n_resamples=0)
    # one bin per confidence value: item 1 in bin 2/3, item 2 in bin 1: ECE = (|1 - 2/3| + |0 - 1|) / 2
    assert res.result.ece == pytest.approx((1 / 3 + 1) / 2)
    assert res.result.brier == pytest.approx(((2 / 3 - 1) ** 2 + 1) / 2)
    assert [b["bin_low"] for b in res.result.bins] == pytest.approx([2 / 3, 1.0])


def test_calibration_without_samples_is_one_line(tmp_path):
    judges, humans, _ = audit_study(20)
    judges[judges["sample"] == 0].to_csv(tmp_path / "r.csv", index=False)
    humans.to_csv(tmp_path / "h.csv", index=False)
    res = run_cli("audit", str(tmp_path / "r.csv"), "--human", str(tmp_path / "h.csv"), "--calibration",
                  "--n-resamples", "0", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "--calibration needs a judge with two or more samples" in res.stderr
    assert not (tmp_path / "o").exists()


# --- the section's summary, words, charts and units ----------------------------------------------------------

@pytest.fixture(scope="module")
def tour_audit(tmp_path_factory):
    return tour_audit_folder(tmp_path_factory.mktemp("tour"))


class _Grid(HTMLParser):
    """The summary grid of a page: {(judge, criterion): [(bias, text, interval) of each effect marked detected]}."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
        self.criteria: list[str] = []
        self.part, self.judge, self.col, self.text, self.marked, self.detected = "", "", -1, "", [], False
        self.effect: tuple[str, str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == "t-audit-summary":
            self.part = "table"
        elif self.part and tag in ("thead", "tbody"):
            self.part = tag
        elif self.part == "tbody" and tag == "tr":
            self.col = -1
        elif self.part == "tbody" and tag == "td":
            self.col, self.marked = self.col + 1, []
            self.detected = "audit-detected" in (a.get("class") or "")
        elif self.part == "tbody" and tag == "span" and "audit-effect" in (a.get("class") or ""):
            self.effect = (a["data-bias"], a["title"])
        if self.part and tag in ("th", "span"):
            self.text = ""

    def handle_endtag(self, tag):
        text = " ".join(self.text.split())
        if self.part == "thead" and tag == "th" and text != "judge":
            self.criteria.append(text)
        elif self.part == "tbody" and tag == "th":
            self.judge = text
        elif self.part == "tbody" and tag == "span" and self.effect is not None:
            assert self.detected, "an effect marked outside a detected cell"
            self.marked.append((self.effect[0], text, self.effect[1]))
            self.effect = None
        elif self.part == "tbody" and tag == "td":
            self.cells[(self.judge, self.criteria[self.col])] = self.marked
        elif tag == "table":
            self.part = ""

    def handle_data(self, data):
        if self.part:
            self.text += data


def _grid(html: str) -> dict[tuple[str, str], list[str]]:
    g = _Grid()
    g.feed(html)
    return g.cells


def _effect(bias, rater, criterion, estimate, low, high, null=0.0, line=""):
    return BiasEffect(bias, rater, criterion, estimate, low, high, null, 12, 12, "", line or f"{rater} {bias} {criterion}.")


#: A planted audit: which effect is detected is set by its interval (the audit's own verdict, BiasEffect.detected).
PLANTED = [
    _effect("leniency", "judge-a", "fluency", 0.8, 0.4, 1.2),                    # detected
    _effect("spread_ratio", "judge-a", "fluency", 0.9, 0.7, 1.1, null=1.0),      # not detected
    _effect("scale_point:5", "judge-a", "coherence", 0.3, 0.1, 0.5),              # detected
    _effect("scale_point:1", "judge-a", "coherence", -0.1, -0.3, 0.1),            # not detected
    _effect("leniency", "judge-b", "fluency", -0.1, -0.4, 0.2),                   # not detected
    _effect("spread_ratio", "judge-b", "coherence", 0.5, 0.3, 0.7, null=1.0),     # detected
    _effect("length", "judge-b", "coherence", 0.2, 0.05, 0.35),                   # detected
    _effect("leniency", "human:x", "fluency", 0.5, 0.2, 0.8),                     # detected, a human: not in the grid
    _effect("leniency", "human:y", "fluency", -0.5, -0.8, -0.2),
    _effect("position_first", "judge-b", "", 0.1, 0.02, 0.18),                   # detected, on pairs of no criterion
]


def _planted_folder(root, effects=PLANTED, jury=None, per_words=10.0, inputs=()):
    report = AuditReport(tuple(effects), {}, {"n_resamples": 99, "seed": 0, "per_words": per_words})
    doc = audit_document(report, jury=jury, jury_level="overall" if jury is not None else None)
    return write_audit_folder(root / "planted", "audit", "Judge audit", [], report.lines(),
                              {"settings": report.settings}, doc, list(inputs))


def test_summary_grid_marks_exactly_the_biases_the_audit_detected(tmp_path):
    folder = _planted_folder(tmp_path)
    html = (folder / "report.html").read_text(encoding="utf-8")
    cells = _grid(html)
    assert set(cells) == {(j, c) for j in ("judge-a", "judge-b") for c in ("fluency", "coherence", "all criteria")}
    expected = {(e.rater, e.criterion or "all criteria", e.bias) for e in PLANTED
                if e.detected and not e.rater.startswith("human:")}
    marked = {(j, c, bias) for (j, c), found in cells.items() for bias, _, _ in found}
    assert marked == expected and len(expected) == 5
    assert cells[("judge-a", "fluency")] == [("leniency", "+0.80", "leniency: 95% CI +0.40 to +1.20")]
    assert cells[("judge-a", "coherence")] == [("scale_point:5", "5 +0.30", "scale point 5: 95% CI +0.10 to +0.50")]
    assert "not measured" in html.split('id="t-audit-summary"', 1)[1].split("</table>", 1)[0]  # judge-a on pairs
    # the summary leads the section: the grid comes before the lines in words and the charts
    section = html.split('<section id="audit"', 1)[1]
    assert section.index('id="t-audit-summary"') < section.index("<h3>In words") < section.index('id="fig-audit-leniency"')


def test_in_words_only_detected_effects_by_judge_humans_collapsed(tmp_path):
    folder = _planted_folder(tmp_path)
    html = (folder / "report.html").read_text(encoding="utf-8")
    words = html.split("<h3>In words", 1)[1]
    shown = words.split("<details", 1)[0]  # before the first toggle: what is on the page
    detected = [e for e in PLANTED if e.detected and not e.rater.startswith("human:")]
    for e in PLANTED:
        assert (e.line in shown) == (e in detected), e
    assert shown.index("judge-a") < shown.index(detected[0].line) < shown.index("judge-b")  # grouped by judge
    humans = re.search(r'<details class="audit-humans">(.*?)</details>', html, re.S)
    assert humans is not None and "human:x leniency fluency." in humans.group(1) and "human:y" in humans.group(1)
    assert "1 of 2 effects detected" not in humans.group(1) and "2 of 2 effects detected" in humans.group(1)
    assert not re.search(r'<details class="audit-humans"[^>]*\bopen\b', html)  # collapsed
    for table_id in ("audit-leniency", "audit-scale_points", "audit-length"):  # raw tables behind toggles
        before = html.split(f'id="t-{table_id}"', 1)[0]
        assert before.rfind("<details") > before.rfind("</details>"), table_id


def test_units_follow_per_words_and_notes_never_begin_with_a_separator(tmp_path):
    effects = [*PLANTED, BiasEffect("leniency", "judge-c", "fluency", 0.0, -0.1, 0.1, 0.0, 5, 5, "; only 5 items", "c.")]
    jury = pd.DataFrame([{"rater": "jury:mean - judge-a", "criterion": "fluency", "level": "overall", "method": "kendall",
                          "r": 0.05, "p": float("nan"), "n": 12, "n_clusters": 12, "ci_low": -0.1, "ci_high": 0.2,
                          "note": "; paired difference, jury minus the best single judge"}])
    folder = _planted_folder(tmp_path, effects, jury, per_words=25.0)
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert "points per 25 words" in html and "per length unit" not in html
    cells = re.findall(r'<td class="text"[^>]*>([^<]*)</td>', html)
    assert "only 5 items" in cells and "paired difference, jury minus the best single judge" in cells
    assert not any(c.startswith(";") for c in cells)


def test_the_readme_tour_audit_report(tour_audit):
    html = (tour_audit / "report.html").read_text(encoding="utf-8")
    assert "No judgments in this folder" not in html
    data = build_report(tour_audit)
    assert not data.problems and data.items is not None and data.items.has_human  # the judgments the audit read
    assert "per length unit" not in html and "points per 10 words" in html
    assert "per 10 words" in (tour_audit / "README.md").read_text(encoding="utf-8")  # the table's description
    doc = json.loads((tour_audit / "audit.json").read_text(encoding="utf-8"))
    detected = {(e["rater"], e["criterion"]) for e in doc["effects"] if e["detected"] and not e["rater"].startswith("human:")}
    marked = {(j, c, bias) for (j, c), found in _grid(html).items() for bias, _, _ in found}
    assert marked == {(e["rater"], e["criterion"], e["bias"]) for e in doc["effects"]
                      if e["detected"] and not e["rater"].startswith("human:")} and {m[:2] for m in marked} == detected
    fig = html.split('id="fig-audit-leniency"', 1)[1].split("</figure>", 1)[0]  # judges and humans told apart
    assert PALETTE[0] in fig and PALETTE[1] in fig and "human (against the other humans)" in fig
    assert 'id="fig-audit-scale-point-0"' in html  # scale use drawn, not only tabled


def test_an_audit_of_a_score_file_says_where_its_ratings_are(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text("x\n1\n", encoding="utf-8")
    data = build_report(_planted_folder(tmp_path, inputs=[input_file("hanna_scores", scores)]))
    assert not any(n.startswith("No judgments in this folder") for n in data.notes)
    assert any(str(scores) in n and "score file" in n for n in data.notes)


def test_jury_verdict_lines_are_the_terminals_and_lead_the_section(tmp_path):
    judges, humans, _ = audit_study(30)
    judges.to_csv(tmp_path / "r.csv", index=False)
    humans.to_csv(tmp_path / "h.csv", index=False)
    res = run_cli("audit", str(tmp_path / "r.csv"), "--human", str(tmp_path / "h.csv"), "--jury", "mean",
                  "--jury-level", "overall", "--n-resamples", "20", "--out", str(tmp_path / "o"))
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "o" / "audit.json").read_text(encoding="utf-8"))
    assert doc["jury_lines"] and all("Kendall tau difference" in line for line in doc["jury_lines"])
    printed = [line.removeprefix("judgelab: ") for line in res.stderr.splitlines()]
    assert all(line in printed for line in doc["jury_lines"])  # the page's verdict is the terminal's
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    section = html.split('<section id="audit"', 1)[1]
    for line in doc["jury_lines"]:
        assert section.index(html_escape(line, quote=False)) < section.index("<h3>In words")
    assert 'id="fig-audit-jury"' in html and 'id="fig-audit-jury-difference"' in html


def test_jury_line_without_an_interval_says_so():
    from judgelab.audit_results import jury_lines

    table = pd.DataFrame([{"rater": "jury:mean - a", "criterion": "c", "method": "kendall", "r": 0.0,
                           "ci_low": float("nan"), "ci_high": float("nan")},
                          {"rater": "a", "criterion": "c", "method": "kendall", "r": 0.5, "ci_low": 0.1, "ci_high": 0.8}])
    assert jury_lines(table) == ["c: jury:mean - a: Kendall tau difference +0.000 (no 95% interval: see the jury "
                                 "table's note)"]


def test_long_charts_repeat_the_axis_on_top_and_split_per_criterion(tmp_path):
    raters = [f"judge-{k}" for k in range(5)] + [f"human:{k}" for k in range(3)]
    effects = [_effect("leniency", r, c, 0.1 * k, 0.1 * k - 0.2, 0.1 * k + 0.2) for k, r in enumerate(raters)
               for c in ("a", "b")]
    folder = _planted_folder(tmp_path, effects)
    svg = (folder / "report.html").read_text(encoding="utf-8").split('id="fig-audit-leniency"', 1)[1].split("</svg>")[0]
    ticks = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="middle">(-?[\d.]+)</text>', svg)
    assert len({y for _, y, _ in ticks}) == 2 and len(ticks) % 2 == 0  # 16 rows: tick labels above and below
    many = [_effect("leniency", f"judge-{k}", c, 0.0, -0.1, 0.1) for k in range(13) for c in ("a", "b")]
    html = (_planted_folder(tmp_path / "many", many)).joinpath("report.html").read_text(encoding="utf-8")
    assert 'id="fig-audit-leniency-0"' in html and 'id="fig-audit-leniency-1"' in html  # 26 rows: one per criterion
