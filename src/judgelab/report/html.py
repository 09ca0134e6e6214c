"""A self-contained HTML report of a judgelab output folder.

``write_report(folder)`` writes ``folder/report.html``: one file that opens from
``file://`` with no network — styles, script, charts (inline SVG) and data are embedded,
and the page references nothing outside itself, except the item cards past its first 2,000, which are
written beside it and loaded on demand (:mod:`judgelab.report.html_parts`). ``build_report(folder)`` reads the folder
into typed :class:`ReportData` (pure: it writes nothing, prints nothing) and
``render_report(data)`` turns that into the page.

Sections, each present when the folder has data for it, in page order:

* **Judge vs humans** (the first screen, :mod:`judgelab.report.headline`) — per judge and
  criterion: the correlation with the mean human rating, its interval or why there is none, n,
  the human baseline, the judge's mean against the humans', a count scatter or confusion table.
* **Preference judging** (:mod:`judgelab.report.html_preference`) — the pairwise steps' records
  (``preference agree``, ``preference win-rates``, ``rate --pairs``, ``audit --verdicts``): the verdict
  per judge and criterion in words against the human baseline, win rates, the leaderboard chart,
  agreement with the human baseline apart, position and length bias, a run's verdict counts.
* **Results** — mean score per rater, system and criterion with 95% CIs (numbers and error
  bars) as the folder's ``results.json`` records them (the rate step's summary; the humans' rows
  of the agree step); Welch's tests from the rate step's table.
* **Agreement with humans** (:mod:`judgelab.report.html_agreement`) — the tables of the folder's
  ``agree`` step (correlations, Williams matrix, human baseline, self-consistency). The report
  computes no statistic: without an agree step it says so and names the command that adds one.
  The first screen renders the same tables.
* **Audit** (:mod:`judgelab.report.html_audit`) — the audit step's ``audit.json``: bias
  effects with intervals and plain-language lines, juries, selective judging, calibration, self-check.
* **Discernment** — the DHP tables and a chart of D per perturbation.
* **Failures** — counts by status and example raw answers.
* **Disagreements** (or **Items** without human ratings) — a browser of every judged
  item and criterion, ranked by |judge − human|, filterable by criterion, system and
  judge: the rated text first (as the store's ``items`` table recorded it; long texts and
  contexts clipped with a "show all" toggle), then the judge's answer beside the human ratings, every sample's raw answer, parse status
  and score, the log-probability distribution where there is one, the exact prompt (collapsed);
  50 per page, a compact list view. Where human ratings are read from is listed in
  :mod:`judgelab.report.humans`.
* **Cost and time**, **The folder's README** (a recipe's notes, as text), **Other tables**
  (the folder's other CSVs), **Figures** (its PNGs and JPEGs), and **What ran** last —
  ``run.json`` (command, versions, time) and the store's runs: judge, template and its SHA-256,
  sampling, tokens, cost when prices were recorded; the exact messages of the first stored
  request of each criterion.

Every file is found through the folder's record (``results.json``, :mod:`judgelab.output.record`):
the steps list their inputs and the files they wrote, by the table each holds; a folder of an
older judgelab is read through the record rebuilt from its files (:mod:`judgelab.output.legacy`).
A folder written by ``judgelab agree --out`` is reported with the ratings agree read (the inputs
its record names, with the calls of a store beside a run's ratings file; a large file a chunk at a time:
:mod:`judgelab.report.folder_ratings`).

A store of more judgments than the page embeds cards is never read whole: the cards are built in two passes, a
chunk at a time (:mod:`judgelab.report.html_items_stream`), and "What ran", "Failures" and the human ratings read
only the rows they show (:mod:`judgelab.report.store_reads`).

A section whose data is absent is left out; a section whose data cannot be read is
replaced by a line under "Problems reading the folder" — the report is still written.
"""
from __future__ import annotations

