"""The verdicts table: one row per pairwise verdict, like a rating (``docs/preference.md``).

A verdict says which of two responses to one instruction (``item_id``) a rater preferred on a
``criterion``: the two systems in the order they were shown (``first``, ``second``) and the ``choice``
(``first``, ``second`` or ``tie``); optionally ``p_first``, the probability that the first is better
(from a judge's log-probabilities, or a soft preference such as AlpacaEval's weighted annotators).
Human preference labels are verdict rows of human raters (``human:<id>``, :mod:`judgelab.raters`).
Every reader of verdicts — a verdicts file, another tool's judge outputs
(:mod:`judgelab.preference.formats`), a run of pairs — ends in :func:`normalise_verdicts`, so a table
means the same whatever it was read from. The rater's identity rides along as columns
(:data:`judgelab.table.IDENTITY_COLUMNS`), derived from ``rater`` as for ratings.
"""
from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.status import Status
from judgelab.table import with_identity

if TYPE_CHECKING:  # pandas is imported when a table is made
    import pandas as pd

__all__ = ["Choice", "VERDICT_COLUMNS", "REQUIRED_COLUMNS", "VERDICT_DEFAULTS", "TEXT_FIELDS", "normalise_verdicts", "pair_sides", "winner",
           "preference_of_first"]


class Choice(str, Enum):
    """What a verdict chose: the response shown first, the one shown second, or neither (a tie)."""

    FIRST = "first"
    SECOND = "second"
    TIE = "tie"


#: A verdict file's required columns (docs/formats.md).
REQUIRED_COLUMNS = ["rater", "item_id", "first", "second", "choice"]
#: Every column of the verdicts table, in this order.
VERDICT_COLUMNS = ["item_id", "criterion", "rater", "sample", "first", "second", "choice", "p_first", "status",
                   "raw", "instruction", "first_text", "second_text"]
#: The texts a verdict may carry (the instruction and the two responses as shown; None where the source has
#: none): length and style analyses read them.
TEXT_FIELDS = ["instruction", "first_text", "second_text"]
#: The value of a column a source does not have (or a row leaves empty).
VERDICT_DEFAULTS: dict[str, Any] = {"criterion": "preference", "sample": 0, "status": Status.OK.value, "raw": None,
                                    "p_first": math.nan, "choice": None, "instruction": None, "first_text": None,
                                    "second_text": None}
_CHOICES = {c.value for c in Choice}


