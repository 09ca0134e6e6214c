"""The command line's contract, exercised through the installed ``judgelab`` script in a subprocess:
usage errors are one line and exit 2, Ctrl-C exits 130 naming the store, --version works, start-up
imports nothing heavy."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import one_line_error, write_items
from servers import interruptible, wait_until

SCRIPT = Path(sys.executable).with_name("judgelab")
pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason=f"the judgelab script is not installed beside {sys.executable}")


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120, **kw)


@pytest.mark.parametrize("args,needle", [
    (["rate", "--bogus"], "--bogus"),
    (["rate"], "--items"),
    (["rate", "--items", "x.jsonl", "--samples", "two"], "--samples"),
    (["rate", "--items", "x.jsonl", "--concurrency", "0"], "--concurrency"),
    (["nonsense"], "nonsense"),
    (["dhp", "analyze"], "Missing"),
])
def test_usage_errors_are_one_line_and_exit_2(args, needle):
    one_line_error(run(*args), needle)


def test_bare_command_shows_help_and_exits_2():
    result = run()
    assert result.returncode == 2 and "Traceback" not in result.stderr
    shown = result.stdout + result.stderr
    assert "rate" in shown and "Usage" in shown


def test_version():
    from judgelab import __version__

    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"judgelab {__version__}"


def test_start_up_imports_nothing_heavy():
    code = ("import sys\nfrom judgelab.cli import app\n"
            "heavy = [m for m in ('pandas', 'scipy', 'matplotlib', 'llama_cpp', 'openai', 'numpy', 'pydantic') if m in sys.modules]\n"
            "print(','.join(heavy))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_ctrl_c_exits_130_and_names_the_store(tmp_path, stub_factory):
    stub = stub_factory(latency=0.3)
    items = write_items(tmp_path / "items.jsonl", 200)  # a minute of calls: still running when Ctrl-C comes, under load too
    out = tmp_path / "out"
    proc = subprocess.Popen([str(SCRIPT), "rate", "--items", str(items), "--criteria", "grammaticality", "--judge", "openai:m",
                             "--base-url", stub.base_url, "--concurrency", "1", "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)  # as at a terminal, whoever launched the tests
    store = out / "store.sqlite"

    def judged_three() -> int:
        try:
            db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
            try:
                done = db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
            finally:
                db.close()
        except sqlite3.Error:
            return 0
        return done if done >= 3 else 0

    done = wait_until(judged_three, "three judgments recorded", procs=[proc])
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    line = err.strip().splitlines()[-1]
    assert line.startswith("judgelab: interrupted; ") and str(store) in line and "run the same command to resume" in line, err
    kept = int(line.split("interrupted; ")[1].split()[0])
    assert kept >= done, (kept, done, err)
    assert not (out / "ratings.csv").exists()  # an interrupted run writes no ratings table
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    statuses = dict(db.execute("SELECT status, COUNT(*) FROM judgments GROUP BY status").fetchall())
    db.close()
    # ... and the same command resumes and completes, asking no finished call again
    again = run("rate", "--items", str(items), "--criteria", "grammaticality", "--judge", "openai:m",
                "--base-url", stub.base_url, "--concurrency", "8", "--out", str(out), "--quiet")
    assert again.returncode == 0, again.stderr
    assert f"({kept} already in the store)" in again.stdout.replace("\n", " "), (kept, statuses, again.stdout, err)


def test_too_many_failures_exit_3_with_examples(tmp_path):
    script = tmp_path / "refuse.json"
    script.write_text(json.dumps({"default": "As an AI language model, I cannot rate stories."}))
    items = write_items(tmp_path / "items.jsonl", 3)
    base = ["rate", "--items", str(items), "--criteria", "grammaticality", "--judge", f"scripted-test-double:{script}",
            "--quiet", "--max-refusal-retries", "0"]
    result = run(*base, "--out", str(tmp_path / "a"))
    assert result.returncode == 3, result.stderr
    assert "example refusal" in result.stdout and "failed (100% > --max-failure-rate 50%)" in result.stderr
    assert (tmp_path / "a" / "ratings.csv").exists()  # outputs are written: the failures are data too
    assert run(*base, "--out", str(tmp_path / "b"), "--max-failure-rate", "1").returncode == 0


def test_a_reader_that_closes_the_pipe_costs_no_output_file(tmp_path):
    """``judgelab rate … | head -1``: the command finishes, writes every file, keeps its exit status,
    and says on stderr that its printed output was cut short — no traceback, no silent exit 1. The reader
    goes away before the command prints (reading a first byte raced under load: the whole output could be
    in the pipe before the reader closed it, and then nothing is cut short)."""
    items = write_items(tmp_path / "items.jsonl", 40)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    out = tmp_path / "out"
    proc = subprocess.Popen([str(SCRIPT), "rate", "--items", str(items), "--judge", f"scripted-test-double:{script}",
                             "--criteria", "grammaticality", "--samples", "3", "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away, as head does, before the run prints its first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "broken pipe" in err
    for name in ("ratings.csv", "summary.csv", "run.json", "report.html", "README.md"):
        assert (out / name).is_file(), name
