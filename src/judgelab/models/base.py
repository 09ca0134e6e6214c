"""The one protocol every judge backend implements.

Text in (chat messages); text, optional next-token log-probabilities, token counts and
latency out. A backend knows nothing about criteria or templates. It declares what it
can do (:class:`Capabilities`); asking for something it lacks raises
:class:`~judgelab.errors.CapabilityError` instead of silently degrading.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from judgelab.errors import CapabilityError

__all__ = [
    "Sampling",
    "Capabilities",
    "JudgeRequest",
    "TokenLogprobs",
    "Choice",
    "JudgeResponse",
    "Backend",
    "flatten_messages",
]


class Sampling(BaseModel):
    """Sampling parameters of one request (validated: bad values are a one-line error)."""

    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(128, ge=1, le=32768)
    seed: int | None = None

    model_config = {"frozen": True}


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers. ``top_logprobs`` is the most alternatives per token (0: none)."""

    max_n: int = 1
    top_logprobs: int = 0
    seed: bool = False
    score_mode: bool = False
    concurrency: int = 1


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a judge.

    ``score_cue`` switches to *score mode*: no text is generated; the backend returns
    the next-token distribution after the prompt followed by the cue (G-Eval style
    scoring). ``key`` is the ledger key, passed along so servers can de-duplicate.
    """

    messages: tuple[tuple[str, str], ...]
    sampling: Sampling
    n: int = 1
    top_logprobs: int = 0
    score_cue: str | None = None
    key: str = ""

    def as_dicts(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


# One generated token: (token text, its logprob, {alternative token: logprob}).
TokenLogprobs = tuple[str, float, dict[str, float]]


@dataclass
class Choice:
    """One answer: its text, per-token log-probabilities when asked for, why it stopped
    (``length`` = cut off at ``max_tokens``), and a reasoning model's reasoning text."""

    text: str
    tokens: list[TokenLogprobs] | None = None
    finish_reason: str | None = None
    reasoning: str | None = None


@dataclass
class JudgeResponse:
    choices: list[Choice]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
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
        choices = [
            Choice(
                text=c["text"],
                tokens=[(t[0], t[1], dict(t[2])) for t in c["tokens"]] if c.get("tokens") is not None else None,
                finish_reason=c.get("finish_reason"),
                reasoning=c.get("reasoning"),
            )
            for c in data["choices"]
        ]
        return cls(choices, data.get("prompt_tokens", 0), data.get("completion_tokens", 0),
                   data.get("latency_s", 0.0), data.get("model", ""), data.get("extra", {}))


class Backend(abc.ABC):
    """A judge model. Subclasses implement :meth:`_complete`."""

    kind: str = "backend"
    model_id: str = ""
    capabilities: Capabilities = Capabilities()

    def identity(self) -> dict[str, Any]:
        """What identifies this judge in the call ledger (part of every request key)."""
        return {"kind": self.kind, "model": self.model_id}

    def check(self, request: JudgeRequest) -> None:
        caps = self.capabilities
        if request.n > caps.max_n:
            raise CapabilityError(f"{self.kind} judge {self.model_id!r} cannot return n={request.n} samples in one call")
        if request.top_logprobs > caps.top_logprobs:
            raise CapabilityError(
                f"{self.kind} judge {self.model_id!r} offers at most {caps.top_logprobs} top log-probabilities"
                f" (asked for {request.top_logprobs})"
            )
        if request.score_cue is not None and not caps.score_mode:
            raise CapabilityError(
                f"{self.kind} judge {self.model_id!r} cannot score by next-token log-probabilities; use --score parsed"
            )
        if request.sampling.seed is not None and not caps.seed:
            raise CapabilityError(f"{self.kind} judge {self.model_id!r} does not accept a sampling seed")

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        self.check(request)
        return await self._complete(request)

    @abc.abstractmethod
    async def _complete(self, request: JudgeRequest) -> JudgeResponse: ...

    async def aclose(self) -> None:  # pragma: no cover - default no-op
        return None


def flatten_messages(messages: tuple[tuple[str, str], ...] | list[dict[str, str]]) -> str:
    """Render chat turns as one completion-style prompt.

    A single user turn is its text unchanged (the paper's prompts verbatim). Later
    turns are separated by blank lines, the judge's earlier answers included.
    """
    pairs = [(m["role"], m["content"]) if isinstance(m, dict) else m for m in messages]
    return "\n\n".join(content for _, content in pairs)
