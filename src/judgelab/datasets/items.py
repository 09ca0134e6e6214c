"""Items to judge, read from JSONL or CSV with clear errors (line numbers included)."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a JSONL, JSON (list) or CSV file as dicts; malformed input is one clear error."""
    path = Path(path)
    if not path.exists():
        raise JudgelabError(f"file not found: {path}")
    if path.is_dir():
        raise JudgelabError(f"{path} is a folder, not a file")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise JudgelabError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise JudgelabError(f"cannot read {path}: {exc.strerror}") from None
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            return list(csv.DictReader(raw.splitlines()))
        except csv.Error as exc:
            raise JudgelabError(f"{path}: malformed CSV ({exc})") from None
    if suffix == ".json":
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise JudgelabError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise JudgelabError(f"{path}: expected a JSON list of objects")
        return data
    if suffix in {".jsonl", ".ndjson"}:
        rows = []
        for lineno, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise JudgelabError(f"{path}: malformed JSON on line {lineno}: {exc.msg}") from None
            if not isinstance(row, dict):
                raise JudgelabError(f"{path}: line {lineno} is not a JSON object")
            rows.append(row)
        return rows
    raise JudgelabError(f"{path}: unknown file type {suffix!r}; use .jsonl, .json or .csv")


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
    for number, row in enumerate(rows, start=1):
        for required in (fields.id, fields.text):
            if _value(row, required) is None:
                raise JudgelabError(f"{path}: item {number} has no field {required!r} (columns: {', '.join(row)})")
        text = row[fields.text]
        if not isinstance(text, str):
            raise JudgelabError(f"{path}: item {number}: field {fields.text!r} must be text")
        item = Item(
            item_id=str(row[fields.id]),
            text=text,
            system=str(_value(row, fields.system) or "default"),
            group=None if _value(row, fields.group) is None else str(row[fields.group]),
            context=None if _value(row, fields.context) is None else str(row[fields.context]),
            extra={k: v for k, v in row.items() if k not in known},
        )
        key = (item.system, item.item_id)
        if key in seen:
            raise JudgelabError(f"{path}: item {number}: duplicate id {item.item_id!r} for system {item.system!r}")
        seen.add(key)
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items
