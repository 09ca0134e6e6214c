"""Serving a local web app (``annotate``, ``view``) with uvicorn on a socket bound first, and the
loopback Host check both apps share.

The socket is bound before uvicorn starts, so a port in use or an address that cannot be bound
is one clear error, ``--port 0`` picks a free port that is known before the links are printed,
and uvicorn serves exactly that socket. uvicorn handles Ctrl-C and SIGTERM by finishing the
requests in flight and returning. A ``kill -9`` loses no rating that an annotator saw as saved:
every rating is committed before its request is answered.

An app served on a loopback address answers only requests whose ``Host`` header names a loopback
host (:class:`LoopbackOnly`, HTTP 421 otherwise): a web page on another site whose name an attacker
points at 127.0.0.1 (DNS rebinding) sends its own name as the Host and gets no answer.
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Any, Iterable

from judgelab.errors import JudgelabError

__all__ = ["is_loopback", "bind", "serve", "url_host", "LoopbackOnly", "LOOPBACK_NAMES"]

#: Host names a loopback-only app answers to.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1): not reachable from other machines."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """The host as written in a URL (IPv6 addresses in brackets)."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host.strip("[]")).version == 6 else host
    except ValueError:
        return host


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (``port`` 0: any free port).

    Raises:
        JudgelabError: the port is in use, the address is not this machine's, or the host is unknown.
    """
    if not (0 <= port <= 65535):
        raise JudgelabError(f"--port {port} is not a port number (0-65535; 0 picks a free one)")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise JudgelabError(f"cannot bind to --host {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        import errno

        if exc.errno == errno.EADDRINUSE:
            raise JudgelabError(f"port {port} on {host} is in use; choose another --port (0 picks a free one)") from None
        raise JudgelabError(f"cannot bind to {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def serve(app, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until Ctrl-C or SIGTERM (uvicorn, quiet: no access log, warnings only)."""
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", server_header=False,
                            proxy_headers=False)
    uvicorn.Server(config).run(sockets=[sock])


def host_name(host_header: str) -> str:
    """The host name of a ``Host`` header, without its port (an IPv6 address without brackets).

    Example:
        >>> host_name("localhost:8765"), host_name("[::1]:8765"), host_name("127.0.0.1")
        ('localhost', '::1', '127.0.0.1')
    """
    if host_header.startswith("["):
        return host_header[1:].split("]", 1)[0]
    return host_header.rsplit(":", 1)[0]


class LoopbackOnly:
    """ASGI middleware: answer only requests whose Host header names one of ``allowed`` (HTTP 421 otherwise).

    Args:
        app: the ASGI app.
        allowed: the host names answered (default :data:`LOOPBACK_NAMES`).
        what: the app's name in the refusal ("this annotation answers on a loopback address only").
    """

    def __init__(self, app: Any, allowed: Iterable[str] = LOOPBACK_NAMES, what: str = "this app") -> None:
        self.app = app
        self.allowed = set(allowed)
        self.what = what

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            host = ""
            for key, value in scope.get("headers", []):
                if key == b"host":
                    host = value.decode("latin-1")
                    break
            if host_name(host) not in self.allowed:
                from starlette.responses import Response

                await Response(f"{self.what} answers on a loopback address only\n", 421,
                               media_type="text/plain")(scope, receive, send)
                return
        await self.app(scope, receive, send)
