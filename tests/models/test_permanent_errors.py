"""A permanent error is not retried: an OpenAI-compatible server that answers every request with the
same HTTP 500 ends the run after a few requests with the server's whole reason, instead of retrying
every call ten times. (llama-cpp-python's HTTP 500 for the JSON-schema ``response_format`` of
``--constrain`` is no longer one: the backend asks with a JSON object and the schema instead,
tests/models/test_capabilities.py.)"""
from __future__ import annotations

import asyncio
import json
import urllib.request

import httpx
import openai
import pytest

from conftest import run_cli, write_items
from judgelab.errors import BackendError, CapabilityError, ServerError
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.backends.openai_compatible import OpenAIBackend
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.testing.openai_stub import LLAMA_CPP_PYTHON_REJECTS

REASON = LLAMA_CPP_PYTHON_REJECTS["error"]["message"]


def _requests(stub) -> int:
    """Every request the stub received (answered or not), from its /stats endpoint."""
    with urllib.request.urlopen(stub.base_url.removesuffix("/v1") + "/stats", timeout=10) as answer:
        return int(json.loads(answer.read())["requests"])


def _failing(status: int, body: dict) -> openai.APIStatusError:
    """The SDK's exception for an HTTP answer (as the SDK builds it from a response)."""
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k")
    return client._make_status_error_from_response(httpx.Response(status, request=request, json=body))


def _attempt(status: int, body: dict, answer_format: AnswerFormat | None = None,
             raises: type[Exception] = BackendError) -> BaseException:
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="k", transport="httpx")

    async def send(request, cue_suffix=""):
        raise _failing(status, body)

    backend._send = send  # type: ignore[method-assign]
    request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling(), answer_format=answer_format)
    with pytest.raises(raises) as raised:
        asyncio.run(backend._complete(request))
    return raised.value


def test_a_server_error_keeps_its_whole_reason_on_one_line():
    exc = _attempt(500, LLAMA_CPP_PYTHON_REJECTS)
    assert isinstance(exc, ServerError) and exc.fingerprint is not None
    assert " ".join(REASON.split()) in str(exc) and "\n" not in str(exc)
    assert "Input should be 'text' or 'json_object'" in str(exc)  # not cut at "1 validation error:"


def test_a_long_reason_is_capped_and_says_so():
    exc = _attempt(500, {"error": {"message": "word " * 400}})
    reason = str(exc).split("HTTP 500 ", 1)[1]
    assert len(reason) == 500 and reason.endswith("…")


def test_overload_and_gateway_answers_carry_no_fingerprint_and_stay_retried():
    for status in (502, 503, 504):
        exc = _attempt(status, {"error": {"message": "overloaded"}})
        assert isinstance(exc, ServerError) and exc.fingerprint is None


def test_a_response_format_refused_in_both_forms_says_to_run_without_constrain():
    answer_format = AnswerFormat("rating", 1, 5)
    exc = _attempt(500, LLAMA_CPP_PYTHON_REJECTS, answer_format, raises=CapabilityError)
    assert "run without --constrain" in str(exc) and "Input should be 'text' or 'json_object'" in str(exc)
    refused = _attempt(400, {"error": {"message": "response_format json_schema is not supported"}}, answer_format,
                       raises=CapabilityError)
    assert "run without --constrain" in str(refused)


def test_a_server_rejecting_every_request_ends_the_run_after_a_few_requests(tmp_path, stub_factory):
    stub = stub_factory(server_errors=1.0)  # the same HTTP 500 body for every request
    items = write_items(tmp_path / "items.jsonl", 15)  # 15 items × 4 criteria = 60 judgments
    args = ["rate", "--items", str(items), "--judge", f"openai:gemma@{stub.base_url}", "--samples", "1",
            "--score", "parsed", "--out", str(tmp_path / "out"), "--quiet"]
    result = run_cli(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: "), result.stderr
    assert "HTTP 500 internal error" in lines[0] and "same answer to 3 requests in a row" in lines[0]
    made = _requests(stub)
    assert made <= 2 * 16 + 8, made  # at most two attempts of each call in flight; before: 10 retries each (220 calls)


def test_a_failed_calls_reason_is_shown_whole_and_an_answer_is_cut():
    import pandas as pd

    from judgelab.rate import failure_lines

    reason = "server error from http://x/v1: HTTP 500 " + " ".join(REASON.split()) + "; gave up after 2 attempts"
    answer = "The story is long. " * 30
    lines = failure_lines(pd.DataFrame({"status": ["error", "no_rating", "ok"], "raw": [reason, answer, "4"]}))
    assert lines[1] == f"  example error: {reason!r}" and len(reason) > 200
    assert lines[2].endswith(" …") and len(lines[2]) < 240
