"""The tidy ratings table: its columns, their types and the one normaliser (``docs/formats.md``).

One row per rating. Every reader of ratings — a ratings file (:func:`judgelab.ratings.read_ratings`),
human ratings (long or wide), a store (:meth:`judgelab.store.Store.ratings`), the report's folder
reader (:mod:`judgelab.report.folder`) — ends in :func:`normalise`, so a table means the same
whatever it was read from. The rater's identity rides along as columns (:data:`IDENTITY_COLUMNS`,
from :class:`judgelab.raters.Rater`): ``rater`` stays the label, and the identity is derived from it
at the boundary, so a file or store written before these columns existed reads the same.
"""
from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Iterable

from judgelab.errors import JudgelabError
from judgelab.raters import FIELDS, parse_label
from judgelab.status import Status

if TYPE_CHECKING:  # pandas is imported when a table is made (``judgelab --help`` stays light)
    import pandas as pd

__all__ = ["TIDY_COLUMNS", "RATING_COLUMNS", "JUDGMENT_COLUMNS", "IDENTITY_COLUMNS", "TEXT_COLUMNS",
           "NUMBER_COLUMNS", "DEFAULTS", "normalise", "identity_columns", "with_identity", "is_missing",
           "natural_key"]

#: The ratings every analysis needs, in this order.
TIDY_COLUMNS = ["item_id", "system", "group", "criterion", "rater", "sample", "score", "status"]
#: A judge's ratings as stored and exported (``ratings.csv``): the tidy columns and how the score was read.
RATING_COLUMNS = ["item_id", "system", "group", "criterion", "rater", "sample", "score", "score_parsed",
                  "score_logprob", "logprob_outside", "status", "raw"]
#: Every column of a judgment (the report's reader of a store or a ratings file).
JUDGMENT_COLUMNS = RATING_COLUMNS + ["attempts", "prompt_tokens", "completion_tokens", "latency_s", "meta", "seq"]
#: The rater's identity (:class:`judgelab.raters.Rater`), derived from ``rater``: ``rater_kind`` (judge, human,
#: consensus, jury), the judge's model (``judge``), ``template``, ``variant`` (its ``+`` segments), ``constrained``
#: and the store's ``digest``.
IDENTITY_COLUMNS = list(FIELDS)

TEXT_COLUMNS = ("item_id", "system", "criterion", "rater", "status")
NUMBER_COLUMNS = ("score", "score_parsed", "score_logprob", "logprob_outside", "prompt_tokens", "completion_tokens",
                  "latency_s", "seq")
#: The value of a column a source does not have (or a row leaves empty).
DEFAULTS: dict[str, Any] = {"system": "default", "group": None, "sample": 0, "status": Status.OK.value}


def is_missing(value: object) -> bool:
    """None, NaN or ``pandas.NA`` (a cell with no value)."""
    import pandas as pd

    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def normalise(df: "pd.DataFrame", columns: list[str] = TIDY_COLUMNS, where: str | None = None) -> "pd.DataFrame":
    """The table with ``columns`` (then the identity columns), each of its type.

    A column the source lacks gets its default (:data:`DEFAULTS`; other columns ``None``), as does an
    empty cell of a defaulted column; ``item_id, system, criterion, rater, status`` are text; a blank
    ``group`` is ``None``; numbers are floats (a value that is none is NaN) and ``sample`` an int; an ``ok``
    row without a score is ``missing``. With ``where`` (a source's name), a rater rating the same
    (item, system, criterion, sample) twice is an error naming it.

    Example:
        >>> import pandas as pd
        >>> t = normalise(pd.DataFrame({"item_id": [1], "criterion": ["c"], "rater": ["m@t#1a2b3c"], "score": [None]}))
        >>> t.loc[0, ["system", "group", "status", "judge", "template", "digest"]].tolist()
        ['default', None, 'missing', 'm', 't', '1a2b3c']
    """
    import pandas as pd

    df = df.copy()
    for col in columns:
        if col not in df.columns:
            df[col] = DEFAULTS.get(col)
        elif DEFAULTS.get(col) is not None:
            df[col] = df[col].where(df[col].notna(), DEFAULTS[col])
    for col in NUMBER_COLUMNS:
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce")
    df["sample"] = pd.to_numeric(df["sample"], errors="coerce").fillna(0).astype(int)
    for col in TEXT_COLUMNS:
        if col in df.columns:
            df[col] = df[col].astype(str)
    # no group: None, NaN, pandas.NA or an empty/blank cell (a CSV's empty column reads as "", JSONL's as null)
    df["group"] = pd.Series([None if is_missing(g) or not str(g).strip() else str(g) for g in df["group"].tolist()],
                            index=df.index, dtype=object)
    if "score" in df.columns:
        df.loc[df["score"].isna() & (df["status"] == Status.OK), "status"] = Status.MISSING.value
    if where is not None:
        dup = df.duplicated(["rater", "criterion", "system", "item_id", "sample"])
        if dup.any():
            row = df[dup].iloc[0]
            raise JudgelabError(
                f"{where}: rater {row['rater']!r} rates item {row['item_id']!r} ({row['system']}, {row['criterion']}) "
                f"more than once; give a sample column to tell repeats apart"
            )
    return with_identity(df[columns].reset_index(drop=True))


def identity_columns(labels: Iterable[object]) -> "pd.DataFrame":
    """The :data:`IDENTITY_COLUMNS` of each label (parsed once per distinct label)."""
    import pandas as pd

    series = labels if isinstance(labels, pd.Series) else pd.Series(list(labels), dtype=object)
    codes, distinct = pd.factorize(series, use_na_sentinel=False)  # a code per row: no Python object per row
    known = pd.DataFrame([tuple(parse_label(str(label)).fields.values()) for label in distinct],
                         columns=IDENTITY_COLUMNS, dtype=object)
    out = known.take(codes).reset_index(drop=True)
    out["constrained"] = out["constrained"].astype(bool) if len(out) else pd.Series(dtype=bool)
    return out


def with_identity(df: "pd.DataFrame") -> "pd.DataFrame":
    """``df`` with :data:`IDENTITY_COLUMNS` derived from its ``rater`` labels (replacing any it has: the label
    is the truth), after its other columns."""
    base = df.drop(columns=[c for c in IDENTITY_COLUMNS if c in df.columns])
    ids = identity_columns(base["rater"] if "rater" in base.columns else [])
    ids.index = base.index
    return base.join(ids)


def natural_key(name: object) -> tuple[tuple[int, int | str], ...]:
    """Sort key of a label with numbers in it, the numbers as numbers: M0, M1, M2 … M10 (not M0, M1, M10, M2).

    Example:
        >>> sorted(["M10", "M2", "m1"], key=natural_key)
        ['m1', 'M2', 'M10']
    """
    return tuple((0, int(part)) if part.isdigit() else (1, part.lower())
                 for part in re.split(r"(\d+)", str(name)) if part)