def normalise_verdicts(df: "pd.DataFrame", where: str | None = None) -> "pd.DataFrame":
    """The table with :data:`VERDICT_COLUMNS` (then the identity columns), each of its type.

    ``item_id, criterion, rater, first, second, status`` are text (and the :data:`TEXT_FIELDS` where given); ``sample`` an int; ``p_first`` a float in
    [0, 1] or NaN; ``choice`` one of :class:`Choice` or None. An ``ok`` row needs a choice (else it is
    ``missing``); a row whose ``p_first`` is given and whose choice is not takes the choice of ``p_first``
    (above 0.5 first, below second, 0.5 a tie). With ``where`` (a source's name), a missing required column,
    an unknown choice, a ``p_first`` outside [0, 1], a pair of a system with itself, or a rater judging the same
    (item, criterion, first, second, sample) twice is an error naming the source and the row.

    Example:
        >>> import pandas as pd
        >>> t = normalise_verdicts(pd.DataFrame({"rater": ["human:a"], "item_id": [1], "first": ["x"],
        ...                                      "second": ["y"], "choice": ["Second"]}))
        >>> t.loc[0, ["criterion", "choice", "status", "rater_kind"]].tolist()
        ['preference', 'second', 'ok', 'human']
    """
    import pandas as pd

    name = where or "verdicts"
    lacking = [c for c in REQUIRED_COLUMNS if c not in df.columns and not (c == "choice" and "p_first" in df.columns)]
    if lacking:
        raise JudgelabError(f"{name}: no column {', '.join(map(repr, lacking))}; a verdicts file has the columns "
                            f"{', '.join(REQUIRED_COLUMNS)} (optionally criterion, sample, p_first, status, raw, instruction, first_text, second_text)")
    df = df.copy()
    for col in VERDICT_COLUMNS:
        if col not in df.columns:
            df[col] = VERDICT_DEFAULTS.get(col)
        elif VERDICT_DEFAULTS.get(col) is not None and not (isinstance(VERDICT_DEFAULTS[col], float)):
            # an empty cell (a CSV's "") is a value not given, as a missing one
            df[col] = df[col].where(~df[col].map(_blank).astype(bool), VERDICT_DEFAULTS[col])
    df["p_first"] = pd.to_numeric(df["p_first"], errors="coerce").astype(float)
    df["sample"] = pd.to_numeric(df["sample"], errors="coerce").fillna(0).astype(int)
    for col in ("item_id", "criterion", "rater", "first", "second", "status"):
        df[col] = df[col].astype(str)
    for col in TEXT_FIELDS:
        df[col] = pd.Series([None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
                             for v in df[col].tolist()], index=df.index, dtype=object)
    choice = [None if _blank(c) else str(c).strip().lower() for c in df["choice"].tolist()]
    bad = [i for i, c in enumerate(choice) if c is not None and c not in _CHOICES]
    if bad:
        raise JudgelabError(f"{name}: row {bad[0] + 1} has choice {df['choice'].iloc[bad[0]]!r}; "
                            f"a choice is first, second or tie")
    p = df["p_first"].tolist()
    out_of_range = [i for i, v in enumerate(p) if not math.isnan(v) and not 0.0 <= v <= 1.0]
    if out_of_range:
        raise JudgelabError(f"{name}: row {out_of_range[0] + 1} has p_first {p[out_of_range[0]]!r}; "
                            f"p_first is the probability that the first response is better, in [0, 1]")
    choice = [c if c is not None or math.isnan(v) else _choice_of(v) for c, v in zip(choice, p)]
    df["choice"] = pd.Series(choice, index=df.index, dtype=object)
    same = df.index[(df["first"] == df["second"]).to_numpy()]
    if len(same):
        i = df.index.get_loc(same[0])
        raise JudgelabError(f"{name}: row {i + 1} compares {df['first'].iloc[i]!r} with itself")
    df.loc[df["choice"].isna() & (df["status"] == Status.OK), "status"] = Status.MISSING.value
    if where is not None:
        dup = df.duplicated(["rater", "criterion", "item_id", "first", "second", "sample"])
        if dup.any():
            row = df[dup].iloc[0]
            raise JudgelabError(
                f"{where}: rater {row['rater']!r} judges {row['first']!r} before {row['second']!r} on item "
                f"{row['item_id']!r} ({row['criterion']}) more than once; give a sample column to tell repeats apart")
    return with_identity(df[VERDICT_COLUMNS].reset_index(drop=True))


def pair_sides(verdicts: "pd.DataFrame") -> tuple[Any, Any, Any]:
    """The one order-free name of each verdict's pair: ``(system_a, system_b, a_first)``, the two systems sorted
    (``system_a < system_b``) and whether ``system_a`` was shown first — so a rater's two verdicts on a pair in
    swapped orders share ``(item_id, system_a, system_b)`` whatever their places in a file (arrays, in row order).

    Example:
        >>> import pandas as pd
        >>> a, b, a_first = pair_sides(pd.DataFrame({"first": ["y", "x"], "second": ["x", "y"]}))
        >>> a.tolist(), b.tolist(), a_first.tolist()
        (['x', 'x'], ['y', 'y'], [False, True])
    """
    first, second = verdicts["first"].astype(str), verdicts["second"].astype(str)
    a_first = (first < second).to_numpy()
    return first.where(a_first, second).to_numpy(), second.where(a_first, first).to_numpy(), a_first


def winner(first: str, second: str, choice: str | None) -> str | None:
    """The system a verdict preferred, ``"tie"``, or None for no verdict.

    Example:
        >>> winner("a", "b", "second"), winner("a", "b", "tie"), winner("a", "b", None)
        ('b', 'tie', None)
    """
    if choice is None:
        return None
    return {Choice.FIRST.value: first, Choice.SECOND.value: second, Choice.TIE.value: "tie"}[choice]


def preference_of_first(choice: str | None, p_first: float = math.nan) -> float:
    """How much the verdict prefers the first response, in [0, 1]: ``p_first`` when given (a soft preference),
    else 1, 0 or 0.5 for first, second or a tie; NaN for no verdict.

    Example:
        >>> preference_of_first("tie"), preference_of_first("second"), preference_of_first("first", 0.8)
        (0.5, 0.0, 0.8)
    """
    if not math.isnan(p_first):
        return p_first
    if choice is None:
        return math.nan
    return {Choice.FIRST.value: 1.0, Choice.SECOND.value: 0.0, Choice.TIE.value: 0.5}[choice]


def _choice_of(p: float) -> str:
    return Choice.FIRST.value if p > 0.5 else Choice.SECOND.value if p < 0.5 else Choice.TIE.value


def _blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return not str(value).strip() or str(value) in ("<NA>", "nan")
