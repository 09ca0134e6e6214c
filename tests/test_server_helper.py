"""The shared server helper of the tests (tests/servers.py): a server or process that dies is reported at once."""
from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from servers import ServerExited, ServerProcess, wait_until


def test_a_server_that_exits_at_once_fails_within_a_second_or_two_with_its_stderr(tmp_path):
    crash = "import sys\nsys.stderr.write('model file is not a GGUF\\n')\nsys.exit(3)\n"
    start = time.monotonic()
    with pytest.raises(ServerExited) as ended:
        ServerProcess([sys.executable, "-c", crash], tmp_path, ready_url="http://127.0.0.1:9/v1/models", name="the server")
    assert time.monotonic() - start < 5  # not the startup limit (120 s)
    assert "the server exited with status 3 before it was ready" in str(ended.value)
    assert "model file is not a GGUF" in str(ended.value)


def test_a_server_that_dies_while_a_request_waits_fails_at_once(tmp_path):
    """As llama.cpp's AMX path did: ready, then killed by SIGSEGV at the first completion."""
    code = ("import signal, sys, time\nprint('READY', flush=True)\ntime.sleep(0.5)\n"
            "sys.stderr.write('ggml_backend_amx_mul_mat\\n'); sys.stderr.flush()\nimport os; os.kill(os.getpid(), signal.SIGSEGV)\n")
    server = ServerProcess([sys.executable, "-c", code], tmp_path, ready_line="^READY$", name="the server")
    start = time.monotonic()
    with pytest.raises(ServerExited) as ended:
        asyncio.run(server.watch(asyncio.sleep(120)))  # a client that would wait for "no answer"
    assert time.monotonic() - start < 5
    assert "status -11 while a request was waiting" in str(ended.value) and "ggml_backend_amx_mul_mat" in str(ended.value)


def test_a_server_is_ready_when_its_line_is_printed(tmp_path):
    code = "import time\ntime.sleep(0.3)\nprint('PORT 4242', flush=True)\ntime.sleep(60)\n"
    server = ServerProcess([sys.executable, "-c", code], tmp_path, ready_line=r"^PORT (\d+)$", name="the server")
    try:
        assert server.ready_match.group(1) == "4242"
        server.check_alive()
    finally:
        server.stop()
    assert server.proc.returncode is not None


def test_waiting_for_a_processs_progress_ends_when_the_process_does(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(4)"])
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"waiting for the store: the process ended first \(exit status .*4\}"):
        wait_until(lambda: (tmp_path / "store.sqlite").exists(), "the store", procs=[proc])
    assert time.monotonic() - start < 5
    assert wait_until(lambda: 7, "a value") == 7
