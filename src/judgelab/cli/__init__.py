"""The ``judgelab`` command.

The command line's contract, kept without relying on click's or typer's internals
(typer 0.29 vendors its own click and changed how it reports Ctrl-C):

* a user error (bad option, missing file, unknown name …) is one line on stderr,
  ``judgelab: error: …``, and exit status 2 — never a traceback;
* Ctrl-C ends with ``judgelab: interrupted; N finished judgments kept in STORE — run
  the same command to resume`` and exit status 130; the ratings of an interrupted run
  are not written (the store keeps every finished judgment);
* a run whose failed judgments exceed ``--max-failure-rate`` exits with
  :data:`EXIT_TOO_MANY_FAILURES` (3);
* anything unexpected is one ``judgelab: internal error: …`` line, exit 1
  (``JUDGELAB_DEBUG=1`` shows the traceback).

Start-up stays instant: command modules import only typer and the standard library at
module level; pandas, scipy, matplotlib, llama_cpp and openai are imported inside the
commands that use them.
"""
from __future__ import annotations

import logging
import os
import sys
from typing import Any, Callable

import typer

# Importing the command modules registers their commands; the import order is the order of `--help`.
from judgelab.cli import rating  # noqa: F401, I001
from judgelab.cli import templates  # noqa: F401
from judgelab.cli import run_file  # noqa: F401
from judgelab.cli import agreement  # noqa: F401
from judgelab.cli import dhp  # noqa: F401
from judgelab.cli import recipes  # noqa: F401
from judgelab.cli import geval  # noqa: F401
from judgelab.cli import annotate  # noqa: F401
from judgelab.cli import doctor  # noqa: F401
from judgelab.cli import report  # noqa: F401
from judgelab.cli import compare  # noqa: F401
from judgelab.cli import audit  # noqa: F401
from judgelab.cli import escalate  # noqa: F401
from judgelab.cli import probe  # noqa: F401
from judgelab.cli import batch  # noqa: F401
from judgelab.cli import preference  # noqa: F401
# preference_* modules register on preference_app; imported here (from cli/preference.py they would be an import cycle)
from judgelab.cli import preference_agree  # noqa: F401
from judgelab.cli import preference_rates  # noqa: F401
from judgelab.cli.common import app
from judgelab.cli.renamed import retired_hint
from judgelab.errors import EXIT_INTERRUPTED, EXIT_TOO_MANY_FAILURES, EXIT_USAGE, JudgelabError, TooManyFailures

__all__ = ["app", "main", "EXIT_USAGE", "EXIT_INTERRUPTED", "EXIT_TOO_MANY_FAILURES"]


def _say(message: str) -> None:
    print(f"judgelab: {message}", file=sys.stderr, flush=True)


def _usage_message(exc: BaseException) -> str | None:
    """The message of a click/typer usage error, recognised by shape (``exit_code`` +
    ``format_message``), not by class: typer ≥ 0.29 raises its vendored click's exceptions,
    older typer raises click's own. None for any other exception."""
    format_message = getattr(exc, "format_message", None)
    if isinstance(getattr(exc, "exit_code", None), int) and callable(format_message):
        return str(format_message())
    return None


def _validation_message(exc: BaseException) -> str | None:
    pydantic = sys.modules.get("pydantic")
    if pydantic is None or not isinstance(exc, pydantic.ValidationError):
        return None
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"invalid value for {where}: {first['msg']}"


def _interrupted_message() -> str:
    from judgelab.store import last_store_summary

    where = last_store_summary()
    if where is None:
        return "interrupted"
    path, finished = where
    return f"interrupted; {finished} finished judgments kept in {path} — run the same command to resume"


