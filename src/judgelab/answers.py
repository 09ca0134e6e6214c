"""A judge's answer as the call ledger stores it: :class:`JudgeResponse` (its :class:`Choice` s, token
counts, latency), written with :meth:`JudgeResponse.to_json` and read back, checked, with
:meth:`JudgeResponse.from_json`. The store reads and writes these; the backends make them
(:mod:`judgelab.models.base` re-exports them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["TokenLogprobs", "Choice", "JudgeResponse"]


# One generated token: (token text, its logprob, {alternative token: logprob}).
TokenLogprobs = tuple[str, float, dict[str, float]]


@dataclass
class Choice:
    """One answer: its text, per-token log-probabilities when asked for, why it stopped
    (``length`` = cut off at ``max_tokens``), and a reasoning model's reasoning text.

    Attributes:
        text: the answer.
        tokens: ``(token, logprob, {alternative: logprob})`` per generated token, or ``None``.
        finish_reason: ``stop``, ``length``, ``score`` …
        reasoning: a reasoning model's reasoning text, when the server returns it.

    Example:
        >>> Choice("4", None, "stop").finish_reason
        'stop'
    """

    text: str
    tokens: list[TokenLogprobs] | None = None
    finish_reason: str | None = None
    reasoning: str | None = None


@dataclass
class JudgeResponse:
    """A backend's answer to one request, as stored in the call ledger.

    Attributes:
        choices: one :class:`Choice` per answer (at most ``n``).
        prompt_tokens, completion_tokens: token counts of the call.
        latency_s: seconds the call took.
        model: the model the server says answered.
        extra: backend-specific details kept with the call.

    Example:
        >>> response = JudgeResponse([Choice("4", None, "stop")], prompt_tokens=12)
        >>> JudgeResponse.from_json(response.to_json()) == response
        True
    """
    choices: list[Choice]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The response as a JSON-serialisable dict (what the ledger stores)."""
        return {
            "choices": [
                {"text": c.text, "tokens": [list(t) for t in c.tokens] if c.tokens is not None else None,
                 "finish_reason": c.finish_reason, **({"reasoning": c.reasoning} if c.reasoning is not None else {})}
                for c in self.choices
            ],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "model": self.model,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "JudgeResponse":
        """A response back from its :meth:`to_json` form.

        Args:
            data: the stored dict.

        Returns:
            The :class:`JudgeResponse`.

        Raises:
            ValueError: ``data`` is not a stored answer (no choices, a choice without text,
                malformed tokens): a damaged ledger entry is never read as an answer.

        Example:
            >>> JudgeResponse.from_json({})
            Traceback (most recent call last):
            ...
            ValueError: not a stored answer: no choices
        """
        if not isinstance(data, dict):
            raise ValueError(f"not a stored answer: {type(data).__name__}")
        raw_choices = data.get("choices")
        if not isinstance(raw_choices, list) or not raw_choices:
            raise ValueError("not a stored answer: no choices")
        choices = []
        for c in raw_choices:
            if not isinstance(c, dict) or not isinstance(c.get("text"), str):
                raise ValueError("not a stored answer: a choice without text")
            tokens = c.get("tokens")
            if tokens is not None:
                try:
                    tokens = [(str(t[0]), float(t[1]), {str(k): float(v) for k, v in dict(t[2]).items()}) for t in tokens]
                except (TypeError, ValueError, IndexError, KeyError):
                    raise ValueError("not a stored answer: malformed tokens") from None
            reasoning = c.get("reasoning")
            choices.append(Choice(text=c["text"], tokens=tokens, finish_reason=c.get("finish_reason"),
                                  reasoning=reasoning if isinstance(reasoning, str) else None))
        extra = data.get("extra", {})
        try:
            return cls(choices, int(data.get("prompt_tokens", 0) or 0), int(data.get("completion_tokens", 0) or 0),
                       float(data.get("latency_s", 0.0) or 0.0), str(data.get("model", "") or ""),
                       extra if isinstance(extra, dict) else {})
        except (TypeError, ValueError):
            raise ValueError("not a stored answer: malformed counts") from None
