"""The provider's files and batches endpoints as ``--execution batch`` uses them
(:mod:`judgelab.run.provider_batch`): one SDK client per endpoint, and what each failure means.

A judge's endpoints are :meth:`~judgelab.models.base.Backend.batch_endpoints` (a fleet: every
replica); a batch is recorded with the endpoint that holds it, and a batch recorded at an endpoint
the judge no longer names is reached with a copy of the first client pointed there.

* **Submitting** (a file upload, a batch creation, the search for a batch created just before a
  kill): an endpoint nobody listens on (connection refused, unknown host) ends the run at once in
  one line, as a live endpoint that is down does (a fleet first tries its other replicas); nothing
  was submitted, so nothing is lost. Rate limits, server errors and broken connections are tried
  again for :data:`SUBMIT_PATIENCE` seconds. A file or batch the provider does not accept (HTTP
  400, 413, 422) is :class:`BatchRefused`, with the provider's reason: its requests were not run.
  Any other refusal (401, 403, 404: the key, a permission, no batch API there) ends the run in one line.
* **Waiting** (a batch's status, its result files): a provider that goes away while a batch runs —
  a restarting server, a lost connection — is tried again for ``patience`` seconds (10 minutes by
  default); a batch the endpoint does not know (HTTP 404) is :class:`BatchUnknown`.

:func:`cancel_batches` (``judgelab batch cancel``) asks the endpoint holding each open batch to cancel it.
"""
from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from judgelab.errors import JudgelabError, Unreachable

if TYPE_CHECKING:
    from pathlib import Path

    from judgelab.models.base import Backend

__all__ = ["ProviderAPI", "BatchRefused", "BatchUnknown", "SUBMIT_PATIENCE", "provider_reason", "cancel_batches"]

#: Seconds a submission is tried again after rate limits, server errors or broken connections.
SUBMIT_PATIENCE = 30.0
#: HTTP statuses of a file or batch the provider does not accept (its requests are not run).
REFUSALS = (400, 413, 422)


class BatchRefused(JudgelabError):
    """The provider did not accept a batch-input file or a batch; ``reason`` is its own words."""

    def __init__(self, endpoint: str, what: str, reason: str) -> None:
        super().__init__(f"the batch API at {endpoint} refused {what}: {reason}")
        self.reason = reason


class BatchUnknown(JudgelabError):
    """The endpoint does not know the batch (HTTP 404 on its status)."""


