"""Progress display of model runs, supplied by whoever shows it (the command line).

Only ``cli/`` prints: library code asks :func:`progress_display` for an
``advance(done, failed, note="")`` callback (``note``: the retries so far, in words) and draws
nothing by itself. The command line installs the terminal's progress bar
(:func:`judgelab.report.terminal.progress_bar`) with :func:`set_progress_display`; a program using
judgelab as a library may install its own (any callable ``(total, label) -> context manager
yielding advance``), or none.

What a display shows is kept here, once for every display: :class:`ProgressState` (done/planned,
rate, ETA, failures, the retries' note) and its :meth:`ProgressState.line` (at a terminal's width:
whole fields only, never a cut-off number), and :func:`plain_progress`, the display for logs: a line
every ``$JUDGELAB_PROGRESS_SECONDS`` (10) seconds from a thread of its own, and one at the end.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator

__all__ = ["Advance", "ProgressFactory", "set_progress_display", "progress_display", "ProgressState", "plain_progress",
           "progress_interval", "INTERVAL_ENV", "rate_and_eta", "clock_text"]

#: ``advance(done, failed, note)``: judgments finished and failed since the last call, and a short
#: note on the run's retries ("" when none).
Advance = Callable[[int, int, str], None]
ProgressFactory = Callable[[int, str], ContextManager[Advance]]

_factory: ProgressFactory | None = None


def set_progress_display(factory: ProgressFactory | None) -> None:
    """Install the progress display (``None``: no display). The command line calls this once.

    Example:
        >>> set_progress_display(None)
        >>> with progress_display(10, "judging") as advance:
        ...     advance(10, 0, "")
    """
    global _factory
    _factory = factory


@contextmanager
def _silent(total: int, label: str) -> Iterator[Advance]:
    def advance(done: int, failed: int, note: str = "") -> None:
        return None

    yield advance


def progress_display(total: int, label: str, enabled: bool = True) -> ContextManager[Advance]:
    """The installed display for ``total`` judgments (a silent one when none is installed or
    ``enabled`` is False)."""
    if not enabled or _factory is None:
        return _silent(total, label)
    return _factory(total, label)


# -- what a display shows: the numbers, one line of them, and the plain display for logs ----------------

#: ``JUDGELAB_PROGRESS_SECONDS``: seconds between two plain progress lines (stderr not a terminal).
INTERVAL_ENV = "JUDGELAB_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 10.0
_MIN_BAR = 8
_MAX_BAR = 40
_MIN_LABEL = 12


def progress_interval() -> float:
    """Seconds between two plain progress lines: ``$JUDGELAB_PROGRESS_SECONDS``, else 10.

    Raises:
        JudgelabError: the variable is not a number of seconds above 0.
    """
    import math
    import os

    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not (math.isfinite(seconds) and seconds > 0):
        from judgelab.errors import JudgelabError

        raise JudgelabError(f"{INTERVAL_ENV} is a number of seconds above 0, not {text!r}")
    return seconds


class ProgressState:
    """The numbers of one run's progress, updated by ``advance`` from any thread.

    The rate counts the judgments recorded since the first report: a resumed run first reports the
    judgments the store already has, which took no time now.

    Example:
        >>> state = ProgressState(10, "judging", clock=iter([0.0, 0.0, 2.0, 2.0]).__next__)
        >>> state.advance(0, 0); state.advance(4, 1, "retries: 2")
        >>> state.line()
        'judging: 4/10 (40%), 2.0/s, elapsed 0:00:02, ETA 0:00:03, failed 1, retries: 2'
    """

    def __init__(self, total: int, label: str, clock: Callable[[], float] | None = None) -> None:
        import threading
        import time

        self.total, self.label = total, label
        self.done = self.failed = 0
        self.note = ""
        self._clock = clock or time.monotonic
        self._start = self._clock()
        self._base: tuple[int, float] | None = None
        self._lock = threading.Lock()

    def advance(self, done: int, failed: int, note: str = "") -> None:
        with self._lock:
            if self._base is None:
                self._base = (self.done + done, self._clock())
            self.done += done
            self.failed += failed
            self.note = note or self.note

    def numbers(self) -> tuple[int, int, float, float, float | None, str]:
        """(done, failed, rate per second, elapsed seconds, ETA seconds or None, note)."""
        with self._lock:
            now = self._clock()
            base_done, base_time = self._base or (self.done, now)
            rate, eta = rate_and_eta(self.total, self.done, base_done, now - base_time)
            return self.done, self.failed, rate, now - self._start, eta, self.note

    def line(self, width: int | None = None) -> str:
        """The progress in one line; with ``width``, at most ``width - 1`` characters and a bar in the
        room left: what does not fit is left out whole (the note, then the time elapsed, the label,
        the rate), never cut — the counts, the ETA and the failures always show."""
        done, failed, rate, elapsed, eta, note = self.numbers()
        pct = f" ({100 * done // self.total}%)" if self.total else ""
        parts = {"count": f"{done}/{self.total}" + (pct if width is None else ""), "failed": f"failed {failed}",
                 "eta": f"ETA {clock_text(eta)}", "rate": f"{rate:.1f}/s" if rate > 0 else "–/s",
                 "label": self.label, "elapsed": f"elapsed {clock_text(elapsed)}" if width is None else
                 clock_text(elapsed), "note": note}
        if width is None:
            return f"{self.label}: " + ", ".join(parts[k] for k in ("count", "rate", "elapsed", "eta", "failed", "note")
                                                 if parts[k])
        room = width - 1
        kept: set[str] = set()
        for key in ("count", "failed", "eta", "rate", "label", "elapsed", "note"):
            free = room - sum(len(parts[k]) + 1 for k in kept)
            if key == "label" and _MIN_LABEL <= free < len(parts[key]):  # a long label (a model's name) is shortened
                parts[key] = parts[key][:free - 1] + "…"
            if parts[key] and len(parts[key]) <= free:
                kept.add(key)
        shown = [parts[k] for k in ("label", "count", "rate", "elapsed", "eta", "failed", "note") if k in kept]
        free = room - sum(len(s) + 1 for s in shown)
        if free >= _MIN_BAR:
            bar = min(free, _MAX_BAR)
            filled = min(bar, bar * done // self.total) if self.total else bar
            shown.insert(1 if "label" in kept else 0, "━" * filled + "─" * (bar - filled))
        return " ".join(shown)


def rate_and_eta(total: int, done: int, base_done: int, seconds: float) -> tuple[float, float | None]:
    """Judgments per second since ``base_done`` were done ``seconds`` ago, and the seconds left for the rest of
    ``total`` at that rate (0 when none is left, ``None`` while the rate is unknown).

    Example:
        >>> rate_and_eta(10, 4, 0, 2.0), rate_and_eta(10, 0, 0, 0.0), rate_and_eta(10, 10, 0, 5.0)
        ((2.0, 3.0), (0.0, None), (2.0, 0.0))
    """
    rate = (done - base_done) / seconds if seconds > 0 else 0.0
    left = max(total - done, 0)
    return rate, 0.0 if not left else (left / rate if rate > 0 else None)


def clock_text(seconds: float | None) -> str:
    """``H:MM:SS``; ``–`` when unknown.

    Example:
        >>> clock_text(3725.4), clock_text(None)
        ('1:02:05', '–')
    """
    if seconds is None:
        return "–"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


@contextmanager
def plain_progress(total: int, label: str, write: Callable[[str], None],
                   interval: float | None = None) -> Iterator[Advance]:
    """A progress display for logs (standard error not a terminal): ``write`` gets one line every
    ``interval`` seconds (:func:`progress_interval` when None) while the run goes on, from a thread of
    its own (so a run waiting on slow calls still shows it is alive), and a last line at the end."""
    import threading

    state = ProgressState(total, label)
    stop = threading.Event()
    seconds = progress_interval() if interval is None else interval

    def tick() -> None:
        while not stop.wait(seconds):
            write(state.line())

    thread = threading.Thread(target=tick, name="judgelab-progress", daemon=True)
    thread.start()
    try:
        yield state.advance
    finally:
        stop.set()
        thread.join()
        write(state.line())
