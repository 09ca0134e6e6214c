"""The human ratings a report compares the judge with, gathered from every place a folder names them.

Human ratings (rater names ``human:<id>``) are gathered from, in this order:

1. human rows of ``store.sqlite`` (as the annotation app writes them);
2. human rows of the folder's ratings file;
3. ``human_ratings.csv|.jsonl|.parquet`` in the folder (tidy long layout: ``item_id,
   criterion, rater, score`` and optional ``system, group, sample, status``);
4. the human file of each ``agree`` step recorded in the folder's ``results.json`` (read with the
   layout and column options it recorded);
5. files passed explicitly (``write_report(folder, human=[…])``, ``judgelab report --human``);
   unlike the sources found in the folder, such a file that is missing, unreadable, not in the
   tidy layout or without rows is an error (one line), not a note in the report.

The same rating (rater, criterion, system, item, sample) found twice is counted once. Reading
the folder itself (its files, manifest and store) is :mod:`judgelab.report.folder`.

Ratings collected with ``judgelab annotate`` (the store's human rows) are kept apart from imported ones
(every file) when both are present: :attr:`HumanRatings.collected` names their raters, and the cards'
human mean is the imported humans' unless ``pool=True`` (``judgelab report --pool-humans``) asks to
average them in — which the page then says.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.report.folder import (
    HUMAN_FILES,
    RunFolder,
    read_table,
)
from judgelab.raters import person_label, human_mask
from judgelab.status import Status

__all__ = ["HumanRatings", "load_humans", "check_human_files", "read_human_file"]


@dataclass
class HumanRatings:
    """Tidy human ratings (``item_id, system, group, criterion, rater, sample, score, status``),
    ``has_system`` False where a source gave no system (matched on item and criterion alone)."""

    table: pd.DataFrame
    sources: list[str]
    problems: list[str] = field(default_factory=list)
    #: raters whose ratings were collected with ``annotate`` (the store's human rows) beside imported ones
    collected: frozenset[str] = frozenset()
    #: True: ``collected`` are averaged into the human mean (asked for); False: shown apart
    pooled: bool = False

    @property
    def apart(self) -> bool:
        """Whether annotate's ratings are shown apart from the imported humans (both present, pooling not asked)."""
        return bool(self.collected) and not self.pooled


def _tidy_humans(df: pd.DataFrame, where: str) -> pd.DataFrame:
    missing = [c for c in ("item_id", "criterion", "rater", "score") if c not in df.columns]
    if missing:
        raise JudgelabError(f"{where}: missing column {', '.join(missing)} (a tidy long layout needs item_id, "
                            "criterion, rater, score)")
    out = pd.DataFrame({
        "item_id": df["item_id"].astype(str), "criterion": df["criterion"].astype(str),
        "rater": df["rater"].astype(str).map(person_label),
        "score": pd.to_numeric(df["score"], errors="coerce"),
        "system": df["system"].map(_text_or_none) if "system" in df.columns else None,
        "group": df["group"] if "group" in df.columns else None,
        "sample": pd.to_numeric(df["sample"], errors="coerce").fillna(0).astype(int) if "sample" in df.columns else 0,
        "status": df["status"].astype(str) if "status" in df.columns else Status.OK.value,
        "source": where,
    })
    out.loc[out["score"].isna() & (out["status"] == Status.OK), "status"] = Status.MISSING.value
    return out


def _text_or_none(value: object) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    return str(value)


def read_human_file(path: Path, options: dict[str, Any] | None = None, where: str | None = None) -> pd.DataFrame:
    """A human-ratings file in any layout ``agree --human`` reads (:func:`judgelab.ratings.import_human`,
    with ``agree``'s options: ``layout, item, rater, criterion, score, system, group, criteria``), as the
    report's human table; without a system column the ratings are matched on item and criterion alone."""
    from judgelab.ratings import file_columns, import_human

    o = {k: v for k, v in (options or {}).items() if v not in (None, "", [])}
    system = o.get("system", "system")
    df = import_human(path, o.get("layout", "auto"), o.get("item"), o.get("rater"), o.get("criterion", "criterion"),
                      o.get("score", "score"), system, o.get("group", "group"), o.get("criteria"))
    if system not in file_columns(path):
        df["system"] = None  # no system column: matched on item and criterion alone
    return _tidy_humans(df, where or str(path))


def _agree_human_files(folder: RunFolder) -> list[tuple[pd.DataFrame, str]]:
    """The human file of each ``agree`` step of the folder's record, read with the options it recorded
    (criteria renamed with the step's ``map``)."""
    out = []
    for step in folder.record.steps:
        if step.kind != "agree":
            continue
        for given in step.inputs_of("human"):
            path = given.located(folder.path)
            if path is None:
                raise JudgelabError(f"the human ratings file {given.path} named in results.json was not found")
            df = read_human_file(path, given.options)
            mapping = step.settings.get("map") or {}
            if mapping:
                df["criterion"] = df["criterion"].map(lambda c: mapping.get(c, c))
            out.append((df, str(path)))
    return out


