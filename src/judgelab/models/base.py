"""The one protocol every judge backend implements.

Text in (chat messages); text, optional next-token log-probabilities, token counts and
latency out. A backend knows nothing about criteria or templates. It declares what it
can do (:class:`Capabilities`); asking for something it lacks raises
:class:`~judgelab.errors.CapabilityError` instead of silently degrading.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

from judgelab.answers import Choice, JudgeResponse, TokenLogprobs  # the answer, as the ledger stores it
from judgelab.errors import CapabilityError
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.capabilities import EndpointCapabilities
from judgelab.models.retry import RetryPolicy
from judgelab.settings import Sampling  # the request's sampling, defined with the run's settings

__all__ = [
    "Sampling",
    "Capabilities",
    "JudgeRequest",
    "TokenLogprobs",
    "Choice",
    "JudgeResponse",
    "Backend",
    "flatten_messages",
    "AnswerFormat",
]


@dataclass(frozen=True)
class Capabilities:
    """What a backend offers; asking for more raises :class:`~judgelab.errors.CapabilityError`.

    Attributes:
        max_n: the most answers one request may ask for.
        top_logprobs: the most alternatives per token (0: none).
        seed: whether a sampling seed is accepted.
        score_mode: whether the next-token distribution after a cue can be read (``--score logprob``).
        concurrency: the calls the runner sends at once by default.
        constrain: how the backend enforces an :class:`AnswerFormat` (``grammar``: a llama.cpp
            grammar; ``json_schema``: a JSON-schema ``response_format``), or ``None``: it cannot.

    Example:
        >>> Capabilities(max_n=8).top_logprobs
        0
    """

    max_n: int = 1
    top_logprobs: int = 0
    seed: bool = False
    score_mode: bool = False
    concurrency: int = 1
    constrain: str | None = None


@dataclass(frozen=True)
class JudgeRequest:
    """One call to a judge.

    ``score_cue`` switches to *score mode*: no text is generated; the backend returns
    the next-token distribution after the prompt followed by the cue (G-Eval style
    scoring). ``key`` is the ledger key, passed along so servers can de-duplicate.

    Attributes:
        messages: ``(role, text)`` chat turns.
        sampling: the sampling parameters.
        n: answers asked for.
        top_logprobs: alternatives per generated token.
        score_cue: the cue of score mode, or ``None``.
        key: the ledger key (set by :class:`~judgelab.models.cache.CachedJudge`).
        answer_format: the shape the answer must take (``--constrain``), or ``None``: free text.

    Example:
        >>> JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling()).as_dicts()
        [{'role': 'user', 'content': 'Rate it.'}]
    """

    messages: tuple[tuple[str, str], ...]
    sampling: Sampling
    n: int = 1
    top_logprobs: int = 0
    score_cue: str | None = None
    key: str = ""
    answer_format: AnswerFormat | None = None

    def as_dicts(self) -> list[dict[str, str]]:
        """The messages as OpenAI-style ``{"role", "content"}`` dicts."""
        return [{"role": r, "content": c} for r, c in self.messages]


class Backend(abc.ABC):
    """A judge model: subclasses set ``kind``, ``model_id`` and ``capabilities`` and implement :meth:`_complete`.

    A new backend is one module of :mod:`judgelab.models.backends` that defines the subclass and
    registers its kind (:func:`~judgelab.models.registry.register_backend`), plus its module name in
    :data:`~judgelab.models.registry.BUILTIN_BACKENDS`. What a run reads from a backend is declared
    here with a default (:meth:`identity`, :attr:`notes`, :meth:`run_facts`,
    :meth:`count_prompt_tokens`, :attr:`retry_policy`, :meth:`aclose`): code outside
    :mod:`judgelab.models` never probes a backend with ``getattr`` nor tests its ``kind``.

    Example:
        >>> import asyncio
        >>> class Always4(Backend):
        ...     kind, model_id = "always-4", "always-4"
        ...     async def _complete(self, request):
        ...         return JudgeResponse([Choice("4", None, "stop")])
        >>> asyncio.run(Always4().complete(JudgeRequest((("user", "Rate it."),), Sampling()))).choices[0].text
        '4'
    """

    kind: str = "backend"
    model_id: str = ""
    capabilities: Capabilities = Capabilities()
    #: How :class:`~judgelab.models.retry.CallGate` retries this backend's transient failures.
    retry_policy: RetryPolicy = RetryPolicy()
    #: What the judge's endpoint showed it can do while answering (:mod:`judgelab.models.capabilities`), or
    #: None: an in-process judge does what it declares.
    learned: EndpointCapabilities | None = None

    def identity(self) -> dict[str, Any]:
        """What identifies this judge in the call ledger (part of every request key).

        Everything that changes answers (model, endpoint, the local judge's model file and CPU
        path), never a credential.

        Returns:
            A JSON-serialisable dict.
        """
        return {"kind": self.kind, "model": self.model_id}

    @property
    def notes(self) -> tuple[str, ...]:
        """What the backend learned while answering that the user should know (shown after a run)."""
        return ()

    def run_facts(self) -> dict[str, Any]:
        """How this judge ran, for run.json, when it does not change the answers (the identity holds
        what does): the HTTP transport, the llama.cpp CPU path, the length parameter's name …"""
        return {}

    def count_prompt_tokens(self, messages: tuple[tuple[str, str], ...]) -> int | None:
        """Prompt tokens of ``messages`` as this judge would read them, without a model call, or
        None when only the judge's server knows (``--dry-run`` then estimates).

        Args:
            messages: ``((role, text), ...)`` of a planned call.

        Returns:
            The count, or None (the default).
        """
        return None

    def batch_request(self, request: JudgeRequest) -> tuple[str, dict[str, Any]]:
        """(URL path, JSON body) of a request as one line of an OpenAI batch-input file.

        Args:
            request: the request (checked as :meth:`complete` checks it).

        Raises:
            CapabilityError: this judge cannot be asked through a batch (the default).
        """
        raise CapabilityError(f"the {self.kind} judge cannot be asked through a batch file or batch API; "
                              "batches need an openai:MODEL judge")

    def batch_client(self) -> Any:
        """The SDK client of the provider's files and batches API (``openai.AsyncOpenAI`` for OpenAI-compatible
        judges), for :mod:`judgelab.run.provider_batch`.

        Raises:
            CapabilityError: this judge has no batch API (the default).
        """
        raise CapabilityError(f"the {self.kind} judge has no batch API; --execution batch needs an openai:MODEL judge")

    def batch_endpoints(self) -> list[tuple[str, Any]]:
        """``(base URL, batch client)`` of each endpoint holding batches (a fleet: every replica, in the
        order given; new batches go to the first that answers).

        Raises:
            CapabilityError: this judge has no batch API (the default).
        """
        return [(str(self.identity().get("base_url", "")), self.batch_client())]

    def read_batch_answer(self, body: Any) -> "JudgeResponse":
        """An answer from the JSON body of a batch-output line, read as a live answer is.

        Raises:
            CapabilityError: this judge cannot be asked through a batch (the default).
        """
        raise CapabilityError(f"the {self.kind} judge cannot read batch answers")

    def check(self, request: JudgeRequest) -> None:
        """Refuse a request the backend cannot serve (no silent fallback).

        Args:
            request: the request.

        Raises:
            CapabilityError: too many answers, log-probabilities, score mode or a seed not offered.
        """
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
        if request.answer_format is not None and not caps.constrain:
            raise CapabilityError(f"{self.kind} judge {self.model_id!r} cannot constrain its answers (--constrain)")
        if request.sampling.seed is not None and not caps.seed:
            raise CapabilityError(f"{self.kind} judge {self.model_id!r} does not accept a sampling seed")

    async def complete(self, request: JudgeRequest) -> JudgeResponse:
        """Answer a request after :meth:`check` (callers go through :class:`~judgelab.models.cache.CachedJudge`).

        Args:
            request: the request.

        Returns:
            The :class:`JudgeResponse`.
        """
        self.check(request)
        return await self._complete(request)

    @abc.abstractmethod
    async def _complete(self, request: JudgeRequest) -> JudgeResponse: ...

    async def aclose(self) -> None:  # pragma: no cover - default no-op
        """Release connections or models (a no-op by default)."""
        return None


def flatten_messages(messages: tuple[tuple[str, str], ...] | list[dict[str, str]]) -> str:
    """Render chat turns as one completion-style prompt.

    A single user turn is its text unchanged (the paper's prompts verbatim). Later
    turns are separated by blank lines, the judge's earlier answers included.

    Args:
        messages: ``(role, text)`` pairs or ``{"role", "content"}`` dicts.

    Returns:
        The prompt text.

    Example:
        >>> flatten_messages((("user", "Q1"), ("assistant", "4"), ("user", "Q2"))).splitlines()
        ['Q1', '', '4', '', 'Q2']
    """
    pairs = [(m["role"], m["content"]) if isinstance(m, dict) else m for m in messages]
    return "\n\n".join(content for _, content in pairs)
