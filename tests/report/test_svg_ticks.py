"""The report's chart axes when the estimates are equal but for rounding (a judge giving every text the
same score: means like 1.0 and 1.0000000000000002). The tick step fell below the values' floating point
resolution, ``v + step == v``, and the axis grew ticks until the machine ran out of memory."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
CHECK = """
import math
from judgelab.report.svg import Point, _nice_ticks, interval_chart
one, next_one = 1.0, math.nextafter(math.nextafter(1.0, 2.0), 2.0)
ticks = _nice_ticks(one - 1e-17, next_one + 1e-17)
assert 2 <= len(ticks) <= 12 and ticks[0] <= one and ticks[-1] >= next_one, ticks
points = [Point(label="A", value=one, low=one, high=one), Point(label="B", value=next_one, low=next_one, high=next_one)]
svg = interval_chart(points, "f", "t", "d", "score", "system")
assert svg.count("<text") < 40, svg
assert _nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0] and _nice_ticks(1.2, 4.9) == [2.0, 3.0, 4.0]
print("ok")
"""


def _limit_memory() -> None:  # the old code's endless axis ends as a MemoryError here, not on the machine
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024 ** 3, 2 * 1024 ** 3))


def test_an_axis_of_equal_estimates_has_a_few_ticks():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=120,
                          preexec_fn=_limit_memory)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
