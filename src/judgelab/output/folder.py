"""The one writer of every command's output folder: tables, files, the README.md index and run.json,
written aside and swapped in only when the command has produced them all.

A command writes its files through :class:`OutputFolder` (tables by name, figures and other
files by :meth:`OutputFolder.path`); :meth:`OutputFolder.finish` writes the index and run.json
and moves everything into place (:class:`StagedOutputs`). A command that is refused, fails or
is interrupted before that leaves the folder's earlier outputs as they were, byte for byte.
The HTML report is written afterwards from the folder (:func:`judgelab.report.html.write_report`).
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from judgelab.errors import JudgelabError
from judgelab.output.accounting import folder_call_costs
from judgelab.output.index import write_index
from judgelab.output.manifest import record_step, write_manifest
from judgelab.output.legacy import folder_record
from judgelab.output.record import InputFile, NewerRecord, OutputFile, Step, write_record
from judgelab.output.tables import write_table
from judgelab.paths import output_folder, safe_filename

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OutputFolder", "StagedOutputs", "Display", "write_html_report", "write_tables"]


def write_html_report(folder: Path) -> tuple[Path | None, str]:
    """Write ``folder/report.html``; returns (its path, the line to show) — or (``None``, why there is
    none): a folder the report cannot read is a warning, never an error (the results are written)."""
    from judgelab.report.html import write_report

    try:
        path = write_report(folder)
    except JudgelabError as exc:
        return None, f"judgelab: warning: no HTML report: {exc}"
    return path, f"report: {path}"


def write_tables(out: Path, command: str, title: str, tables: list[tuple[pd.DataFrame, str, str]],
                 notes: list[str] | None = None, settings: dict[str, Any] | None = None,
                 inputs: list[InputFile] | None = None, display: Display | None = None) -> Path:
    """The folder of a table command (``scales``, ``hanna …``): each (table, name, description) as ``name.csv``,
    README.md, run.json, results.json (the step's settings and inputs) and report.html. Returns the folder."""
    with OutputFolder(out, title, command=command, display=display) as output:
        for df, name, description in tables:
            output.table(df, name, description, show=False)
        output.record(command, settings=settings, inputs=inputs)
        return output.finish(notes)


class StagedOutputs:
    """New output files written beside a folder's current ones and swapped in only at the end.

    A command writes its outputs into :attr:`folder` (a hidden staging folder inside the output
    folder); :meth:`commit` moves each into place (``os.replace``, atomic per file) and removes the
    earlier outputs of the same command that this run did not produce (a ``welch.csv`` from a run
    with ``--compare`` when this one has none; a ``report.html`` of the old outputs). A run that
    is refused, fails or is interrupted never reaches :meth:`commit`: :meth:`discard` removes the
    staging folder and every earlier output stays as it was, byte for byte.

    Use it as a context manager: commit on success, discard on any exception (Ctrl-C included).

    Args:
        out: the output folder (created when missing).
        replaces: the command's output names; those this run does not produce are removed at commit.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> _ = (out / "old.csv").write_text("old")
        >>> with StagedOutputs(out, replaces=("old.csv", "new.csv")) as stage:
        ...     _ = (stage.folder / "new.csv").write_text("new")
        ...     (out / "old.csv").exists(), (out / "new.csv").exists()
        (True, False)
        >>> sorted(p.name for p in out.iterdir())
        ['new.csv']
    """

    PREFIX = ".judgelab-new-"

    def __init__(self, out: str | Path, replaces: tuple[str, ...] = ()) -> None:
        import os
        import secrets

        self.out = output_folder(out)
        self.replaces = replaces
        for stale in self.out.glob(self.PREFIX + "*"):  # left by a killed run (one writer per folder: the store's lock)
            _remove_tree(stale)
        self.folder = self.out / f"{self.PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            self.folder.mkdir()
        except OSError as exc:
            raise JudgelabError(f"cannot write into {self.out}: {exc.strerror or exc}") from None

    def commit(self) -> list[Path]:
        """Move the new files into the output folder; remove the command's outputs this run did not make.

        Returns:
            The paths of the files now in place.
        """
        import os

        made = sorted(p for p in self.folder.iterdir() if p.is_file())
        names = {p.name for p in made}
        try:
            for name in self.replaces:
                if name not in names:
                    (self.out / name).unlink(missing_ok=True)
            placed = []
            for path in made:
                os.replace(path, self.out / path.name)
                placed.append(self.out / path.name)
        except OSError as exc:
            raise JudgelabError(f"cannot replace the outputs in {self.out}: {exc.strerror or exc}") from None
        finally:
            _remove_tree(self.folder)
        return placed

    def discard(self) -> None:
        """Remove the staging folder; the earlier outputs stay as they were."""
        _remove_tree(self.folder)

    def __enter__(self) -> "StagedOutputs":
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


class Display(Protocol):
    """Where a recipe's progress goes: the command line passes one (``cli.common.TerminalDisplay``);
    library callers pass none and nothing is printed."""

    def table(self, df: pd.DataFrame, title: str) -> None: ...

    def line(self, text: str) -> None: ...

    def note(self, text: str) -> None: ...


class OutputFolder:
    """A command's output folder: tables and files written aside, then the README.md index and
    run.json, then all of it swapped in at once (:meth:`finish`). It prints nothing: tables and
    lines go to ``display`` when one is given.

    The outputs of this command's previous run in the folder (named in its run.json) that this
    run does not produce are removed when it finishes, so no stale table is left beside new ones.
    With ``step=True`` the command writes into another command's folder (``agree --out RUN``): its
    files join that folder's, its own README section is kept apart, and run.json records it as a step.

    Args:
        folder: the output folder (created when missing).
        title: the README's title.
        command: the command recorded in run.json (default ``recipe: <title>``).
        display: where tables and lines are shown (``None``: nowhere).
        step: when the folder is another command's, record into its run.json and README.md instead of
            replacing them (a folder of this command's own, or a new one, is written whole).

    Example:
        >>> import tempfile, pandas as pd
        >>> with OutputFolder(Path(tempfile.mkdtemp()), "a study", command="demo") as output:
        ...     _ = output.table(pd.DataFrame({"r": [0.5]}), "scores", "scores per item", show=False)
        ...     folder = output.finish()
        >>> sorted(p.name for p in folder.iterdir())
        ['README.md', 'report.html', 'results.json', 'run.json', 'scores.csv']
    """

    def __init__(self, folder: Path, title: str, command: str | None = None, display: Display | None = None,
                 step: bool = False, started: float | None = None) -> None:
        self.folder = output_folder(folder)
        self.title = title
        self.command = command or f"recipe: {title}"
        self.display = display
        # a step only in a folder that holds another's outputs: a folder of its own (or a new one) is written whole
        owner = self._owner()
        self.step = step and (owner not in (None, self.command) or (owner is None and (self.folder / "README.md").exists()))
        self.entries: list[tuple[str, str]] = []
        self._tables: dict[str, str] = {}  # file name -> the table it holds (results.json lists it)
        self._step = Step(kind=self.command, created="")
        # the folder's report.html describes the outputs being replaced: it goes with them (a new one follows)
        self._stage = StagedOutputs(self.folder, replaces=self._previous_outputs() + ("report.html",))
        self.finished = False
        #: when the command began (``time.time()``): a command that computes before it writes passes its start,
        #: so run.json's wall time is the command's, not only the writing's
        self.started = time.time() if started is None else started

    def _manifest(self) -> dict[str, Any]:
        """The folder's run.json ({} when there is none or it cannot be read)."""
        import json

        try:
            doc = json.loads((self.folder / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def _owner(self) -> str | None:
        """The command that made the folder (``None`` for a new folder)."""
        command = self._manifest().get("command")
        return command if isinstance(command, str) else None

    def _previous_outputs(self) -> tuple[str, ...]:
        """What this command's last run in the folder produced (from run.json), to replace."""
        doc = self._manifest()
        if doc.get("command") == self.command and not self.step:
            return tuple(str(n) for n in doc.get("outputs") or () if isinstance(n, str))
        steps = [s for s in doc.get("steps") or () if isinstance(s, dict) and s.get("command") == self.command]
        return tuple(str(n) for n in (steps[-1].get("outputs") or ()) if isinstance(n, str)) if steps else ()

    # -- writing ----------------------------------------------------------------------------
    def path(self, name: str) -> Path:
        """Where to write a file named ``name`` (made a safe file name; in the staging folder)."""
        stem, dot, suffix = name.rpartition(".")
        return self._stage.folder / (f"{safe_filename(stem)}.{suffix}" if dot else safe_filename(name))

    def table(self, df: pd.DataFrame, name: str, description: str, show: bool = True) -> pd.DataFrame:
        """Write ``<name>.csv`` (``name`` made a safe file name) and list it in the index."""
        file = self.path(f"{name}.csv")
        write_table(df, file)
        self.entries.append((file.name, description))
        self._tables[file.name] = name
        if show and not df.empty and self.display is not None:
            self.display.table(df, description)
        return df

    def file(self, name: str, description: str, table: str | None = None) -> Path:
        """List a file (written by the caller at :meth:`path`) in the index; returns its path. ``table``: what
        it holds, by the name pages look it up with in results.json (``ratings``, ``audit`` …)."""
        path = self.path(name)
        self.entries.append((path.name, description))
        if table is not None:
            self._tables[path.name] = table
        return path

    def record(self, kind: str | None = None, settings: dict[str, Any] | None = None,
               inputs: list[InputFile] | None = None, results: dict[str, Any] | None = None) -> None:
        """What results.json records of this step (:mod:`judgelab.output.record`): its kind (default: the
        command), settings, inputs and typed results (their ``to_record()``). The files come from :meth:`table`
        and :meth:`file`; a command that records nothing gets a step listing its files."""
        self._step = Step(kind or self.command, "", dict(settings or {}), list(inputs or []), [], dict(results or {}))

    def say(self, text: str) -> None:
        """A line for the display (e.g. a sanity check's verdict)."""
        if self.display is not None:
            self.display.line(text)

    # -- finishing ------------------------------------------------------------------------------
    def finish(self, notes: list[str] | None = None, runs: list[dict[str, Any]] | None = None,
               extra: dict[str, Any] | None = None, report: bool = True) -> Path:
        """Write the index and run.json, swap every new file in, then write report.html from the folder.

        Args:
            notes: lines for the README's notes.
            runs: run.json's ``runs`` (default: every rater of the folder's store with its settings and the
                calls, tokens and time of its logged runs, :meth:`judgelab.store.Store.run_totals`).
            extra: further run.json fields.
            report: write the HTML report of the folder (its path or why not goes to the display).

        Returns:
            The folder.
        """
        self._write_record()
        produced = sorted(p.name for p in self._stage.folder.iterdir())
        if self.step:
            self._readme_section(notes)
            record_step(self.folder, self.command, extra={**(extra or {}), "outputs": produced,
                                                          "wall_s": round(time.time() - self.started, 3)},
                        into=self._stage.folder)
        else:
            record = ("results.json", "the folder's record: each step's settings, inputs (with SHA-256), files and "
                                      "results, which report.html renders")
            write_index(self._stage.folder, self.title, [*self.entries, record], notes,
                        store=(self.folder / "store.sqlite").exists())
            write_manifest(self._stage.folder, self.command, self._runs() if runs is None else runs,
                           extra={**(extra or {}), "outputs": produced + ["README.md", "run.json"]}, started=self.started)
        self._stage.commit()
        self.finished = True
        self.say(f"outputs: {self.folder} (index: README.md)")
        if report:
            _, line = write_html_report(self.folder)
            if self.display is not None:
                self.display.note(line)
        return self.folder

    def _write_record(self) -> None:
        """results.json: the folder's record with this step (its files as listed in the index)."""
        files = [OutputFile(n, d, self._tables.get(n)) for n, d in self.entries]
        costs = folder_call_costs(self.folder)
        results = self._step.results if costs is None else {**self._step.results, "call_costs": costs}
        step = Step(self._step.kind, time.strftime("%Y-%m-%dT%H:%M:%S%z"), self._step.settings, self._step.inputs,
                    files, results)
        base = None
        if (self.folder / "results.json").exists() or (self.folder / "run.json").exists():
            try:  # the folder's record so far (an older folder's rebuilt from its files); a newer one is refused
                base = folder_record(self.folder)[0]
            except NewerRecord:
                raise
            except JudgelabError:  # an unreadable record is replaced by one holding this step
                base = None
        write_record(self._stage.folder, step, base)

    def _readme_section(self, notes: list[str] | None) -> None:
        """This step's section of the folder's README.md (replaced on a rerun, the rest kept)."""
        begin, end = f"<!-- judgelab {self.command}: begin -->", f"<!-- judgelab {self.command}: end -->"
        lines = [begin, f"## {self.title}", "", "| file | what |", "| --- | --- |"]
        lines += [f"| `{n}` | {d} |" for n, d in self.entries]
        if notes:
            lines += ["", *notes]
        lines.append(end)
        readme = self.folder / "README.md"
        old = readme.read_text(encoding="utf-8") if readme.exists() else "# judgelab outputs\n"
        if begin in old and end in old:
            head, rest = old.split(begin, 1)
            old = head.rstrip("\n") + "\n" + rest.split(end, 1)[1].lstrip("\n")
        self.path("README.md").write_text(old.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")

    def _runs(self) -> list[dict[str, Any]]:
        from judgelab.store import Store

        store = self.folder / "store.sqlite"
        if not store.exists():
            return []
        with Store(store, read_only=True) as s:
            return [{"rater": r, "settings": settings, **s.run_totals(r)} for r, settings in sorted(s.runs().items())]

    def discard(self) -> None:
        """Leave the folder's earlier outputs as they were."""
        self._stage.discard()

    def __enter__(self) -> "OutputFolder":
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if not self.finished:
            self.discard()