import base64
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_text_atomic
from judgelab.output.legacy import OLDER_FOLDER
from judgelab.published_results import PublishedComparison
from judgelab.raters import human_mask
from judgelab.report import html_build as B
from judgelab.report import html_parts
from judgelab.report import html_runs as R
from judgelab.report.folder import (
    RunFolder,
    StoreReader,
    agree_inputs,
    open_folder,
    ratings_from_file,
    step_inputs,
)
from judgelab.report.folder_ratings import (
    agree_judgments,
    large_ratings,
    no_judgments,
    read_ratings,
)
from judgelab.report.headline import build_headline, published_headline
from judgelab.report.html_agreement import NO_AGREE_STEP, agreement, agreement_tables
from judgelab.report.html_audit import AUDIT_TABLES, build_audit
from judgelab.report.html_items import PAGE_SIZE, CallCache, build_items
from judgelab.report.html_items_stream import RatedUnits, build_items_streamed
from judgelab.report.html_model import FolderFigure, ItemBrowser, ReportData
from judgelab.report.html_parts import sidecar_name, write_parts
from judgelab.report.html_preference import PREFERENCE_TABLES, build_preference
from judgelab.report.html_render import render
from judgelab.report.humans import HumanRatings, load_humans
from judgelab.report.readme import readme_blocks
from judgelab.report.store_reads import StoreRows

__all__ = ["FIGURE_LIMIT_BYTES", "ReportData", "build_report", "page_of", "page_with_parts", "render_report", "write_report"]

#: PNG figures of the folder larger than this are not embedded (they are named in a note).
FIGURE_LIMIT_BYTES = 5 * 1024 * 1024

T = TypeVar("T")


def _guard(problems: list[str], what: str, build: Callable[[], T]) -> T | None:
    """Run one section builder; a failure on damaged data becomes a line in the report, not an error."""
    try:
        return build()
    except Exception as exc:  # noqa: BLE001 - a report is written whatever one section's data holds
        problems.append(f"{what}: not shown — {type(exc).__name__}: {' '.join(str(exc).split())}")
        return None


