"""Reading an OpenAI-compatible answer into a :class:`~judgelab.models.base.JudgeResponse`: the one
reader of live answers (the SDK's objects) and of batch answers (a batch-output line's JSON body,
validated into the same SDK types first), so both are recorded alike."""
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
    """
    import openai.types
    import openai.types.chat

    try:
        if style == "chat":
            return read_chat(openai.types.chat.ChatCompletion.model_validate(body), model)
        return read_completion(openai.types.Completion.model_validate(body), model)
    except Exception as exc:  # pydantic's ValidationError and the readers' shape checks
        raise BackendError(f"a batch answer is not an OpenAI {'chat ' if style == 'chat' else ''}completion "
                           f"({type(exc).__name__})") from None


def read_chat(raw: Any, model: str) -> JudgeResponse:
    if not isinstance(raw.choices, list) or any(getattr(c, "message", None) is None for c in raw.choices):
        raise ValueError("no choices with a message")
    choices = [Choice(c.message.content or "", _chat_tokens(c), c.finish_reason, _reasoning(c.message))
               for c in raw.choices]
    return _response(raw, choices, model)


def read_completion(raw: Any, model: str) -> JudgeResponse:
    if not isinstance(raw.choices, list) or any(getattr(c, "text", None) is None for c in raw.choices):
        raise ValueError("no choices with a text")
    return _response(raw, [Choice(c.text or "", _completion_tokens(c), c.finish_reason) for c in raw.choices], model)


def _response(raw: Any, choices: list[Choice], model: str) -> JudgeResponse:
    usage = raw.usage
    return JudgeResponse(
        choices=choices,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        model=raw.model or model,
    )


def _reasoning(message: Any) -> str | None:
    """A reasoning model's reasoning text (``reasoning_content`` in DeepSeek/vLLM, ``reasoning`` elsewhere)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None and getattr(message, "model_extra", None):
            value = message.model_extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _chat_tokens(choice: Any) -> list[TokenLogprobs] | None:
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    return [(t.token, t.logprob, {a.token: a.logprob for a in (t.top_logprobs or [])}) for t in content]


def _completion_tokens(choice: Any) -> list[TokenLogprobs] | None:
    lp = getattr(choice, "logprobs", None)
    if lp is None or not getattr(lp, "tokens", None):
        return None
    tops = lp.top_logprobs or [{}] * len(lp.tokens)
    return [(tok, lpv if lpv is not None else float("-inf"), dict(top or {}))
            for tok, lpv, top in zip(lp.tokens, lp.token_logprobs, tops)]


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
