"""Reading an OpenAI-compatible answer into a :class:`~judgelab.models.base.JudgeResponse`: the one
reader of live answers and of batch answers (a batch-output line's ``response.body``), both the JSON
body as the server sent it (plain dicts and lists), so both are recorded alike.

Live calls ask the SDK for the decoded JSON (``cast_to=object``) rather than its completion objects:
building those took about a tenth of a zero-latency call's CPU, and the fields read here are checked
here, each for the type an answer needs (a body of another shape is one line naming ``--base-url``
and ``--style``, never a wrong answer)."""
from __future__ import annotations

import re
from typing import Any

from judgelab.errors import BackendError
from judgelab.models.base import Choice, JudgeResponse, TokenLogprobs

__all__ = ["read_openai_body", "read_chat", "read_completion"]


def read_openai_body(body: Any, style: str, model: str) -> JudgeResponse:
    """An answer from an OpenAI chat-completion or completion body (a batch-output line's
    ``response.body``), read by the same code as a live answer.

    Args:
        body: the JSON body; style: ``chat`` or ``completion``; model: the judge's model (when the body names none).

    Raises:
        BackendError: the body is not an OpenAI completion of this style.

    Example:
        >>> body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [
        ...     {"index": 0, "message": {"role": "assistant", "content": "4"}, "finish_reason": "stop"}]}
        >>> read_openai_body(body, "chat", "m").choices[0].text
        '4'
        >>> read_openai_body({"choices": [{"text": "4"}]}, "chat", "m")
        Traceback (most recent call last):
        ...
        judgelab.errors.BackendError: a batch answer is not an OpenAI chat completion (ValueError)
    """
    try:
        return read_chat(body, model) if style == "chat" else read_completion(body, model)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:  # the readers' shape checks
        raise BackendError(f"a batch answer is not an OpenAI {'chat ' if style == 'chat' else ''}completion "
                           f"({type(exc).__name__})") from None


def read_chat(body: Any, model: str) -> JudgeResponse:
    """A chat-completion body (``choices[].message.content``).

    Raises:
        ValueError: not a chat completion (no list of choices with a message, a content that is not text).
    """
    choices = _choices(body)
    read = []
    for c in choices:
        message = c.get("message")
        if not isinstance(message, dict):
            raise ValueError("no choices with a message")
        read.append(Choice(_text(message.get("content")), _chat_tokens(c.get("logprobs")), _finish(c),
                           _reasoning(message)))
    return _response(body, read, model)


def read_completion(body: Any, model: str) -> JudgeResponse:
    """A completion body (``choices[].text``).

    Raises:
        ValueError: not a completion (no list of choices with a text).
    """
    choices = _choices(body)
    if any(c.get("text") is None for c in choices):
        raise ValueError("no choices with a text")
    return _response(body, [Choice(_text(c["text"]), _completion_tokens(c.get("logprobs")), _finish(c))
                            for c in choices], model)


def _choices(body: Any) -> list[dict[str, Any]]:
    if not isinstance(body, dict):
        raise ValueError(f"the body is {type(body).__name__}, not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise ValueError("no list of choices")
    return choices


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"an answer's text is {type(value).__name__}")
    return value


def _finish(choice: dict[str, Any]) -> str | None:
    reason = choice.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        raise ValueError(f"finish_reason is {type(reason).__name__}")
    return reason


def _count(usage: Any, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _response(body: dict[str, Any], choices: list[Choice], model: str) -> JudgeResponse:
    usage, named = body.get("usage"), body.get("model")
    return JudgeResponse(
        choices=choices,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        model=named if isinstance(named, str) and named else model,
    )


def _reasoning(message: dict[str, Any]) -> str | None:
    """A reasoning model's reasoning text (``reasoning_content`` in DeepSeek/vLLM, ``reasoning`` elsewhere)."""
    for name in ("reasoning_content", "reasoning"):
        value = message.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _chat_tokens(logprobs: Any) -> list[TokenLogprobs] | None:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not content:
        return None
    return [(str(t["token"]), float(t["logprob"]), {str(a["token"]): float(a["logprob"]) for a in (t.get("top_logprobs") or [])})
            for t in content]


def _completion_tokens(logprobs: Any) -> list[TokenLogprobs] | None:
    tokens = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    if not tokens:
        return None
    values = logprobs.get("token_logprobs") or [None] * len(tokens)
    tops = logprobs.get("top_logprobs") or [{}] * len(tokens)
    return [(str(tok), float(lpv) if lpv is not None else float("-inf"), {str(k): float(v) for k, v in (top or {}).items()})
            for tok, lpv, top in zip(tokens, values, tops)]


def _space_then_digit(choices: list[Choice]) -> bool:
    """Does the tokenizer spell " 4" as a bare space followed by "4"?

    Read off the first scoring answer: the alternatives after the cue include a bare-space token
    and no space-plus-number token (a tokenizer with " 4" tokens offers some among its top
    alternatives after "Answer:"). Decided once per judge, as the embedded judge decides it once
    from its tokenizer.
    """
    if not choices or not choices[0].tokens:
        return False
    token, _lp, alternatives = choices[0].tokens[0]
    seen = {token, *alternatives}
    return " " in seen and not any(re.fullmatch(r"\s+\d+", t) for t in seen)
