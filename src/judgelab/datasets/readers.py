"""Reading users' files faithfully: one reader for CSV, one for JSON lines, one for JSON.

Every loader of a user file (items, human ratings, HANNA files, expert votes, NLE data, DHP
sources …) goes through these functions, so that text reaches the judge byte for byte and
bad input is one :class:`~judgelab.errors.JudgelabError` naming the file and the line:

* text is UTF-8; a byte-order mark (Excel's "UTF-8 CSV") is dropped; anything else that is
  not UTF-8 is an error naming the line;
* CSV is parsed by the :mod:`csv` module over the whole text, so quoted fields keep their
  line breaks (``\\n``, ``\\r\\n``) exactly; fields of any size up to the file's are
  accepted; a row with more fields than the header, a header naming a column twice, a
  quoted field that never ends and text after a closing quote are errors; a row with fewer fields leaves the missing ones ``None``; values stay text as
  written (``"007"`` stays ``"007"``);
* JSON lines are split on ``"\\n"`` only (a raw U+2028 inside a string is text, not a line
  break), a trailing ``"\\r"`` is tolerated, blank lines are skipped; a line that is not
  one JSON object, nests too deeply, repeats a key or holds a lone surrogate (``"\\ud800"``,
  which no file can store) is an error naming the line.
"""
from __future__ import annotations

import csv
import io
import json
import math
import numbers
import re
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, TypeGuard

if TYPE_CHECKING:
    import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["Records", "JsonLines", "read_text", "read_csv", "read_csv_columns", "read_jsonl", "read_json", "read_records", "records_frame",
           "record_columns", "parse_score", "is_frame", "frame_records"]

#: The largest field :func:`read_csv` will ever need is the whole file; the C limit caps it.
_MAX_FIELD = 2**31 - 1
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: A column of a CSV read by columns whose values are held once each while it has at most this many distinct ones.
_SHARED_VALUES = 10_000
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class Records(list):
    """Rows of a file as dicts, in file order; :meth:`where` says where row ``i`` starts."""

    def __init__(self, rows: Iterable[dict[str, Any]] = (), path: str | Path = "", lines: list[int] | None = None,
                 columns: list[str] | None = None, unit: str = "entry") -> None:
        super().__init__(rows)
        self.path = str(path)
        self.lines = lines
        #: CSV and DataFrames: the column names, in order (also when there are no rows).
        self.columns = columns
        #: What one row is called where it has no line: ``entry`` (a JSON list) or ``row`` (a DataFrame).
        self.unit = unit

    def where(self, index: int) -> str:
        """``line L`` for CSV and JSON lines (the line the row starts on), ``entry N`` for a JSON list,
        ``row N`` for a DataFrame (N counts from 1)."""
        if self.lines is not None and 0 <= index < len(self.lines):
            return f"line {self.lines[index]}"
        return f"{self.unit} {index + 1}"


def _check_file(path: Path) -> None:
    if not path.exists():
        raise JudgelabError(f"file not found: {path}")
    if path.is_dir():
        raise JudgelabError(f"{path} is a folder, not a file")