def build_report(folder: str | Path, human: Iterable[str | Path] = (), pool_humans: bool = False) -> ReportData:
    """Read ``folder`` into :class:`ReportData` (writes nothing).

    ``human``: extra human-ratings files (tidy long layout) to compare the judge with; ``pool_humans``: average
    the ratings collected with ``annotate`` into the imported humans' mean on the cards (else shown apart).
    Raises :class:`JudgelabError` (one line) when ``folder`` is missing or not a judgelab
    output folder; never because a section's data is absent.
    """
    from judgelab import __version__

    rf = open_folder(folder)
    problems = list(rf.problems)
    reader: StoreReader | None = None
    judgments: pd.DataFrame | None = None
    rows: StoreRows | None = None  # a store of many judgments: read by SQL, a unit at a time
    if rf.has("store.sqlite"):
        try:
            reader = StoreReader(rf.file("store.sqlite"))
            rows = reader.rows()
            if rows.count() > html_parts.EMBEDDED_UNITS:
                judgments = rows.shown_rows()  # the rows "What ran", "Failures" and the humans read
            else:
                rows, judgments = None, reader.judgments()
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign store: the other files still report
            problems.append(f"store.sqlite: not read — {' '.join(str(exc).split())}")
            if reader is not None:
                reader.close()
            reader, judgments, rows = None, None, None
    spool: tempfile.TemporaryDirectory[str] | None = None  # a large ratings file's rows, as a store
    compared = False
    if judgments is None:
        large = _guard(problems, "the ratings files", lambda: large_ratings(rf, lambda: _rated(rf, human, pool_humans)))
        if large is not None:
            reader, rows, spool = large
            judgments = rows.shown_rows()
            compared = bool(read_ratings(rf))  # an agree or audit folder: its cards are the items humans rated
    if judgments is None:
        name = rf.record.file("ratings")
        if name is not None and rf.has(name):
            judgments = _guard(problems, name, lambda: ratings_from_file(rf.file(name)))
    if judgments is None and read_ratings(rf):  # an `agree` or `audit` folder: the ratings its step read, where they are
        reader, judgments = _guard(problems, "the ratings named in results.json",
                                   lambda: agree_judgments(rf)) or (None, None)
    try:
        humans = _humans(rf, judgments, human, problems, pool_humans)
        problems += humans.problems
        judge = None if judgments is None else judgments[~human_mask(judgments["rater"])].reset_index(drop=True)
        if judge is not None and judge.empty:
            judge = None
        calls = CallCache()
        if reader is not None and judge is not None:
            keys = None if rows is not None else {k for row in judge["keys"] for k in row}
            calls = CallCache(fetch=reader.calls, keys=keys)  # read as the cards need them
        texts = (_guard(problems, "store.sqlite items", reader.item_texts) or {}) \
            if reader is not None and rows is None else {}
        templates = {r: str(s.get("template")) for r, s in (reader.runs if reader is not None else {}).items()
                     if isinstance(s, dict) and s.get("template")}
        data = ReportData(
            folder=str(rf.path.resolve()), title=f"judgelab report: {rf.path.resolve().name}",
            generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"), judgelab_version=__version__,
            files=[f for f in rf.files if not f.endswith((".lock", ".journal", ".tmp", "-wal", "-shm"))],
        )
        data.what_ran = _guard(problems, "What ran", lambda: R.what_ran(rf, reader, judge, humans, calls))
        data.preference = _guard(problems, "Preference judging", lambda: build_preference(rf))
        data.results = _guard(problems, "Results", lambda: B.results(rf))
        tables = _guard(problems, "Agreement with humans", lambda: agreement_tables(rf))
        if tables is not None:
            data.headline = _guard(problems, "Judge vs humans", lambda: build_headline(
                tables.tables.get("correlations"), tables.tables.get("human_baseline"), tables.skipped, tables.matched))
            if data.headline is not None and tables.standardized:
                data.headline.notes.insert(0, tables.standardized)
        elif rf.record.result("published"):  # a recipe's correlations beside the published figures
            data.headline = _guard(problems, "Judge vs humans", lambda: published_headline(
                PublishedComparison.from_record(rf.record.result("published"))))
        elif judge is not None and not humans.table.empty and not step_inputs(rf, "audit"):  # an audit leads with its own
            data.notes.append(NO_AGREE_STEP.format(folder=rf.path))
        data.agreement = _guard(problems, "Agreement with humans", lambda: agreement(tables))
        data.audit = _guard(problems, "Audit", lambda: build_audit(rf))
        data.discernment = _guard(problems, "Discernment", lambda: B.discernment(rf))
        data.failures = _guard(problems, "Failures", lambda: B.failures(R.recorded_costs(rf), judge))
        if judge is not None and rows is not None and reader is not None:
            data.items = _guard(problems, "Disagreements", lambda: _streamed_items(
                rows, reader, humans, calls, templates, with_humans=compared))
        elif judge is not None:
            data.items = _guard(problems, "Disagreements", lambda: build_items(judge, humans, calls, PAGE_SIZE, templates,
                                                                                 texts))
        if data.items is not None and not data.items.has_human and data.agreement is not None:
            # never "no human ratings" beside an agreement table: say why the items have none
            data.items.notes = [n for n in data.items.notes if not n.startswith("No human ratings were found")]
            data.items.notes.insert(0, "The agreement tables above were computed from human ratings that could not "
                                       "be matched to these items here" + (f" ({'; '.join(humans.problems)})"
                                                                           if humans.problems else "")
                                    + "; items are ranked by the spread of the judge's own samples.")
        infos = data.what_ran.runs if data.what_ran is not None else []
        data.cost = _guard(problems, "Cost and time", lambda: R.cost_time(rf, infos, reader))
        if rf.has("README.md"):
            data.readme = _guard(problems, "README.md", lambda: readme_blocks(
                rf.file("README.md").read_text(encoding="utf-8", errors="replace")))
        shown = B.CONSUMED_TABLES | (AUDIT_TABLES if data.audit else set()) | (PREFERENCE_TABLES if data.preference else set())
        data.other_tables = _guard(problems, "Other tables", lambda: B.other_tables(rf, shown)) or []
        data.folder_figures = _guard(problems, "Figures", lambda: _folder_figures(rf.path, rf.files, data.notes)) or []
    finally:
        if reader is not None:
            reader.close()
        if spool is not None:
            spool.cleanup()
    if any(step.source == "rebuilt" and step.kind != "files" for step in rf.record.steps):
        data.notes.append(OLDER_FOLDER)
    if judgments is None:
        data.notes.append(no_judgments(rf))
    data.problems = problems
    return data


def _streamed_items(rows: StoreRows, reader: StoreReader, humans: HumanRatings, calls: CallCache,
                    templates: dict[str, str], with_humans: bool = False) -> ItemBrowser:
    """The item browser of a store of many judgments, built in bounded memory (:mod:`.html_items_stream`); where
    its units are no more than the page holds, the one-pass build of the store's whole table. ``with_humans``: the
    units with human ratings only (a comparison's page, when some have them)."""
    built = build_items_streamed(rows, humans, calls, PAGE_SIZE, templates, with_humans=with_humans)
    if built is not None:
        return built
    judged = reader.judgments()
    return build_items(judged[judged["rater"].isin(rows.judges)].reset_index(drop=True), humans, calls, PAGE_SIZE,
                       templates, _guard([], "store.sqlite items", reader.item_texts) or {})


