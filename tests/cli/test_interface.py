"""Issue 12, parts 1-4: one judge syntax in every command, run files, --dry-run, output folders,
and modules that import in either order (the import graph itself: tests/test_architecture.py).

The judge is the OpenAI-compatible stub server (judgelab.testing.openai_stub, a test utility)
reached as ``--judge openai:MODEL@URL``; its request log shows whether a command called it.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from commands import hanna_stories as _hanna, nle_data as _nle, stories as _stories
from conftest import run_cli, write_items



def command(name: str, tmp_path: Path, judge: str, out: Path) -> list[str]:
    """The command line of ``name`` with ``judge`` as its one --judge, small inputs and --out."""
    if name == "rate":
        items = write_items(tmp_path / "items.jsonl", 3)
        return ["rate", "--items", str(items), "--criteria", "grammaticality", "--samples", "1", "--judge", judge,
                "--out", str(out), "--quiet"]
    if name == "dhp":
        return ["dhp", "--task", "question-answering", "--n-items", "2", "--samples", "1", "--judge", judge,
                "--out", str(out), "--quiet"]
    if name == "chiang-lee":
        return ["recipe", "chiang-lee", "--items", str(_stories(tmp_path)), "--n-items", "1", "--samples", "1",
                "--judge", judge, "--out", str(out), "--quiet"]
    if name == "hanna":
        return ["recipe", "hanna", "--items", str(_hanna(tmp_path)), "--n-items", "1", "--eval-prompts", "1",
                "--samples", "1", "--judge", judge, "--out", str(out), "--quiet"]
    data, human = _nle(tmp_path)
    if name == "nle":
        return ["recipe", "nle", "--dataset", "esnli", "--items", str(data), "--human", str(human), "--samples", "1",
                "--per-delta", "2", "--no-dynamic", "--judge", judge, "--out", str(out), "--quiet"]
    assert name == "pairwise"
    return ["pairwise", "--dataset", "esnli", "--items", str(data), "--human", str(human), "--per-delta", "2",
            "--judge", judge, "--out", str(out), "--quiet"]


def _requests(stub) -> int:
    """Every request the stub received (answered or not), from its /stats endpoint."""
    import urllib.request

    with urllib.request.urlopen(stub.base_url.removesuffix("/v1") + "/stats", timeout=10) as answer:
        return int(json.loads(answer.read())["requests"])


COMMANDS = ["rate", "dhp", "pairwise", "chiang-lee", "hanna", "nle"]


@pytest.mark.parametrize("name", COMMANDS)
def test_the_same_judge_spec_works_in_every_command(name, tmp_path, stub_factory):
    stub = stub_factory()
    out = tmp_path / "out"
    r = run_cli(*command(name, tmp_path, f"openai:stub-model@{stub.base_url}", out))
    if name in {"pairwise", "nle"}:
        # the stub answers every prompt with one 1-5 rating, not the comparisons (Yes/No) and the two
        # 1-7 scores these commands ask for: they run to the end and report the failures (exit 3)
        assert r.returncode in (0, 3) and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    else:
        assert r.returncode == 0, r.stderr
    assert stub.answered(), "the judge was never called"
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["schema"] == 1 and manifest["runs"]
    judges = [run["settings"]["judge"] for run in manifest["runs"] if run.get("settings")]
    assert judges and all(j["model"] == "stub-model" and j["base_url"] == stub.base_url for j in judges)
    assert (out / "README.md").exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_dry_run_calls_nothing_writes_nothing_and_shows_the_prompt(name, tmp_path, stub_factory):
    stub = stub_factory()
    out = tmp_path / "out"
    r = run_cli(*command(name, tmp_path, f"openai:stub-model@{stub.base_url}", out), "--dry-run",
                     "--price-in", "2.5", "--price-out", "10")
    assert r.returncode == 0, r.stderr
    assert stub.answered() == [] and _requests(stub) == 0
    assert not out.exists()
    assert r.stdout.startswith("dry run: no model is called and nothing is written")
    total = next(line for line in r.stdout.splitlines() if line.startswith("total: "))
    calls = int(total.removeprefix("total: ").removeprefix("up to ").split()[0])  # "up to": the endpoint may ignore n
    assert calls > 0 and "prompt tokens" in total and "$" in total
    assert "exactly as sent" in r.stdout and "--- user ---" in r.stdout


def test_dry_run_of_rate_counts_and_prompt_match_the_run(tmp_path, stub_factory):
    """The plan's numbers and the first prompt are those of the real run."""
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 4)
    args = ["rate", "--items", str(items), "--criteria", "grammaticality,cohesiveness", "--samples", "2", "--no-n",
            "--judge", f"openai:m@{stub.base_url}", "--out", str(tmp_path / "o"), "--quiet"]
    dry = run_cli(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    line = next(l for l in dry.stdout.splitlines() if l.startswith("rating: "))
    assert ": 16 calls (0 answered by the store), 16 judgments" in line  # 4 items × 2 criteria × 2 samples, one by one
    chars = sum(len(p) for p in dry.stdout.split("--- user ---\n")[1:])
    assert chars > 0 and "(characters / 4, an estimate)" in line
    run = run_cli(*args)
    assert run.returncode == 0, run.stderr
    assert len(stub.answered()) == 16
    first = dry.stdout.split("===== first prompt of 'grammaticality'")[1].split("--- user ---\n")[1].split("\n\n=====")[0]
    import sqlite3

    with sqlite3.connect(tmp_path / "o" / "store.sqlite") as db:
        requests = [json.loads(r[0]) for r in db.execute("SELECT request FROM calls")]
    sent = {m["content"] if isinstance(m, dict) else m[1] for req in requests for m in req["messages"]}
    assert first.rstrip("\n") in sent  # the dry run showed exactly a prompt that the run sent
    again = run_cli(*args, "--dry-run")
    line = next(l for l in again.stdout.splitlines() if l.startswith("rating: "))
    assert ": 0 calls (" in line and "0 judgments (16 already in the store)" in line, line


# -- run files ---------------------------------------------------------------------
def test_run_file_and_flags_give_identical_ratings(tmp_path, stub_factory):
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 5)
    flags = run_cli("rate", "--items", str(items), "--criteria", "grammaticality,likability", "--samples", "2",
                         "--judge", f"openai:m@{stub.base_url}", "--temperature", "0.7", "--max-tokens", "64", "--seed", "3",
                         "--compare", "human,gpt2", "--out", str(tmp_path / "flags"), "--quiet")
    assert flags.returncode == 0, flags.stderr
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "spec.yaml").write_text(
        "items: ../items.jsonl\n"
        "criteria: [grammaticality, likability]\n"
        f"judge: openai:m@{stub.base_url}\n"
        "samples: 2\n"
        "sampling: {temperature: 0.7, max_tokens: 64, seed: 3}\n"
        "compare: human,gpt2\n"
        "out: ../spec-out\n")
    spec = run_cli("run", str(folder / "spec.yaml"), "--quiet")
    assert spec.returncode == 0, spec.stderr
    a = pd.read_csv(tmp_path / "flags" / "ratings.csv")
    b = pd.read_csv(tmp_path / "spec-out" / "ratings.csv")
    assert len(a) == 5 * 2 * 2 and set(a["rater"]) == {"m@chiang-lee-story"}
    pd.testing.assert_frame_equal(a, b)
    assert (tmp_path / "spec-out" / "welch.csv").exists()
    # the same spec from Python
    from judgelab.runfile import load_run_file

    loaded = load_run_file(folder / "spec.yaml")
    assert loaded.items == items.resolve() and loaded.sampling.seed == 3 and loaded.judge == [f"openai:m@{stub.base_url}"]


