"""The command line's one printer of tables: ``--format table | csv | json``.

Only ``cli/`` prints; library code returns tables and results. Each command prints ONE table to
stdout in CSV (several CSV tables in one stream cannot be read back), and its JSON is one
document of the documented shape ``{"schema": 1, "command": COMMAND, "rows": [...]}`` (NaN as
null) built by :func:`judgelab.report.output.json_document`.
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

__all__ = ["emit", "write_folder", "FORMATS"]

FORMATS = ("table", "csv", "json")


def emit(df: "pd.DataFrame", fmt: str, command: str, title: str | None = None, **extra: Any) -> None:
    """Print ``df`` as a terminal table, CSV or a JSON document.

    Args:
        df: the table.
        fmt: ``table``, ``csv`` or ``json``.
        command: the command's name, carried in the JSON document.
        title: the terminal table's title (and ``title`` in the JSON document).
        extra: further JSON fields (e.g. ``roc_auc``).

    Raises:
        JudgelabError: an unknown format.
    """
    if fmt == "table":
        from judgelab.report.terminal import print_table

        print_table(df, title=title)
    elif fmt == "csv":
        df.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        from judgelab.output import json_document

        parts: dict[str, Any] = {"title": title} if title else {}
        sys.stdout.write(json.dumps(json_document(command, rows=df, **parts, **extra), ensure_ascii=False) + "\n")
    else:
        raise JudgelabError(f"unknown --format {fmt!r}: {', '.join(FORMATS)}")


def write_folder(out: "Path", command: str, title: str, tables: "list[tuple[pd.DataFrame, str, str]]",
                 notes: list[str] | None = None) -> None:
    """``--out FOLDER`` of a table command (:func:`judgelab.output.write_tables`), the report's path on stderr."""
    from judgelab.cli.common import NotesDisplay
    from judgelab.output import write_tables

    write_tables(out, command, title, tables, notes, display=NotesDisplay())
