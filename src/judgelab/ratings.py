"""Reading ratings: judgelab's own ratings files and human ratings in long or wide layout, from
files or pandas DataFrames (a file is read into a DataFrame, then the same functions make the table).

Every source becomes the same tidy table (``docs/ARCHITECTURE.md``): one row per
rating with ``item_id, system, group, criterion, rater, sample, score, status``. Human
raters are named ``human:<id>``, so that every statistic works for human–human,
judge–human and judge–judge comparisons alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from judgelab.datasets.readers import is_frame, parse_score, read_records, records_frame
from judgelab.errors import JudgelabError
from judgelab.missing import is_missing as _missing
from judgelab.raters import HUMAN_PREFIX, MEAN_HUMAN, is_human, is_individual_human, person_label
from judgelab.status import Status
from judgelab.table import TIDY_COLUMNS, normalise

__all__ = ["TIDY_COLUMNS", "read_ratings", "import_long", "import_wide", "is_human", "combine", "item_means",
           "rename_criteria", "parse_map", "find_item_column", "numeric_columns", "human_raters", "import_human",
           "HUMAN_LAYOUTS", "file_columns"]



def human_raters(df: pd.DataFrame) -> list[str]:
    """The individual human raters of a table (``human:mean``, a file of mean ratings, is not one)."""
    return sorted(r for r in df["rater"].unique() if is_individual_human(r))


@dataclass(frozen=True)
class _Table:
    """A ratings source read as a table: the values as written, what to call it and where row ``i`` is."""

    df: pd.DataFrame
    name: str
    where: Callable[[int], str]
    #: Parquet files and DataFrames: NaN and ``pandas.NA`` are missing values (in CSV/JSON, NaN is an error).
    nan_missing: bool = False


def _table(source: "str | Path | pd.DataFrame", what: str = "ratings") -> _Table:
    """A file (CSV, JSONL, JSON, Parquet) or a DataFrame (``what`` names it in errors) as a table."""
    if is_frame(source):
        return _Table(source.copy(), f"{what} DataFrame", lambda i: f"row {i + 1}", nan_missing=True)
    if not isinstance(source, (str, Path)):
        raise JudgelabError(f"{what}: expected a file path or a pandas DataFrame, not {type(source).__name__}")
    path = Path(source)
    if path.suffix.lower() == ".parquet":
        if not path.exists():
            raise JudgelabError(f"file not found: {path}")
        try:
            return _Table(pd.read_parquet(path), str(path), lambda i: f"row {i + 1}", nan_missing=True)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise JudgelabError(f"{path}: not a readable Parquet file ({type(exc).__name__})") from None
    records = read_records(path)
    return _Table(records_frame(records), str(path), records.where)


def _frame(source: "str | Path | pd.DataFrame") -> tuple[pd.DataFrame, Callable[[int], str]]:
    """The file as a table (values as written) and where its row ``i`` is, for error messages (the
    readers of other ratings-like files: escalation tables, ``--lengths``)."""
    table = _table(source)
    return table.df, table.where


def _scores(table: _Table, column: str) -> pd.Series:
    """The score column as floats (NaN = no score); a value that is not a finite number is an error."""
    series = table.df[column]
    where = lambda i: f"{table.name}: {table.where(i)}, column {column!r}"  # noqa: E731
    if table.nan_missing and pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = series.astype(float)  # a DataFrame's numbers: checked at once
        infinite = np.flatnonzero(np.isinf(values.to_numpy()))
        if len(infinite):
            raise JudgelabError(f"{where(int(infinite[0]))}: score {float(series.iloc[infinite[0]])!r} is not a finite number")
        return values
    values = [None if table.nan_missing and _missing(v) else parse_score(v, where(i), missing_nan=table.nan_missing)
              for i, v in enumerate(series.tolist())]
    return pd.Series([float("nan") if v is None else v for v in values], index=table.df.index, dtype=float)


def _labels(table: _Table, column: str, what: str) -> pd.Series:
    """A label column (item id, rater, criterion) as text; a missing label is an error naming the row."""
    values = table.df[column].tolist()
    for i, v in enumerate(values):
        if _missing(v) or (isinstance(v, str) and not v.strip()):
            raise JudgelabError(f"{table.name}: {table.where(i)}: no {what} (column {column!r} is empty)")
    return pd.Series([str(v) for v in values], index=table.df.index, dtype=object)


def _human_names(labels: pd.Series, prefix: str) -> pd.Series:
    """Rater labels with the human prefix: ``ann1`` → ``human:ann1``; ``human:ann1`` stays as it is."""
    return labels.map(lambda r: person_label(r, prefix))


def _require(df: pd.DataFrame, columns: list[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise JudgelabError(f"{where}: missing column {', '.join(map(repr, missing))} (columns: {', '.join(map(str, df.columns))})")


def _finish(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """The tidy table (:func:`judgelab.table.normalise`: the one normaliser), a repeated rating an error."""
    return normalise(df, TIDY_COLUMNS, where)


def read_ratings(source: "str | Path | pd.DataFrame") -> pd.DataFrame:
    """A tidy ratings table from a file (judgelab's ``ratings.csv/.jsonl/.parquet`` or any file with
    ``item_id, criterion, rater, score`` and optional ``system, group, sample, status``) or a DataFrame
    of the same columns (``Store.ratings()``, ``RateResult.ratings``, rows put together by hand). Other
    tools' judge outputs are recognised by their fields and read as ratings (:mod:`judgelab.rating_formats`:
    inspect_ai eval logs, FastChat's single-answer judgments).

    A row without ``status`` (no such column, or an empty cell) is an ``ok`` rating when it has a
    score and ``missing`` when it has none; no ``system`` is ``default``.

    Raises:
        JudgelabError: a missing column (naming the formats read), a score that is not a finite number, a rating
            given twice, another tool's file that cannot be read (inspect_ai logs without inspect_ai: the extra named).
    """
    if isinstance(source, (str, Path)) and (columns := _tidy_columns(Path(source))) is not None:
        table = columns
    elif is_frame(source) or not isinstance(source, (str, Path)) or Path(source).suffix.lower() == ".parquet":
        table = _table(source)
    else:
        other, table = _other_or_table(Path(source))
        if other is not None:
            return other
    missing = [c for c in ("item_id", "criterion", "rater", "score") if c not in table.df.columns]
    if missing:
        from judgelab.rating_formats import KNOWN

        raise JudgelabError(f"{table.name}: missing column {', '.join(map(repr, missing))} (columns: "
                            f"{', '.join(map(str, table.df.columns))}); judgelab reads as ratings {KNOWN}")
    df = table.df.copy()
    df["score"] = _scores(table, "score")
    return _finish(df, table.name)


def _tidy_columns(path: Path) -> "_Table | None":
    """A CSV or Parquet ratings file read for the tidy columns only (``raw`` and the others never held); ``None``
    for another file (another tool's fields, a missing column, an unreadable file: read whole, as before)."""
    from judgelab.datasets.readers import read_csv_columns
    from judgelab.preference.formats.fastchat import SINGLE_FIELDS

    required = {"item_id", "criterion", "rater", "score"}
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq

            header = list(pq.read_schema(path).names)
            df = pd.read_parquet(path, columns=[c for c in TIDY_COLUMNS if c in header])
        except Exception:  # a missing or damaged file: the whole read gives its one line
            return None
        return _Table(df, str(path), lambda i: f"row {i + 1}", nan_missing=True) if required <= set(header) else None
    if path.suffix.lower() != ".csv":
        return None
    columns, lines, header = read_csv_columns(path, TIDY_COLUMNS)
    if not required <= set(header) or set(SINGLE_FIELDS) <= set(header):
        return None
    df = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in columns.items()}, columns=list(columns))
    return _Table(df, str(path), lambda i: f"line {lines[i]}" if 0 <= i < len(lines) else f"entry {i + 1}")


