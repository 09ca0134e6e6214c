"""benchmarks/interval_coverage.py runs for minutes at its defaults: it says so when it starts and prints
progress while it simulates (here at a few studies per cell, in a subprocess: the script is a command)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_script_says_what_it_does_and_how_long_then_shows_progress(tmp_path):
    out = tmp_path / "coverage.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "interval_coverage.py"), "--part", "ppi",
                          "--ppi-reps", "50", "--jobs", "1", "--progress-seconds", "0.01", "--out", str(out)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("interval_coverage: simulating how often") and "on 2 CPU cores" in lines[0]
    assert str(out) in lines[0]
    progress = [line for line in lines if line.startswith("  ppi: ") and "simulated studies" in line]
    assert progress and progress[-1].startswith("  ppi: ") and "of 4,200 simulated studies" in progress[-1]
    assert any(line.startswith("  ppi: done in ") for line in lines)
    assert len(json.loads(out.read_text())["ppi"]) == 42
