"""Progress display of model runs, supplied by whoever shows it (the command line).

Only ``cli/`` prints: library code asks :func:`progress_display` for an
``advance(done, failed, note="")`` callback (``note``: the retries so far, in words) and draws
nothing by itself. The command line installs the terminal's progress bar
(:func:`judgelab.report.terminal.progress_bar`) with :func:`set_progress_display`; a program using
judgelab as a library may install its own (any callable ``(total, label) -> context manager
yielding advance``), or none.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, ContextManager, Iterator

__all__ = ["Advance", "ProgressFactory", "set_progress_display", "progress_display"]

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
