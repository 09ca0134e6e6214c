"""The report's Audit section, built in-process from an `audit --out` folder, and the audit's
audit.json and calibration (`--calibration`) that it renders."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import run_cli
from judgelab.audit_results import sample_calibration, sample_confidence
from judgelab.report.html import build_report, write_report
from report_helpers import XSS, audit_study, audit_study_folder, parse

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
