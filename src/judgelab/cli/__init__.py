"""The ``judgelab`` command.

Every user error ends in one line on stderr and exit status 2 (never a traceback);
an interrupted run keeps every finished judgment in its store and resumes when the
same command is run again. Commands live in one module per group; importing them
registers them on the shared Typer app.
"""
from __future__ import annotations

import sys
from typing import Callable

import typer
from pydantic import ValidationError

# Importing the command modules registers their commands; the import order is the order of `--help`.
from judgelab.cli import rating  # noqa: F401, I001
from judgelab.cli import agreement  # noqa: F401
from judgelab.cli import dhp  # noqa: F401
from judgelab.cli import recipes  # noqa: F401
from judgelab.cli.common import app
from judgelab.errors import JudgelabError

__all__ = ["app", "main"]


def _run_cli(entry: Callable[..., object]) -> None:
    try:
        entry(standalone_mode=False)
    except JudgelabError as exc:
        typer.echo(f"judgelab: error: {exc}", err=True)
        sys.exit(2)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        typer.echo(f"judgelab: error: invalid value for {where}: {first['msg']}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("judgelab: interrupted; finished judgments are kept in the store — run the same command to resume", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors, then anything unexpected
        import os

        import click

        # click's usage errors, and those of the copy of click that newer typer versions vendor
        usage_errors = (click.ClickException, *(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"))
        if isinstance(exc, usage_errors):
            typer.echo(f"judgelab: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        if os.environ.get("JUDGELAB_DEBUG"):
            raise
        typer.echo(f"judgelab: internal error: {type(exc).__name__}: {exc} (set JUDGELAB_DEBUG=1 for the traceback; "
                   "finished judgments are kept in the store)", err=True)
        sys.exit(1)


def main() -> None:
    _run_cli(typer.main.get_command(app))


if __name__ == "__main__":  # pragma: no cover
    main()