def _humans(rf: RunFolder, judgments: pd.DataFrame | None, human: Iterable[str | Path], problems: list[str],
            pool: bool = False) -> HumanRatings:
    """The human ratings of the folder (:func:`load_humans`), with an ``audit`` folder's the human files its step
    read (beside judgments read from its ratings files); one of those that cannot be read is a problem line."""
    human = list(human)
    recorded = step_inputs(rf, "audit", "human") if judgments is not None and not agree_inputs(rf) else []
    if recorded:
        try:
            return load_humans(rf, judgments, [*human, *recorded], pool)
        except JudgelabError as exc:
            problems.append(f"the human ratings the audit read: not beside the items — {exc}")
    return load_humans(rf, judgments, human, pool)


def _rated(rf: RunFolder, human: Iterable[str | Path], pool: bool) -> RatedUnits | None:
    """The units the folder's human ratings rate, read before its judgments (those the ratings files hold are
    found as they are copied); None when they cannot be read here (the page's own read names why)."""
    try:
        return RatedUnits.of(_humans(rf, pd.DataFrame(columns=["rater", "criterion"]), human, [], pool))
    except (JudgelabError, OSError, ValueError):
        return None


def _folder_figures(path: Path, files: list[str], notes: list[str]) -> list[FolderFigure]:
    out = []
    for name in files:
        lowered = name.lower()
        mime = "image/png" if lowered.endswith(".png") else "image/jpeg" if lowered.endswith((".jpg", ".jpeg")) else None
        if mime is None:
            continue
        file = path / name
        if file.stat().st_size > FIGURE_LIMIT_BYTES:
            notes.append(f"{name} is larger than {FIGURE_LIMIT_BYTES // (1024 * 1024)} MB and is not embedded.")
            continue
        stem = name.rsplit(".", 1)[0].replace("_", " ")
        out.append(FolderFigure(name=name, alt=f"Figure {stem} written by judgelab into the folder", mime=mime,
                                data_base64=base64.b64encode(file.read_bytes()).decode("ascii")))
    return out


def render_report(data: ReportData) -> str:
    """The self-contained HTML page of ``data``."""
    return render(data)


def page_of(folder: str | Path, human: Iterable[str | Path] = (), pool_humans: bool = False) -> str:
    """The page of ``folder``: the compare page for a folder ``judgelab compare`` wrote, else the report."""
    from judgelab.report.compare_page import compare_page_of, is_compare_folder

    if is_compare_folder(open_folder(folder)):
        return compare_page_of(folder)
    return render_report(build_report(folder, human, pool_humans))


def page_with_parts(folder: str | Path, sidecar: str, human: Iterable[str | Path] = (),
                    pool_humans: bool = False) -> tuple[str, list[str]]:
    """:func:`page_of` and the item parts it loads from the folder ``sidecar`` beside it (none when the page holds
    every item, :mod:`judgelab.report.html_parts`)."""
    from judgelab.report.compare_page import compare_page_of, is_compare_folder

    if is_compare_folder(open_folder(folder)):
        return compare_page_of(folder), []
    data = build_report(folder, human, pool_humans)
    if data.items is None:
        return render_report(data), []
    data.items.sidecar = sidecar
    return render_report(data), data.items.parts


def write_report(folder: str | Path, out: str | Path | None = None, human: Iterable[str | Path] = (),
                 pool_humans: bool = False) -> Path:
    """Write the HTML report of ``folder`` to ``out`` (default ``folder/report.html``) and return its path.

    The file is written atomically (a temporary file, then renamed); the item cards beyond the page's share are
    written beside it (``report-items/`` for ``report.html``, :mod:`judgelab.report.html_parts`). Raises
    :class:`JudgelabError` with one line when the folder is missing or not an output folder,
    or when ``out`` cannot be written; never because a section's data is absent.
    """
    target = Path(out) if out is not None else Path(folder) / "report.html"
    page, parts = page_with_parts(folder, sidecar_name(target), human, pool_humans)
    if target.is_dir():
        raise JudgelabError(f"{target} is a folder; give a file name for the report, e.g. {target / 'report.html'}")
    if not target.parent.exists():
        raise JudgelabError(f"cannot write {target}: folder {target.parent} does not exist")
    write_parts(target, parts)
    return write_text_atomic(target, page)
