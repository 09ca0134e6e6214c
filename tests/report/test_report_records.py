"""The report renders the folder's record (results.json) and computes nothing: the numbers on the page are
the record's, a newer record is refused, an older folder is read through the record rebuilt from its files,
and report/ and output/ import no analysis module (imports inside functions included)."""
from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path


from judgelab.cli import main
from judgelab.output.record import RECORD_SCHEMA, read_record
from judgelab.report.html import build_report
from test_report_means import _Table

SRC = Path(__file__).resolve().parents[2] / "src" / "judgelab"


def _cli(*args: str) -> int:
    """``judgelab ARGS`` in-process: its exit status."""
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _rate_folder(tmp_path: Path) -> Path:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"i{k}", "text": f"Story {k}.", "system": "s"}) + "\n" for k in range(5)))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"contains": f"Story {k}.", "reply": f"Rating: {1 + k % 5}"}
                                            for k in range(5)], "default": "Rating: 3"}))
    out = tmp_path / "out"
    assert _cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--criteria", "likability",
                "--samples", "2", "--out", str(out), "--quiet") == 0
    return out


def _set_means(node, value):
    if isinstance(node, dict):
        return {k: value if k == "mean" else _set_means(v, value) for k, v in node.items()}
    if isinstance(node, list):
        return [_set_means(v, value) for v in node]
    return node


def _summary_cells(html: str) -> list[dict[str, str]]:
    page = _Table("t-summary")
    page.feed(html)
    return [dict(zip(page.header, row)) for row in page.rows]


def test_the_page_shows_the_mean_the_record_holds(tmp_path, capsys):
    out = _rate_folder(tmp_path)
    before = _summary_cells((out / "report.html").read_text(encoding="utf-8"))
    assert before and all(float(r["mean"]) == 3.0 for r in before)  # items rated 1..5: the mean of item means
    path = out / "results.json"
    path.write_text(json.dumps(_set_means(json.loads(path.read_text()), 3.14159)))
    assert _cli("report", str(out)) == 0, capsys.readouterr().err
    html = (out / "report.html").read_text(encoding="utf-8")
    after = _summary_cells(html)
    assert after and all(r["mean"] == "3.14159" for r in after), after  # the cell's exact value: the record's
    assert ">3.142<" in html  # shown with the column's three decimals


def test_cost_time_and_failures_are_drawn_from_the_record(tmp_path, capsys):
    """The latency, tokens and status counts the page shows are the record's (results.json's ``call_costs``,
    counted once when rate wrote the folder), not recounted from the store."""
    out = _rate_folder(tmp_path)
    doc = json.loads((out / "results.json").read_text())
    costs = doc["steps"][-1]["results"]["call_costs"]
    [rater] = costs["raters"]
    assert rater["judgments"] == 10 and rater["calls"] >= 5 and rater["latency_sum_s"] is not None  # 5 items × 2 samples
    assert [(s["status"], s["judgments"], s["share"]) for s in costs["statuses"]] == [("ok", 10, 1.0)]
    rater.update(latency_p95_s=7.25, prompt_tokens=123456)
    costs["statuses"] = [{**costs["statuses"][0], "judgments": 7, "share": 0.7},
                         {"rater": rater["rater"], "criterion": None, "status": "refusal", "judgments": 3, "share": 0.3}]
    (out / "results.json").write_text(json.dumps(doc))
    data = build_report(out)
    row = dict(zip(data.cost.table.columns, data.cost.table.rows[0]))
    assert row["call latency, 95th percentile (s)"] == 7.25 and row["prompt tokens"] == 123456
    assert (data.failures.total, data.failures.failed) == (10, 3)
    shown = {r[1]: r[2] for r in data.failures.by_status.rows}
    assert shown == {"ok": 7, "refusal": 3}


def test_a_record_of_a_newer_schema_is_refused_in_one_line(tmp_path, capsys):
    out = _rate_folder(tmp_path)
    doc = json.loads((out / "results.json").read_text())
    doc["schema_version"] = RECORD_SCHEMA + 98
    (out / "results.json").write_text(json.dumps(doc))
    capsys.readouterr()
    code = _cli("report", str(out))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"schema_version {RECORD_SCHEMA + 98}" in err, err


def test_an_older_folder_renders_through_the_rebuilt_record(tmp_path):
    out = _rate_folder(tmp_path)
    old = tmp_path / "old"
    shutil.copytree(out, old)
    (old / "results.json").unlink()  # as a folder written before judgelab recorded results
    assert read_record(old) is None
    new_rows, old_rows = build_report(out).results.summary.rows, build_report(old).results.summary.rows
    mean = build_report(out).results.summary.columns.index("mean")
    assert [r[mean] for r in old_rows] == [r[mean] for r in new_rows]  # summary.csv's means, as recorded
    assert "not recorded in this folder" in build_report(old).results.summary.note  # no interval, and why
    assert any("before judgelab recorded results.json" in n for n in build_report(old).notes)
    assert not any("before judgelab recorded" in n for n in build_report(out).notes)
    assert not (old / "results.json").exists()  # reading writes nothing