def _run_cli(entry: Callable[..., object], args: list[str] | None = None) -> None:
    """Run the click command ``entry`` and turn every outcome into the documented exit status."""
    try:
        result = entry(args=args, standalone_mode=False)
    except KeyboardInterrupt:
        _say(_interrupted_message())
        sys.exit(EXIT_INTERRUPTED)
    except TooManyFailures as exc:
        _say(f"error: {exc}")
        sys.exit(EXIT_TOO_MANY_FAILURES)
    except JudgelabError as exc:
        _say(f"error: {exc}")
        sys.exit(EXIT_USAGE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:  # click < 8.2 / typer < 0.29 turn Ctrl-C into Abort
        _say(_interrupted_message())
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:
        message = _validation_message(exc)
        if message is not None:
            _say(f"error: {message}")
            sys.exit(EXIT_USAGE)
        usage = _usage_message(exc)
        retired = retired_hint(exc) if usage is not None else None
        if retired is not None:  # an old spelling: one line naming the new one
            _say(f"error: {retired}")
            sys.exit(EXIT_USAGE)
        if usage is not None:
            if type(exc).__name__ == "NoArgsIsHelpError":  # `judgelab` or a group alone: its help (typer printed it)
                if usage.strip():
                    print(usage, file=sys.stderr)
                sys.exit(EXIT_USAGE)
            text = " ".join(usage.split())
            _say(f"error: {text}" + ("" if "--help" in text else " (see --help)"))
            sys.exit(EXIT_USAGE)
        if os.environ.get("JUDGELAB_DEBUG"):
            raise
        _say(f"internal error: {type(exc).__name__}: {exc} (set JUDGELAB_DEBUG=1 for the traceback; "
             "finished judgments are kept in the store)")
        sys.exit(1)
    if result == EXIT_INTERRUPTED:
        # typer ≥ 0.29 swallows KeyboardInterrupt and returns 130 in non-standalone mode.
        _say(_interrupted_message())
        sys.exit(EXIT_INTERRUPTED)
    if isinstance(result, int) and result:
        sys.exit(result)


class _WarningLines(logging.StreamHandler):
    """``judgelab: warning: …`` on the current ``sys.stderr`` (looked up at each message)."""

    def __init__(self) -> None:
        super().__init__()
        self.setLevel(logging.WARNING)
        self.setFormatter(logging.Formatter("judgelab: warning: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _show_library_warnings() -> Callable[[], None]:
    """Library modules log on ``judgelab.*`` loggers and print nothing; the command line shows
    their warnings on stderr as ``judgelab: warning: …`` lines. Only :func:`main` installs this
    handler, for the length of one command, so library use stays silent except through Python's
    last-resort handler. Returns the function that puts the logger back as it was."""
    logger = logging.getLogger("judgelab")
    level, propagate = logger.level, logger.propagate
    added = None
    if not any(isinstance(h, _WarningLines) for h in logger.handlers):
        added = _WarningLines()
        logger.addHandler(added)
    logger.setLevel(logging.WARNING)
    logger.propagate = False  # shown once, not again by a root handler

    def restore() -> None:
        if added is not None:
            logger.removeHandler(added)
        logger.setLevel(level)
        logger.propagate = propagate

    return restore


def _show_progress_bars() -> Callable[[], None]:
    """The terminal's progress bar for model runs (library code draws none by itself), for the
    length of one command. Returns the function that puts back the display installed before."""
    from judgelab import progress

    before = getattr(progress, "_factory", None)  # a library caller's own display, if any

    def terminal_bar(total: int, label: str):
        from judgelab.report.terminal import progress_bar  # rich, imported when a run starts

        return progress_bar(total, label)

    progress.set_progress_display(terminal_bar)
    return lambda: progress.set_progress_display(before)


def _forget_earlier_commands() -> None:
    """Module-level state one command leaves behind that must not reach the next one run in the
    same process (a library caller, the tests): the store the interrupted-run message names."""
    lock = sys.modules.get("judgelab.store.lock")  # not imported: nothing to forget (start-up stays light)
    if lock is not None:
        lock._last_opened = None  # type: ignore[attr-defined]


class _PipeSafeStdout:
    """Standard output that survives a reader closing the pipe (``judgelab rate … | head -1``).

    The first write or flush that meets a broken pipe points file descriptor 1 at /dev/null (as
    Python's documentation advises for SIGPIPE) and drops the rest of the printed output, so the
    command still writes every output file and ends with its own exit status; :func:`main` then
    says on stderr that the printed output was cut short.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.broken = False

    def _closed(self) -> None:
        if not self.broken:
            self.broken = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
            os.close(devnull)

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, buffer …
        return getattr(self._stream, name)


def literal_help(command: Any) -> Any:
    """``command`` (a click command tree built by typer) with every help text shown as written: typer
    renders help through rich markup, where ``[system]`` or ``openai:MODEL[@URL]`` would read as a
    style tag and vanish. Each ``[`` is escaped; the texts themselves are unchanged in the code."""
    def escape(text: Any) -> Any:
        return text.replace("[", "\\[") if isinstance(text, str) else text

    command.help = escape(command.help)
    command.short_help = escape(getattr(command, "short_help", None))
    for param in getattr(command, "params", []):
        if hasattr(param, "help"):
            param.help = escape(param.help)
    for sub in getattr(command, "commands", {}).values():
        literal_help(sub)
    return command


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``judgelab`` command.

    Ends by returning (exit status 0) or by raising :class:`SystemExit` with the status. Whatever it
    changed for the command (``sys.stdout``, the ``judgelab`` logger, the progress display) is put
    back when it ends, so that it can be called again in the same process.
    """
    _forget_earlier_commands()
    restore_logger = _show_library_warnings()
    restore_progress = _show_progress_bars()
    real_stdout = sys.stdout
    stdout = _PipeSafeStdout(real_stdout)
    sys.stdout = stdout  # a file-like wrapper, see _PipeSafeStdout
    try:
        _run_cli(literal_help(typer.main.get_command(app)), args)
    finally:
        stdout.flush()
        if sys.stdout is stdout:
            sys.stdout = real_stdout
        restore_progress()
        restore_logger()
        _forget_earlier_commands()
        if stdout.broken:
            _say("note: standard output was closed before everything was printed (broken pipe); "
                 "the output files were written")


if __name__ == "__main__":  # pragma: no cover
    main()
