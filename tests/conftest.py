import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StubServer:
    """The OpenAI-compatible stub (judgelab.testing.openai_stub) in a subprocess."""

    def __init__(self, tmp_path: Path, fail_rate: float = 0.0, latency: float = 0.0, seed: int = 0, mode: str = "normal",
                 rate_limited: float | None = None, server_errors: float | None = None, retry_after: str = "0",
                 port: int | None = None):
        self.port = port or free_port()
        self.log = tmp_path / f"stub-{self.port}.jsonl"
        shares = ([] if rate_limited is None else ["--rate-limited", str(rate_limited)]) + (
            [] if server_errors is None else ["--server-errors", str(server_errors)])
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "judgelab.testing.openai_stub", "--port", str(self.port), "--fail-rate", str(fail_rate),
             "--latency", str(latency), "--seed", str(seed), "--log", str(self.log), "--mode", mode,
             "--retry-after", retry_after, *shares],
            stdout=subprocess.PIPE, text=True,
        )
        line = self.proc.stdout.readline()
        assert line.startswith("PORT"), line
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def answered(self) -> list[str]:
        if not self.log.exists():
            return []
        return [json.loads(l)["key"] for l in self.log.read_text().splitlines() if l.strip()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


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
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True, env=env, **kw)


def write_items(path: Path, n: int, with_context: bool = True) -> Path:
    with path.open("w") as f:
        for i in range(n):
            row = {"id": f"s{i}", "text": f"Story number {i}. It has a beginning and an end.", "system": "human" if i % 2 else "gpt2"}
            if with_context:
                row["context"] = f"Prompt {i}"
            f.write(json.dumps(row) + "\n")
    return path


def one_line_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    """Assert the command-line contract for a user error: exit 2, one line on stderr, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
