"""The OpenAI-compatible judge's HTTP side: the transports the installed SDK offers (aiohttp,
httpx), the HTTP client for one of them, and reading a failed call (the server's requested wait,
a refused connection, an error's cause in a few words).

Split from :mod:`judgelab.models.backends.openai_compatible`; ``judgelab doctor`` lists
:func:`available_transports` without building a judge. The ``openai`` SDK is imported inside the
functions, so importing this module stays light.
"""
from __future__ import annotations

import importlib
import time
from typing import TYPE_CHECKING, Any

from judgelab.errors import BackendError

if TYPE_CHECKING:
    import openai

__all__ = ["retry_after_seconds", "available_transports", "http_client", "pick_transport", "refused", "cause",
           "server_reason", "error_fingerprint", "SERVER_ERRORS", "RETRY_LATER", "OVERLOADED", "REASON_CHARS"]

#: Answers worth another attempt besides 429 (rate limited): the server failed, not the request.
SERVER_ERRORS = {408, 409, 425, 500, 502, 503, 504, 520, 522, 524, 529}
#: Of those, the answers that mean "not now" (a timeout, a gateway, an overloaded or restarting
#: server): always retried with backoff. The others (500, 409) answered the same way twice in a row
#: are permanent (:class:`judgelab.models.retry.CallGate`).
RETRY_LATER = {408, 425, 502, 503, 504, 520, 522, 524, 529}
#: Of those, the answers that mean "too many requests at once" (unavailable, overloaded): like a 429,
#: they lower the calls in flight (:class:`judgelab.models.retry.AdaptiveLimit`).
OVERLOADED = {503, 529}
#: The most characters of a server's error message kept in a failure's reason.
REASON_CHARS = 500


def retry_after_seconds(headers: Any) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date).

    Args:
        headers: the response's headers (a mapping with case-insensitive ``get``).

    Returns:
        Seconds (never negative), or ``None`` when the server sent none or an unreadable one.

    Example:
        >>> retry_after_seconds({"retry-after": "0.2"}), retry_after_seconds({"retry-after-ms": "1500"}), retry_after_seconds({})
        (0.2, 1.5, None)
    """
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def refused(exc: BaseException) -> bool:
    """Whether a connection error means nobody listens there (refused, unknown host), not a broken line."""
    import socket

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (ConnectionRefusedError, socket.gaierror)):
            return True
        if type(current).__name__ in {"ClientConnectorError", "ClientConnectorDNSError"} and not isinstance(
                getattr(current, "os_error", None), (ConnectionResetError, TimeoutError)):
            return True
        current = current.__cause__ or current.__context__
    return False


def _sdk_http_module() -> Any:
    """The HTTP library the installed SDK is built on: ``httpx`` (openai 1.x/2.x) or ``httpx2`` (3.x)."""
    import openai
    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__[1:] if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0])


def available_transports() -> dict[str, str]:
    """Transports the installed SDK offers, each with a description.

    aiohttp is offered when ``openai.DefaultAioHttpClient`` is the real client, which needs
    the ``openai[aiohttp]`` extra (the transport comes from ``httpx_aiohttp`` in openai
    1.x/2.x and is vendored in the SDK from 3.x on; without the extra the SDK substitutes a
    class that raises when built). The SDK's own httpx client is always offered.

    Returns:
        ``{name: description}`` of ``aiohttp`` (when usable) and ``httpx``.

    Example:
        >>> "httpx" in available_transports()
        True
    """
    import openai
    http = _sdk_http_module()
    offered = {"httpx": f"{http.__name__} {getattr(http, '__version__', '?')} (the SDK's default client)"}
    if "Missing" not in openai.DefaultAioHttpClient.__name__:
        try:
            from importlib.metadata import version

            offered["aiohttp"] = f"aiohttp {version('aiohttp')} via openai.DefaultAioHttpClient"
        except Exception:  # aiohttp's metadata missing: the client itself would fail to build
            pass
    return offered


def pick_transport(transport: str) -> str:
    """``auto`` takes aiohttp, the fast transport; its absence is an error, never a silent fallback."""
    import openai
    if transport not in {"auto", "aiohttp", "httpx"}:
        raise BackendError(f"unknown transport {transport!r}; use auto, aiohttp or httpx")
    if transport == "httpx":
        return "httpx"
    if "aiohttp" not in available_transports():
        raise BackendError(f"the fast HTTP transport (aiohttp) is missing from this installation (openai "
                           f"{openai.__version__} without its aiohttp extra): pip install 'openai[aiohttp]', "
                           "or pass --transport httpx to accept the slower one")
    return "aiohttp"


def http_client(transport: str, concurrency: int, timeout: float) -> Any:
    """The SDK's HTTP client. aiohttp (``openai.DefaultAioHttpClient``) is the default:
    at 64 concurrent requests httpx's connection pool costs several times the CPU of the
    whole rest of the pipeline (benchmarks/README.md).

    Args:
        transport: ``aiohttp`` or ``httpx``.
        concurrency: the connection pool's size.
        timeout: seconds per request.

    Returns:
        The SDK's async HTTP client for ``openai.AsyncOpenAI(http_client=...)``.
    """
    import openai
    http = _sdk_http_module()
    limits = http.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    if transport == "aiohttp":
        return openai.DefaultAioHttpClient(limits=limits, timeout=timeout)
    return openai.DefaultAsyncHttpxClient(limits=limits, timeout=timeout)


def cause(exc: BaseException) -> str:
    """The innermost cause of an exception, in a few words."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).splitlines()[0][:120] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error_body(exc: openai.APIStatusError) -> Any:
    """The error object of a failed call's body (the SDK keeps ``body["error"]`` of a JSON body, or
    the body itself), or its text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return body


def server_reason(exc: openai.APIStatusError) -> str:
    """The server's error message, whole, on one line: every run of white space (line breaks of a
    validation error included) is one space, and a message longer than :data:`REASON_CHARS` ends in ``…``.

    Example:
        >>> class Failed:  # what the SDK raises for llama.cpp's answer to a json_schema response_format
        ...     message, body = "Error code: 500", {"message": "1 validation error:\\n  {'type': 'literal_error'}\\n"}
        >>> server_reason(Failed())
        "1 validation error: {'type': 'literal_error'}"
    """
    body = _error_body(exc)
    text = body.get("message") if isinstance(body, dict) else body
    if not isinstance(text, str) or not text.strip():
        text = str(getattr(exc, "message", "") or "")
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1].rstrip() + "…"


def error_fingerprint(exc: openai.APIStatusError) -> tuple[int, str]:
    """A failed call's HTTP status and whole body: two failures with the same fingerprint are the same answer."""
    import json

    body = _error_body(exc)
    text = json.dumps(body, sort_keys=True, default=str) if body is not None else str(getattr(exc, "message", ""))
    return int(exc.status_code), text
