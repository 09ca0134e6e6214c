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
