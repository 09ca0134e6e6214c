"""A run's entry in the store's run log: opened when its plan is known, its progress written while it runs
(at most twice a second), its end logged when it ends (:meth:`judgelab.store.Store.begin_run`,
:meth:`~judgelab.store.Store.run_advanced`, :meth:`~judgelab.store.Store.log_run`).

What a watcher reads (``judgelab view``'s status strip) is what the run wrote: the judgments planned, done
and failed, and the retries by reason.
"""
from __future__ import annotations

import asyncio
from typing import Callable

from judgelab.errors import JudgelabError
from judgelab.store import Store

__all__ = ["RunLog", "outcome_of"]


class RunLog:
    """One run's entry in ``store``'s run log.

    Args:
        store: the run's store.
        started: when the run started (epoch seconds).
        every: seconds between two progress writes.
    """

    def __init__(self, store: Store, started: float, every: float = 0.5) -> None:
        self.store, self.started, self.every = store, started, every
        self.entry: int | None = None
        self.done = self.failed = 0
        self._written: tuple[int, int, dict[str, int]] | None = None

    def begin(self, rater: str, planned: int, already: int) -> None:
        """Open the entry: the plan covers ``planned`` judgments, ``already`` of them in the store. An entry
        already open (a batch run opens it before its batch rounds) takes the exact plan instead."""
        if self.entry is not None:
            self.store.run_replanned(self.entry, planned, already)
            self.done = max(self.done, already)
            return
        self.entry = self.store.begin_run(rater, self.started, planned, already)
        self.done = already
        self._written = (already, 0, {})

    def advance(self, done: int, failed: int) -> None:
        """Count judgments recorded (and failed) since the last call; written by :meth:`write` or :meth:`ticking`."""
        self.done += done
        self.failed += failed

    def write(self, retries: dict[str, int]) -> None:
        """Write the progress when it changed since the last write."""
        now = (self.done, self.failed, dict(retries))
        if self.entry is not None and now != self._written:
            self.store.run_advanced(self.entry, *now)
            self._written = now

    async def ticking(self, retries: Callable[[], dict[str, int]]) -> None:
        """Run beside the workers: write the progress every :attr:`every` seconds (retries show while no
        judgment is recorded, e.g. during a storm of rate limits)."""
        while True:
            await asyncio.sleep(self.every)
            try:
                self.write(retries())
            except JudgelabError:  # an unwritable store: the run's own writes say so; the progress waits for the end
                return

    def end(self, rater: str, stats_wall_s: float, wall_s: float, calls_made: int, prompt_tokens: int,
            completion_tokens: int, retries: dict[str, int], outcome: str = "finished") -> None:
        """Log the run's end (:meth:`judgelab.store.Store.log_run`): run.json's totals add up the runs that made
        calls, so a rerun answered by the ledger keeps the tokens and time of the judgments. While a run fails,
        an unwritable log does not hide the run's own error."""
        try:
            self.write(retries)
            self.store.log_run(rater, self.started, stats_wall_s or wall_s, calls_made, prompt_tokens,
                               completion_tokens, entry=self.entry, outcome=outcome)
        except JudgelabError:
            if outcome == "finished":
                raise


def outcome_of(exc: BaseException) -> str:
    """How a run that raised ``exc`` ended: ``interrupted`` (Ctrl-C, a cancelled task) or ``failed``."""
    return "interrupted" if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)) else "failed"
