import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from servers import ServerProcess

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``@pytest.mark.needs_shared_data("hanna/user_study.csv", ...)``: the test reads these files
    under :data:`SHARED_DATA` (real data, never copied into the repository); when one is absent the
    test is skipped with a reason naming it (listed by ``-rs``, on in pyproject.toml)."""
    for item in items:
        for mark in item.iter_markers("needs_shared_data"):
            if not mark.args:
                raise pytest.UsageError(f"{item.nodeid}: needs_shared_data names the files it needs")
            missing = [str(SHARED_DATA / name) for name in mark.args if not (SHARED_DATA / name).exists()]
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs shared data: {', '.join(missing)} not found"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StubServer:
    """The OpenAI-compatible stub (judgelab.testing.openai_stub) in a subprocess, started and watched by
    :class:`servers.ServerProcess`; on a free port it picks itself unless ``port`` is given."""

    def __init__(self, tmp_path: Path, fail_rate: float = 0.0, latency: float = 0.0, seed: int = 0, mode: str = "normal",
                 rate_limited: float | None = None, server_errors: float | None = None, retry_after: str = "0",
                 port: int | None = None, slots: int = 0):
        shares = ([] if rate_limited is None else ["--rate-limited", str(rate_limited)]) + (
            [] if server_errors is None else ["--server-errors", str(server_errors)]) + (
            ["--slots", str(slots)] if slots else [])
        self.log = tmp_path / f"stub-{time.monotonic_ns()}.jsonl"
        self.server = ServerProcess(
            [sys.executable, "-m", "judgelab.testing.openai_stub", "--port", str(port or 0), "--fail-rate", str(fail_rate),
             "--latency", str(latency), "--seed", str(seed), "--log", str(self.log), "--mode", mode,
             "--retry-after", retry_after, *shares],
            tmp_path, ready_line=r"^PORT (\d+)$", name="the OpenAI stub")
        self.proc = self.server.proc
        self.port = int(self.server.ready_match.group(1))
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def answered(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(l)["key"] for l in self.log.read_text().splitlines() if l.strip()]

    def stop(self):
        self.server.stop()


@pytest.fixture
def stub_factory(tmp_path):
    servers = []

    def make(**kw):
        s = StubServer(tmp_path, **kw)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.stop()


def judgelab_cmd(*args: str, **kw) -> subprocess.CompletedProcess:
    """The command in a subprocess: for the command-line contract itself (exit statuses seen by a
    shell, signals, a second process). Everything else uses :func:`run_cli`."""
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True, env=env, **kw)


@dataclass(frozen=True)
class CliResult:
    """What :func:`run_cli` saw: the exit status and the printed text (named as subprocess names them)."""

    returncode: int
    stdout: str
    stderr: str


def _captured() -> io.TextIOWrapper:
    """A text stream with a binary buffer underneath, as a real standard stream has."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)


def run_cli(*args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None) -> CliResult:
    """``judgelab ARGS`` in this process: :func:`judgelab.cli.main` with stdout and stderr captured.

    The exit status is what the process would exit with: 0 when ``main`` returns, else the status of
    its :class:`SystemExit`. Any other exception is a bug of the command and propagates (the test
    fails with its traceback). ``cwd`` and ``env`` (added to the environment) hold for the call only.
    """
    from judgelab.cli import main

    out, err = _captured(), _captured()
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    os.environ.update({"COLUMNS": "200", **(env or {})})
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(list(args))
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:  # sys.exit("message"): Python prints it and exits 1
                    print(exc.code, file=sys.stderr)
                    code = 1
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    for stream in (out, err):
        stream.flush()
    text = [s.buffer.getvalue().decode("utf-8") for s in (out, err)]  # type: ignore[attr-defined]
    return CliResult(code, text[0], text[1])


def write_items(path: Path, n: int, with_context: bool = True) -> Path:
    with path.open("w") as f:
        for i in range(n):
            row = {"id": f"s{i}", "text": f"Story number {i}. It has a beginning and an end.", "system": "human" if i % 2 else "gpt2"}
            if with_context:
                row["context"] = f"Prompt {i}"
            f.write(json.dumps(row) + "\n")
    return path


def one_line_error(result: "subprocess.CompletedProcess | CliResult", *needles: str) -> str:
    """Assert the command-line contract for a user error: exit 2, one line on stderr, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
