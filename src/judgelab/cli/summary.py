"""Short terminal summaries of long results (``agree``, ``audit``): about 40 lines, the rest in files.

A result of several tables, each row with a ``note`` (the reason of a NaN, or a caveat such as "only
6 item_id values: bootstrap intervals from fewer than 20 clusters often cover less than 95%"),
printed whole is a wall: the same caveat wrapped into every row. The summary prints

* each table compactly, without its ``note`` column, cut to a shared row budget with one line
  saying how many rows are left and where they are (the CSV file of ``--out``, or ``--verbose``);
* a table's rows without a value, in one line (``NaN in 2 rows (r, p)``) — only where there is one;
* each distinct note once, with the number of rows it applies to (:func:`note_lines`).

Every row with its own note stays in the files; ``--verbose`` prints the tables whole.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Part", "LINE_BUDGET", "MAX_NOTES", "note_lines", "nan_line", "summary_lines", "show_summary"]

#: Lines a summary aims at, the command's own lines (skipped tables, the report's path) included;
#: each table shows at least :data:`MIN_ROWS` rows.
LINE_BUDGET = 40
MIN_ROWS = 2
#: Lines a command prints besides its summary (skipped tables, the report's path).
_OWN_LINES = 3
#: Distinct notes printed; more are counted in one line.
MAX_NOTES = 6
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Part:
    """One table of a summary: its title, the whole table, the columns to print (all but ``note`` and
    ``line`` when empty) and the file that holds it whole (None: not written)."""

    title: str
    frame: "pd.DataFrame"
    columns: Sequence[str] = field(default_factory=tuple)
    file: Path | None = None
    #: what the table's heading adds to its title (e.g. what a column means)
    about: str = ""

    def shown(self) -> "pd.DataFrame":
        cols = [c for c in self.columns if c in self.frame.columns] or [
            c for c in self.frame.columns if c not in {"note", "line"}]
        return self.frame[cols]


def _labels(frame: "pd.DataFrame") -> set[str]:
    """Words that name a column at the start of a note (``ci: …``, ``vs_mean p: …``)."""
    words = {"ci", "p", "r"}
    for column in map(str, frame.columns):
        words |= {column, column.split("_ci")[0], column.rsplit("_", 1)[0]}
    return words


def _clauses(note: str, labels: set[str]) -> list[str]:
    """A note's independent clauses (``; ``-separated), each without the column label it starts with."""
    out = []
    for clause in (c.strip() for c in note.split("; ")):
        head, sep, rest = clause.partition(": ")
        if sep and rest and all(w in labels for w in re.split(r",? ", head)):
            clause = rest
        if clause:
            out.append(clause)
    return out


def _merged(texts: list[str]) -> tuple[str, bool]:
    """Clauses alike but for their numbers, as one, and whether it is each row's own data: a number
    that differs becomes ``LOW to HIGH`` (a caveat's count); when several differ (a row's own figures,
    e.g. shares) they become ``…``.

    Example:
        >>> _merged(["undefined in 29 of 999 resamples", "undefined in 6 of 999 resamples"])
        ('undefined in 6 to 29 of 999 resamples', False)
        >>> _merged(["rater 50.0%, humans 8.3%", "rater 16.7%, humans 25.0%"])
        ('rater …%, humans …%', True)
    """
    slots = [_NUMBER.findall(t) for t in texts]
    values = [[float(n) for n in row] for row in slots]
    varying = [i for i in range(len(values[0])) if len({v[i] for v in values}) > 1]
    pieces = _NUMBER.split(texts[0])
    out = pieces[0]
    for i, piece in enumerate(pieces[1:]):
        column = [v[i] for v in values]
        low, high = min(column), max(column)
        lo_text = next(s[i] for s, v in zip(slots, values) if v[i] == low)
        hi_text = next(s[i] for s, v in zip(slots, values) if v[i] == high)
        shown = lo_text if low == high else "…" if len(varying) > 1 else f"{lo_text} to {hi_text}"
        out += shown + piece
    return out, len(varying) > 1


