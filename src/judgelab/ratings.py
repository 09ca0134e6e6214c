"""Reading ratings: judgelab's own ratings files and human ratings in long or wide layout.

Every source becomes the same tidy table (``docs/ARCHITECTURE.md``): one row per
rating with ``item_id, system, group, criterion, rater, sample, score, status``. Human
raters are named ``human:<id>``, so that every statistic works for human–human,
judge–human and judge–judge comparisons alike.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from judgelab.datasets.readers import parse_score, read_records, records_frame
from judgelab.errors import JudgelabError
from judgelab.stats.agreement import is_missing as _missing
from judgelab.status import Status

__all__ = ["TIDY_COLUMNS", "read_ratings", "import_long", "import_wide", "is_human", "combine", "item_means",
           "rename_criteria", "parse_map", "find_item_column", "numeric_columns", "human_raters", "import_human",
           "HUMAN_LAYOUTS", "file_columns"]

TIDY_COLUMNS = ["item_id", "system", "group", "criterion", "rater", "sample", "score", "status"]
HUMAN_PREFIX = "human:"


def is_human(rater: str) -> bool:
    """Whether a rater label names a human (``human:<id>``)."""
    return str(rater).startswith(HUMAN_PREFIX)


def human_raters(df: pd.DataFrame) -> list[str]:
    """The individual human raters of a table (``human:mean``, a file of mean ratings, is not one)."""
    return sorted(r for r in df["rater"].unique() if is_human(r) and r != HUMAN_PREFIX + MEAN_RATER)


def _frame(path: str | Path) -> tuple[pd.DataFrame, Callable[[int], str]]:
    """The file as a table (values as written) and where its row ``i`` is, for error messages."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        if not path.exists():
            raise JudgelabError(f"file not found: {path}")
        try:
            return pd.read_parquet(path), lambda i: f"row {i + 1}"
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise JudgelabError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    records = read_records(path)
    return records_frame(records), records.where


def _scores(df: pd.DataFrame, column: str, path: str | Path, where: Callable[[int], str]) -> pd.Series:
    """The score column as floats (NaN = no score); a value that is not a finite number is an error."""
    parquet = Path(path).suffix.lower() == ".parquet"
    values = [None if parquet and v is pd.NA else parse_score(v, f"{path}: {where(i)}, column {column!r}", missing_nan=parquet)
              for i, v in enumerate(df[column].tolist())]
    return pd.Series([float("nan") if v is None else v for v in values], index=df.index, dtype=float)


