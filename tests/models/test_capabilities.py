"""What an OpenAI-compatible endpoint can do is learned from its answers (models/capabilities.py), acted on,
and recorded in run.json's ``capabilities``: ``n`` ignored (llama-cpp-python's server answers one sample),
chat answers without log-probabilities, a refused JSON-schema ``response_format``, a server that answers
one request at a time. The stub plays each server (its modes are recorded from the real ones)."""
from __future__ import annotations

import json
import re
import urllib.request

import pandas as pd

from conftest import one_line_error, run_cli, write_items
from judgelab.errors import CapabilityError
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.capabilities import EndpointCapabilities, calls_at_most


def _stats(stub) -> dict:
    with urllib.request.urlopen(stub.base_url.removesuffix("/v1") + "/stats", timeout=10) as answer:
        return json.loads(answer.read())


def _run(manifest_dir) -> dict:
    return json.loads((manifest_dir / "run.json").read_text())["runs"][0]


def _rate(items, stub, out, *extra: str) -> list[str]:
    return ["rate", "--items", str(items), "--judge", f"openai:m@{stub.base_url}", "--criteria", "grammaticality",
            "--out", str(out), "--quiet", *extra]


# -- n -----------------------------------------------------------------------------------------
def test_an_endpoint_that_ignores_n_gets_every_sample_and_the_dry_run_said_up_to(tmp_path, stub_factory):
    stub = stub_factory(mode="llama-cpp-python")  # answers one sample whatever n asks
    items = write_items(tmp_path / "items.jsonl", 5)
    args = _rate(items, stub, tmp_path / "out", "--samples", "3", "--score", "parsed")
    dry = run_cli(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    line = next(l for l in dry.stdout.splitlines() if l.startswith("rating: "))
    assert ": up to 15 calls (5 if the endpoint returns n samples per request, one per sample if it ignores n; " in line
    assert "total: up to 15 calls" in dry.stdout
    run = run_cli(*args)
    assert run.returncode == 0, run.stderr
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert sorted(ratings["sample"].value_counts().items()) == [(0, 5), (1, 5), (2, 5)]  # no sample lost
    assert set(ratings["status"]) == {"ok"}
    record = _run(tmp_path / "out")
    assert record["calls_made"] == 15 == _stats(stub)["requests"]  # the dry run's "up to" was the count
    assert record["capabilities"]["samples_per_request"] == 1 and record["capabilities"]["n_asked"] == 3


def test_an_endpoint_that_honours_n_is_recorded_and_planned_exactly_once_known(tmp_path, stub_factory):
    caps = EndpointCapabilities()
    assert not caps.saw_samples(asked=3, returned=3) and caps.n_known and not caps.n_ignored
    assert calls_at_most([type("Call", (), {"n": 3, "cached": False})()], caps) is None  # known: exact
    assert caps.saw_samples(asked=3, returned=1) and not caps.saw_samples(asked=3, returned=1)  # said once
    assert caps.max_n(128) == 1


# -- log-probabilities over chat ---------------------------------------------------------------------
def test_chat_answers_without_logprobs_stop_the_run_in_one_line_naming_the_completion_style(tmp_path, stub_factory):
    stub = stub_factory(mode="no-chat-logprobs")
    items = write_items(tmp_path / "items.jsonl", 40)
    result = run_cli(*_rate(items, stub, tmp_path / "out", "--score", "logprob"))
    line = one_line_error(result, "--style completion", "log-probabilities")
    assert "no_label_mass" not in line
    assert _stats(stub)["requests"] <= 16  # the calls in flight, not one per item


def test_chat_scores_that_rest_on_little_label_mass_are_said_after_the_run():
    caps = EndpointCapabilities()
    caps.saw_chat_scoring([[("\n", -0.1, {"\n": -0.1})]], "http://x/v1")
    assert caps.chat_logprobs is True
    advice = caps.label_mass_advice(low=4, scored=4)
    assert advice is not None and "--style completion" in advice
    assert caps.label_mass_advice(low=1, scored=4) is None
    assert EndpointCapabilities().label_mass_advice(low=4, scored=4) is None  # not over chat: nothing to say


# -- response_format ----------------------------------------------------------------------------------
def test_constrain_falls_back_to_a_json_object_with_the_schema_on_llama_cpp_pythons_server(tmp_path, stub_factory):
    stub = stub_factory(mode="llama-cpp-python")  # HTTP 500 for a json_schema response_format
    items = write_items(tmp_path / "items.jsonl", 6)
    result = run_cli(*_rate(items, stub, tmp_path / "out", "--samples", "1", "--score", "parsed", "--constrain"))
    assert result.returncode == 0, result.stderr
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert len(ratings) == 6 and set(ratings["status"]) == {"ok"}
    assert all(re.fullmatch(r'\{"score": [1-5]\}', raw) for raw in ratings["raw"])  # JSON under the schema
    record = _run(tmp_path / "out")
    caps = record["capabilities"]
    assert caps["response_format"] == "json_object" and "json_object" in caps["response_format_refused"]["json_schema"]
    assert any("json_object" in note for note in record["backend_notes"])


def test_constrain_on_a_server_that_refuses_every_response_format_is_one_line(tmp_path, stub_factory):
    stub = stub_factory(mode="no-response-format")
    items = write_items(tmp_path / "items.jsonl", 30)
    result = run_cli(*_rate(items, stub, tmp_path / "out", "--samples", "1", "--score", "parsed", "--constrain"))
    one_line_error(result, "run without --constrain", "JSON-schema", "it said: HTTP 400")
    assert _stats(stub)["requests"] <= 2 * 16  # the calls in flight, each tried with both mechanisms


def test_the_response_format_steps_down_once_whatever_the_order_of_refusals():
    caps = EndpointCapabilities()
    fmt = AnswerFormat("rating", 1, 5)
    assert caps.response_format_body(fmt)["type"] == "json_schema"
    assert caps.refused_response_format("json_schema", "no") == "json_object"
    assert caps.refused_response_format("json_schema", "no") == "json_object"  # a request sent before the switch
    assert caps.response_format_body(fmt) == {"type": "json_object", "schema": fmt.json_schema()}
    try:
        caps.refused_response_format("json_object", "neither")
    except CapabilityError as exc:
        assert "run without --constrain" in str(exc) and "neither" in str(exc)
    else:
        raise AssertionError("refusing both mechanisms must stop the run")


# -- concurrency ----------------------------------------------------------------------------------------
def test_a_one_slot_server_with_the_default_concurrency_ends_without_timeouts(tmp_path, stub_factory):
    """llama-cpp-python's server answers one request at a time: 16 calls at once queue behind each other and
    time out. Timeouts lower the calls in flight as 429s do, so every judgment ends ``ok``; before, the
    limit stayed at 16 and a third of the calls gave up after their retries (measured: 10-12 of 30).
    An answer takes 0.3 s and the timeout is 1.5 s: five calls fit, so a loaded machine's delays do not
    decide the outcome."""
    stub = stub_factory(slots=1, latency=0.3)
    items = write_items(tmp_path / "items.jsonl", 30)
    result = run_cli(*_rate(items, stub, tmp_path / "out", "--samples", "1", "--score", "parsed", "--timeout", "1.5",
                            "--max-retries", "3"))
    assert result.returncode == 0, result.stderr
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert len(ratings) == 30 and set(ratings["status"]) == {"ok"}, ratings["status"].value_counts()
    record = _run(tmp_path / "out")
    concurrency = record["capabilities"]["concurrency"]
    assert concurrency["ceiling"] == 16 and concurrency["lowest"] <= 4, concurrency
    assert record["retries"].get("timeout", 0) > 0 and "gave_up" not in record["retries"]


def test_a_fleet_learns_once_for_all_its_replicas():
    from judgelab.models.backends.fleet import Fleet
    from judgelab.models.backends.openai_compatible import OpenAIBackend

    fleet = Fleet("m", ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], OpenAIBackend, api_key="k", transport="httpx")
    assert all(r.backend.learned is fleet.learned for r in fleet.replicas)
    assert "capabilities" in fleet.run_facts()
