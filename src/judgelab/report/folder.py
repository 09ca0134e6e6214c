"""Reading a judgelab output folder for the HTML report — read-only, tolerant of what is absent.

A folder's record, ``results.json`` (:mod:`judgelab.output.record`), lists what each step wrote by
the table it holds and what it read; :func:`open_folder` reads it (or the record rebuilt from an
older folder's files, :mod:`judgelab.output.legacy`) with ``run.json`` (the manifest). The store
(``store.sqlite``: calls and judgments) is read here too. Nothing here writes to the folder (not
even SQLite's ``-wal``/``-shm`` files, see :class:`StoreReader`).

Human ratings (``human:<id>`` raters, from the store, the ratings file, ``human_ratings.*``, the
human file of a recorded agree step or ``--human``) are gathered by :mod:`judgelab.report.humans`;
this module reads the folder, its record, manifest and store (judgments, the calls they used and
the texts each rater judged).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import pandas as pd

from judgelab.call_costs import attempt_keys
from judgelab.errors import JudgelabError
from judgelab.output.legacy import folder_record
from judgelab.output.record import FolderRecord

if TYPE_CHECKING:
    from judgelab.report.store_reads import StoreRows

__all__ = ["RunFolder", "open_folder", "attempt_keys", "read_table", "StoreReader", "ratings_from_file",
           "agree_inputs", "step_inputs", "RATINGS_FILES", "HUMAN_FILES", "HUMAN_PREFIX", "is_human"]

from judgelab.raters import HUMAN_PREFIX, is_human  # noqa: E402  (one definition)
from judgelab.table import IDENTITY_COLUMNS, JUDGMENT_COLUMNS, TEXT_COLUMNS, normalise  # noqa: E402
RATINGS_FILES = ("ratings.csv", "ratings.jsonl", "ratings.parquet")
HUMAN_FILES = ("human_ratings.csv", "human_ratings.jsonl", "human_ratings.parquet")
#: Files that make a folder a judgelab output folder (as does any CSV table or PNG figure).
MARKERS = ("results.json", "run.json", "store.sqlite", *RATINGS_FILES)

_TEXT = (*TEXT_COLUMNS, "group", "raw", *IDENTITY_COLUMNS)
#: Judgments read from a store at a time (:meth:`StoreReader.judgments`).
READ_CHUNK = 20_000




@dataclass
class RunFolder:
    """A folder checked to be a judgelab output folder: its path, its file names and its manifest."""

    path: Path
    files: list[str]
    manifest: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)
    #: the folder's results.json (or the record rebuilt from an older folder's files)
    record: FolderRecord = field(default_factory=FolderRecord)

    def has(self, name: str) -> bool:
        return name in self.files

    def file(self, name: str) -> Path:
        return self.path / name


def open_folder(folder: str | Path) -> RunFolder:
    """Check ``folder`` and read its manifest. One-line :class:`JudgelabError` when it is not an output folder."""
    path = Path(folder)
    if not path.exists():
        raise JudgelabError(f"folder not found: {path}")
    if not path.is_dir():
        raise JudgelabError(f"{path} is not a folder (give the output folder of a judgelab command)")
    try:
        files = sorted(p.name for p in path.iterdir() if p.is_file())
    except OSError as exc:
        raise JudgelabError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not any(m in files for m in MARKERS) and not any(f.endswith((".csv", ".png")) for f in files):
        raise JudgelabError(f"{path} is not a judgelab output folder (no run.json, store.sqlite, CSV table or PNG "
                            "figure in it)")
    manifest = None
    problems = []
    if "run.json" in files:
        try:
            manifest = json.loads((path / "run.json").read_text(encoding="utf-8"))
            if not isinstance(manifest, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as exc:
            manifest = None
            problems.append(f"run.json could not be read ({exc}); the run's settings are taken from the store")
    record, found = folder_record(path)
    return RunFolder(path, files, manifest, problems + found, record)


def read_table(path: Path) -> pd.DataFrame:
    """A CSV/JSONL/Parquet table; an empty file is an empty table. Identifier columns stay text."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pd.read_parquet(path)
    if suffix in {".jsonl", ".json"}:
        if path.stat().st_size == 0:
            return pd.DataFrame()
        return pd.read_json(path, lines=True, dtype=False)
    if path.stat().st_size == 0 or not path.read_text(encoding="utf-8", errors="replace").strip():
        return pd.DataFrame()
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in df.columns:
        if col in _TEXT or col in {"note", "judge", "judge_a", "judge_b", "perturbation", "level", "method", "reason",
                                   "raters_are", "system_a", "system_b"}:
            continue
        converted = pd.to_numeric(df[col].replace("", None), errors="coerce")
        # keep a column as text unless every non-empty value is a number (booleans stay text)
        nonempty = df[col] != ""
        if nonempty.any() and converted[nonempty].notna().all():
            df[col] = converted
    return df


