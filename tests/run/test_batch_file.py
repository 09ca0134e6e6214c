"""Offline batch files: export → a stand-in for ``vllm run-batch`` → import → the same ratings as a live run."""
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from judgelab.run.batchfile import read_output_lines, split_lines
from judgelab.testing.openai_stub import answer_batch_file
from conftest import run_cli, write_items

COLUMNS = ["item_id", "system", "criterion", "sample", "score", "status", "raw"]


def _ratings(folder: Path) -> pd.DataFrame:
    df = pd.read_csv(folder / "ratings.csv", dtype={"item_id": str})
    return df[COLUMNS].sort_values(["system", "item_id", "criterion", "sample"]).reset_index(drop=True)


def _calls(folder: Path) -> int:
    with sqlite3.connect(folder / "store.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


def _answer(files: list[Path], model: str = "m", fail_rate: float = 0.0) -> list[Path]:
    outs = []
    for f in files:
        out = f.with_name(f.stem + ".out.jsonl")
        answer_batch_file(str(f), str(out), model=model, fail_rate=fail_rate, seed=3)
        outs.append(out)
    return outs


@pytest.fixture
def setup(tmp_path, stub_factory):
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 6)
    args = ["rate", "--items", str(items), "--judge", f"openai:m@{stub.base_url}", "--samples", "3",
            "--criteria", "cohesiveness,likability", "--quiet", "--seed", "7"]
    return stub, args


def test_export_stand_in_import_gives_the_ratings_of_a_live_run(tmp_path, setup):
    stub, args = setup
    live = tmp_path / "live"
    assert run_cli(*args, "--out", str(live)).returncode == 0
    live_answers = len(stub.answered())
    assert live_answers == 12  # 6 items × 2 criteria, all 3 samples in one n=3 call

    out = tmp_path / "batch"
    exported = run_cli(*args, "--out", str(out), "--export-batch", str(tmp_path / "req.jsonl"), "--batch-max-requests", "5")
    assert exported.returncode == 0, exported.stderr
    files = sorted(tmp_path.glob("req-*.jsonl"))
    assert [len(f.read_text().splitlines()) for f in files] == [5, 5, 2]
    line = json.loads(files[0].read_text().splitlines()[0])
    assert set(line) == {"custom_id", "method", "url", "body"} and line["url"] == "/v1/chat/completions"
    assert line["body"]["model"] == "m" and line["body"]["n"] == 3 and len(line["custom_id"]) == 64
    assert not (out / "ratings.csv").exists()  # an export records no rating
    assert len(stub.answered()) == live_answers  # and calls nothing

    outs = _answer(files)
    imported = run_cli("batch", "import", *map(str, outs), "--out", str(out))
    assert imported.returncode == 0, imported.stderr
    assert "12 new, 0 already" in imported.stdout
    n = _calls(out)
    again = run_cli("batch", "import", *map(str, outs), "--out", str(out))  # importing twice changes nothing
    assert again.returncode == 0 and "0 new, 12 already" in again.stdout and _calls(out) == n == 12

    rerun = run_cli(*args, "--out", str(out))
    assert rerun.returncode == 0, rerun.stderr
    assert "calls made 0, cache hits 12" in rerun.stdout.replace("\n", " ")
    assert len(stub.answered()) == live_answers  # the rerun answered everything from the ledger
    pd.testing.assert_frame_equal(_ratings(out), _ratings(live))

    nothing = run_cli(*args, "--out", str(out), "--export-batch", str(tmp_path / "again.jsonl"))
    assert nothing.returncode == 0 and "nothing to export" in nothing.stdout and not (tmp_path / "again.jsonl").exists()

    listed = run_cli("batch", "list", str(out))
    assert listed.returncode == 0 and " file done: 12 requests" in listed.stdout


