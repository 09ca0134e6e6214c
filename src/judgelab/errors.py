"""User-facing errors: one clear line, exit status 2 on the command line."""
from __future__ import annotations

from typing import Hashable


class JudgelabError(Exception):
    """A problem with the user's input or environment, reported as one line (exit 2)."""


class BackendError(JudgelabError):
    """A judge backend could not answer (unreachable, rejected, out of retries)."""


class CapabilityError(JudgelabError):
    """A request asked a backend for something it does not offer (no silent fallback)."""


class TooManyFailures(JudgelabError):
    """More judgments failed (parse failures, refusals, truncations …) than the run allows."""


#: Exit statuses of the ``judgelab`` command (documented in docs/rate.md).
EXIT_USAGE = 2
EXIT_TOO_MANY_FAILURES = 3
EXIT_INTERRUPTED = 130


class TransientError(BackendError):
    """One attempt of a call failed in a way worth retrying (raised by a backend, retried by
    :class:`judgelab.run.retry.CallGate`).

    Attributes:
        reason: ``rate_limited``, ``server_error``, ``timeout``, ``connection`` or ``unreachable``.
        retry_after: the server's ``Retry-After`` in seconds, when it sent one.
        fingerprint: what the server answered (its HTTP status and body) when the same answer twice
            in a row would mean the request fails every time (an HTTP 500 that names its reason);
            ``None`` for failures that pass by themselves (rate limits, an overloaded or restarting
            server, timeouts, broken connections).
    """

    reason = "transient"
    #: Whether the failure says the endpoint has more calls than it can serve (a 429, a 503, a timeout):
    #: the calls in flight are lowered (:class:`judgelab.models.retry.AdaptiveLimit`).
    overloaded = False

    def __init__(self, message: str, retry_after: float | None = None, fingerprint: Hashable | None = None,
                 overloaded: bool | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.fingerprint = fingerprint
        if overloaded is not None:
            self.overloaded = overloaded


class RateLimited(TransientError):
    """The endpoint asked for fewer requests (HTTP 429): slow down, not a failure."""

    reason = "rate_limited"
    overloaded = True


class ServerError(TransientError):
    """The endpoint failed to answer (HTTP 5xx, 408, 409, 425)."""

    reason = "server_error"


class CallTimeout(TransientError):
    """No answer within the per-call timeout (``--timeout``): the calls waited behind others (a server that
    answers one at a time) or the server is slow; either way fewer calls at once."""

    reason = "timeout"
    overloaded = True


class ConnectionFailed(TransientError):
    """The connection broke before an answer came (reset, closed)."""

    reason = "connection"


class Unreachable(ConnectionFailed):
    """The endpoint refused the connection or its host could not be found."""

    reason = "unreachable"
