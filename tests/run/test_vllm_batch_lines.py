"""The batch-input lines ``rate --export-batch`` writes are lines ``vllm run-batch`` reads.

vLLM cannot be installed here, so its request schema is written out below, from vLLM's own files
(main, read for this test):

* ``vllm/entrypoints/openai/run_batch.py``: ``BatchRequestInput`` — ``custom_id: str``, ``method: str``,
  ``url: str``, ``body`` validated by ``url`` (``/v1/chat/completions`` → ``ChatCompletionRequest``; also
  ``/v1/embeddings``, ``…/score``, ``…/rerank``); ``create_request_task`` answers any other URL with "URL … was
  used. Supported endpoints: /v1/chat/completions, /v1/embeddings, /score, /rerank." (and a ``/v1/completions``
  body, which has no ``messages``, already fails ``BatchRequestInput.model_validate_json``);
* ``vllm/entrypoints/openai/protocol.py``: ``ChatCompletionRequest`` — the fields judgelab sends (``messages``,
  ``model``, ``logprobs: bool | None = False``, ``top_logprobs: int | None = 0``, ``max_tokens`` (deprecated) /
  ``max_completion_tokens``, ``n: int | None = 1``, ``seed`` within a C long, ``temperature``, ``top_p``,
  ``response_format``: ``{"type": "text" | "json_object" | "json_schema", "json_schema": {"name", "schema",
  "strict", "description"}}``) and its ``check_logprobs`` validator (``top_logprobs`` > 0 needs ``logprobs:
  true``); the engine's ``max_logprobs`` (20 by default) bounds ``top_logprobs``. vLLM's ``OpenAIBaseModel``
  accepts unknown fields and ignores them (with a warning): here an unknown field is an error, since a
  parameter vLLM ignores would change what is asked without saying so.
"""
from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from conftest import one_line_error, run_cli, write_items

_LONG = 2 ** 63  # torch.iinfo(torch.long): vLLM's bounds of ``seed``
URLS = ("/v1/chat/completions", "/v1/embeddings", "/score", "/rerank")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatMessage(_Strict):
    role: Literal["system", "user", "assistant"]
    content: str


class JsonSchemaResponseFormat(_Strict):
    name: str
    description: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormat(_Strict):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaResponseFormat | None = None


class ChatCompletionRequest(_Strict):
    messages: list[ChatMessage] = Field(min_length=1)
    model: str | None = None
    logprobs: bool | None = False
    top_logprobs: int | None = Field(default=0, le=20)
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n: int | None = 1
    seed: int | None = Field(default=None, ge=-_LONG, lt=_LONG)
    temperature: float | None = None
    top_p: float | None = None
    response_format: ResponseFormat | None = None

    @model_validator(mode="before")
    @classmethod
    def check_logprobs(cls, data: Any) -> Any:  # vLLM's validator, as written there
        if (top_logprobs := data.get("top_logprobs")) is not None:
            if top_logprobs < 0 and top_logprobs != -1:
                raise ValueError("`top_logprobs` must be a positive value or -1.")
            if (top_logprobs == -1 or top_logprobs > 0) and not data.get("logprobs"):
                raise ValueError("when using `top_logprobs`, `logprobs` must be set to true.")
        return data


class BatchRequestInput(_Strict):
    custom_id: str
    method: Literal["POST"]
    url: str
    body: Any

    @field_validator("body", mode="plain")
    @classmethod
    def check_type_for_url(cls, value: Any, info: ValidationInfo) -> Any:
        url = info.data["url"]
        if url == "/v1/chat/completions":
            return ChatCompletionRequest.model_validate(value)
        raise ValueError(f"URL {url} was used. Supported endpoints: {', '.join(URLS)}.")


def _export(tmp_path, *options: str) -> list[dict]:
    items = write_items(tmp_path / "items.jsonl", 3)
    path = tmp_path / "requests.jsonl"
    result = run_cli("rate", "--items", str(items), "--judge", "openai:m@http://127.0.0.1:9/v1", "--criteria",
                     "grammaticality", "--out", str(tmp_path / "out"), "--export-batch", str(path), *options)
    assert result.returncode == 0, result.stderr
    assert "e.g. vllm run-batch -i" in result.stdout
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("options", [
    ("--samples", "3", "--score", "parsed"),  # n=3 in one line
    ("--samples", "2", "--score", "parsed", "--seed", "7", "--top-logprobs", "5"),
    ("--score", "logprob"),  # the log-probability rating as a chat line: logprobs, top_logprobs 20, max_tokens 1
    ("--samples", "1", "--score", "parsed", "--constrain"),  # a JSON-schema response_format
    ("--samples", "1", "--score", "parsed", "--max-tokens-param", "max_completion_tokens"),
], ids=["n", "seed-top-logprobs", "logprob", "constrain", "max-completion-tokens"])
def test_every_chat_line_validates_against_vllms_batch_request_schema(tmp_path, options):
    lines = _export(tmp_path, *options)
    assert len(lines) in (3, 6)
    for line in lines:
        parsed = BatchRequestInput.model_validate(line)
        body = parsed.body
        assert isinstance(body, ChatCompletionRequest) and body.model == "m"
        if "logprob" in options:
            assert body.logprobs is True and body.top_logprobs == 20 and body.max_tokens == 1 and body.n == 1


def test_the_schema_above_refuses_what_vllm_refuses():
    line = {"custom_id": "k", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "m", "messages": [{"role": "user", "content": "x"}], "top_logprobs": 5}}
    with pytest.raises(ValidationError, match="logprobs` must be set to true"):
        BatchRequestInput.model_validate(line)
    with pytest.raises(ValidationError, match="Supported endpoints"):
        BatchRequestInput.model_validate({**line, "url": "/v1/completions", "body": {"model": "m", "prompt": "x"}})
    with pytest.raises(ValidationError):
        BatchRequestInput.model_validate({**line, "body": {"model": "m", "messages": [{"role": "user", "content": "x"}],
                                                           "best_of": 2}})  # a field vLLM would ignore


def test_completion_style_lines_are_not_offered_to_vllm_run_batch(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    path = tmp_path / "requests.jsonl"
    args = ["rate", "--items", str(items), "--judge", "openai:m@http://127.0.0.1:9/v1", "--criteria", "grammaticality",
            "--style", "completion", "--out", str(tmp_path / "out")]
    result = run_cli(*args, "--samples", "1", "--score", "parsed", "--export-batch", str(path))
    assert result.returncode == 0, result.stderr
    assert "vllm run-batch -i" not in result.stdout
    assert "/v1/completions lines, for OpenAI's Batch API: vllm run-batch reads chat lines only (export with " \
           "--style chat for it)" in result.stdout
    line = json.loads(path.read_text().splitlines()[0])
    with pytest.raises(ValidationError, match="Supported endpoints"):
        BatchRequestInput.model_validate(line)
    # completion-style log-probability scoring needs the completion form (and maybe a second request): refused
    refused = run_cli(*args, "--score", "logprob", "--export-batch", str(tmp_path / "lp.jsonl"))
    one_line_error(refused, "cannot run as a batch", "--style chat", "vllm run-batch reads no /v1/completions lines")
    assert not (tmp_path / "lp.jsonl").exists()
