"""``judgelab templates``: list the shipped templates, show one's YAML, make one from raters' instructions."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import app, RATING

templates_app = typer.Typer(help="Prompt templates: list the shipped ones (no subcommand), show one's YAML "
                            "(show NAME|FILE), make one from your raters' instructions (new).",
                            invoke_without_command=True)
app.add_typer(templates_app, name="templates", rich_help_panel=RATING)


@templates_app.callback()
def templates(ctx: typer.Context) -> None:
    """List the shipped prompt templates and their criteria."""
    if ctx.invoked_subcommand is not None:
        return
    from judgelab.prompts import available_templates, load_template

    for name in available_templates():
        t = load_template(name)
        variants = f"; variants: {', '.join(t.variants)}" if t.variants else ""
        typer.echo(f"{name}: {', '.join(t.criteria)}{variants} — {t.description}")


@templates_app.command("show")
def show(template: str = typer.Argument(..., help="a shipped template's name or a template .yaml file")) -> None:
    """Print a template's YAML exactly as written (checked first: an invalid file is one error line)."""
    from judgelab.prompts import template_source

    typer.echo(template_source(template), nl=False)


@templates_app.command("new")
def new(
    instructions: Path = typer.Option(..., "--instructions", help="UTF-8 text file: the instructions your human "
                                      "raters got (kept verbatim, byte for byte)"),
    criteria: str = typer.Option(..., "--criteria", help="comma-separated criteria, e.g. fluency,coherence"),
    scale: str = typer.Option("1-5", "--scale", help="the rating scale LOW-HIGH, e.g. 1-5"),
    name: Optional[str] = typer.Option(None, "--name", help="the template's name (default: the --out file's name)"),
    out: Path = typer.Option(..., "--out", help="the template file to write (.yaml)"),
    force: bool = typer.Option(False, "--force", help="replace --out if it exists"),
) -> None:
    """Write a template from your raters' instructions: their text verbatim, the text to rate, one question per criterion."""
    from judgelab.prompts.scaffold import write_scaffold

    made = write_scaffold(instructions, criteria, scale, out, name=name, overwrite=force)
    typer.echo(f"wrote {made.path}: template {made.name!r}, criteria {', '.join(made.criteria)}; "
               f"see the prompts with: judgelab rate --items ITEMS --template {made.path} --dry-run")