def test_run_file_errors_are_one_line(tmp_path):
    from conftest import one_line_error

    bad = tmp_path / "bad.yaml"
    bad.write_text("items: x.jsonl\njudge: local\ntemprature: 0.3\n")
    line = one_line_error(run_cli("run", str(bad)), "unknown key 'temprature'", "known keys: items, judge, template")
    assert "sampling" in line
    bad.write_text("items: x.jsonl\nsampling: {temp: 1}\n")
    one_line_error(run_cli("run", str(bad)), "unknown key 'sampling.temp'", "temperature")
    bad.write_text("items: x.jsonl\nsamples: many\n")
    one_line_error(run_cli("run", str(bad)), "invalid value for samples")
    bad.write_text("- just\n- a list\n")
    one_line_error(run_cli("run", str(bad)), "a run file is a mapping")
    one_line_error(run_cli("run", str(tmp_path / "missing.yaml")), "missing.yaml")


def test_rate_with_two_judges_writes_one_rater_each(tmp_path, stub_factory):
    stub = stub_factory()
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    items = write_items(tmp_path / "items.jsonl", 2)
    r = run_cli("rate", "--items", str(items), "--criteria", "grammaticality", "--samples", "1",
                     "--judge", f"openai:m@{stub.base_url}", "--judge", f"scripted-test-double:{script}",
                     "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 0, r.stderr
    ratings = pd.read_csv(tmp_path / "o" / "ratings.csv")
    assert set(ratings["rater"]) == {"m@chiang-lee-story", "scripted-test-double@chiang-lee-story"}
    assert len(json.loads((tmp_path / "o" / "run.json").read_text())["runs"]) == 2


# -- outputs -----------------------------------------------------------------------
def test_dhp_analyze_out_and_one_json_shape(tmp_path):
    rng = __import__("numpy").random.default_rng(0)
    rows = []
    for rater in ("judge-a", "judge-b"):
        for i in range(6):
            for system, shift in (("original", 0.0), ("typos/minor", -1.0)):
                for metric in ("coherence", "consistency", "fluency", "relevance"):
                    rows.append({"item_id": f"i{i}", "system": system, "criterion": metric, "rater": rater, "sample": 0,
                                 "score": 4 + shift + float(rng.normal(0, 0.1))})
    path = tmp_path / "ratings.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    both = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--format", "json", "--out", str(tmp_path / "o"))
    assert both.returncode == 0, both.stderr
    one = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--format", "json", "--rater", "judge-a")
    docs = [json.loads(both.stdout), json.loads(one.stdout)]
    for doc in docs:
        assert set(doc) == {"schema", "task", "judges"} and doc["schema"] == 1
    assert docs[1]["judges"]["judge-a"] == docs[0]["judges"]["judge-a"]
    assert json.loads((tmp_path / "o" / "discernment.json").read_text()) == docs[0]
    for name in ("README.md", "run.json", "perturbations.csv", "discernment.csv"):
        assert (tmp_path / "o" / name).exists(), name
    assert json.loads((tmp_path / "o" / "run.json").read_text())["command"] == "dhp analyze"
    csv = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--format", "csv")
    assert csv.returncode == 0, csv.stderr
    table = pd.read_csv(__import__("io").StringIO(csv.stdout))  # one table, not several in one stream
    assert list(table["judge"]) == ["judge-a", "judge-b"] and {"D", "D_avg", "D_min"} <= set(table.columns)
    assert table.set_index("judge").loc["judge-a", "D_avg"] == docs[0]["judges"]["judge-a"]["D_avg"]


