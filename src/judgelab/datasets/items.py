"""Items to judge, read from JSONL, JSON, CSV or a pandas DataFrame with clear errors (line numbers included).

Files are read by :mod:`judgelab.datasets.readers` (``read_records`` is re-exported here); a
DataFrame becomes the same rows (:func:`judgelab.datasets.readers.frame_records`), and one function
makes items of the rows of either.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.datasets.readers import JsonLines, Records, frame_records, is_frame, read_records
from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Item", "FieldMap", "read_records", "load_items", "items_from_records"]


@dataclass(frozen=True, slots=True)
class Item:
    """One text to judge. ``context`` is the story prompt, the benign title, the source …

    Slotted: a run holds its items from planning on (10⁶ of them in a million-judgment run)."""

    item_id: str
    text: str
    system: str = "default"
    group: str | None = None
    context: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        """What a template can refer to: text, context, item_id, system, group and any extra column."""
        return {**self.extra, "item_id": self.item_id, "text": self.text, "context": self.context,
                "system": self.system, "group": self.group}


@dataclass(frozen=True)
class FieldMap:
    """Which input columns hold what (command-line options ``--id-field`` …)."""

    id: str = "id"
    text: str = "text"
    context: str = "context"
    system: str = "system"
    group: str = "group"


def _value(row: dict[str, Any], name: str) -> Any:
    value = row.get(name)
    if isinstance(value, str) and value == "":
        return None
    return value


def load_items(source: "str | Path | pd.DataFrame", fields: FieldMap = FieldMap(), limit: int | None = None) -> list[Item]:
    """Read items from a file (``.jsonl``, ``.json``, ``.csv``) or a pandas DataFrame.

    Args:
        source: the file, or a DataFrame with one row per item.
        fields: which columns hold the id, text, context, system and group (``--id-field`` …);
            ``id`` and ``text`` are required, the rest optional; every other column is kept in
            ``Item.extra`` (a template can use it as ``{{ column }}``).
        limit: read only the first ``limit`` items.

    Returns:
        The items, in row order. A missing value (an empty CSV cell, JSON null; NaN, None,
        ``pandas.NA`` in a DataFrame) of an optional column means "not given"; ids, systems and groups
        become text (``7`` → ``"7"``).

    Raises:
        JudgelabError: a missing id or text column or value, a text that is not text, a repeated id
            within a system, no rows; one line naming the file (or "items DataFrame") and the row.

    Example:
        >>> import pandas as pd
        >>> [i.item_id for i in load_items(pd.DataFrame({"id": [1, 2], "text": ["A.", "B."]}))]
        ['1', '2']
    """
    if is_frame(source):
        return items_from_records(frame_records(source, "items DataFrame"), fields, limit, hint="FieldMap({}=...)")
    if not isinstance(source, (str, Path)):
        raise JudgelabError(f"items: expected a file path or a pandas DataFrame, not {type(source).__name__}")
    if Path(source).suffix.lower() in {".jsonl", ".ndjson"}:  # a row at a time: never the file's rows all at once
        return items_from_records(JsonLines(source), fields, limit)
    return items_from_records(read_records(source), fields, limit)


def items_from_records(rows: Records | JsonLines, fields: FieldMap = FieldMap(), limit: int | None = None,
                       hint: str = "--{}-field") -> list[Item]:
    """Items of rows read from a file or a DataFrame (the one place that makes items); see :func:`load_items`.

    ``hint`` says how to name another column (``{}`` = ``id`` or ``text``) in the error about a missing one.
    """
    path = rows.path
    if isinstance(rows, Records) and not rows:
        raise JudgelabError(f"{path}: no items")
    if rows.columns is not None:  # a CSV header or a DataFrame's columns: a missing column is said as such
        for required, option in ((fields.id, "id"), (fields.text, "text")):
            if required not in rows.columns:
                how = hint.format(option)
                raise JudgelabError(f"{path}: no column {required!r} (columns: {', '.join(map(str, rows.columns))}); "
                                    f"name the {option} column with {how}")
    items: list[Item] = []
    seen: dict[str, set[str]] = {}  # the ids of each system (no tuple per item)
    known = {fields.id, fields.text, fields.context, fields.system, fields.group}
    for index, row in enumerate(rows):
        number = _Where(rows, index)
        for required in (fields.id, fields.text):
            if _value(row, required) is None:
                raise JudgelabError(f"{path}: {number} has no field {required!r} (columns: {', '.join(row)})")
        text = row[fields.text]
        if not isinstance(text, str):
            raise JudgelabError(f"{path}: {number}: field {fields.text!r} must be text")
        for name in (fields.id, fields.system, fields.group, fields.context):
            if isinstance(row.get(name), (dict, list)):
                raise JudgelabError(f"{path}: {number}: field {name!r} must be text or a number, not a JSON {type(row[name]).__name__}")
        system = _value(row, fields.system)
        item = Item(
            item_id=str(row[fields.id]),
            text=text,
            system="default" if system is None else str(system),
            group=None if _value(row, fields.group) is None else str(row[fields.group]),
            context=None if _value(row, fields.context) is None else str(row[fields.context]),
            extra={k: v for k, v in row.items() if k not in known},
        )
        ids = seen.setdefault(item.system, set())
        if item.item_id in ids:
            raise JudgelabError(f"{path}: {number}: duplicate id {item.item_id!r} for system {item.system!r}")
        ids.add(item.item_id)
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise JudgelabError(f"{path}: no items")
    return items


class _Where:
    """``item N (line L)``, written only when an error names it."""

    def __init__(self, rows: Records | JsonLines, index: int) -> None:
        self.rows, self.index = rows, index

    def __str__(self) -> str:
        return f"item {self.index + 1} ({self.rows.where(self.index)})"
