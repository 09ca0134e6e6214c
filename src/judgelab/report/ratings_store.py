"""A large ratings file for the report: read a chunk at a time, never whole.

A folder whose judgments come from ratings files rather than its own store (an ``agree`` or ``audit`` folder, a
folder holding only a ratings file) is reported from a store, as a run's folder is, so that a file of a million
rows is never one table in memory:

* the ratings file is its folder's own and the store beside it made it (:func:`same_judgments`: the same
  raters and criteria with the same number of judgments, statuses and score sums): the report reads that store
  for the file's raters (prompts and answers shown);
* otherwise the rows are copied, :data:`CHUNK_ROWS` at a time, into a store in a temporary folder
  (:func:`ratings_store`): the report reads that (no prompts; the file holds none). For a comparison's page (whose
  cards are the units humans rated) only the rows the page reads are copied — every human rater's, the judge rows
  of the units humans rated, the first of each judge rater and criterion and its first failures of each status —
  and the others are counted (:class:`_Shown`).

Either way only when the files hold more than :data:`judgelab.report.html_parts.EMBEDDED_UNITS` rows; below that,
and for another tool's files (inspect_ai logs, FastChat judgments) or a rating given twice, the file is read
whole (:func:`judgelab.report.folder.ratings_from_file`), as before.
"""
from __future__ import annotations

import json
import math
import sqlite3
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import numpy as np
import pandas as pd

from judgelab.raters import human_mask
from judgelab.report import html_parts
from judgelab.report.store_reads import FAILURE_EXAMPLES
from judgelab.status import Status
from judgelab.store.schema import JUDGMENT_COLUMNS as STORE_COLUMNS
from judgelab.store.schema import SCHEMA, STORE_FORMAT, STORE_VERSION
from judgelab.table import JUDGMENT_COLUMNS, TIDY_COLUMNS, normalise

if TYPE_CHECKING:
    from judgelab.report.html_items_stream import RatedUnits

__all__ = ["CHUNK_ROWS", "ratings_store", "same_judgments", "file_counts"]

#: Rows of a ratings file read and written at a time.
CHUNK_ROWS = 50_000
#: A temporary store's settings: no journal or sync (it is thrown away if anything fails), and a page cache of
#: 128 MiB, so that inserting into the key's index (in key order, not the file's) stays in memory.
SPOOL_PRAGMAS = ("journal_mode=OFF", "synchronous=OFF", "cache_size=-131072", "temp_store=MEMORY")
_REQUIRED = {"item_id", "criterion", "rater"}
_KEY = "rater, criterion, system, item_id, sample"
#: The store's tables, the judgments' key made an index after the rows are in (built sorted: half the time of
#: inserting into it row by row); the report's reads use it as they use the key.
_SPOOL_SCHEMA = SCHEMA.replace(f",\n    PRIMARY KEY ({_KEY})\n);", "\n);", 1)
assert _SPOOL_SCHEMA != SCHEMA, "the judgments table's key is not where ratings_store expects it"
_ROW = [c.strip() for c in STORE_COLUMNS.split(",")]


def _chunks(path: Path, columns: Sequence[str] | None = None) -> Iterator[pd.DataFrame] | None:
    """The file's rows a chunk at a time as text (numbers converted later), or None for a file that is not a table
    of judgelab's tidy layout (CSV, JSONL or Parquet with ``item_id``, ``criterion`` and ``rater``)."""
    from judgelab.preference.formats.fastchat import SINGLE_FIELDS

    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            header = pd.read_csv(path, dtype=str, keep_default_na=False, nrows=0).columns
            use = None if columns is None else [c for c in columns if c in header]
            reader: Any = pd.read_csv(path, dtype=str, keep_default_na=False, chunksize=CHUNK_ROWS, usecols=use)
        elif suffix == ".jsonl":
            with path.open(encoding="utf-8") as fh:
                first = json.loads(next(fh, "{}") or "{}")
            header = pd.Index(list(first) if isinstance(first, dict) else [])
            reader = pd.read_json(path, lines=True, dtype=False, chunksize=CHUNK_ROWS)
        elif suffix == ".parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(path)
            header = pd.Index(pf.schema_arrow.names)
            use = None if columns is None else [c for c in columns if c in header]
            reader = (batch.to_pandas() for batch in pf.iter_batches(batch_size=CHUNK_ROWS, columns=use))
        else:
            return None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    except Exception:  # noqa: BLE001 - a damaged file of another library's format: read whole, which names it
        return None
    if not _REQUIRED <= set(header) or set(SINGLE_FIELDS) <= set(header):
        return None
    return iter(reader)


