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
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
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


class _Rate(ProgressColumn):
    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.1f}/s" if speed else "–/s")


@contextmanager
def progress_bar(total: int, label: str, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A progress bar (done/total, rate, ETA, failures, retries); yields ``advance(done, failed, note)``."""
    if not enabled:
        def silent(done: int, failed: int, note: str = "") -> None:
            return None

        yield silent
        return
    columns = [TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), _Rate(),
               TimeElapsedColumn(), TextColumn("ETA", markup=False), TimeRemainingColumn(),
               TextColumn("failed {task.fields[failed]}", markup=False), TextColumn("{task.fields[note]}", markup=False)]
    with Progress(*columns, console=_err, transient=False) as progress:
        task = progress.add_task(label, total=total, failed=0, note="")
        failed_total = 0

        def advance(done: int, failed: int, note: str = "") -> None:
            nonlocal failed_total
            failed_total += failed
            progress.update(task, advance=done, failed=failed_total, note=note)

        yield advance