def _require(df: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise JudgelabError(f"{where}: missing column {', '.join(map(repr, missing))} (columns: {', '.join(map(str, df.columns))})")


def _finish(df: pd.DataFrame, where: str) -> pd.DataFrame:
    for col, default in (("system", "default"), ("group", None), ("sample", 0), ("status", Status.OK.value)):
        if col not in df.columns:
            df[col] = default
        elif default is not None:
            df[col] = df[col].where(df[col].notna(), default)  # rows from a source without the column
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    bad = df["score"].isna() & (df["status"] == Status.OK)
    df.loc[bad, "status"] = Status.MISSING.value
    df["sample"] = pd.to_numeric(df["sample"], errors="coerce").fillna(0).astype(int)
    for col in ("item_id", "system", "criterion", "rater"):
        df[col] = df[col].astype(str)
    # no group: None, NaN, pandas.NA or an empty/blank cell (a CSV's empty column reads as "", JSONL's as null)
    df["group"] = pd.Series([None if _missing(g) or not str(g).strip() else str(g) for g in df["group"].tolist()],
                            index=df.index, dtype=object)
    dup = df.duplicated(["rater", "criterion", "system", "item_id", "sample"])
    if dup.any():
        row = df[dup].iloc[0]
        raise JudgelabError(
            f"{where}: rater {row['rater']!r} rates item {row['item_id']!r} ({row['system']}, {row['criterion']}) "
            f"more than once; give a sample column to tell repeats apart"
        )
    return df[TIDY_COLUMNS].reset_index(drop=True)


def read_ratings(path: str | Path) -> pd.DataFrame:
    """A tidy ratings file (judgelab's ``ratings.csv/.jsonl/.parquet`` or any file with
    ``item_id, criterion, rater, score`` and optional ``system, group, sample, status``)."""
    df, where = _frame(path)
    _require(df, ["item_id", "criterion", "rater", "score"], str(path))
    df = df.copy()
    df["score"] = _scores(df, "score", path, where)
    return _finish(df, str(path))


def import_long(path: str | Path, item: str = "item_id", rater: str = "rater", criterion: str = "criterion",
                score: str = "score", system: str | None = "system", group: str | None = "group",
                sample: str | None = None, prefix: str = HUMAN_PREFIX) -> pd.DataFrame:
    """Human ratings with one row per rating."""
    df, where = _frame(path)
    _require(df, [item, rater, criterion, score], str(path))
    out = pd.DataFrame({
        "item_id": df[item], "rater": prefix + df[rater].astype(str), "criterion": df[criterion],
        "score": _scores(df, score, path, where),
    })
    if system and system in df.columns:
        out["system"] = df[system]
    if group and group in df.columns:
        out["group"] = df[group]
    if sample and sample in df.columns:
        out["sample"] = df[sample]
    return _finish(out, str(path))


ID_COLUMNS = ("item_id", "id", "doc_id")
MEAN_RATER = "mean"


def find_item_column(columns, given: str | None, where: str) -> str:
    """The id column: ``given`` (required to exist), else the first of ``item_id``, ``id``, ``doc_id``."""
    if given:
        if given not in columns:
            raise JudgelabError(f"{where}: missing column {given!r} (columns: {', '.join(map(str, columns))})")
        return given
    for name in ID_COLUMNS:
        if name in columns:
            return name
    raise JudgelabError(f"{where}: missing column 'item_id' (or 'id', 'doc_id'); name the id column with --item-col "
                        f"(columns: {', '.join(map(str, columns))})")


def numeric_columns(df: pd.DataFrame, exclude=()) -> list[str]:
    """Columns whose every non-empty value is a finite number (text columns are not criteria)."""
    out = []
    for column in df.columns:
        if column in exclude:
            continue
        values = [v for v in df[column].tolist() if not _missing(v) and not (isinstance(v, str) and not v.strip())]
        if not values:
            continue
        try:
            for v in values:
                parse_score(v, "", missing_nan=True)
        except JudgelabError:
            continue
        out.append(column)
    return out


def import_wide(path: str | Path, criteria: list[str] | None = None, item: str | None = None, rater: str | None = None,
                system: str | None = "system", group: str | None = "group", prefix: str = HUMAN_PREFIX,
                rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Human ratings with one row per item (and rater) and one column per criterion.

    Args:
        path: CSV, JSONL or Parquet file.
        criteria: the criterion columns; ``None`` takes every column whose values are all numbers,
            other than the id, rater, system and group columns (text columns are never criteria).
        item: the id column; ``None`` takes the first of ``item_id``, ``id``, ``doc_id``.
        rater: the rater column (required when named). ``None``: the ``rater`` column when the file
            has one, else the file holds mean ratings (e.g. SummEval's means of three experts) and
            becomes the one rater ``human:mean``; tables that need individual humans skip it.
        system, group: optional columns (used when present).
        rename: criterion names to change (``{"grammar": "grammaticality"}``), applied to the
            criterion columns before they become criteria.

    Returns:
        The tidy ratings table (``TIDY_COLUMNS``).

    Example:
        >>> import_wide("summeval_expert_means.jsonl")  # doctest: +SKIP
        ... # doc_id, system, text columns and four criteria -> rater human:mean, 4 criteria
    """
    df, where = _frame(path)
    columns = list(df.columns)
    item = find_item_column(columns, item, str(path))
    if rater is None:
        rater = "rater" if "rater" in columns else None
    _require(df, [item, *([rater] if rater else [])], str(path))
    if criteria is None:
        criteria = numeric_columns(df, exclude={item, rater, system, group, "sample"})
        if not criteria:
            raise JudgelabError(f"{path}: no criterion column (a column of numbers); columns: {', '.join(map(str, columns))}")
    _require(df, list(criteria), str(path))
    df = df.copy()
    for column in criteria:
        df[column] = _scores(df, column, path, where)
    if rater is None:
        rater = "__rater__"
        df[rater] = MEAN_RATER
    keep = [c for c in (system, group) if c and c in df.columns and c != item]
    long = df.melt(id_vars=[item, rater, *keep], value_vars=list(criteria), var_name="criterion", value_name="score")
    if rename:
        long["criterion"] = long["criterion"].map(lambda c: rename.get(c, c))
    long = long.rename(columns={item: "item_id", **({system: "system"} if system in keep else {}),
                                **({group: "group"} if group in keep else {})})
    long["rater"] = prefix + long[rater].astype(str)
    return _finish(long.drop(columns=[rater]) if rater != "rater" else long, str(path))


HUMAN_LAYOUTS = ("auto", "long", "wide")


def file_columns(path: str | Path) -> list[str]:
    """The column names of a ratings file (CSV, JSONL or Parquet), as :func:`import_human` reads it."""
    return [str(c) for c in _frame(path)[0].columns]


def import_human(path: str | Path, layout: str = "auto", item: str | None = None, rater: str | None = None,
                 criterion: str = "criterion", score: str = "score", system: str | None = "system",
                 group: str | None = "group", criteria: list[str] | None = None) -> pd.DataFrame:
    """Human ratings in any layout ``judgelab agree --human`` accepts, as the tidy table.

    ``layout``: ``long`` (:func:`import_long`, one row per rating), ``wide`` (:func:`import_wide`, one
    column per criterion; without a rater column the file holds means, rater ``human:mean``) or
    ``auto`` (long when the file has the rater, criterion and score columns and no ``criteria`` are
    named, else wide). The one reader of ``agree --human``, ``report --human`` and the file named in
    an ``agree`` folder's ``run.json``.

    Raises:
        JudgelabError: an unknown layout, a missing column, a score that is not a number.

    Example:
        >>> import_human("summeval_expert_means.jsonl")  # doctest: +SKIP
        ... # wide, no rater column: rater human:mean, the four criteria
    """
    if layout not in HUMAN_LAYOUTS:
        raise JudgelabError(f"unknown --human-layout {layout!r}: auto, long or wide")
    if layout == "auto":
        long_cols = {rater or "rater", criterion, score}
        layout = "long" if long_cols <= set(file_columns(path)) and not criteria else "wide"
    if layout == "long":
        return import_long(path, item or "item_id", rater or "rater", criterion, score, system, group)
    return import_wide(path, criteria or None, item, rater, system, group)


def rename_criteria(df: pd.DataFrame, mapping: dict[str, str], where: str = "ratings") -> pd.DataFrame:
    """``--map OLD=NEW``: rename criteria. An OLD that no input has is an error naming those present.

    Example:
        >>> t = pd.DataFrame({"criterion": ["grammar", "clarity"]})
        >>> list(rename_criteria(t, {"grammar": "grammaticality"})["criterion"])
        ['grammaticality', 'clarity']
    """
    if not mapping:
        return df
    present = sorted(set(df["criterion"].astype(str)))
    unknown = [old for old in mapping if old not in present]
    if unknown:
        raise JudgelabError(f"--map: no criterion {', '.join(map(repr, unknown))} in the {where}; "
                            f"criteria present: {', '.join(present)}")
    return df.assign(criterion=df["criterion"].map(lambda c: mapping.get(c, c)))


def parse_map(values: list[str] | None, option: str = "--map", form: str = "OLD=NEW",
              example: str = "grammar=grammaticality") -> dict[str, str]:
    """``["grammar=grammaticality", ...]`` (the values of a repeatable ``KEY=VALUE`` option) as a
    dict; a value without ``=`` or with an empty side is an error naming ``option``."""
    out: dict[str, str] = {}
    for value in values or []:
        old, sep, new = value.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise JudgelabError(f"{option} {value!r}: expected {form}, e.g. {option} {example}")
        out[old.strip()] = new.strip()
    return out


def combine(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Stack ratings tables; the same (rater, criterion, system, item, sample) twice is an error."""
    if not frames:
        raise JudgelabError("no ratings given")
    df = pd.concat(frames, ignore_index=True)
    return _finish(df, "combined ratings")


def item_means(df: pd.DataFrame) -> pd.DataFrame:
    """Mean successful score per (rater, criterion, system, item): samples averaged, failures left out."""
    ok = df[df["status"] == Status.OK]
    return (ok.groupby(["rater", "criterion", "system", "item_id"], dropna=False)
              .agg(score=("score", "mean"), group=("group", "first")).reset_index())
