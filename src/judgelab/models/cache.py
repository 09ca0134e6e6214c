"""The call ledger as a wrapper around any backend (cf. lm-eval's ``CachingLM``).

Every model call that goes through a :class:`~judgelab.store.Store` — ratings, pairwise
comparisons, LLM perturbations — goes through :class:`CachedJudge`. A request is described
as JSON (the judge's identity, the messages, the sampling parameters, ``n`` and the caller's
extra fields such as the sample slot and the refusal attempt); the SHA-256 of that canonical
JSON is the ledger key. A key found in the store is answered from it and the judge is not
called. A new answer is appended to the store's journal at once (it survives a kill) and
handed to the store's group writer, which writes it to the database with the run's judgments.

Calls the ledger cannot answer go to the wrapper's *executor*: by default the live gate
(:class:`~judgelab.models.retry.CallGate`: retries, adaptive concurrency) around the backend's
``complete``. Other executors (a provider batch, an offline batch file, a fleet of replicas)
answer the same requests behind the same ledger, so a run can move between them and keep every
answer it already paid for.

The key of a rating call is unchanged since judgelab 0.2, so stores written before keep
resuming without paying again (tested against a fixed key).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Awaitable, Callable

from judgelab.digest import canonical_json, keyed_json, plain_json
from judgelab.errors import JudgelabError
from judgelab.models.base import Backend, JudgeRequest, JudgeResponse
from judgelab.models.retry import CallFailed, CallGate
from judgelab.store import GroupWriter, Store

__all__ = ["CachedJudge", "Answerer"]


#: Types of ``extra`` values a key frame is told apart by exactly (floats are not: ``0.0 == -0.0``).
_EXACT = frozenset({int, str, bool, type(None)})
#: The messages as a request with none describes them; each request's own are encoded in their place.
_NO_MESSAGES = '"messages":[]'
#: Key frames kept (a run has a few: one per ``n``, sample slot and refusal attempt); more are made again.
_FRAMES = 1024

#: What answers the calls the ledger does not hold: ``request (key set) -> response``.
Answerer = Callable[[JudgeRequest], Awaitable[JudgeResponse]]


class CachedJudge:
    """A backend behind the store's call ledger: a stored call is never made again.

    Args:
        backend: the judge (its identity is part of every key; its ``complete`` answers by default).
        store: the store whose ``calls`` table is the ledger.
        writer: the store's group writer (made for ``store`` when not given); call :meth:`flush`
            at the end when there is no run to flush it.
        gate: retries and adaptive concurrency of the live calls (made from the backend's retry
            policy and concurrency when not given).
        executor: what answers a call the ledger does not hold (default: the gate around
            ``backend.complete``).

    Attributes:
        calls_made, cache_hits, prompt_tokens, completion_tokens: counters of this wrapper's
            life (tokens of calls actually made).
        calls_failed: calls that ran out of their retry budget (:class:`~judgelab.models.retry.CallFailed`).

    Example:
        >>> import asyncio
        >>> from judgelab.models.base import JudgeRequest, Sampling
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> cached = CachedJudge(ScriptedTestJudge({"default": "4"}), Store(":memory:"))
        >>> request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
        >>> asyncio.run(cached.complete(request))[0].choices[0].text
        '4'
        >>> asyncio.run(cached.complete(request))[0].choices[0].text, cached.calls_made, cached.cache_hits
        ('4', 1, 1)
    """

    def __init__(self, backend: Backend, store: Store, writer: GroupWriter | None = None,
                 gate: CallGate | None = None, executor: Answerer | None = None) -> None:
        self.backend = backend
        self.store = store
        self.writer = writer or GroupWriter(store)
        self.gate = gate or CallGate(backend.retry_policy, backend.capabilities.concurrency)
        self.executor: Answerer = executor or self._live
        self.calls_failed = 0
        self._identity = backend.identity()
        self._frames: dict[tuple[Any, ...], tuple[Any, str | None, str]] = {}
        #: Key → canonical request JSON of the calls now with the executor (a batch executor
        #: records it beside the key before sending, so an answer read back later is ledgered as live).
        self.in_flight: dict[str, str] = {}
        self.calls_made = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    async def _live(self, request: JudgeRequest) -> JudgeResponse:
        return await self.gate.call(lambda: self.backend.complete(request))

    # -- keys ------------------------------------------------------------------
    def describe(self, request: JudgeRequest, **extra: Any) -> dict[str, Any]:
        """The request description the key is taken over.

        Args:
            request: the call (its ``key`` is ignored).
            **extra: caller fields that tell apart otherwise equal requests (the runner's
                ``top_logprobs``, ``score_cue``, ``slot`` and ``attempt``; a perturbation's
                ``purpose``).

        Returns:
            ``{"judge", "messages", "sampling", "n", **extra}``.
        """
        return {
            "judge": self._identity,
            "messages": [list(m) for m in request.messages],
            "sampling": request.sampling.model_dump(),
            "n": request.n,
            **extra,
        }

    def key(self, request: JudgeRequest, **extra: Any) -> tuple[str, str]:
        """(ledger key, canonical request JSON) of a request, always taken over its fields as they are.

        The text around the messages depends only on the judge, ``n``, the sampling object and ``extra``:
        it is made once per such frame (:meth:`_frame`) and each request's messages are encoded into it
        (the same text as :meth:`describe` encoded whole).

        Example:
            >>> from judgelab.models.base import JudgeRequest, Sampling
            >>> from judgelab.models.backends.scripted import ScriptedTestJudge
            >>> cached = CachedJudge(ScriptedTestJudge(), Store(":memory:"))
            >>> request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
            >>> cached.key(request, slot=0) != cached.key(request, slot=1)
            True
        """
        frame = self._frame(request, extra)
        if frame is None or frame[1] is None:
            return keyed_json(self.describe(request, **extra))
        text = frame[1] + canonical_json([list(m) for m in request.messages]) + frame[2]
        return hashlib.sha256(text.encode("utf-8")).hexdigest(), text

    def _frame(self, request: JudgeRequest, extra: dict[str, Any]) -> tuple[Any, str | None, str] | None:
        """(the sampling object, the text before the messages, the text after); ``None`` (or no text before)
        where the request is keyed whole: a field of another type than those below, ``messages`` among
        ``extra``, or the judge's identity holding the text the messages are found by.

        Frames are told apart by ``n``, the sampling object itself (kept in the frame, so its id is not
        reused; equal objects may still differ in text, as ``-0.0`` and ``0.0``) and ``extra``'s names,
        types and values."""
        if type(request.n) is not int or "messages" in extra or not all(type(v) in _EXACT for v in extra.values()):
            return None
        sig = (request.n, id(request.sampling), *((k, type(v), v) for k, v in extra.items()))
        frame = self._frames.get(sig)
        if frame is not None and frame[0] is request.sampling:
            return frame
        probe = canonical_json(self.describe(dataclasses.replace(request, messages=()), **extra))
        if len(self._frames) >= _FRAMES:
            self._frames.clear()
        if probe.count(_NO_MESSAGES) != 1:  # the judge's identity holds the same text: key whole
            frame = self._frames[sig] = (request.sampling, None, "")
            return frame
        head, tail = probe.split(_NO_MESSAGES)
        frame = self._frames[sig] = (request.sampling, head + '"messages":', tail)
        return frame

    def is_cached(self, key: str) -> bool:
        """Whether the ledger answers ``key`` (no call would be made): answered in this run and not yet written,
        or in the store (looked up by its key's index: no set of every key is held, so a run of 10⁶ calls
        does not grow by one, and answers written beside this wrapper, e.g. by a batch executor, count at once)."""
        return self.writer.waiting_call(key) is not None or self.store.has_call(key)

    def _stored(self, key: str) -> dict[str, Any] | None:
        waiting = self.writer.waiting_call(key)  # answered in this run, not yet written
        if waiting is not None:
            return json.loads(waiting)
        return self.store.get_call(key)

    # -- calls -------------------------------------------------------------------
    async def complete(self, request: JudgeRequest, **extra: Any) -> tuple[JudgeResponse, str]:
        """One call through the ledger.

        Args:
            request: the call; its ``key`` is set to the ledger key before it is sent.
            **extra: fields of the key besides the request (see :meth:`describe`).

        Returns:
            (response, ledger key).

        Raises:
            JudgelabError: the judge returned no answer or more than ``n``.
            CallFailed: the call ran out of its retry budget (its ``key`` is set); the caller
                records its judgments as ``error``.
        """
        key, request_json = self.key(request, **extra)
        stored = self._stored(key)
        if stored is not None:
            self.cache_hits += 1
            return JudgeResponse.from_json(stored), key
        self.in_flight[key] = request_json
        try:
            response = await self.executor(request if request.key == key else _with_key(request, key))
        except CallFailed as exc:
            exc.key = key
            self.calls_failed += 1
            raise
        finally:
            self.in_flight.pop(key, None)
        if not response.choices or len(response.choices) > request.n:
            raise JudgelabError(f"judge returned {len(response.choices)} answers for n={request.n}")
        self.remember(key, request_json, response)
        return response, key

    def remember(self, key: str, request_json: str, response: JudgeResponse) -> None:
        """Keep a new answer: journaled at once, written with the next group commit, counted.

        Args:
            key: its ledger key.
            request_json: the canonical request description (:meth:`key`).
            response: the answer.
        """
        payload = plain_json(response.to_json())  # json.dumps(..., ensure_ascii=False)
        self.store.journal_call(key, request_json, payload)  # kept even if killed before the group commit
        self.writer.add(calls=[(key, request_json, payload)])
        self.calls_made += 1
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens

    def flush(self) -> None:
        """Write every answer still waiting for a group commit."""
        self.writer.flush()

    async def aclose(self) -> None:
        """Write what waits, then close the wrapped backend."""
        self.flush()
        await self.backend.aclose()


def _with_key(request: JudgeRequest, key: str) -> JudgeRequest:
    """``dataclasses.replace(request, key=key)`` without its per-call look-up of the fields (a plain request)."""
    if type(request) is not JudgeRequest:
        return dataclasses.replace(request, key=key)
    copy = object.__new__(JudgeRequest)
    copy.__dict__.update(request.__dict__)
    object.__setattr__(copy, "key", key)
    return copy