def test_every_step_lists_its_files_and_inputs(tmp_path):
    from judgelab.agree_run import run_agree

    out = _rate_folder(tmp_path)
    humans = tmp_path / "h.csv"
    humans.write_text("item_id,rater,criterion,score,system\n" + "".join(
        f"i{k},{r},likability,{1 + (k + j) % 5},s\n" for k in range(5) for j, r in enumerate(("ann", "bob"))))
    run = run_agree([out / "ratings.csv"], humans, out=out)
    record = read_record(out)
    assert [s.kind for s in record.steps] == ["rate", "agree"]
    agree = record.step("agree")
    assert {f.table for f in agree.files} >= {"correlations", "human_baseline", "self_consistency", "williams"}
    human = agree.inputs_of("human")[0]
    assert human.absolute == str(humans.resolve()) and len(human.sha256 or "") == 64 and human.options["layout"] == "auto"
    assert run.record.human_summary.rows and record.result("human_summary")["rows"]


ANALYSIS = ("judgelab.stats", "judgelab.agree", "judgelab.agree_run", "judgelab.agree_gate", "judgelab.agree_standardize",
            "judgelab.audit", "judgelab.audit_results", "judgelab.summary", "judgelab.escalate", "judgelab.dhp.analysis",
            "judgelab.recipes", "judgelab.contamination", "judgelab.pairwise", "judgelab.annotate.estimate",
            "judgelab.rate")


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_report_and_output_import_no_analysis_module():
    bad = {}
    for package in ("report", "output"):
        for path in sorted((SRC / package).glob("*.py")):
            hits = sorted(m for m in _imports(path) if any(m == a or m.startswith(a + ".") for a in ANALYSIS))
            if hits:
                bad[f"{package}/{path.name}"] = hits
    assert not bad, bad


def _humans(tmp_path: Path) -> Path:
    humans = tmp_path / "h.csv"
    humans.write_text("item_id,rater,criterion,score,system\n" + "".join(
        f"i{k},{r},likability,{1 + (k + j) % 5},s\n" for k in range(5) for j, r in enumerate(("ann", "bob"))))
    return humans


def test_library_workflows_write_a_folder_only_when_asked(tmp_path):
    from judgelab import run_agree, run_audit

    out = _rate_folder(tmp_path)
    before = sorted(p.name for p in out.iterdir())
    agreed = run_agree([out / "ratings.csv"], _humans(tmp_path), n_resamples=50)
    audited = run_audit([out / "ratings.csv"], [_humans(tmp_path)], n_resamples=50)
    assert agreed.out is None and audited.out is None and not agreed.report.correlations.empty
    assert sorted(p.name for p in out.iterdir()) == before  # nothing written without out=
    folder = run_audit([out / "ratings.csv"], [_humans(tmp_path)], n_resamples=50, out=tmp_path / "audit").out
    step = read_record(folder).step("audit")
    assert step is not None and step.file("audit") == "audit.json" and step.inputs_of("human")[0].sha256
    assert build_report(folder).audit is not None  # the page finds audit.json through the record


def test_the_human_file_is_read_as_the_record_names_it_not_from_the_command_line(tmp_path):
    """A wide human file with other column names: the report reads it with the options results.json recorded,
    whatever run.json's command line says."""
    from judgelab.agree_run import HumanFile, run_agree

    out = _rate_folder(tmp_path)
    wide = tmp_path / "teachers.csv"
    wide.write_text("story,teacher,system,likability\n" + "".join(
        f"i{k},{t},s,{1 + (k + j) % 5}\n" for k in range(5) for j, t in enumerate(("ann", "bob"))))
    run_agree([out / "ratings.csv"], HumanFile(wide, layout="wide", item="story", rater="teacher",
                                               criteria=("likability",)), n_resamples=50, out=out)
    manifest = json.loads((out / "run.json").read_text())
    for step in manifest.get("steps") or []:
        step["argv"] = ["judgelab", "agree", "--human", "nowhere.csv", "--id-field", "wrong"]
        step.pop("human_options", None)
        step["human"] = step["human_file"] = "nowhere.csv"
    (out / "run.json").write_text(json.dumps(manifest))
    data = build_report(out)
    assert data.items.has_human and "teachers.csv" in data.items.human_sources[-1] and not data.problems


def test_a_folder_of_this_version_without_a_store_is_not_called_older(tmp_path):
    """An ``agree --out`` folder has no store of its own (its judgments' calls are recorded in the rating
    folder): its Cost and time section does not say it was written by an older judgelab."""
    from judgelab.agree_run import run_agree

    out = _rate_folder(tmp_path)
    run_agree([out / "ratings.csv"], _humans(tmp_path), out=tmp_path / "agree")
    data = build_report(tmp_path / "agree")
    notes = data.cost.notes if data.cost is not None else []
    assert not any("older judgelab" in n for n in notes), notes
