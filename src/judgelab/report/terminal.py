"""Rich terminal output: tables of numbers and the run progress bar.

**Text is data here.** Everything printed through this module — answers, raw texts, item ids,
system names, criteria, file names, error reasons quoting a server — is shown as it is: the
consoles are built with rich's markup, emoji codes and highlighting off, and the progress bar's
text columns with markup off, so ``[/INST]``, ``[bold]`` or ``:smile:`` in an answer is printed
literally and can never raise rich's ``MarkupError``. This module is the package's only user of
rich (tested); the command line prints through :data:`console`, :func:`print_table` and
:func:`progress_bar`, or with plain ``print``/``typer.echo``.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Callable, Iterator

import pandas as pd
from rich import box
from rich.console import Console
from rich.progress import Progress, ProgressColumn
from rich.table import Table
from rich.text import Text

__all__ = ["console", "print_table", "progress_bar", "fmt"]

def _plain_console(stderr: bool = False, width: int | None = None) -> Console:
    """A console that prints text as given: rich's ``[bold]`` markup, ``:smile:`` emoji codes and
    highlighting (colours only, but the same rule) are off."""
    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)


console = _plain_console(width=None if Console().is_terminal else 160)
_err = _plain_console(stderr=True)


def fmt(value: object, digits: int = 3) -> str:
    """A table cell as text: floats to ``digits`` decimals (scientific when tiny), NaN as ``nan``.

    Example:
        >>> fmt(0.12345), fmt(0.00001), fmt(float("nan")), fmt("a")
        ('0.123', '1.00e-05', 'nan', 'a')
    """
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if value != 0 and (abs(value) < 10 ** -digits):
            return f"{value:.2e}"
        return f"{value:.{digits}f}"
    return str(value)


def print_table(df: pd.DataFrame, title: str | None = None, digits: int = 3, compact: bool = False) -> None:
    """Print a table on the terminal (the CLI's only table printer); all-NaN float columns are left out.
    ``compact``: no frame, one rule under the header (a summary's table: two lines besides its rows)."""
    df = df.loc[:, [c for c in df.columns if not (pd.api.types.is_float_dtype(df[c]) and df[c].isna().all())]]
    frame = {"box": box.SIMPLE_HEAD, "show_edge": False, "pad_edge": False} if compact else {}
    table = Table(title=title, show_lines=False, header_style="bold", **frame)  # type: ignore[arg-type]
    for col in df.columns:
        table.add_column(str(col), justify="right" if pd.api.types.is_numeric_dtype(df[col]) else "left")
    for row in df.itertuples(index=False):
        table.add_row(*(fmt(v, digits) for v in row))
    console.print(table)


class _Line(ProgressColumn):
    """The whole progress line (:meth:`judgelab.progress.ProgressState.line`) at the console's width,
    read at each refresh (a resized terminal gets a line that fits)."""

    def __init__(self, state, console: Console) -> None:
        super().__init__()
        self.state, self.console = state, console

    def render(self, task) -> Text:
        return Text(self.state.line(self.console.width), no_wrap=True, overflow="ignore")


@contextmanager
def progress_bar(total: int, label: str, enabled: bool = True,
                 console: Console | None = None) -> Iterator[Callable[..., None]]:
    """The run's progress (done/planned, rate, ETA, failures, retries); yields ``advance(done, failed, note)``.

    On a terminal: a bar redrawn in place that fits the terminal's width. Otherwise (a log file, a
    pipe): a plain line every ``$JUDGELAB_PROGRESS_SECONDS`` (10) seconds and one at the end
    (:func:`judgelab.progress.plain_progress`).
    """
    from judgelab.progress import ProgressState, plain_progress

    if not enabled:
        def silent(done: int, failed: int, note: str = "") -> None:
            return None

        yield silent
        return
    console = console or _err
    if not console.is_terminal:
        with plain_progress(total, label, lambda line: console.print(line, soft_wrap=True)) as advance:
            yield advance
        return
    state = ProgressState(total, label)
    with Progress(_Line(state, console), console=console, transient=False) as progress:
        task = progress.add_task(label, total=total)

        def advance(done: int, failed: int, note: str = "") -> None:
            state.advance(done, failed, note)
            progress.update(task, advance=done)

        yield advance