def test_failed_lines_are_exported_again_and_another_runs_file_is_refused(tmp_path, setup):
    stub, args = setup
    out = tmp_path / "batch"
    assert run_cli(*args, "--out", str(out), "--export-batch", str(tmp_path / "req.jsonl")).returncode == 0
    first = _answer([tmp_path / "req.jsonl"], fail_rate=0.4)
    failed = sum(1 for l in read_output_lines(first[0].read_text(), "x") if l.body is None)
    assert 0 < failed < 12
    imported = run_cli("batch", "import", str(first[0]), "--out", str(out))
    assert f"{12 - failed} new, 0 already in the store, {failed} failed" in imported.stdout

    # a file of another run (other settings: one sample) is refused in one line, and nothing is written
    other = tmp_path / "other"
    assert run_cli(*args, "--samples", "1", "--out", str(other), "--export-batch", str(tmp_path / "o.jsonl")).returncode == 0
    foreign = _answer([tmp_path / "o.jsonl"])
    before = _calls(out)
    refused = run_cli("batch", "import", str(foreign[0]), "--out", str(out))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "belongs to another run" in refused.stderr
    assert _calls(out) == before

    # the next export holds exactly the failed requests
    assert run_cli(*args, "--out", str(out), "--export-batch", str(tmp_path / "retry.jsonl")).returncode == 0
    retry = [json.loads(l)["custom_id"] for l in (tmp_path / "retry.jsonl").read_text().splitlines()]
    assert sorted(retry) == sorted(l.custom_id for l in read_output_lines(first[0].read_text(), "x") if l.body is None)
    assert run_cli("batch", "import", str(_answer([tmp_path / "retry.jsonl"])[0]), "--out", str(out)).returncode == 0
    rerun = run_cli(*args, "--out", str(out))
    assert "calls made 0" in rerun.stdout and len(stub.answered()) == 0


def test_refusals_are_exported_in_a_second_round(tmp_path):
    """A refusal's regeneration cannot be planned: the next export holds it once the first answer is in."""
    from judgelab.run.batch_import import import_batch
    from judgelab.run.batch_export import export_batch
    from judgelab.datasets.items import Item
    from judgelab.run import RunSpec

    spec = RunSpec(judge="openai:m@http://127.0.0.1:9/v1", samples=1, criteria=["cohesiveness"], max_refusal_retries=2)
    items = [Item("a", "A story.", context="p")]
    first = export_batch(items, spec, tmp_path / "o", tmp_path / "r1.jsonl")
    assert first.requests == 1
    line = json.loads((tmp_path / "r1.jsonl").read_text())
    refusal = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": "I cannot rate this."},
                            "finish_reason": "stop"}]}
    (tmp_path / "a1.jsonl").write_text(json.dumps({"custom_id": line["custom_id"], "response": {
        "status_code": 200, "body": refusal}, "error": None}) + "\n")
    assert import_batch([tmp_path / "a1.jsonl"], tmp_path / "o").new == 1
    second = export_batch(items, spec, tmp_path / "o", tmp_path / "r2.jsonl")
    assert second.requests == 1
    regenerated = json.loads((tmp_path / "r2.jsonl").read_text())
    assert regenerated["custom_id"] != line["custom_id"] and regenerated["body"]["messages"] == line["body"]["messages"]


def test_a_judge_without_batches_and_two_judges_are_refused(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "4"}))
    r = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--out", str(tmp_path / "o"),
                "--export-batch", str(tmp_path / "r.jsonl"))
    assert r.returncode == 2 and "batches need an openai:MODEL judge" in r.stderr and not (tmp_path / "r.jsonl").exists()
    assert not (tmp_path / "o").exists()  # refused before the store is made
    r = run_cli("rate", "--items", str(items), "--judge", "openai:a@http://127.0.0.1:9/v1", "--judge",
                "openai:b@http://127.0.0.1:9/v1", "--out", str(tmp_path / "o2"), "--export-batch", str(tmp_path / "r.jsonl"))
    assert r.returncode == 2 and "one --judge" in r.stderr


def test_split_lines_keeps_order_and_limits():
    lines = [f"line {i}" for i in range(10)]
    chunks = split_lines(lines, max_requests=4, max_bytes=1000)
    assert [l for c in chunks for l in c] == lines and [len(c) for c in chunks] == [4, 4, 2]
    assert all(sum(len(l) + 1 for l in c) <= 15 for c in split_lines(lines, max_requests=100, max_bytes=15))
