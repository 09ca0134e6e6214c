"""``judgelab probe padding`` end to end with the scripted test double (in-process)."""
from __future__ import annotations

import json

import pandas as pd

from judgelab.datasets.items import Item
from judgelab.perturb.padding import FILLERS
from judgelab.probes.padding_study import run_padding
from conftest import run_cli

TEMPLATE = "plain-quality"


def _items(n=14):
    return [Item(f"it{k:02d}", f"Item {k} opens here. It makes point {k} about the harbour. Item {k} ends now.",
                 "sys", f"doc{k}") for k in range(n)]


def _write_items(path, items):
    path.write_text("".join(json.dumps({"id": i.item_id, "text": i.text, "system": i.system, "group": i.group}) + "\n"
                            for i in items), encoding="utf-8")
    return path


def _length_loving_script(path):
    """Rewards length: any filler sentence, or any sentence said twice, earns one point more than the item's own score."""
    rules = [{"contains": f, "reply": "4"} for f in FILLERS]
    rules += [{"contains": f"now. Item {k} ends now.", "reply": "4"} for k in range(30)]
    rules += [{"contains": f"here. Item {k} opens here.", "reply": "4"} for k in range(30)]
    rules += [{"contains": f"harbour. It makes point {k} about the harbour.", "reply": "4"} for k in range(30)]
    path.write_text(json.dumps({"rules": rules, "default": "3"}), encoding="utf-8")
    return path


def _neutral_script(path):
    """Scores each item by its own content (1-5 by its number); padding changes nothing it reads."""
    rules = [{"contains": f"point {k} about", "reply": str(1 + k % 5)} for k in range(30)]
    path.write_text(json.dumps({"rules": rules, "default": "3"}), encoding="utf-8")
    return path


def test_a_judge_that_rewards_length_is_detected(tmp_path):
    script = _length_loving_script(tmp_path / "long.json")
    result = run_padding(_items(), TEMPLATE, [f"scripted-test-double:{script}"], tmp_path / "out",
                         criteria=["fluency"], score="parsed", progress=False)
    table = result.report.to_frame().set_index("padding")
    assert list(table.index) == ["repeat-25", "repeat-50", "filler-25", "filler-50"]
    assert table["rises"].all() and (table["mean_change"] == 1.0).all() and (table["n"] == 14).all()
    assert (table["pvalue"] < 0.001).all()
    assert all(line.endswith("it rewards length") for line in result.report.lines())
    for name in ("padded.jsonl", "padding_design.csv", "ratings.csv", "padding_changes.csv", "padding_effect.csv",
                 "README.md", "run.json"):
        assert (tmp_path / "out" / name).exists(), name
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["command"] == "probe padding" and run["seed"] == 0 and run["texts"] == 14
    assert "it rewards length" in (tmp_path / "out" / "README.md").read_text()


def test_a_neutral_judge_raises_no_alarm_and_rerun_is_answered_from_the_store(tmp_path):
    script = _neutral_script(tmp_path / "flat.json")
    first = run_padding(_items(), TEMPLATE, [f"scripted-test-double:{script}"], tmp_path / "out",
                        criteria=["fluency"], score="parsed", progress=False)
    table = first.report.to_frame()
    assert not table["rises"].any() and (table["mean_change"] == 0).all() and (table["pvalue"] == 1).all()
    assert first.report.changes["original"].nunique() == 5  # the judge does vary between items
    padded = (tmp_path / "out" / "padded.jsonl").read_bytes()
    again = run_padding(_items(), TEMPLATE, [f"scripted-test-double:{script}"], tmp_path / "out",
                        criteria=["fluency"], score="parsed", progress=False)
    assert (tmp_path / "out" / "padded.jsonl").read_bytes() == padded  # same seed, byte-identical copies
    assert again.report.to_frame().equals(table)


def test_copies_in_the_folder_are_the_originals_plus_padding(tmp_path):
    script = _neutral_script(tmp_path / "flat.json")
    run_padding(_items(4), TEMPLATE, [f"scripted-test-double:{script}"], tmp_path / "out", criteria=["fluency"],
                score="parsed", progress=False, paddings=["filler:50"], seed=3)
    rows = [json.loads(line) for line in (tmp_path / "out" / "padded.jsonl").read_text().splitlines()]
    originals = {r["id"]: r["text"] for r in rows if r["system"] == "sys"}
    copies = {r["id"]: r["text"] for r in rows if r["system"] == "sys+pad:filler-50"}
    assert set(copies) == set(originals)
    assert all(copies[k].startswith(originals[k] + " ") for k in originals)
    design = pd.read_csv(tmp_path / "out" / "padding_design.csv")
    assert (design["added_words"] >= 0.5 * design["words"]).all()


def test_cli_probe_padding(tmp_path):
    items = _write_items(tmp_path / "items.jsonl", _items(10))
    script = _length_loving_script(tmp_path / "long.json")
    out = tmp_path / "pad"
    r = run_cli("probe", "padding", "--items", str(items), "--template", TEMPLATE, "--criteria", "coherence",
                "--judge", f"scripted-test-double:{script}", "--score", "parsed", "--padding", "filler:50",
                "--quiet", "--out", str(out), "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("rater,criterion,padding,n,")
    assert "it rewards length" in r.stderr
    effect = pd.read_csv(out / "padding_effect.csv")
    assert list(effect["padding"]) == ["filler-50"] and bool(effect["rises"].iloc[0])


def test_cli_refuses_bad_padding_in_one_line_and_writes_nothing(tmp_path):
    items = _write_items(tmp_path / "items.jsonl", _items(3))
    for bad in ("filler", "glitter:20", "repeat:0", ",", ""):
        r = run_cli("probe", "padding", "--items", str(items), "--template", TEMPLATE, "--padding", bad,
                    "--out", str(tmp_path / "x"))
        assert r.returncode == 2 and r.stderr.startswith("judgelab: error: --padding") and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "x").exists()
    r = run_cli("probe", "padding", "--items", str(items), "--template", TEMPLATE, "--padding", "filler:50,filler:50",
                "--judge", "scripted-test-double:/nonexistent.json", "--out", str(tmp_path / "y"))
    assert r.returncode == 2 and not (tmp_path / "y").exists()


def test_dry_run_plans_originals_and_copies(tmp_path):
    items = _write_items(tmp_path / "items.jsonl", _items(5))
    script = _neutral_script(tmp_path / "flat.json")
    r = run_cli("probe", "padding", "--items", str(items), "--template", TEMPLATE, "--criteria", "fluency",
                "--judge", f"scripted-test-double:{script}", "--score", "parsed", "--dry-run", "--out", str(tmp_path / "z"))
    assert r.returncode == 0, r.stderr
    assert "25 judgments" in r.stdout and not (tmp_path / "z").exists()


def test_cli_json_is_one_document(tmp_path):
    items = _write_items(tmp_path / "items.jsonl", _items(6))
    script = _neutral_script(tmp_path / "flat.json")
    r = run_cli("probe", "padding", "--items", str(items), "--template", TEMPLATE, "--criteria", "fluency",
                "--judge", f"scripted-test-double:{script}", "--score", "parsed", "--padding", "repeat:50",
                "--quiet", "--out", str(tmp_path / "j"), "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema"] == 1 and doc["command"] == "probe padding"
    (row,) = doc["rows"]
    assert row["padding"] == "repeat-50" and row["n"] == 6 and row["rises"] is False and row["ci_low"] is None