def _other_or_table(path: Path) -> "tuple[pd.DataFrame | None, _Table]":
    """Another tool's ratings (:mod:`judgelab.rating_formats`, recognised by their fields), or the file as a table."""
    from judgelab.datasets.readers import Records
    from judgelab.preference.formats import load_file
    from judgelab.rating_formats import KNOWN, other_ratings

    data = load_file(path)
    other = other_ratings(data, path)
    if other is not None:
        return other, _Table(other, str(path), lambda i: f"row {i + 1}")
    if not isinstance(data, Records):
        if not path.exists():
            raise JudgelabError(f"file not found: {path}")
        if path.is_dir():
            raise JudgelabError(f"{path} is a folder, not a file")
        raise JudgelabError(f"{path}: not a ratings file this version reads; it reads {KNOWN}")
    return None, _Table(records_frame(data), str(path), data.where)


def import_long(source: "str | Path | pd.DataFrame", item: str = "item_id", rater: str = "rater",
                criterion: str = "criterion", score: str = "score", system: str | None = "system",
                group: str | None = "group", sample: str | None = None, prefix: str = HUMAN_PREFIX) -> pd.DataFrame:
    """Human ratings with one row per rating (a file or a DataFrame); raters become ``human:<id>``."""
    return _long(_table(source, "human ratings"), item, rater, criterion, score, system, group, sample, prefix)