class ProviderAPI:
    """The batch clients of a judge's endpoints.

    Args:
        backend: the judge (:meth:`~judgelab.models.base.Backend.batch_endpoints`).
        on_note: shown a line when a call is tried again.
        patience: seconds a provider that went away while a batch runs is tried again.

    Attributes:
        endpoints: the judge's endpoints in the order given; ``home`` is where new batches go
            (the first that answered).
    """

    def __init__(self, backend: "Backend", on_note: Callable[[str], None], patience: float = 600.0) -> None:
        self.clients: dict[str, Any] = dict(backend.batch_endpoints())
        self.endpoints = list(self.clients)
        self.home = self.endpoints[0]
        self.on_note = on_note
        self.patience = patience

    def client(self, endpoint: str) -> Any:
        """The client of ``endpoint`` (a copy of the first one for an endpoint the judge no longer names)."""
        if endpoint not in self.clients:
            self.clients[endpoint] = self.clients[self.endpoints[0]].copy(base_url=endpoint)
        return self.clients[endpoint]

    def candidates(self, recorded: str | None) -> list[str]:
        """Where to look for a batch: the endpoint recorded with it, then every endpoint of the judge."""
        first = [recorded] if recorded else []
        return first + [e for e in self.endpoints if e not in first]

    async def submit(self, endpoint: str, what: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """``call(client)`` at ``endpoint`` while submitting (an endpoint that is down ends the run)."""
        return await self._call(endpoint, what, call, waiting=False)

    async def wait(self, endpoint: str, what: str, call: Callable[[Any], Awaitable[Any]]) -> Any:
        """``call(client)`` at ``endpoint`` while a batch runs (a provider gone away is waited for)."""
        return await self._call(endpoint, what, call, waiting=True)

    async def upload(self, what: str, call: Callable[[Any], Awaitable[Any]]) -> tuple[str, Any]:
        """``(endpoint, result)`` of ``call`` at the first endpoint that is up, ``home`` first."""
        down = []
        for endpoint in [self.home] + [e for e in self.endpoints if e != self.home]:
            try:
                result = await self.submit(endpoint, what, call)
            except Unreachable as exc:
                down.append((endpoint, exc))
                continue
            self.home = endpoint
            return endpoint, result
        if len(down) == 1:
            raise down[0][1]
        raise Unreachable(f"the batch API is unreachable at every replica ({', '.join(e for e, _ in down)}): check the "
                          "URLs in --judge and that the servers are running; nothing was submitted (run the same "
                          "command again when one is up)")

    async def _call(self, endpoint: str, what: str, call: Callable[[Any], Awaitable[Any]], waiting: bool) -> Any:
        import openai

        from judgelab.models.backends.openai_http import refused, server_reason

        client = self.client(endpoint)
        patience = self.patience if waiting else min(self.patience, SUBMIT_PATIENCE)
        start, pause = time.monotonic(), 0.25
        while True:
            try:
                return await call(client)
            except openai.APIConnectionError as exc:  # timeouts included
                if not waiting and refused(exc):
                    raise Unreachable(f"the batch API at {endpoint} is unreachable (connection refused or unknown "
                                      "host): check the URL in --judge and that the server is running; nothing was "
                                      "submitted (run the same command again when it is up)") from None
                problem = type(exc).__name__
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                problem = f"HTTP {exc.status_code}"
            except openai.APIStatusError as exc:
                if waiting and exc.status_code == 404:
                    raise BatchUnknown(f"the batch API at {endpoint} does not know {what}") from None
                if not waiting and exc.status_code in REFUSALS:
                    raise BatchRefused(endpoint, what, server_reason(exc) or f"HTTP {exc.status_code}") from None
                raise JudgelabError(f"the batch API at {endpoint} refused {what}: HTTP {exc.status_code} "
                                    f"{server_reason(exc)}".rstrip()) from None
            if time.monotonic() - start > patience:
                raise JudgelabError(f"the batch API at {endpoint} did not answer {what} for {patience:.0f} s "
                                    f"({problem}); run the same command again to continue the batches recorded in "
                                    "the store") from None
            self.on_note(f"batch API: {what} failed ({problem}); trying again")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 10.0)


def provider_reason(state: Any) -> str:
    """The provider's own words for a batch that failed (OpenAI: ``errors.data``, e.g. an input file it refused)."""
    data = getattr(getattr(state, "errors", None), "data", None) or []
    texts = []
    for error in data[:3]:
        where = f"line {error.line}: " if getattr(error, "line", None) else ""
        code = f" ({error.code})" if getattr(error, "code", None) else ""
        texts.append(f"{where}{getattr(error, 'message', None) or ''}{code}".strip())
    return "; ".join(t for t in texts if t) or "the batch failed without a reason"


def cancel_batches(out: "Path | str", batch: str | None = None, api_key: str | None = None) -> list[tuple[Any, str]]:
    """Ask the provider to cancel the open batches of ``out/store.sqlite`` (or the one named ``batch``).

    Args:
        out: the run's output folder; batch: judgelab's or the provider's id; api_key: the key
            (``$OPENAI_API_KEY`` when ``None``; a local server takes any).

    Returns:
        ``(batch record, provider status after the request)`` per batch.

    Raises:
        JudgelabError: no store, no open batch of the id ``batch``, a provider refusing.
    """
    import os

    import openai

    from judgelab.store import Store
    from judgelab.store.batches import OPEN_STATES, batch_store

    path = batch_store(out)
    with Store(path, read_only=True) as store:
        records = [b for b in store.batches(kind="openai", states=OPEN_STATES) if b.provider_batch]
    if batch is not None:
        records = [b for b in records if batch in (b.id, b.provider_batch)]
        if not records:
            raise JudgelabError(f"no open provider batch {batch!r} in {path} (judgelab batch list {out})")
    done: list[tuple[Any, str]] = []  # nothing open: nothing to cancel (an empty list, not an error)
    for record in records:
        client = openai.OpenAI(base_url=record.endpoint, api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
                               max_retries=2)
        try:
            state = client.batches.cancel(str(record.provider_batch))
        except openai.APIError as exc:
            raise JudgelabError(f"the batch API at {record.endpoint} did not cancel {record.provider_batch}: "
                                f"{type(exc).__name__}") from None
        finally:
            client.close()
        done.append((record, str(state.status)))
    return done
