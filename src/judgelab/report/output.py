"""Emit a table as a terminal table, CSV or JSON (the commands' ``--format``)."""
from __future__ import annotations

import json
import math
import sys

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.report.terminal import print_table

__all__ = ["emit", "FORMATS"]

FORMATS = ("table", "csv", "json")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def emit(df: pd.DataFrame, fmt: str, title: str | None = None) -> None:
    if fmt == "table":
        print_table(df, title=title)
    elif fmt == "csv":
        df.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        records = [{k: _clean(v) for k, v in row.items()} for row in df.to_dict(orient="records")]
        sys.stdout.write(json.dumps(records if title is None else {"title": title, "rows": records}, ensure_ascii=False) + "\n")
    else:
        raise JudgelabError(f"unknown --format {fmt!r}: {', '.join(FORMATS)}")