def _long(table: _Table, item: str, rater: str, criterion: str, score: str, system: str | None, group: str | None,
          sample: str | None = None, prefix: str = HUMAN_PREFIX) -> pd.DataFrame:
    df = table.df
    _require(df, [item, rater, criterion, score], table.name)
    out = pd.DataFrame({
        "item_id": _labels(table, item, "item id"), "rater": _human_names(_labels(table, rater, "rater"), prefix),
        "criterion": _labels(table, criterion, "criterion"), "score": _scores(table, score),
    })
    if system and system in df.columns:
        out["system"] = df[system]
    if group and group in df.columns:
        out["group"] = df[group]
    if sample and sample in df.columns:
        out["sample"] = df[sample]
    return _finish(out, table.name)


ID_COLUMNS = ("item_id", "id", "doc_id")
MEAN_RATER = MEAN_HUMAN


def find_item_column(columns, given: str | None, where: str) -> str:
    """The id column: ``given`` (required to exist), else the first of ``item_id``, ``id``, ``doc_id``."""
    if given:
        if given not in columns:
            raise JudgelabError(f"{where}: missing column {given!r} (columns: {', '.join(map(str, columns))})")
        return given
    for name in ID_COLUMNS:
        if name in columns:
            return name
    raise JudgelabError(f"{where}: missing column 'item_id' (or 'id', 'doc_id'); name the id column with --id-field "
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


def import_wide(source: "str | Path | pd.DataFrame", criteria: list[str] | None = None, item: str | None = None,
                rater: str | None = None, system: str | None = "system", group: str | None = "group",
                prefix: str = HUMAN_PREFIX, rename: dict[str, str] | None = None) -> pd.DataFrame:
    """Human ratings with one row per item (and rater) and one column per criterion.

    Args:
        source: a CSV, JSONL or Parquet file, or a DataFrame.
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
    return _wide(_table(source, "human ratings"), criteria, item, rater, system, group, prefix, rename)


def _wide(table: _Table, criteria: list[str] | None, item: str | None, rater: str | None, system: str | None,
          group: str | None, prefix: str = HUMAN_PREFIX, rename: dict[str, str] | None = None) -> pd.DataFrame:
    df, path = table.df, table.name
    columns = list(df.columns)
    item = find_item_column(columns, item, path)
    if rater is None:
        rater = "rater" if "rater" in columns else None
    _require(df, [item, *([rater] if rater else [])], path)
    if criteria is None:
        criteria = numeric_columns(df, exclude={item, rater, system, group, "sample"})
        if not criteria:
            raise JudgelabError(f"{path}: no criterion column (a column of numbers: the wide layout) and not the "
                                f"columns rater, criterion, score (the long layout); columns: {', '.join(map(str, columns))}")
    _require(df, list(criteria), path)
    df = df.copy()
    for column in criteria:
        df[column] = _scores(table, column)
    df[item] = _labels(table, item, "item id")
    if rater is None:
        rater = "__rater__"
        df[rater] = MEAN_RATER
    else:
        df[rater] = _labels(table, rater, "rater")
    keep = [c for c in (system, group) if c and c in df.columns and c != item]
    long = df.melt(id_vars=[item, rater, *keep], value_vars=list(criteria), var_name="criterion", value_name="score")
    if rename:
        long["criterion"] = long["criterion"].map(lambda c: rename.get(c, c))
    long = long.rename(columns={item: "item_id", **({system: "system"} if system in keep else {}),
                                **({group: "group"} if group in keep else {})})
    long["rater"] = _human_names(long[rater].astype(str), prefix)
    return _finish(long.drop(columns=[rater]) if rater != "rater" else long, path)


HUMAN_LAYOUTS = ("auto", "long", "wide")


def file_columns(path: "str | Path | pd.DataFrame") -> list[str]:
    """The column names of a ratings file (CSV, JSONL or Parquet) or DataFrame, as :func:`import_human` reads it."""
    return [str(c) for c in _table(path).df.columns]


def import_human(source: "str | Path | pd.DataFrame", layout: str = "auto", item: str | None = None,
                 rater: str | None = None, criterion: str = "criterion", score: str = "score",
                 system: str | None = "system", group: str | None = "group",
                 criteria: list[str] | None = None) -> pd.DataFrame:
    """Human ratings in any layout ``judgelab agree --human`` accepts, from a file or a DataFrame, as the tidy table.

    ``layout``: ``long`` (:func:`import_long`, one row per rating), ``wide`` (:func:`import_wide`, one
    column per criterion; without a rater column the file holds means, rater ``human:mean``) or
    ``auto`` (long when the file has the rater, criterion and score columns and no ``criteria`` are
    named, else wide). The one reader of ``agree --human``, ``report --human`` and the file named in
    an ``agree`` folder's ``run.json``. A file and a DataFrame of the same rows give the same table:
    the file is read into a DataFrame and the same function makes the table. Raters are named
    ``human:<id>`` (a rater already named so keeps its name); every row is an ``ok`` rating when it
    has a score and ``missing`` when it has none (a ``status`` column is not read); no ``system``
    column means system ``default``, as items without one.

    Raises:
        JudgelabError: an unknown layout, a missing column or label, a score that is not a number
            (one line naming the file, or "human ratings DataFrame", and the row).

    Example:
        >>> import pandas as pd
        >>> human = pd.DataFrame({"item_id": ["a", "a"], "rater": ["ann", "human:bo"],
        ...                       "criterion": "fluency", "score": [4, 5]})
        >>> import_human(human)[["rater", "score", "status"]].values.tolist()
        [['human:ann', 4.0, 'ok'], ['human:bo', 5.0, 'ok']]
    """
    if layout not in HUMAN_LAYOUTS:
        raise JudgelabError(f"unknown --human-layout {layout!r}: auto, long or wide")
    table = _table(source, "human ratings")
    if layout == "auto":
        long_cols = {rater or "rater", criterion, score}
        layout = "long" if long_cols <= set(map(str, table.df.columns)) and not criteria else "wide"
    if layout == "long":
        return _long(table, item or "item_id", rater or "rater", criterion, score, system, group)
    return _wide(table, criteria or None, item, rater, system, group)


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
