"""``judgelab report``: a self-contained HTML report of an output folder."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import app, PEOPLE


@app.command(rich_help_panel=PEOPLE)
def report(
    folder: Path = typer.Argument(..., metavar="FOLDER", help="an output folder of judgelab (rate, agree --out, dhp, a recipe)"),
    out: Optional[Path] = typer.Option(None, "--out", metavar="FILE", help="the HTML file to write (default: FOLDER/report.html)"),
    human: Optional[list[Path]] = typer.Option(None, "--human", metavar="FILE", help="human ratings to show beside the judge's "
                                               "on the item cards (tidy long layout: item_id, criterion, rater, score[, "
                                               "system]); repeatable; agreement statistics come from `judgelab agree`"),
    pool_humans: bool = typer.Option(False, "--pool-humans", help="average the ratings collected with `judgelab annotate` "
                                     "into the imported humans' mean on the item cards (default: shown apart)"),
) -> None:
    """Write an output folder's report: one self-contained HTML file (no network needed).

    It shows what ran, results, agreement, discernment, failures, a browser of the largest judge-human
    disagreements, and cost and time — as the folder's results.json records them (nothing is recomputed)."""
    from judgelab.report.humans import check_human_files
    from judgelab.report.html import write_report

    check_human_files(human or ())  # a --human file that is not there is refused before the folder is read
    path = write_report(folder, out, human or (), pool_humans)
    from judgelab.report.html_parts import sidecar_name

    size = path.stat().st_size
    shown = f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.0f} kB"
    parts = path.parent / sidecar_name(path)
    if parts.is_dir():  # a large report: the rest of its item cards beside it, loaded on demand
        n = sum(1 for _ in parts.glob("part-*.js"))
        shown += f"; the rest of its item cards in {parts}/ ({n} parts: keep them beside the page)"
    typer.echo(f"report: {path} ({shown})")


from judgelab.cli.view import view as _view  # noqa: E402, F401  - registers `judgelab view` beside `report`
