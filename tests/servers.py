"""The one way tests start a server in a subprocess, wait for it and stop it.

Every server a test starts — the OpenAI-compatible stub, ``judgelab annotate``, llama-cpp-python's
server through ``python -m judgelab.llama_server`` (the CPU-safe launcher) — is a :class:`ServerProcess`:

* readiness is polled (a line it printed, an HTTP URL answering, or both), never slept for;
* the process is polled with it: a server that exits fails the test at once with its exit status
  and the tail of its stderr (:class:`ServerExited`), instead of a client waiting out a timeout;
  :meth:`ServerProcess.watch` does the same while a test's client awaits an answer, and
  :func:`wait_until` while a test waits for a client process's progress;
* the time limits only bound a hang, sized for a loaded 2-core machine: a healthy server is
  ready in well under a second here, the embedded model's server in a few seconds.

stdout and stderr go to files (a chatty server can never block on a full pipe), and the child's
Python is unbuffered, so a printed line is readable at once.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Awaitable, Callable, Sequence, TypeVar

#: Seconds a server may take to become ready: bounds a hang only.
STARTUP_S = 120.0
#: Seconds a stopped server may take to exit before it is killed.
STOP_S = 30.0
POLL_S = 0.05
TAIL_CHARS = 2000

T = TypeVar("T")


def interruptible() -> None:
    """``preexec_fn`` for a child a test interrupts: SIGINT back to its default action, as a
    terminal's foreground process has it. A test run in the background of a non-interactive shell
    (``.ci/run … &``, ``nohup``) starts with SIGINT ignored, and its children inherit that: a Python
    child then never sees the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class ServerExited(AssertionError):
    """The server process ended while a test needed it (its status and stderr tail in the message)."""


def wait_until(condition: Callable[[], T], what: str, *, procs: Sequence[subprocess.Popen] = (),
               limit_s: float = STARTUP_S, poll_s: float = 0.02) -> T:
    """Poll ``condition`` until it returns a true value, and return that value.

    A process of ``procs`` (the one whose progress is awaited) that ends first fails the test at once
    with its exit status; ``limit_s`` only bounds a hang.
    """
    deadline = time.monotonic() + limit_s
    while True:
        value = condition()
        if value:
            return value
        ended = {p.args[2] if isinstance(p.args, list) and len(p.args) > 2 else p.pid: p.returncode
                 for p in procs if p.poll() is not None}
        if ended:
            raise AssertionError(f"waiting for {what}: the process ended first (exit status {ended})")
        if time.monotonic() > deadline:
            raise AssertionError(f"waiting for {what}: not within {limit_s:.0f} s")
        time.sleep(poll_s)


def serve_command(*args: str) -> list[str]:
    """``python -m judgelab.llama_server ARGS``: llama-cpp-python's server on the CPU-safe path (tests start
    no other llama.cpp server)."""
    return [sys.executable, "-m", "judgelab.llama_server", *args]


#: ``python -m judgelab.llama_server``'s first line: where it listens and the llama.cpp CPU path of its model.
LLAMA_SERVING = r"at http://127\.0\.0\.1:(\d+)/v1; llama\.cpp CPU path: (.+?) — (.*)$"


def llama_server(log_dir: Path, *options: str, port: int = 0, env: dict[str, str] | None = None) -> "ServerProcess":
    """``python -m judgelab.llama_server OPTIONS`` (llama_cpp.server on the CPU-safe path) on ``port`` (0: a free
    one), ready when ``/v1/models`` answers; ``ready_match`` holds the port (group 1) and the CPU path (group 2)."""
    return ServerProcess(serve_command("--port", str(port), *options), log_dir, ready_line=LLAMA_SERVING,
                         ready_url=lambda m: f"http://127.0.0.1:{m.group(1)}/v1/models", env=env,
                         name="python -m judgelab.llama_server")


def _url_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # it answered (an error page is an answer: the server is up)
    except (OSError, ValueError):
        return False


class ServerProcess:
    """A server in a subprocess, ready when ``ready_line`` (a regular expression) is on its stdout or
    stderr and then ``ready_url`` answers (a URL, or a function of the line's match giving it: the port
    a server printed).

    Raises:
        ServerExited: the process ended before it was ready.
        AssertionError: it was not ready within ``startup_s``.
    """

    def __init__(self, argv: Sequence[str], log_dir: Path, *, ready_line: str | None = None,
                 ready_url: str | Callable[[re.Match[str]], str] | None = None, env: dict[str, str] | None = None,
                 startup_s: float = STARTUP_S, name: str | None = None, cwd: Path | None = None) -> None:
        if ready_line is None and (ready_url is None or callable(ready_url)):
            raise ValueError("say how the server shows it is ready: ready_line, ready_url or both")
        self.argv = list(argv)
        self.name = name or Path(self.argv[min(2, len(self.argv) - 1)]).name
        log_dir.mkdir(parents=True, exist_ok=True)
        stem = log_dir / f"server-{time.monotonic_ns()}"
        self.stdout_path, self.stderr_path = stem.with_suffix(".out"), stem.with_suffix(".err")
        child_env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=child_env,
                                         cwd=cwd, preexec_fn=interruptible)
        self.ready_match: re.Match[str] | None = None
        self._wait_ready(ready_line, ready_url, startup_s)

    # -- readiness and liveness ------------------------------------------------------------------

    def _wait_ready(self, ready_line: str | None, ready_url: str | Callable[[re.Match[str]], str] | None,
                    startup_s: float) -> None:
        pattern = re.compile(ready_line, re.MULTILINE) if ready_line else None
        deadline = time.monotonic() + startup_s
        url = ready_url if isinstance(ready_url, str) else None
        while True:
            self.check_alive("before it was ready")
            if pattern is not None and self.ready_match is None:
                self.ready_match = pattern.search(self.stdout()) or pattern.search(self.stderr())
                if self.ready_match and callable(ready_url):
                    url = ready_url(self.ready_match)
            if (pattern is None or self.ready_match) and (ready_url is None or (url is not None and _url_answers(url))):
                self.check_alive("as it became ready")
                return
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"{self.name} was not ready within {startup_s:.0f} s; stderr ends:\n{self.stderr_tail()}")
            time.sleep(POLL_S)

    def check_alive(self, when: str = "") -> None:
        """Raise :class:`ServerExited` (status and stderr tail) when the process has ended."""
        code = self.proc.poll()
        if code is not None:
            raise ServerExited(f"{self.name} exited with status {code}{' ' + when if when else ''}; "
                               f"stderr ends:\n{self.stderr_tail()}")

    async def watch(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` while polling the server: it ends with :class:`ServerExited` as soon as
        the server dies (a client would otherwise retry and wait out its timeouts)."""
        task = asyncio.ensure_future(awaitable)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=0.1)
                if done:
                    return task.result()
                self.check_alive("while a request was waiting for its answer")
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # -- what it printed -------------------------------------------------------------------------

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def stderr_tail(self, chars: int = TAIL_CHARS) -> str:
        return self.stderr()[-chars:] or "(nothing)"

    # -- ending it -------------------------------------------------------------------------------

    def wait(self, timeout: float = STOP_S) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within :data:`STOP_S`."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self) -> None:
        """SIGKILL: no shutdown, no flush."""
        self.proc.kill()
        self.proc.wait(timeout=STOP_S)
