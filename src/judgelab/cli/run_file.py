"""``judgelab run SPEC.yaml``: a run file (the flags of ``judgelab rate`` written down)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import DryRunOpt, PriceInOpt, PriceOutOpt, app, RATING


@app.command("run", rich_help_panel=RATING)
def run(
    spec_file: Path = typer.Argument(..., help="a YAML run file: the keys of `judgelab rate`'s flags (see docs/runs-and-stores.md)"),
    out: Optional[Path] = typer.Option(None, "--out", help="output folder (overrides the file's out)"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Run a run file: the same judgments, rater labels and outputs as the equivalent `judgelab rate` flags.

    Unknown keys are refused with the list of known keys; relative paths resolve against the
    file's folder. Exit status as for `judgelab rate`.
    """
    from judgelab.cli.rating import execute_spec
    from judgelab.runfile import load_run_file

    spec = load_run_file(spec_file)
    if out is not None:
        spec = spec.model_copy(update={"out": out})
    execute_spec(spec, progress=not quiet, dry_run=dry_run, price_in=price_in, price_out=price_out)