def read_text(path: str | Path) -> str:
    """The file's text: UTF-8, a leading byte-order mark dropped, line breaks untouched."""
    path = Path(path)
    _check_file(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise JudgelabError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bom = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
        offset = min(len(raw), exc.start + bom)
        line = raw.count(b"\n", 0, offset) + 1
        raise JudgelabError(f"{path}: not UTF-8 text (line {line}, byte 0x{raw[offset]:02x})") from None


def _allow_fields_up_to(size: int) -> None:
    """Raise the csv module's field limit (128 KiB by default) to the size of the file read."""
    wanted = min(max(size + 1, 131072), _MAX_FIELD)
    if csv.field_size_limit() < wanted:
        csv.field_size_limit(wanted)


def read_csv(path: str | Path) -> Records:
    """Rows of a CSV file as dicts of text (header = the first line); see the module notes."""
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    names: dict[str, int] = {}
    for start, fields in _csv_rows(Path(path), names):
        rows.append({name: fields[i] if i < len(fields) else None for name, i in names.items()})
        lines.append(start)
    return Records(rows, path, lines, list(names))


def read_csv_columns(path: str | Path, wanted: Iterable[str]) -> tuple[dict[str, list[Any]], "array[int]", list[str]]:
    """The ``wanted`` columns of a CSV file that has them, as lists of text (``None`` where a row ends early), the
    line each row starts on and every column name: :func:`read_csv`'s parse and checks, without a dict per row (a
    million-row file of twelve columns read for four of them holds four lists, not a million dicts)."""
    names: dict[str, int] = {}
    columns: dict[str, list[Any]] = {}
    lines: array[int] = array("q")
    index: list[tuple[list[Any], int, dict[str, str] | None]] | None = None
    for start, fields in _csv_rows(Path(path), names, stream=True):
        if index is None:  # the header is read
            columns = {c: [] for c in wanted if c in names}
            index = [(columns[c], names[c], {}) for c in columns]
        n = len(fields)
        for k, (values, i, seen) in enumerate(index):
            value = fields[i] if i < n else None
            if seen is not None and value is not None:  # a label repeated on every row is held once
                value = seen.setdefault(value, value)
                if len(seen) > _SHARED_VALUES:
                    index[k] = (values, i, None)
            values.append(value)
        lines.append(start)
    return columns if index is not None else {c: [] for c in wanted if c in names}, lines, list(names)


def _csv_rows(path: Path, names: dict[str, int], stream: bool = False) -> Iterator[tuple[int, list[str]]]:
    """Each record of a CSV file after its header, with the line it starts on; ``names`` is filled with the header's
    column positions before the first record (a repeated empty name marks columns that must stay empty). ``stream``:
    once the text is checked, the records are parsed from the file line by line rather than from the text held
    whole (the same lines: ``newline=""`` splits at ``\\n``, ``\\r`` and ``\\r\\n`` in both)."""
    text = read_text(path)
    if not text or text.isspace():  # (strip() would copy the text)
        raise JudgelabError(f"{path}: empty file (a CSV file needs a header line)")
    _allow_fields_up_to(len(text))
    if stream:
        del text
        with path.open(encoding="utf-8-sig", newline="") as fh:
            yield from _csv_records(path, csv.reader(fh, strict=True), names)
    else:
        yield from _csv_records(path, csv.reader(io.StringIO(text, newline=""), strict=True), names)


def _csv_records(path: Path, reader: Any, names: dict[str, int]) -> Iterator[tuple[int, list[str]]]:
    header: list[str] | None = None
    unnamed_extra: list[int] = []  # further columns with an empty name: must hold no values
    while True:
        start = reader.line_num + 1  # the line this record starts on
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            ends = "" if reader.line_num == start else f" (read up to line {reader.line_num})"
            raise JudgelabError(f"{path}: malformed CSV in the record starting at line {start}{ends}: {exc}") from None
        if not fields:  # a blank line
            continue
        if header is None:
            header = fields
            for i, name in enumerate(header):
                if name in names:
                    if name != "":
                        raise JudgelabError(f"{path}: column {name!r} appears twice in the header")
                    unnamed_extra.append(i)
                else:
                    names[name] = i
            continue
        if len(fields) > len(header):
            raise JudgelabError(f"{path}: line {start} has {len(fields)} fields but the header has {len(header)} "
                                f"(an unquoted comma in a value?)")
        for i in unnamed_extra:
            if i < len(fields) and fields[i] != "":
                raise JudgelabError(f"{path}: line {start} has a value in column {i + 1}, which has no name in the header")
        yield start, fields
    if header is None:
        raise JudgelabError(f"{path}: empty file (a CSV file needs a header line)")


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"key {key!r} appears twice")
            seen.add(key)
    return out


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _parse_json(text: str, path: Path, where: str) -> Any:
    """One JSON value; every way it can fail is one error naming ``where``."""
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except RecursionError:
        raise JudgelabError(f"{path}: {where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno}" if where == "the file" else where
        raise JudgelabError(f"{path}: malformed JSON at {at}: {exc.msg}") from None
    except ValueError as exc:  # a repeated key, or an integer too long to convert
        raise JudgelabError(f"{path}: {where}: {exc}") from None
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        raise JudgelabError(f"{path}: {where}: a string holds a lone surrogate (\\ud800-\\udfff), which is not text")
    return value


def read_jsonl(path: str | Path) -> Records:
    """Rows of a JSON-lines file: one object per line, split on ``"\\n"`` only."""
    rows = JsonLines(path)
    return Records(rows, path, rows.lines)  # (the list the rows' lines are added to as they are read)


class JsonLines:
    """The rows of a JSON-lines file read a line at a time, in order (one object per line, split on ``"\\n"``
    only; UTF-8, a leading byte-order mark dropped; a blank line skipped): for a reader that takes each row once
    and lets it go, so that the file's text and its rows are never all held (:func:`read_jsonl` keeps them).
    ``lines`` grows with the rows read: the line each starts on; :meth:`where` as :meth:`Records.where`."""

    columns: list[str] | None = None
    unit = "entry"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.lines: list[int] = []

    def where(self, index: int) -> str:
        return f"line {self.lines[index]}" if 0 <= index < len(self.lines) else f"{self.unit} {index + 1}"

    def __iter__(self) -> Iterator[dict[str, Any]]:
        path = Path(self.path)
        _check_file(path)
        self.lines.clear()
        try:
            fh = path.open("rb")
        except OSError as exc:
            raise JudgelabError(f"cannot read {path}: {exc.strerror}") from None
        with fh:
            for lineno, raw in enumerate(fh, start=1):  # binary lines end at b"\n" only
                if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise JudgelabError(f"{path}: not UTF-8 text (line {lineno}, byte 0x{raw[exc.start]:02x})") from None
                line = line[:-1] if line.endswith("\n") else line
                if line.endswith("\r"):
                    line = line[:-1]
                if not line.strip():
                    continue
                row = _parse_json(line, path, f"line {lineno}")
                if not isinstance(row, dict):
                    raise JudgelabError(f"{path}: line {lineno} is not a JSON object")
                self.lines.append(lineno)
                yield row


def read_json(path: str | Path) -> Any:
    """A whole JSON file as one value."""
    path = Path(path)
    return _parse_json(read_text(path), path, "the file")


def read_records(path: str | Path) -> Records:
    """Rows of a JSONL (``.jsonl``, ``.ndjson``), JSON (a list of objects) or CSV file as dicts."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_csv(path)
    if suffix in {".jsonl", ".ndjson"}:
        return read_jsonl(path)
    if suffix == ".json":
        data = read_json(path)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise JudgelabError(f"{path}: expected a JSON list of objects")
        return Records(data, path)
    _check_file(path)
    raise JudgelabError(f"{path}: unknown file type {suffix!r}; use .jsonl, .json or .csv")


def is_frame(value: Any) -> "TypeGuard[pd.DataFrame]":
    """Whether ``value`` is a pandas DataFrame (checked without importing pandas)."""
    return any(c.__name__ == "DataFrame" and c.__module__.startswith("pandas") for c in type(value).__mro__)


def frame_records(df: Any, name: str) -> Records:
    """The rows of a pandas DataFrame as :func:`read_records` gives a file's: dicts of Python values in
    row order, a missing value (``None``, NaN, ``pandas.NA``, ``NaT``) as ``None``; ``name`` stands
    for the file in error messages, and rows are ``row N`` (from 1).

    Raises:
        JudgelabError: a column name that is not text or appears twice.
    """
    from judgelab.missing import is_missing

    columns = list(df.columns)
    odd = [c for c in columns if not isinstance(c, str)]
    if odd:
        raise JudgelabError(f"{name}: column names must be text, not {odd[0]!r} (rename the columns, "
                            "e.g. df.columns = df.columns.map(str))")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise JudgelabError(f"{name}: column {twice[0]!r} appears twice")
    rows = [{k: None if is_missing(v) else v for k, v in row.items()} for row in df.to_dict(orient="records")]
    return Records(rows, name, None, columns, unit="row")


def record_columns(records: Records) -> list[str]:
    """Column names: a CSV file's header, else every key of the rows in order of first appearance."""
    if records.columns is not None:
        return list(records.columns)
    return list(dict.fromkeys(k for row in records for k in row))


def records_frame(records: Records):
    """A pandas DataFrame of the rows, every value as read (text stays text: no number guessing;
    a key a JSON row lacks is ``None``, as an empty CSV cell is ``""``)."""
    import pandas as pd

    columns = record_columns(records)
    return pd.DataFrame({c: pd.Series([row.get(c) for row in records], dtype=object) for c in columns}, columns=columns)


def parse_score(value: Any, where: str, missing_nan: bool = False, what: str = "score") -> float | None:
    """A score as written: ``None`` for an empty cell or JSON null, else a finite number.

    Text must be a plain decimal number (``4``, ``-0.5``, ``3e0``); ``inf``, ``nan``, words,
    lists and booleans are an error naming ``where`` (``what`` names the value in it).
    ``missing_nan``: a float NaN means "no score" (Parquet's missing value) instead of an error.
    """
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return None
        if text.lower().lstrip("+-") in {"inf", "infinity", "nan"}:
            raise JudgelabError(f"{where}: {what} {value!r} is not a finite number")
        if not _NUMBER.fullmatch(text):
            raise JudgelabError(f"{where}: {what} {value!r} is not a number")
        number = float(text)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if missing_nan and math.isnan(number):
            return None
    else:
        raise JudgelabError(f"{where}: {what} {value!r} is not a number")
    if not math.isfinite(number):
        raise JudgelabError(f"{where}: {what} {value!r} is not a finite number")
    return number
