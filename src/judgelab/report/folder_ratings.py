"""Which judgments a folder's page reads, and how: its store, the ratings file it holds, or the ratings files
its ``agree`` or ``audit`` step read (with the calls of the store beside a run's ratings file).

A folder without a store of its own whose ratings files hold more rows than the page embeds is read by SQL, a
chunk at a time (:func:`large_ratings`, :mod:`judgelab.report.ratings_store`); a smaller one is read whole
(:func:`agree_judgments`, :func:`judgelab.report.folder.ratings_from_file`).
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.report import html_parts
from judgelab.report.folder import (
    RunFolder,
    StoreReader,
    agree_inputs,
    ratings_from_file,
    step_inputs,
)
from judgelab.report.ratings_store import ratings_store, same_judgments
from judgelab.report.store_reads import StoreRows

if TYPE_CHECKING:
    from judgelab.report.html_items_stream import RatedUnits

__all__ = ["agree_judgments", "agree_map", "large_ratings", "no_judgments", "read_ratings"]

def large_ratings(rf: RunFolder, rated: "Callable[[], RatedUnits | None]" = lambda: None,
                  ) -> tuple[StoreReader, StoreRows, tempfile.TemporaryDirectory[str] | None] | None:
    """A folder without a store of its own whose ratings files (its own, else those its ``agree`` or ``audit``
    step read) hold more rows than the page embeds: read by SQL as a large store is (:mod:`.ratings_store`) —
    the store beside the file when it made the file, else a store of the file's rows in a temporary folder
    (returned, to be removed after). None: read the files whole.

    ``rated``: the units the comparison's human ratings rate, as far as they are known before the judgments are
    read (its temporary store then holds only the rows its page reads)."""
    name = rf.record.file("ratings")
    own = rf.file(name) if name is not None and rf.has(name) else None
    paths = [own] if own is not None else read_ratings(rf)
    mapping = {} if own is not None else agree_map(rf)
    if not paths:
        return None
    store = paths[0].parent / "store.sqlite"
    if len(paths) == 1 and not mapping and store.is_file() and _ratings_of_its_folder(paths[0]):
        reader = StoreReader(store)
        raters = same_judgments(paths[0], reader.rows().db)
        rows = reader.rows(raters) if raters else None
        if rows is not None and rows.count() > html_parts.EMBEDDED_UNITS:
            return reader, rows, None
        reader.close()
        if rows is not None:
            return None  # the store made the file and it is small: read whole (with its calls), as before
    spool = tempfile.TemporaryDirectory(prefix="judgelab-report-")
    try:
        made = ratings_store(paths, Path(spool.name) / "ratings.sqlite", mapping, None if own is not None else rated())
        if made is None:
            spool.cleanup()
            return None
        reader = StoreReader(made)
    except BaseException:
        spool.cleanup()
        raise
    reader.source = ", ".join(dict.fromkeys(p.name for p in paths)) + " (read a chunk at a time)"
    return reader, reader.rows(), spool


def agree_map(rf: RunFolder) -> dict[str, str]:
    """The criteria the folder's ``agree`` steps renamed (``--map``)."""
    mapping: dict[str, str] = {}
    for step in rf.record.steps:
        if step.kind == "agree":
            mapping.update(step.settings.get("map") or {})
    return mapping


def read_ratings(rf: RunFolder) -> list[Path]:
    """The ratings files the folder's recorded ``agree`` steps read, else those of its ``audit`` steps."""
    return agree_inputs(rf) or step_inputs(rf, "audit")


def no_judgments(rf: RunFolder) -> str:
    """Why the folder's report has no judgments: none here, the ratings files its steps read are not found, or
    its audit read a score file of means (``--hanna-scores``), which holds no judgment one by one."""
    named = [g for step in rf.record.steps for g in step.inputs_of("ratings")]
    scores = [g.path for step in rf.record.steps for g in step.inputs_of("hanna_scores")]
    if scores and not named:
        return (f"The audit read its ratings from the score file {', '.join(scores)} (each score a mean of tries, no "
                "judgment one by one): the sections that need judgments are left out.")
    if named:
        found = any(g.located(rf.path) is not None for g in named)
        return (f"The ratings files this folder's results.json names ({', '.join(dict.fromkeys(g.path for g in named))}) "
                f"{'could not be read (see the problems above)' if found else 'were not found'}: the sections that "
                "need judgments are left out.")
    return "No judgments in this folder (no store.sqlite or ratings file): the sections that need them are left out."


def agree_judgments(rf: RunFolder) -> tuple[StoreReader | None, pd.DataFrame | None]:
    """The judgments of the ratings files a recorded ``agree`` (else ``audit``) read: from the store beside a
    run's ratings file (so prompts and raw answers are shown), else from the file; criteria renamed with
    the recorded ``--map``. The reader of the first such store is returned open (for its calls)."""
    reader: StoreReader | None = None
    frames = []
    for path in read_ratings(rf):
        store = path.parent / "store.sqlite"
        rated = ratings_from_file(path)  # what agree read, as it read it (a recipe may relabel the store's raters)
        if store.is_file() and _ratings_of_its_folder(path):
            mine = StoreReader(store)
            rated = _with_calls(rated, mine.judgments())
            if reader is None:
                reader = mine
            else:
                mine.close()
        frames.append(rated)
    if not frames:
        return None, None
    judgments = pd.concat(frames, ignore_index=True)
    mapping = agree_map(rf)
    if mapping:
        judgments["criterion"] = judgments["criterion"].map(lambda c: mapping.get(c, c))
    return reader, judgments


def _ratings_of_its_folder(path: Path) -> bool:
    """Whether ``path`` is the ratings file its folder's record lists (so the store beside it made it)."""
    from judgelab.output.legacy import folder_record

    try:
        return folder_record(path.parent)[0].file("ratings") == path.name
    except JudgelabError:
        return False


def _with_calls(rated: pd.DataFrame, stored: pd.DataFrame) -> pd.DataFrame:
    """A ratings file's rows with the ledger keys, attempts and tokens of the same judgment in the store beside
    it, matched by item, system, criterion, sample and raw answer (rows without a match keep none)."""
    on = ["item_id", "system", "criterion", "sample", "raw"]
    extra = ["attempts", "keys", "prompt_tokens", "completion_tokens", "latency_s"]
    found = stored[on + extra].copy()
    for col in ("item_id", "system", "criterion", "raw"):
        found[col] = found[col].astype(str)
    found = found.drop_duplicates(on, keep="first")
    base = rated.drop(columns=extra).assign(raw=rated["raw"].astype(str))
    merged = base.merge(found, on=on, how="left")
    merged["raw"] = rated["raw"].to_numpy()
    merged["keys"] = [k if isinstance(k, list) else [] for k in merged["keys"]]
    return merged[rated.columns]

