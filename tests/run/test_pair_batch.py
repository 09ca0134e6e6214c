"""Pairs of responses (``rate --pairs``) through the batch and fleet paths: a provider's batch API (the stub's)
gives the verdicts of a live run, each request paid once; offline batch files (export → stand-in → import) leave
nothing for the rerun to call; a fleet of two replicas shares the pairs and gives the same verdicts."""
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from batch_stub import BATCH, stub_maker
from conftest import run_cli
from judgelab.testing.openai_stub import answer_batch_file

ROWS = [{"item_id": f"q{i}", "instruction": f"Question {i}: why is the sky blue?", "system": s,
         "response": f"{s} answers question {i}{' at length' * (s == 'long')}."}
        for i in range(3) for s in ("base", "short", "long")]
KEEP = ["item_id", "first", "second", "choice", "status", "raw"]


@pytest.fixture
def stubs(tmp_path):
    yield from stub_maker(tmp_path)


def _responses(tmp_path: Path) -> Path:
    path = tmp_path / "responses.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def _args(responses: Path, url: str, out: Path, *extra: str) -> list[str]:
    return ["rate", "--items", str(responses), "--pairs", "baseline:base", "--template", "pairwise-comparison",
            "--judge", f"openai:m@{url}", "--samples", "1", "--out", str(out), "--quiet", *extra]


def _verdicts(out: Path) -> pd.DataFrame:
    df = pd.read_csv(out / "verdicts.csv", dtype=str, keep_default_na=False)
    return df[KEEP].sort_values(["item_id", "first", "second"]).reset_index(drop=True)


def test_pairs_through_the_provider_batch_api_give_the_verdicts_of_a_live_run(tmp_path, stubs):
    responses = _responses(tmp_path)
    live_stub = stubs("live")
    live = run_cli(*_args(responses, live_stub.base_url, tmp_path / "live"))
    assert live.returncode == 0, live.stderr
    stub = stubs("batch", "--batch-seconds", "0.2")
    batch = run_cli(*_args(responses, stub.base_url, tmp_path / "batch", *BATCH))
    assert batch.returncode == 0, batch.stderr
    text = batch.stdout.replace("\n", " ")
    assert "calls made 12" in text and "12 requests submitted" in text  # 3 items × 2 pairs × 2 orders
    assert len(stub.answered()) == 12 and set(stub.answered().values()) == {1}
    verdicts = _verdicts(tmp_path / "batch")
    assert len(verdicts) == 12 and set(verdicts["status"]) == {"ok"} and set(verdicts["choice"]) <= {"first", "second"}
    pd.testing.assert_frame_equal(verdicts, _verdicts(tmp_path / "live"))
    again = run_cli(*_args(responses, stub.base_url, tmp_path / "batch", *BATCH))
    assert again.returncode == 0 and "calls made 0" in again.stdout and sum(stub.submitted().values()) == 12


def test_pairs_through_offline_batch_files_leave_nothing_to_call(tmp_path):
    responses = _responses(tmp_path)
    dead = "http://127.0.0.1:9/v1"  # nothing listens: any call would fail
    out = tmp_path / "out"
    exported = run_cli(*_args(responses, dead, out, "--export-batch", str(tmp_path / "req.jsonl")))
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in (tmp_path / "req.jsonl").read_text().splitlines()]
    assert len(lines) == 12  # each pair in both orders
    prompts = [line["body"]["messages"][-1]["content"] for line in lines]
    assert sum("[Response A]\nbase answers question 0." in p and "[Response B]\nlong answers question 0 at length." in p
               for p in prompts) == 1
    assert sum("[Response A]\nlong answers question 0 at length." in p and "[Response B]\nbase answers question 0." in p
               for p in prompts) == 1
    answer_batch_file(str(tmp_path / "req.jsonl"), str(tmp_path / "answers.jsonl"), model="m")
    imported = run_cli("batch", "import", str(tmp_path / "answers.jsonl"), "--out", str(out))
    assert imported.returncode == 0 and "12 new" in imported.stdout
    rerun = run_cli(*_args(responses, dead, out))
    assert rerun.returncode == 0, rerun.stderr
    assert "calls made 0, cache hits 12" in rerun.stdout.replace("\n", " ")
    verdicts = _verdicts(out)
    assert len(verdicts) == 12 and set(verdicts["status"]) == {"ok"}


def test_pairs_through_a_fleet_of_two_replicas_give_the_verdicts_of_one_server(tmp_path, stub_factory):
    responses = _responses(tmp_path)
    one, two = stub_factory(), stub_factory()
    single = run_cli(*_args(responses, one.base_url, tmp_path / "single"))
    assert single.returncode == 0, single.stderr
    fleet = run_cli(*_args(responses, f"{one.base_url},{two.base_url}", tmp_path / "fleet", "--concurrency", "2"))
    assert fleet.returncode == 0, fleet.stderr
    manifest = json.loads((tmp_path / "fleet" / "run.json").read_text())
    calls = [r["calls"] for r in manifest["runs"][0]["replicas"]]
    assert sum(calls) == 12 and min(calls) > 0  # both replicas answered pairs
    pd.testing.assert_frame_equal(_verdicts(tmp_path / "fleet"), _verdicts(tmp_path / "single"))
    paid: Counter = Counter()
    for stub in (one, two):
        paid.update(stub.answered())
    assert len(paid) == 24 and set(paid.values()) == {1}  # 12 calls of each judge (the fleet is another identity), each paid once


def test_log_probability_preference_from_a_chat_endpoints_first_token(tmp_path, stub_factory):
    """AlpacaEval's way with a chat model: the verdict-only variant, one token asked with its top log-probabilities."""
    stub = stub_factory()
    result = run_cli(*_args(_responses(tmp_path), stub.base_url, tmp_path / "out", "--score", "logprob", "--variant",
                            "verdict-only"))
    assert result.returncode == 0, result.stderr
    verdicts = pd.read_csv(tmp_path / "out" / "verdicts.csv")
    assert len(verdicts) == 12 and set(verdicts["status"]) == {"ok"}
    # the stand-in puts all the mass of its one token on A or B: p_first is 1 or 0, and the choice follows it
    assert set(verdicts["p_first"]) <= {0.0, 1.0} and len(set(verdicts["p_first"])) == 2
    assert (verdicts["choice"] == verdicts["p_first"].map({1.0: "first", 0.0: "second"})).all()
