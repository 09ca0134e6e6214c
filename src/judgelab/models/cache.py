"""The call ledger as a wrapper around any backend (cf. lm-eval's ``CachingLM``).

Every model call that goes through a :class:`~judgelab.store.Store` — ratings, pairwise
comparisons, LLM perturbations — goes through :class:`CachedJudge`. A request is described
as JSON (the judge's identity, the messages, the sampling parameters, ``n`` and the caller's
extra fields such as the sample slot and the refusal attempt); the SHA-256 of that canonical
JSON is the ledger key. A key found in the store is answered from it and the backend is not
called; a new answer is written to the store — at once, or journaled at once and written
later together with the caller's judgments (group commit, :class:`~judgelab.store.GroupWriter`).

The key of a rating call is unchanged since judgelab 0.2, so stores written before keep
resuming without paying again (tested against a fixed key).
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from judgelab.errors import JudgelabError
from judgelab.models.base import Backend, JudgeRequest, JudgeResponse
from judgelab.models.retry import CallFailed, CallGate
from judgelab.store import GroupWriter, Store, keyed_json

__all__ = ["CachedJudge"]


class CachedJudge:
    """A backend behind the store's call ledger: a stored call is never made again.

    Args:
        backend: the judge that answers calls not in the ledger.
        store: the store whose ``calls`` table is the ledger.
        writer: the group writer for calls answered inside a job (``pending`` lists); made
            for ``store`` when not given.
        gate: retries and adaptive concurrency of the calls made (:class:`~judgelab.models.retry.CallGate`);
            made from the backend's retry policy and concurrency when not given.

    Attributes:
        calls_made, cache_hits, prompt_tokens, completion_tokens: counters of this wrapper's
            life (tokens of calls actually made).
        calls_failed: calls that ran out of their retry budget (:class:`~judgelab.models.retry.CallFailed`).

    Example:
        >>> import asyncio
        >>> from judgelab.models.base import JudgeRequest, Sampling
        >>> from judgelab.models.scripted import ScriptedTestJudge
        >>> cached = CachedJudge(ScriptedTestJudge({"default": "4"}), Store(":memory:"))
        >>> request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
        >>> asyncio.run(cached.complete(request))[0].choices[0].text
        '4'
        >>> asyncio.run(cached.complete(request))[0].choices[0].text, cached.calls_made, cached.cache_hits
        ('4', 1, 1)
    """

    def __init__(self, backend: Backend, store: Store, writer: GroupWriter | None = None,
                 gate: CallGate | None = None) -> None:
        self.backend = backend
        self.store = store
        self.writer = writer or GroupWriter(store)
        self.gate = gate or CallGate(backend.retry_policy, backend.capabilities.concurrency)
        self.calls_failed = 0
        self._identity = backend.identity()
        self._known: set[str] | None = None
        self.calls_made = 0
        self.cache_hits = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

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
        """(ledger key, canonical request JSON) of a request.

        Args:
            request: the call.
            **extra: the caller's key fields (see :meth:`describe`).

        Returns:
            ``(64 hex digits, JSON text)``.

        Example:
            >>> from judgelab.models.base import JudgeRequest, Sampling
            >>> from judgelab.models.scripted import ScriptedTestJudge
            >>> cached = CachedJudge(ScriptedTestJudge(), Store(":memory:"))
            >>> request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
            >>> cached.key(request, slot=0) != cached.key(request, slot=1)
            True
        """
        return keyed_json(self.describe(request, **extra))

    @property
    def known_keys(self) -> set[str]:
        """The ledger's keys (read once, then kept up to date by this wrapper)."""
        if self._known is None:
            self._known = self.store.call_keys()
        return self._known

    def is_cached(self, key: str) -> bool:
        """Whether the ledger answers ``key`` (no call would be made).

        Args:
            key: a ledger key.

        Returns:
            ``True`` when the call is stored.
        """
        return key in self.known_keys

    # -- calls -------------------------------------------------------------------
    async def complete(self, request: JudgeRequest, pending: list | None = None,
                       **extra: Any) -> tuple[JudgeResponse, str]:
        """One call through the ledger.

        Args:
            request: the call; its ``key`` is set to the ledger key before it is sent.
            pending: a job's list of answered calls. ``None``: a new answer is written to the
                store at once. A list: the answer is journaled at once and appended to
                ``pending``, to be written with the job's judgments in one transaction
                (:meth:`GroupWriter.add`); if the list already holds calls (the job makes
                another call), they are written first.
            **extra: fields of the key besides the request (see :meth:`describe`).

        Returns:
            (response, ledger key).

        Raises:
            JudgelabError: the judge returned no answer or more than ``n``.
            CallFailed: the call ran out of its retry budget (its ``key`` is set); the caller
                records its judgments as ``error``.
        """
        key, request_json = self.key(request, **extra)
        cached = self.store.get_call(key) if key in self.known_keys else None
        if cached is not None:
            self.cache_hits += 1
            return JudgeResponse.from_json(cached), key
        if pending:  # the job makes another call: its earlier answers are written first
            self.writer.keep(pending)
            pending.clear()
            self.writer.flush()
        keyed = dataclasses.replace(request, key=key)
        try:
            response = await self.gate.call(lambda: self.backend.complete(keyed))
        except CallFailed as exc:
            exc.key = key
            self.calls_failed += 1
            raise
        if not response.choices or len(response.choices) > request.n:
            raise JudgelabError(f"judge returned {len(response.choices)} answers for n={request.n}")
        payload = json.dumps(response.to_json(), ensure_ascii=False)
        if pending is None:
            self.store.put_call(key, request_json, payload)
        else:
            self.store.journal_call(key, request_json, payload)  # kept even if killed before the group commit
            pending.append((key, request_json, payload))
        self.known_keys.add(key)
        self.calls_made += 1
        self.prompt_tokens += response.prompt_tokens
        self.completion_tokens += response.completion_tokens
        return response, key

    async def aclose(self) -> None:
        """Close the wrapped backend."""
        await self.backend.aclose()
