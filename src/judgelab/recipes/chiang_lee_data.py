"""Chiang & Lee (2023) data: stories with expert ratings, as the tidy ratings table.

``wp_a.json`` (see ``../shared/data/README.md``): 400 WritingPrompts stories keyed "0".."399",
200 human-written (``human_written`` = 1) and 200 by GPT-2, each with three teachers'
1-5 ratings for ``grammar``, ``cohesive``, ``enjoy`` and ``relevant``. The attributes map to
the template's criteria: grammaticality, cohesiveness, likability, relevance.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgelab.datasets.items import Item
from judgelab.datasets.readers import parse_score, read_json
from judgelab.errors import JudgelabError
from judgelab.raters import human as human_rater
from judgelab.status import Status

__all__ = ["ATTRIBUTES", "load_wp", "check_wp", "wp_items", "wp_human_ratings"]

ATTRIBUTES = {"grammar": "grammaticality", "cohesive": "cohesiveness", "enjoy": "likability", "relevant": "relevance"}


def load_wp(path: str | Path) -> dict[str, dict]:
    """Read ``wp_a.json``; every story needs its texts, a 0/1 ``human_written`` and lists of finite ratings."""
    path = Path(path)
    return check_wp(read_json(path), path)


def check_wp(data: object, path: str | Path) -> dict[str, dict]:
    """``data`` (read from ``path``) in the layout of ``wp_a.json``, or one clear error."""
    if not isinstance(data, dict):
        raise JudgelabError(f"{path}: expected an object keyed by story id")
    for key, row in data.items():
        if not isinstance(row, dict):
            raise JudgelabError(f"{path}: story {key!r} is not an object")
        missing = [f for f in ("prompt", "story", "human_written", *ATTRIBUTES) if f not in row]
        if missing:
            raise JudgelabError(f"{path}: story {key!r} has no field {missing[0]!r}")
        for f in ("prompt", "story"):
            if not isinstance(row[f], str):
                raise JudgelabError(f"{path}: story {key!r}: {f!r} must be text")
        if row["human_written"] not in (0, 1, "0", "1") or isinstance(row["human_written"], bool):
            raise JudgelabError(f"{path}: story {key!r}: 'human_written' must be 0 or 1, not {row['human_written']!r}")
        for attr in ATTRIBUTES:
            if not isinstance(row[attr], list):
                raise JudgelabError(f"{path}: story {key!r}: {attr!r} must be a list of ratings")
            for score in row[attr]:
                if parse_score(score, f"{path}: story {key!r}, {attr!r}") is None:
                    raise JudgelabError(f"{path}: story {key!r}: {attr!r} holds an empty rating")
    return data


def _writer(row: dict) -> str:
    return "human" if int(row["human_written"]) == 1 else "gpt2"


def wp_items(data: dict[str, dict], limit_per_writer: int | None = None) -> list[Item]:
    """Stories as items (system = writer, context = the writing prompt)."""
    counts: dict[str, int] = {}
    items = []
    for key, row in sorted(data.items(), key=lambda kv: int(kv[0]) if kv[0].isdigit() else kv[0]):
        writer = _writer(row)
        if limit_per_writer is not None and counts.get(writer, 0) >= limit_per_writer:
            continue
        counts[writer] = counts.get(writer, 0) + 1
        items.append(Item(str(key), row["story"], writer, str(key), row["prompt"]))
    return items


def wp_human_ratings(data: dict[str, dict]) -> pd.DataFrame:
    """The three teachers' ratings as tidy rows (raters ``human:t1..t3``)."""
    rows = []
    for key, row in data.items():
        for attr, criterion in ATTRIBUTES.items():
            for k, score in enumerate(row[attr], start=1):
                rows.append((str(key), _writer(row), str(key), criterion, human_rater(f"t{k}").label, 0, float(score), Status.OK.value))
    return pd.DataFrame(rows, columns=["item_id", "system", "group", "criterion", "rater", "sample", "score", "status"])