def file_counts(path: Path) -> dict[tuple[str, str, str], tuple[int, float]] | None:
    """``(rater, criterion, status) → (judgments, sum of scores)`` of a ratings file, read for those columns only;
    None for a file that is not of the tidy layout."""
    chunks = _chunks(path, ["item_id", "rater", "criterion", "status", "score"])
    if chunks is None:
        return None
    counts: dict[tuple[str, str, str], tuple[int, float]] = {}
    for chunk in chunks:
        df = normalise(chunk, TIDY_COLUMNS)
        for (rater, criterion, status), scores in df.groupby(["rater", "criterion", "status"], sort=False)["score"]:
            key = (str(rater), str(criterion), str(status))
            n, total = counts.get(key, (0, 0.0))
            counts[key] = (n + len(scores), total + float(scores.sum()))
    return counts


def same_judgments(path: Path, db: sqlite3.Connection) -> list[str] | None:
    """The raters of ``path`` when the store's judgments of those raters are the file's — the same raters and
    criteria, each with the same number of judgments of each status and the same sum of scores (to 10⁻⁹ of it) —
    else None. A ratings file a run wrote from its store passes; one edited since, relabelled or of other raters
    does not."""
    mine = file_counts(path)
    if not mine:
        return None
    raters = sorted({r for r, _, _ in mine})
    marks = ",".join("?" * len(raters))
    failed = "CASE WHEN status = 'ok' AND score IS NULL THEN 'missing' ELSE status END"
    stored = {(str(r), str(c), str(s)): (int(n), float(total or 0.0)) for r, c, s, n, total in db.execute(
        f"SELECT rater, criterion, {failed} AS st, count(*), sum(score) FROM judgments WHERE rater IN ({marks}) "
        "GROUP BY rater, criterion, st", raters)}
    if stored.keys() != mine.keys():
        return None
    for key, (n, total) in mine.items():
        if stored[key][0] != n or not math.isclose(stored[key][1], total, rel_tol=1e-9, abs_tol=1e-6):
            return None
    return raters


def ratings_store(paths: Sequence[Path], target: Path, mapping: dict[str, str] | None = None,
                  rated: "RatedUnits | None" = None) -> Path | None:
    """Copy the rows of ``paths`` into a new store at ``target`` (criteria renamed by ``mapping``), a chunk at a
    time; None (and nothing kept) when they hold no more than ``EMBEDDED_UNITS`` rows, when one is not of the tidy
    layout, or when a rater rates the same judgment twice: the caller reads the files whole.

    ``rated`` (a comparison's page: its cards are the units humans rated): copy only the rows that page reads
    (:class:`_Shown`) and record how many judge rows were left out (``left_out`` in ``judgelab_meta``, read by
    :attr:`judgelab.report.store_reads.StoreRows.left_out`). The files are read again, copying more, when their
    own human rows rate units ``rated`` lacks, and copying every row when no judge row is of a rated unit (the
    page then shows every unit)."""
    while True:
        shown = _Shown(rated) if rated else None
        made = _copy(paths, target, mapping, shown)
        if made is None or shown is None:
            return made
        if shown.found and shown.left_out:
            rated = shown.rated.with_units(shown.found)
        elif not shown.matched:
            rated = None
        else:
            return made
        target.unlink()


class _Shown:
    """Which rows of a comparison's ratings files its page reads, chosen a chunk at a time in the files' order:
    every human rater's row; the judge rows of the units ``rated`` holds; the first judge row of each rater and
    criterion ("What ran") and the first :data:`FAILURE_EXAMPLES` failures of each judge rater and status
    ("Failures"), as :meth:`judgelab.report.store_reads.StoreRows.shown_rows` picks them. The other judge rows are
    counted (``left_out``) and their keys kept as 64-bit hashes, so that a rating given twice is still found."""

    def __init__(self, rated: "RatedUnits") -> None:
        self.rated = rated
        self.firsts: set[tuple[str, str]] = set()
        self.failures: dict[tuple[str, str], int] = {}
        self.found: set[tuple[str, str, str]] = set()  # units the files' own human rows rate that ``rated`` lacks
        self.matched = 0  # judge rows of rated units
        self.left_out = 0
        self.hashes: list[np.ndarray] = []

    def keep(self, df: pd.DataFrame) -> np.ndarray:
        """The rows of a normalised chunk to copy."""
        human = human_mask(df["rater"]).to_numpy()
        judge = ~human
        unit = self.rated.mask(df)
        self.matched += int((unit & judge).sum())
        keep = human | unit
        firsts = df.loc[judge, ["rater", "criterion"]].drop_duplicates()
        for at, pair in zip(firsts.index, zip(firsts["rater"], firsts["criterion"])):
            if pair not in self.firsts:
                self.firsts.add(pair)
                keep[at] = True
        failed = judge & (df["status"] != Status.OK).to_numpy()
        if failed.any():
            for pair, rows in df.loc[failed, ["rater", "status"]].groupby(["rater", "status"], sort=False).groups.items():
                seen = self.failures.get(pair, 0)
                keep[rows[:max(0, FAILURE_EXAMPLES - seen)]] = True
                self.failures[pair] = seen + len(rows)
        rates = human & (df["status"] == Status.OK).to_numpy()  # as the cards' human ratings: ok, with a score
        if rates.any():
            rated_by = df.loc[rates, ["criterion", "system", "item_id"]].drop_duplicates()
            self.found |= {u for u in zip(rated_by["criterion"], rated_by["system"], rated_by["item_id"])
                           if u not in self.rated}
        self.left_out += int((judge & ~keep).sum())
        self.hashes.append(pd.util.hash_pandas_object(df[["rater", "criterion", "system", "item_id", "sample"]],
                                                      index=False).to_numpy())
        return keep

    def given_twice(self) -> bool:
        """Whether two rows may share a key (equal hashes; a false alarm, at a chance below 10⁻⁷ for a million
        rows, only sends the page to the whole read, which checks exactly)."""
        keys = np.concatenate(self.hashes) if self.hashes else np.empty(0, dtype=np.uint64)
        return len(np.unique(keys)) < len(keys)