class StoreReader:
    """Read-only access to ``store.sqlite``: judgments (with every column) and the calls they used.

    It is :class:`judgelab.store.Store` opened read-only: the format is checked (another
    application's database is refused with one line) and a store whose writer has finished is
    opened ``immutable``, so reading it creates no ``-wal``/``-shm`` files in the folder.
    """

    def __init__(self, path: Path) -> None:
        from judgelab.store import Store

        self.path = path
        if not path.is_file():
            raise JudgelabError(f"store not found: {path}")
        self._store = Store(path, read_only=True)  # format checked there; immutable when no writer is live
        #: what the page names as the judgments' source ("What ran")
        self.source = path.name
        self.runs: dict[str, dict[str, Any]] = self._store.runs()

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> "StoreReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def judgments(self, chunk: int | None = None) -> pd.DataFrame:
        """Every judgment (without ``meta``) in the order it was recorded; ``grp`` is named ``group`` and
        ``keys`` holds the ledger keys of its attempts (see :func:`attempt_keys`). Read ``chunk`` rows at a time
        (default :data:`READ_CHUNK`), so that the store's rows are never all held as tuples beside the table."""
        columns = [c for c in JUDGMENT_COLUMNS if c != "meta"]
        frames = [pd.DataFrame.from_records(rows, columns=columns)
                  for rows in self._store.judgment_chunks(columns, READ_CHUNK if chunk is None else chunk)]
        raw = pd.concat(frames, ignore_index=True) if len(frames) > 1 else (
            frames[0] if frames else pd.DataFrame(columns=columns))
        del frames
        df = normalise(raw, JUDGMENT_COLUMNS)  # meta: None
        if not df.empty:
            df = df.sort_values("seq", kind="stable").reset_index(drop=True)
        df["keys"] = [attempt_keys(a) for a in df["attempts"].tolist()]
        return df

    def rows(self, raters: list[str] | None = None) -> "StoreRows":
        """SQL reads of the store a unit or a few rows at a time (:mod:`judgelab.report.store_reads`), of ``raters``
        only when given."""
        from judgelab.report.store_reads import StoreRows

        return StoreRows(self._store.read_connection(), raters)  # the store's own read-only connection (no second open)

    def item_texts(self) -> dict[tuple[str, str, str], Any]:
        """``(rater, system, item_id) →`` :class:`judgelab.store.ItemText` of the texts each rater judged;
        empty for a store written before judgelab recorded them."""
        return self._store.item_texts()

    def calls(self, keys: Iterable[str]) -> dict[str, tuple[str, str]]:
        """key → (request JSON, response JSON) for the given keys (absent keys are left out)."""
        return self._store.calls_of(keys)

    def call_span(self) -> tuple[float, float, int] | None:
        """(first, last) recording time of the calls and their number; None when there are none."""
        return self._store.call_span()


def ratings_from_file(path: Path) -> pd.DataFrame:
    """The folder's ratings file as a judgments table (no attempts, tokens or calls): judgelab's own columns, or
    another tool's judge output that :func:`judgelab.ratings.read_ratings` reads too (an inspect_ai eval log, FastChat's
    single-answer judgments; :mod:`judgelab.rating_formats`, recognised by their fields)."""
    try:
        df = read_table(path) if path.suffix.lower() != ".eval" else pd.DataFrame()
    except ValueError:  # not a table (a JSON log is one object, not lines)
        df = pd.DataFrame()
    if not {"item_id", "criterion", "rater"} <= set(df.columns):
        from judgelab.preference.formats import load_file
        from judgelab.rating_formats import other_ratings

        other = other_ratings(load_file(path), path)
        if other is not None:
            df = other
    missing = [c for c in ("item_id", "criterion", "rater") if c not in df.columns]
    if missing:
        raise JudgelabError(f"{path}: missing column {', '.join(missing)}")
    df = df.assign(seq=range(1, len(df) + 1))
    df = normalise(df, JUDGMENT_COLUMNS)
    df["keys"] = [[] for _ in range(len(df))]
    return df




def agree_inputs(folder: RunFolder) -> list[Path]:
    """The ratings files the folder's ``agree`` steps read (as results.json records them), those that exist."""
    return step_inputs(folder, "agree")


def step_inputs(folder: RunFolder, kind: str, role: str = "ratings") -> list[Path]:
    """The files of ``role`` that the folder's steps of ``kind`` read (as results.json records them), those
    that exist: an ``audit`` folder's judgments are the ratings files its step read."""
    paths: list[Path] = []
    for step in folder.record.steps:
        if step.kind != kind:
            continue
        for given in step.inputs_of(role):
            path = given.located(folder.path)
            if path is not None and path not in paths:
                paths.append(path)
    return paths
