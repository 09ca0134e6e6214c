"""Other tools' judge outputs read as ratings (``docs/formats.md``, "Other tools' judge outputs as ratings").

:func:`judgelab.ratings.read_ratings` asks :func:`other_ratings` first: a file is recognised by its fields, not its
name, and read by the reader module of :mod:`judgelab.preference.formats` that knows the tool (one reader per
format, whether its file holds verdicts or ratings):

* ``inspect``: a zip archive named ``.eval``, or a JSON object with ``version`` and an ``eval`` object (inspect_ai
  eval logs), read by :func:`judgelab.preference.formats.inspect_log.inspect_ratings` with inspect_ai's own reader;
* ``fastchat-single``: rows with ``question_id, model, judge, score`` (FastChat's ``model_judgment/*_single.jsonl``),
  read by :func:`judgelab.preference.formats.fastchat.single_rows`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KNOWN", "other_ratings"]

#: What :func:`judgelab.ratings.read_ratings` reads, for its errors.
KNOWN = ("judgelab ratings files (CSV, JSONL, JSON or Parquet with item_id, criterion, rater, score), inspect_ai "
         "eval logs (.eval or .json) and FastChat single-answer judgments (question_id, model, judge, score)")


def other_ratings(data: Any, path: Path) -> "pd.DataFrame | None":
    """The ratings of another tool's file (``data``: the file as :func:`judgelab.preference.formats.load_file`
    parses it), or ``None`` when it is none of them (a ratings file of judgelab's own columns, or no ratings)."""
    from judgelab.preference.formats import fastchat, inspect_log

    if inspect_log.is_log(data, path):
        return inspect_log.inspect_ratings(path)
    if fastchat.is_single(data):
        return fastchat.single_rows(data, path)
    return None
