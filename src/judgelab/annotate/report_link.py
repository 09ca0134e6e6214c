"""The folder's HTML report, kept fresh from the annotation: written when annotation stops, and on request
from the overview, which says when the report was written and whether ratings came in since.

The report itself is the output layer's (:func:`judgelab.output.write_html_report`, reading the
store read-only, so it is written while people go on rating); this module only decides when and
tells the organiser. Nothing here prints.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

__all__ = ["ReportState", "report_state", "refresh_report", "latest_time"]

REPORT = "report.html"
_WRITING = threading.Lock()  # one report written at a time (two organiser clicks, or a click and the final one)


@dataclass(frozen=True)
class ReportState:
    """The folder's report as the overview shows it.

    Attributes:
        path: ``FOLDER/report.html``.
        written: when it was last written (UTC, ``YYYY-MM-DDTHH:MM:SSZ``); None when there is none.
        stale: there is none, or a rating was submitted since it was written (to the second).
    """

    path: Path
    written: str | None
    stale: bool


def latest_time(stamps: Iterable[str]) -> float | None:
    """The end of the latest second among ``YYYY-MM-DDTHH:MM:SSZ`` stamps (a rating stored to the second
    may have come at any time within it), as seconds since the epoch; None without stamps.

    Example:
        >>> latest_time(["1970-01-01T00:00:10Z", "1970-01-01T00:00:02Z"])
        11.0
    """
    import calendar

    times = [calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ")) + 1.0 for s in stamps]
    return max(times) if times else None


def report_state(folder: Path, latest_rating: float | None) -> ReportState:
    """Whether ``folder/report.html`` shows every rating; ``latest_rating``: when the latest was submitted (epoch s).

    Example:
        >>> import tempfile
        >>> report_state(Path(tempfile.mkdtemp()), None).written is None
        True
    """
    path = Path(folder) / REPORT
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return ReportState(path, None, True)
    written = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(mtime))
    return ReportState(path, written, latest_rating is not None and latest_rating > mtime)


def refresh_report(folder: Path) -> tuple[Path | None, str]:
    """Write ``folder/report.html`` now: (its path, the line to show), or (None, why not) — never an exception
    for a folder the report cannot read (:func:`judgelab.output.write_html_report`)."""
    from judgelab.output import write_html_report

    with _WRITING:
        agreed = _agree_step(Path(folder))
        return agreed if agreed is not None else write_html_report(Path(folder))


def _agree_step(folder: Path) -> tuple[Path | None, str] | None:
    """With judge and human ratings in the folder's store: ``agree``'s analysis recorded into the folder (its
    tables and results.json step, agree's defaults: Kendall τ-b over the levels the ratings have), which writes
    the report; ``None`` (nothing done) otherwise. The report renders this step; it computes no agreement."""
    from judgelab.agree_run import run_agree
    from judgelab.errors import JudgelabError
    from judgelab.output import write_html_report
    from judgelab.output.record import input_file
    from judgelab.raters import human_mask
    from judgelab.store import Store

    store = folder / "store.sqlite"
    if not store.is_file():
        return None
    try:
        with Store(store, read_only=True) as s:
            ratings = s.ratings()
    except JudgelabError:
        return None
    humans = human_mask(ratings["rater"])
    if not humans.any() or humans.all():
        return None
    levels = ["overall", "group", "system"] if ratings["group"].notna().any() else ["overall", "system"]
    try:
        run = run_agree([ratings], levels=levels, out=folder, sources=[input_file("store", store)])
    except JudgelabError as exc:  # e.g. no item rated by both: the report is written without agreement
        path, line = write_html_report(folder)
        return path, f"{line} (no agreement: {exc})"
    report = folder / REPORT
    return (report, f"report: {report}") if run.out is not None and report.exists() else (None, "no HTML report")
