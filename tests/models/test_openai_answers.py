"""The one reader of OpenAI-compatible answers (live and batch), over the JSON body as sent."""
import pytest

from judgelab.errors import BackendError
from judgelab.models.backends.openai_answers import read_chat, read_completion, read_openai_body


def _chat(**choice):
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "served",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Rating: 4"}, "finish_reason": "stop", **choice}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


def test_a_chat_answer_is_read_with_its_tokens_counts_and_model():
    body = _chat(logprobs={"content": [{"token": "4", "logprob": -0.25, "top_logprobs": [{"token": "4", "logprob": -0.25},
                                                                                     {"token": "3", "logprob": -1.5}]}]})
    body["choices"][0]["message"]["reasoning_content"] = "short"
    got = read_chat(body, "asked")
    assert got.choices[0].text == "Rating: 4" and got.choices[0].finish_reason == "stop"
    assert got.choices[0].tokens == [("4", -0.25, {"4": -0.25, "3": -1.5})] and got.choices[0].reasoning == "short"
    assert (got.prompt_tokens, got.completion_tokens, got.model) == (12, 3, "served")


def test_missing_usage_and_model_and_a_null_content_are_read_as_nothing():
    body = _chat()
    del body["usage"], body["model"]
    body["choices"][0]["message"]["content"] = None
    got = read_chat(body, "asked")
    assert got.choices[0].text == "" and (got.prompt_tokens, got.completion_tokens, got.model) == (0, 0, "asked")


def test_a_completion_answer_with_logprobs_is_read():
    body = {"model": "m", "choices": [{"text": " 4", "finish_reason": "length",
                                        "logprobs": {"tokens": [" 4"], "token_logprobs": [None], "top_logprobs": [{" 4": -0.1}]}}]}
    got = read_completion(body, "m")
    assert got.choices[0].tokens == [(" 4", float("-inf"), {" 4": -0.1})] and got.choices[0].finish_reason == "length"


@pytest.mark.parametrize("body", [
    "<!doctype html><html></html>",                             # a web page (the SDK hands over its text)
    {"choices": [{"text": "4"}]},                               # a completion where a chat answer was asked
    {"choices": [{"message": {"content": 4}}]},                 # a number where the text belongs
    {"choices": [{"message": {"content": "4"}, "finish_reason": 1}]},
    {"choices": "4"},
    {"choices": [{"message": {"content": "4"}, "logprobs": {"content": [{"token": "4"}]}}]},  # a token without its logprob
])
def test_a_body_of_another_shape_is_refused_not_read(body):
    with pytest.raises(BackendError, match="not an OpenAI chat completion"):
        read_openai_body(body, "chat", "m")


def test_a_chat_body_is_not_read_as_a_completion():
    with pytest.raises(BackendError, match="not an OpenAI completion"):
        read_openai_body(_chat(), "completion", "m")