def _copy(paths: Sequence[Path], target: Path, mapping: dict[str, str] | None, shown: _Shown | None) -> Path | None:
    """One read of ``paths`` into a new store at ``target`` (every row, or those ``shown`` keeps): see
    :func:`ratings_store`."""
    chunked = [_chunks(p) for p in paths]
    if any(c is None for c in chunked):
        return None
    db = sqlite3.connect(target, isolation_level=None)
    try:
        for pragma in SPOOL_PRAGMAS:
            db.execute(f"PRAGMA {pragma}")
        db.executescript(_SPOOL_SCHEMA)
        db.execute("INSERT INTO judgelab_meta VALUES ('format', ?), ('version', ?)", (STORE_FORMAT, str(STORE_VERSION)))
        db.execute("BEGIN")
        seq = 0
        for chunks in chunked:
            for chunk in chunks:  # type: ignore[union-attr]
                df = normalise(chunk, JUDGMENT_COLUMNS)
                if mapping:
                    df["criterion"] = df["criterion"].map(lambda c: mapping.get(c, c))
                seqs = range(seq + 1, seq + len(df) + 1)  # the row's place in the files
                seq += len(df)
                if shown is not None:
                    keep = shown.keep(df)
                    df, seqs = df[keep].reset_index(drop=True), np.asarray(seqs)[keep].tolist()
                db.executemany(f"INSERT INTO judgments ({', '.join(_ROW)}) VALUES ({', '.join('?' * len(_ROW))})",
                               _rows(df, seqs))
        if shown is not None:
            db.execute("INSERT INTO judgelab_meta VALUES ('left_out', ?)", (str(shown.left_out),))
        db.execute("COMMIT")
        if shown is not None and shown.given_twice():
            raise sqlite3.IntegrityError("a rating given twice")
        db.execute(f"CREATE UNIQUE INDEX judgments_key ON judgments ({_KEY})")  # a rating given twice fails here
    except sqlite3.IntegrityError:  # a rating given twice: the whole read reports it as the file has it
        db.close()
        target.unlink(missing_ok=True)
        return None
    except BaseException:
        db.close()
        target.unlink(missing_ok=True)
        raise
    db.close()
    if seq <= html_parts.EMBEDDED_UNITS:
        target.unlink(missing_ok=True)
        return None
    return target


def _numbers(column: pd.Series) -> list[Any]:
    """A column of numbers as floats, none as None (SQL NULL)."""
    return column.astype(object).where(column.notna(), None).tolist()


def _rows(df: pd.DataFrame, seqs: Sequence[int]) -> list[tuple[Any, ...]]:
    """The store's rows of one normalised chunk (their places in the files ``seqs``), in the ``judgments`` table's
    column order (no calls: ``attempts`` ``[]``, ``meta`` ``{}``)."""
    raw = [x if x is None or type(x) is str else (None if x != x else str(x)) for x in df["raw"].tolist()]
    numbers = [_numbers(df[c]) for c in ("score", "score_parsed", "score_logprob", "logprob_outside")]
    costs = [_numbers(df[c]) for c in ("prompt_tokens", "completion_tokens", "latency_s")]
    return list(zip(df["item_id"].tolist(), df["system"].tolist(), df["group"].tolist(), df["criterion"].tolist(),
                    df["rater"].tolist(), df["sample"].astype(int).tolist(), *numbers, df["status"].tolist(), raw,
                    repeat("[]"), *costs, repeat("{}"), seqs, repeat(None)))