def test_user_study_writes_a_folder(tmp_path):
    header = ["Input.story_id", "Input.explanation", "Answer.a-1-guidelines.1", "Answer.a-2-syntax.1"]
    rows = [["1", "Expl one", 1, 0], ["1", "Expl one", 1, 1], ["2", "Expl two", 0, 0], ["2", "Expl two", 0, 0]]
    path = tmp_path / "us.csv"
    pd.DataFrame(rows, columns=header).to_csv(path, index=False)
    r = run_cli("recipe", "user-study", str(path), "--out", str(tmp_path / "o"), "--format", "csv")
    assert r.returncode == 0, r.stderr
    for name in ("README.md", "run.json", "error_rates.csv"):
        assert (tmp_path / "o" / name).exists(), name
    assert json.loads((tmp_path / "o" / "run.json").read_text())["command"] == "recipe user-study"
    assert pd.read_csv(tmp_path / "o" / "error_rates.csv").set_index("category").loc["syntax", "rate"] == 0.25


# -- import order ---------------------------------------------------------------
@pytest.mark.parametrize("order", [("judgelab.rate", "judgelab.dhp.study"),
                                   ("judgelab.dhp.study", "judgelab.rate"),
                                   ("judgelab.recipes.common", "judgelab.rate"),
                                   ("judgelab.runfile", "judgelab.cli")])
def test_modules_import_in_either_order(order):
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in order)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