def note_lines(parts: Sequence[Part], max_notes: int = MAX_NOTES) -> list[str]:
    """Every distinct note of the tables once, with the number of rows it applies to.

    Clauses that differ only in their numbers are one note with the range of each number.

    Example:
        >>> import pandas as pd
        >>> t = pd.DataFrame({"r": [0.9, 0.8], "note": ["ci: only 6 items; undefined in 29 of 999",
        ...                                             "ci: only 6 items; undefined in 15 of 999"]})
        >>> note_lines([Part("correlations", t)])
        ['note: only 6 items (2 rows)', 'note: undefined in 15 to 29 of 999 (2 rows)']
    """
    groups: dict[str, tuple[list[str], set[tuple[int, int]]]] = {}
    for p, part in enumerate(parts):
        if "note" not in part.frame.columns:
            continue
        labels = _labels(part.frame)
        for r, note in enumerate(part.frame["note"].fillna("").astype(str)):
            for clause in _clauses(note, labels):
                texts, rows = groups.setdefault(_NUMBER.sub("#", clause), ([], set()))
                texts.append(clause)
                rows.add((p, r))
    lines = []
    for texts, rows in groups.values():
        text, own = _merged(texts)
        count = f"{len(rows)} row{'s' if len(rows) != 1 else ''}" + (", each its own figures in the note column" if own else "")
        lines.append(f"note: {text} ({count})")
    if len(lines) > max_notes:
        more = len(lines) - max_notes
        lines = lines[:max_notes] + [f"… {more} more note{'s' if more != 1 else ''}: the note column of the files "
                                     "(--out), or --verbose"]
    return lines


def nan_line(part: Part) -> str | None:
    """``TITLE: NaN in N rows (columns)`` when rows of the shown columns lack a value, else None."""
    shown = part.shown().select_dtypes("number")
    missing = shown.isna()
    rows = int(missing.any(axis=1).sum())
    if not rows:
        return None
    columns = [str(c) for c in shown.columns if missing[c].any()]
    why = "; the notes say why" if "note" in part.frame.columns else ""
    return f"{part.title}: NaN in {rows} row{'s' if rows != 1 else ''} ({', '.join(columns)}){why}"


def _budget(parts: Sequence[Part], budget: int) -> list[int]:
    """Rows printed of each table: in order, what is left of ``budget`` after :data:`MIN_ROWS` for each
    later table, at least :data:`MIN_ROWS`.

    Example:
        >>> import pandas as pd
        >>> _budget([Part("a", pd.DataFrame({"x": range(300)})), Part("b", pd.DataFrame({"x": range(50)}))], 28)
        [26, 2]
    """
    left, out = budget, []
    for i, part in enumerate(parts):
        later = min(MIN_ROWS * (len(parts) - i - 1), max(0, left - MIN_ROWS))
        k = min(len(part.frame), max(MIN_ROWS, left - later))
        out.append(k)
        left -= k
    return out


def _more_line(part: Part, shown: int) -> str:
    more = len(part.frame) - shown
    where = f"all in {part.file}" if part.file is not None else "--verbose prints them, --out writes them"
    return f"… {more} more row{'s' if more != 1 else ''} of {part.title} ({where})"


def summary_lines(parts: Sequence[Part], lines: int = LINE_BUDGET) -> list[tuple[str, "pd.DataFrame | str"]]:
    """What :func:`show_summary` prints, in order, as ``(kind, value)`` pairs: ``("title", text)``,
    ``("table", frame)`` (the rows shown) and ``("line", text)``. Empty tables are left out; the rows
    shown share what ``lines`` leaves after titles, headers, notes and the "more rows" lines."""
    parts = [p for p in parts if not p.frame.empty]
    notes = [line for line in (nan_line(p) for p in parts) if line] + note_lines(parts)
    rows = lines - _OWN_LINES - len(notes) - 4 * len(parts)  # title, header, rule, a "more rows" line
    out: list[tuple[str, "pd.DataFrame | str"]] = []
    for part, k in zip(parts, _budget(parts, rows)):
        out += [("title", f"{part.title} ({part.about})" if part.about else part.title), ("table", part.shown().head(k))]
        if k < len(part.frame):
            out.append(("line", _more_line(part, k)))
    return out + [("line", line) for line in notes]


def show_summary(parts: Sequence[Part], lines: int = LINE_BUDGET) -> None:
    """Print the summary of ``parts`` on the terminal (stdout)."""
    from judgelab.report.terminal import console, print_table

    for kind, value in summary_lines(parts, lines):
        if kind == "table":
            print_table(value, compact=True)
        else:
            console.print(value)