def check_human_files(paths: Iterable[str | Path]) -> None:
    """Human-ratings files the user named (``--human``) exist and are files — checked before any work.

    Raises:
        JudgelabError: one line naming the first missing file or folder.
    """
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise JudgelabError(f"human ratings file not found: {path}")
        if path.is_dir():
            raise JudgelabError(f"human ratings {path} is a folder, not a file")


def _given_humans(path: Path, folder: RunFolder) -> pd.DataFrame:
    """A human-ratings file the user named (``--human``, any layout ``agree`` reads with its defaults):
    it must exist and hold ratings, or one error line."""
    check_human_files([path])
    try:
        df = read_human_file(path, where=path.name if path.parent == folder.path else str(path))
    except UnicodeDecodeError:
        raise JudgelabError(f"human ratings {path} is not UTF-8 text") from None
    except JudgelabError as exc:
        if "not UTF-8 text" in str(exc):
            raise JudgelabError(f"human ratings {path} is not UTF-8 text") from None
        raise JudgelabError(f"human ratings {path} could not be read: {' '.join(str(exc).split())}") from None
    except (OSError, ValueError) as exc:
        raise JudgelabError(f"human ratings {path} could not be read: {' '.join(str(exc).split())}") from None
    if df.empty:
        raise JudgelabError(f"human ratings {path} has no rows")
    return df


def load_humans(folder: RunFolder, judgments: pd.DataFrame | None, extra: Iterable[str | Path] = (),
                pool: bool = False) -> HumanRatings:
    """Human ratings from every supported source (see the module docstring); ``pool``: average the ratings
    collected with ``annotate`` into the imported humans' mean instead of showing them apart.

    A source found in the folder that cannot be read is a line in ``problems``; a file named
    in ``extra`` (``--human``) that is missing, unreadable, without the tidy columns or
    without rows raises :class:`JudgelabError` (one line) — the user asked for it."""
    frames: list[pd.DataFrame] = []
    sources: list[str] = []
    problems: list[str] = []
    if judgments is not None and len(judgments):
        mine = judgments[human_mask(judgments["rater"])]
        if len(mine):
            frames.append(_tidy_humans(mine, "store.sqlite" if "store.sqlite" in folder.files else "ratings file"))
            sources.append(frames[-1]["source"].iloc[0])
    for path in [folder.file(n) for n in HUMAN_FILES if folder.has(n)]:
        try:
            frames.append(_tidy_humans(read_table(path), path.name))
            sources.append(frames[-1]["source"].iloc[0] if len(frames[-1]) else str(path))
        except (OSError, ValueError, JudgelabError) as exc:
            problems.append(f"human ratings {path} could not be read: {exc}")
    judged = set() if judgments is None else set(judgments.loc[~human_mask(judgments["rater"]), "criterion"].astype(str))
    for given in extra:
        frames.append(_given_humans(Path(given), folder))
        sources.append(frames[-1]["source"].iloc[0])
        mine = set(frames[-1]["criterion"])
        if judged and not mine & judged:
            raise JudgelabError(f"human ratings {given} share no criterion with the judgments (the file has "
                                f"{', '.join(sorted(mine))}; the judge rated {', '.join(sorted(judged))}); "
                                "rename with agree --map, or give a file in the tidy layout")
    try:
        for found in _agree_human_files(folder):
            frames.append(found[0])
            sources.append(f"{found[1]} (the human file of the recorded agree step)")
    except (OSError, ValueError, JudgelabError) as exc:
        problems.append(f"human ratings named in results.json could not be read: {exc}")
    if not frames:
        empty = pd.DataFrame(columns=["item_id", "criterion", "rater", "score", "system", "group", "sample", "status", "source"])
        return HumanRatings(empty, [], problems)
    table = pd.concat(frames, ignore_index=True)
    table["system_key"] = table["system"].where(table["system"].notna(), None)
    table = table.drop_duplicates(["rater", "criterion", "system_key", "item_id", "sample"], keep="first")
    from_store = table["source"] == "store.sqlite"
    collected = frozenset(table.loc[from_store, "rater"]) - frozenset(table.loc[~from_store, "rater"])
    if from_store.all():  # annotate's ratings are the only humans: nothing to keep them apart from
        collected = frozenset()
    return HumanRatings(table.drop(columns=["system_key"]).reset_index(drop=True), sources, problems, collected, pool)
