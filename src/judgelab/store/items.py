"""The texts a rater judged: one row per (rater, system, item), so a report shows the rated text itself.

Judgments record the prompt they answered (``prompt_key``) but not the item's own text apart
from it. The run core writes each item it judges here once per run (in the group writer's
transactions), keyed by labels: ``(rater, system, item_id)``. A row is replaced by a later run
of the same rater, so it holds the text of that rater's newest judgments (a changed text is a
changed prompt, asked again). ``parts`` holds the texts of a unit made of several texts (the
``first`` and ``second`` of a pairwise comparison) as a JSON object. Stores written before
version 4 have no rows; :meth:`ItemTable.item_texts` then returns nothing.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgelab.datasets.items import Item

__all__ = ["ItemText", "ItemTable", "item_row", "ITEM_COLUMNS"]

#: Columns of the ``items`` table in the order :func:`item_row` fills them.
ITEM_COLUMNS = "rater, system, item_id, grp, text, context, parts"


@dataclass(frozen=True)
class ItemText:
    """What a rater was given to judge, apart from the prompt around it.

    Attributes:
        text: the item's text.
        context: its context (a story's writing prompt, a summary's article), or ``None``.
        group: its group label, or ``None``.
        parts: the texts of a unit made of several (``{"first": …, "second": …}`` for a pair), else empty.
    """

    text: str
    context: str | None = None
    group: str | None = None
    parts: tuple[tuple[str, str], ...] = ()


def item_row(rater: str, item: "Item") -> tuple[Any, ...]:
    """The ``items`` row of one judged item (texts of a pair: the ``text`` of each dict-valued extra field).

    Example:
        >>> from judgelab.datasets.items import Item
        >>> item_row("r", Item("a|b", "a vs b", "pair", extra={"first": {"text": "A."}, "second": {"text": "B."}}))
        ('r', 'pair', 'a|b', None, 'a vs b', None, '{"first": "A.", "second": "B."}')
    """
    parts = {str(k): v["text"] for k, v in item.extra.items() if isinstance(v, dict) and isinstance(v.get("text"), str)}
    return (rater, item.system, item.item_id, item.group, item.text, item.context,
            json.dumps(parts, ensure_ascii=False) if parts else None)


class ItemTable:
    """The store's ``items`` table (a part of :class:`judgelab.store.Store`)."""

    _db: sqlite3.Connection

    def item_texts(self, rater: str | None = None) -> dict[tuple[str, str, str], ItemText]:
        """``(rater, system, item_id) → ItemText`` of every recorded item (of one rater when given);
        empty for a store written before items were recorded (no ``items`` table)."""
        found = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'items'").fetchone()
        if found is None:
            return {}
        sql = f"SELECT {ITEM_COLUMNS} FROM items" + (" WHERE rater = ?" if rater is not None else "")
        out: dict[tuple[str, str, str], ItemText] = {}
        for r, system, item_id, grp, text, context, parts in self._db.execute(sql, () if rater is None else (rater,)):
            try:
                named = json.loads(parts) if parts else {}
            except ValueError:
                named = {}
            pairs = tuple((str(k), str(v)) for k, v in named.items()) if isinstance(named, dict) else ()
            out[(str(r), str(system), str(item_id))] = ItemText(str(text), context, grp, pairs)
        return out
