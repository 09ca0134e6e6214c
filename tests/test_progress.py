"""The run's progress: a bar that fits an 80-column terminal without cutting a number off, and in a log
(standard error not a terminal) a plain line every few seconds and one at the end."""
from __future__ import annotations

import asyncio
import io
import itertools
import re

import pytest
from rich.console import Console

from conftest import run_cli, write_items
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.models.base import Capabilities
from judgelab.models.registry import register_backend, unregister_backend

CLOCK = r"(\d+:\d\d:\d\d|–)"


def _state(total: int, done: int, failed: int, label: str, note: str = ""):
    from judgelab.progress import ProgressState

    ticks = itertools.count(0.0, 3.0)
    state = ProgressState(total, label, clock=lambda: next(ticks))
    state.advance(0, 0)
    state.advance(done, failed, note)
    return state


@pytest.mark.parametrize("width", [40, 60, 80, 100, 160])
@pytest.mark.parametrize("label", ["judging (scripted-test-double)", "judging (meta-llama/Llama-3.1-70B-Instruct-Turbo)"])
def test_the_line_fits_the_width_and_shows_every_number_whole(width, label):
    state = _state(224000, 2240, 17, label, "retries: 3 rate limited, 1 server error")
    line = state.line(width)
    assert len(line) <= width - 1, line
    assert " 2240/224000 " in f" {line} " and re.search(rf"ETA {CLOCK}( |$)", line) and "failed 17" in line, line
    if width >= 80:
        assert "/s" in line and line.startswith("judging (")


def test_the_terminal_bar_is_never_cut_off_at_80_columns(monkeypatch):
    """Rendered by rich on an 80-column terminal, every frame shows the whole count, rate, ETA and failures."""
    from judgelab.report import terminal

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None, markup=False, emoji=False,
                      highlight=False)
    monkeypatch.setattr(terminal, "_err", console)
    with terminal.progress_bar(224000, "judging (scripted-test-double)") as advance:
        advance(0, 0, "")
        for _ in range(3):
            advance(74000, 1, "")
    frames = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", f).strip() for f in re.split(r"[\r\n]", buf.getvalue())]
    frames = [f for f in frames if f]
    assert frames and all(len(f) <= 80 for f in frames), frames
    last = frames[-1]
    assert "222000/224000" in last and re.search(rf"ETA {CLOCK}( |$)", last) and "failed 3" in last, last
    assert not re.search(r"\d…", last), last


class SlowTestDouble(ScriptedTestJudge):
    """TEST DOUBLE: the scripted judge, one call at a time, each taking ``delay`` seconds."""

    kind = "slow-test-double"

    def __init__(self, delay: float) -> None:
        super().__init__({"default": "Rating: 4"}, model_id="slow-test-double")
        self.delay = delay
        self.capabilities = Capabilities(max_n=16, concurrency=1)

    async def _complete(self, request):
        await asyncio.sleep(self.delay)
        return await super()._complete(request)


@pytest.fixture
def slow_judge():
    register_backend("slow-test-double", syntax="slow-test-double:SECONDS", parse=lambda rest, defaults: {"delay": float(rest)},
                     build=lambda **options: SlowTestDouble(options["delay"]), description="a slow test double")
    yield "slow-test-double:0.05"
    unregister_backend("slow-test-double")


def test_a_log_gets_a_plain_progress_line_every_few_seconds(tmp_path, slow_judge):
    """stderr is not a terminal here: 12 calls of 0.05 s one at a time with a line every 0.1 s."""
    items = write_items(tmp_path / "items.jsonl", 6)
    r = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--judge", slow_judge, "--concurrency", "1",
                "--out", str(tmp_path / "run"), env={"JUDGELAB_PROGRESS_SECONDS": "0.1"})
    assert r.returncode == 0, r.stderr
    pattern = re.compile(rf"^judging \(slow-test-double\): (\d+)/36 \((\d+)%\), (\d+\.\d|–)/s, elapsed {CLOCK}, "
                         rf"ETA {CLOCK}, failed 0$")
    lines = [m for m in map(pattern.match, r.stderr.splitlines()) if m]
    assert len(lines) >= 3, r.stderr  # at least two while it ran, and the last one
    assert lines[-1].group(1) == "36" and lines[-1].group(2) == "100"
    done = [int(m.group(1)) for m in lines]
    assert done == sorted(done) and done[0] < 36  # lines while the run went on, counting up


def test_a_bad_progress_interval_is_one_line(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    (tmp_path / "j.json").write_text('{"default": "4"}')
    r = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--judge",
                f"scripted-test-double:{tmp_path / 'j.json'}", "--out", str(tmp_path / "run"),
                env={"JUDGELAB_PROGRESS_SECONDS": "often"})
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "judgelab: error: JUDGELAB_PROGRESS_SECONDS is a number of seconds above 0, not 'often'"]
