"""Request shapes, errors and transports of the OpenAI-compatible backend (retries: test_retry.py)."""
import asyncio

import pytest

from judgelab.errors import BackendError
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.models.backends.openai_compatible import OpenAIBackend, retry_after_seconds


def test_retry_after_is_read_in_its_three_forms():
    from email.utils import formatdate
    import time

    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # the finer one wins
    assert retry_after_seconds({"retry-after": "not-a-number"}) is None
    assert retry_after_seconds({"retry-after": "-3"}) == 0.0
    in_ten = retry_after_seconds({"retry-after": formatdate(time.time() + 10, usegmt=True)})
    assert 8 <= in_ten <= 10.5


def test_completion_style_and_n_against_the_stub(stub_factory):
    stub = stub_factory()
    backend = OpenAIBackend("stub", base_url=stub.base_url, style="completion", max_retries=0)
    request = JudgeRequest(messages=(("user", "Rate this."),), sampling=Sampling(temperature=1.0), n=3, key="abc")

    async def go():
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()

    response = asyncio.run(go())
    assert len(response.choices) == 3 and response.prompt_tokens > 0 and response.completion_tokens > 0
    assert stub.answered() == ["abc"]  # the ledger key travels as a header


def test_missing_key_for_openai_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(BackendError, match="no API key"):
        OpenAIBackend("gpt-4o-mini")


def test_the_default_transport_is_the_fast_one():
    """openai[aiohttp] is a declared dependency: the default must be aiohttp, never a silent httpx fallback."""
    from judgelab.models.backends.openai_compatible import OpenAIBackend, available_transports

    assert "aiohttp" in available_transports()
    backend = OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1")
    assert backend.transport == "aiohttp"
    assert "AioHttp" in type(backend._client._client).__name__  # the SDK's client holds the aiohttp transport


def test_a_missing_fast_transport_is_an_error_not_a_fallback(monkeypatch):
    import openai

    from judgelab.errors import BackendError
    from judgelab.models.backends.openai_compatible import OpenAIBackend

    class _MissingAioHttpClient:  # what the SDK substitutes when its aiohttp extra is absent
        def __init__(self, **kwargs):
            raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    monkeypatch.setattr(openai, "DefaultAioHttpClient", _MissingAioHttpClient)
    with pytest.raises(BackendError, match="fast HTTP transport"):
        OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1")
    assert OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1", transport="httpx").transport == "httpx"


def _recording_server(answers):
    """A loopback HTTP server (a test double) that records each request's path, headers and JSON body and
    answers with the next ``(status, body)`` of ``answers``; returns (start coroutine, records)."""
    import json

    records = []

    async def handle(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        records.append({"path": lines[0].split()[1], "headers": headers, "body": json.loads(body)})
        status, answer = answers[min(len(records), len(answers)) - 1]
        data = json.dumps(answer).encode()
        writer.write(f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(data)}\r\n"
                     f"connection: close\r\n\r\n".encode() + data)
        await writer.drain()
        writer.close()

    async def start():
        return await asyncio.start_server(handle, "127.0.0.1", 0)

    return start, records


_CHAT = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Rating: 4"}, "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}
_COMPLETION = {"id": "c", "object": "text_completion", "created": 0, "model": "m", "choices": [
    {"index": 0, "text": "Rating: 4", "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}


@pytest.mark.parametrize("style", ["chat", "completion"])
def test_the_live_call_sends_the_body_a_batch_line_carries_unchanged(style):
    """The live call posts request_body's JSON as it is (no second transform), with the key and the API key."""
    start, records = _recording_server([(200, _CHAT if style == "chat" else _COMPLETION)])
    request = JudgeRequest(messages=(("system", "Be strict."), ("user", "Rate «this» story.\n1-5")),
                           sampling=Sampling(temperature=0.7, top_p=0.9, max_tokens=64, seed=11), n=1, key="k1",
                           top_logprobs=3)

    async def go():
        server = await start()
        port = server.sockets[0].getsockname()[1]
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", style=style, max_retries=0)
        try:
            return backend, await backend.complete(request)
        finally:
            await backend.aclose()
            server.close()

    backend, response = asyncio.run(go())
    path, body = backend.request_body(request)
    assert [r["path"] for r in records] == [path] and records[0]["body"] == body
    assert records[0]["headers"]["authorization"] == "Bearer sk-test"
    assert records[0]["headers"]["x-judgelab-request-key"] == "k1"
    assert response.choices[0].text == "Rating: 4" and (response.prompt_tokens, response.completion_tokens) == (7, 3)


def test_a_refused_max_tokens_is_sent_again_as_max_completion_tokens():
    refusal = {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                    "Use 'max_completion_tokens' instead.", "type": "invalid_request_error"}}
    start, records = _recording_server([(400, refusal), (200, _CHAT)])
    request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling(max_tokens=32))

    async def go():
        server = await start()
        port = server.sockets[0].getsockname()[1]
        backend = OpenAIBackend("m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
        try:
            return await backend.complete(request)
        finally:
            await backend.aclose()
            server.close()

    assert asyncio.run(go()).choices[0].text == "Rating: 4"
    assert records[0]["body"]["max_tokens"] == 32 and "max_completion_tokens" not in records[0]["body"]
    assert records[1]["body"]["max_completion_tokens"] == 32 and "max_tokens" not in records[1]["body"]
