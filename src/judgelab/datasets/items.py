"""Items to judge, read from JSONL, JSON or CSV with clear errors (line numbers included).

Files are read by :mod:`judgelab.datasets.readers` (``read_records`` is re-exported here).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.datasets.readers import read_records
from judgelab.errors import JudgelabError

__all__ = ["Item", "FieldMap", "read_records", "load_items"]


@dataclass(frozen=True)
class Item:
    """One text to judge. ``context`` is the story prompt, the benign title, the source …"""

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


def load_items(path: str | Path, fields: FieldMap = FieldMap(), limit: int | None = None) -> list[Item]:
    """Read items; ``id`` and ``text`` are required, the rest optional."""
    rows = read_records(path)
    if not rows:
        raise JudgelabError(f"{path}: no items")
    items: list[Item] = []
    seen: set[tuple[str, str]] = set()
    known = {fields.id, fields.text, fields.context, fields.system, fields.group}
    for index, row in enumerate(rows):
        number = f"item {index + 1} ({rows.where(index)})"
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
        key = (item.system, item.item_id)
        if key in seen:
            raise JudgelabError(f"{path}: {number}: duplicate id {item.item_id!r} for system {item.system!r}")
        seen.add(key)
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items
