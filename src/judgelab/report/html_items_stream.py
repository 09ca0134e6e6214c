"""The item browser of a large store in bounded memory: the same page and parts as
:func:`judgelab.report.html_items.build_items`, built in two passes.

Pass one reads only each unit's cheap keys (rater, criterion, system, item, each sample's status and score) in the
store's key order (:meth:`judgelab.report.store_reads.StoreRows.unit_keys`) and computes what the cards are ranked
by — the judge's mean, the human mean, their difference, the sample spread — so the default order is known, and
with it which units the page embeds and which part each other unit goes to. Pass two builds the cards a chunk at
a time (the page's, then each part's), reading each unit's judgments, calls and texts from the store, and packs the
chunk before the next is read: what is held is a few numbers per unit, one chunk of cards and the packed parts.

A text reference into another unit's prompt (:class:`judgelab.report.html_items._Texts`) points, as in the one-pass
build, to the first unit of the same rater, system and item (by criterion) whose prompt holds the text, when that
unit is in the same part; that unit is read again when it is in another chunk.
"""
from __future__ import annotations

import hashlib
import math
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from judgelab.report import html_parts
from judgelab.report.html_calls import CallCache
from judgelab.report.html_items import (
    CALL_BLOCK_UNITS,
    PAGE_SIZE,
    _Cards,
    _human_index,
    _in_prompts,
    humans_of,
    ok_scores,
    texts_by_item,
    unit_numbers,
)
from judgelab.report.html_items_notes import items_notes
from judgelab.report.html_model import ItemBrowser, natural_key
from judgelab.report.humans import HumanRatings
from judgelab.report.store_reads import StoreRows

__all__ = ["RatedUnits", "build_items_streamed"]

_NONE = math.nan  # a number that is none, in the arrays of pass one
#: The note of a page that shows only the units with human ratings (``with_humans``): ``left`` of the ``all`` judge
#: judgments are of units without any (counted as judgments: a comparison's store may hold only those it shows).
WITHOUT_HUMANS = ("Only the items with human ratings are shown here: {left:,} of the {all:,} judgments were of items "
                  "without any and are left out of this page (the report of the run that judged them shows every item: "
                  "`judgelab report FOLDER`).")


@dataclass(frozen=True)
class RatedUnits:
    """The (criterion, system, item) units that have human ratings, matched as the cards match them: a human
    rating of a system's item rates that unit; one given without a system rates the item's unit of every system."""

    exact: frozenset[tuple[str, str, str]]
    any_system: frozenset[tuple[str, str]]

    @classmethod
    def of(cls, humans: HumanRatings) -> "RatedUnits":
        """The units ``humans`` rate (their ``ok`` ratings with a score)."""
        keys = _human_index(humans)
        return cls(frozenset((c, s, i) for c, s, i in keys if s is not None),
                   frozenset((c, i) for c, s, i in keys if s is None))

    def __contains__(self, unit: object) -> bool:
        if not isinstance(unit, tuple) or len(unit) != 3:
            return False
        return unit in self.exact or (unit[0], unit[2]) in self.any_system

    def __bool__(self) -> bool:
        return bool(self.exact or self.any_system)

    def with_units(self, units: Iterable[tuple[str, str, str]]) -> "RatedUnits":
        """These units and ``units``."""
        return RatedUnits(self.exact | frozenset(units), self.any_system)

    def mask(self, df: pd.DataFrame) -> np.ndarray:
        """Which rows of ``df`` (``criterion``, ``system``, ``item_id`` as text) are of a unit rated here."""
        out = np.zeros(len(df), dtype=bool)
        if self.exact and len(df):
            out |= pd.MultiIndex.from_arrays([df["criterion"], df["system"], df["item_id"]]).isin(list(self.exact))
        if self.any_system and len(df):
            out |= pd.MultiIndex.from_arrays([df["criterion"], df["item_id"]]).isin(list(self.any_system))
        return out


def _value(x: float) -> float | None:
    return None if math.isnan(x) else x


class _Ranked:
    """Pass one: every unit (in the store's key order: rater, criterion, system, item) as codes into the name lists
    and its item id, with the numbers it is ranked by — a few numbers and one string per unit. ``with_humans``:
    only the units with human ratings, when some have them (``without_humans`` counts the judgments left out,
    with those the store did not copy: :attr:`StoreRows.left_out`)."""

    def __init__(self, rows: StoreRows, humans: HumanRatings, with_humans: bool = False) -> None:
        human_idx = _human_index(humans)
        rated = RatedUnits.of(humans)
        skip = with_humans and bool(rated)
        self._scan(rows, humans, human_idx, rated if skip else None)
        if skip and not self.items:  # no unit has human ratings: every unit is shown
            self._scan(rows, humans, human_idx, None)
        self.names = (list(self.raters), list(self.criteria), list(self.systems))
        self.has_human = any(not math.isnan(x) for x in self.h)

    def _scan(self, rows: StoreRows, humans: HumanRatings, human_idx: dict[Any, Any], rated: RatedUnits | None) -> None:
        self.raters: dict[str, int] = {}
        self.criteria: dict[str, int] = {}
        self.systems: dict[str, int] = {}
        self.r, self.c, self.s = array("q"), array("q"), array("q")
        self.items: list[str] = []
        self.j, self.h, self.d, self.sp = array("d"), array("d"), array("d"), array("d")
        self.without_humans = rows.left_out if rated is not None else 0
        unit: tuple[str, str, str, str] | None = None
        samples: list[tuple[Any, ...]] = []

        def close() -> None:
            assert unit is not None
            rater, criterion, system, item = unit
            per_rater, _ = humans_of(human_idx, humans, criterion, system, item)
            for column, x in zip((self.j, self.h, self.d, self.sp), unit_numbers(ok_scores(samples), per_rater)):
                column.append(_NONE if x is None else x)
            self.r.append(self.raters.setdefault(rater, len(self.raters)))
            self.c.append(self.criteria.setdefault(criterion, len(self.criteria)))
            self.s.append(self.systems.setdefault(system, len(self.systems)))
            self.items.append(item)

        last: tuple[str, str, str, str] | None = None
        for rater, criterion, system, item, sample, status, score in rows.unit_keys():
            key = (rater, criterion, system, item)
            if key != last:
                if unit is not None:
                    close()
                last, unit, samples = key, key, []
                if rated is not None and (criterion, system, item) not in rated:
                    unit = None  # left out: read on, holding nothing
            if unit is not None:
                samples.append((sample, status, score))
            else:
                self.without_humans += 1
        if unit is not None:
            close()

    def __len__(self) -> int:
        return len(self.items)

    def unit(self, u: int) -> tuple[str, str, str, str]:
        """Unit ``u``'s (rater, criterion, system, item)."""
        raters, criteria, systems = self.names
        return (raters[self.r[u]], criteria[self.c[u]], systems[self.s[u]], self.items[u])

    def find(self, unit: tuple[str, str, str, str]) -> int | None:
        """The number of ``unit`` in pass one's order (the store's key order), or None."""
        at = bisect_left(range(len(self.items)), unit, key=self.unit)
        return at if at < len(self.items) and self.unit(at) == unit else None

    def order(self, embedded: int) -> tuple[Any, Any]:
        """The units in the page's and the parts' order, and each unit's place in the default order (``o``):
        sorted by columns (no tuple per unit), the same order as :func:`judgelab.report.html_items.rank_key`."""
        import numpy as np

        def by_name(codes: array, names: dict[str, int]) -> Any:  # a code → the rank of its name among the names
            ranks = np.empty(len(names), dtype=np.int64)
            ranks[[names[n] for n in sorted(names)]] = np.arange(len(names))
            return ranks[np.frombuffer(codes, dtype=np.int64)]
        r, c, s = by_name(self.r, self.raters), by_name(self.c, self.criteria), by_name(self.s, self.systems)
        i = np.unique(np.asarray(self.items, dtype=object), return_inverse=True)[1].reshape(-1)
        value = np.frombuffer(self.d if self.has_human else self.sp, dtype=np.float64)
        missing = np.isnan(value)
        first = np.where(missing, 0.0, -np.abs(value) if self.has_human else -value)
        ranked = np.lexsort((r, i, s, c, first, missing))  # last key first: missing, then -|d| (or -spread), key
        rank = np.empty(len(ranked), dtype=np.int64)
        rank[ranked] = np.arange(len(ranked))
        rest = ranked[embedded:]
        ranked[embedded:] = rest[np.lexsort((c[rest], i[rest], s[rest], r[rest]))]  # parts: rater, system, item, criterion
        return ranked, rank


def build_items_streamed(rows: StoreRows, humans: HumanRatings, calls: CallCache, page_size: int = PAGE_SIZE,
                         templates: dict[str, str] | None = None, embedded: int | None = None,
                         part_units: int | None = None, with_humans: bool = False) -> ItemBrowser | None:
    """The item browser of the store's judge judgments, built in two passes (module docstring); None when the
    units are not more than the page embeds (the one-pass build makes that page: it holds every unit).

    ``with_humans``: only the units with human ratings, when some have them (the page of a comparison with
    humans: ``agree``, ``audit``); a note says how many are left out and where they are shown."""
    embedded = html_parts.EMBEDDED_UNITS if embedded is None else embedded
    part_units = html_parts.PART_UNITS if part_units is None else part_units
    ranked = _Ranked(rows, humans, with_humans)
    if len(ranked) <= embedded and not ranked.without_humans:
        return None
    embedded = min(embedded, len(ranked))
    final, rank = ranked.order(embedded)
    place = array("l", bytes(8 * len(final)))
    for k, u in enumerate(final.tolist()):
        place[u] = k
    human_idx = _human_index(humans)
    systems = {name: k for k, name in enumerate(sorted(ranked.systems, key=natural_key))}  # as the one-pass build
    names = {"raters": list(ranked.raters), "criteria": list(ranked.criteria), "systems": list(systems)}
    chunks = [(0, embedded), *((s, min(len(final), s + part_units)) for s in range(embedded, len(final), part_units))]
    parts: list[str] = []
    page_index: dict[str, Any] = {}
    page_blob = ""
    available, shown = False, 0
    digest = hashlib.sha256()
    for number, (start, end) in enumerate(chunks):
        chunk = final[start:end].tolist()
        units = [ranked.unit(u) for u in chunk]
        texts = rows.texts_of(units)
        cards = _Cards(humans, calls, templates, texts, texts_by_item(texts), human_idx, dict(ranked.raters),
                       dict(ranked.criteria), dict(systems))
        records, msgs_of = [], {}
        for block in range(0, len(units), CALL_BLOCK_UNITS):
            read = [(unit, rows.unit_rows(unit)) for unit in units[block:block + CALL_BLOCK_UNITS]]
            calls.load(key for _, unit_rows in read for row in unit_rows for key in row[8])
            cards.encoded.clear()
            for unit, unit_rows in read:
                msgs_of[unit] = cards.prompts(unit_rows)[0]
                records.append(cards.unit(unit, unit_rows))
        _resolve(cards, ranked, place, msgs_of, rows, calls, start, end)
        available, shown = available or cards.prompts_available, shown + cards.texts_shown
        index = {k: [r[k] for r in records] for k in ("r", "c", "s", "i", "j", "h", "d", "sp", "n", "ok", "nh")}
        index["o"] = [int(rank[u]) for u in chunk]
        blob = html_parts.pack_own(cards.strings.strings, [r.pop("detail") for r in records])
        digest.update(blob.encode("ascii"))
        if number == 0:
            page_index, page_blob = {**names, **index}, blob
        else:
            parts.append(html_parts.part_script(number, index, blob))
        del records, msgs_of, cards
    return ItemBrowser(units=len(final), has_human=ranked.has_human, human_sources=list(humans.sources),
                       prompts_available=available, index=page_index, details_gzip_base64=page_blob,
                       page_size=page_size, default_sort="absdiff" if ranked.has_human else "spread",
                       notes=items_notes(humans, ranked.has_human, available, len(final), shown)
                       + ([WITHOUT_HUMANS.format(left=ranked.without_humans, all=rows.count())]
                          if ranked.without_humans else []), embedded=embedded,
                       part_units=part_units, parts=parts, version=digest.hexdigest()[:16])


def _resolve(cards: _Cards, ranked: _Ranked, place: array, msgs_of: dict[tuple[str, str, str, str], Any],
             rows: StoreRows, calls: CallCache, start: int, end: int) -> None:
    """Fill a chunk's pending text references (module docstring): into the first unit of the same rater, system
    and item (by criterion) whose prompt holds the text, when it is in this chunk; else the text itself."""
    for slot, index, (rater, system, item, value), _owner in cards.refs.pending:
        ref: Any = None
        for criterion in sorted(ranked.criteria):
            other = (rater, criterion, system, item)
            u = ranked.find(other)
            if u is None:
                continue
            msgs = msgs_of.get(other)
            if msgs is None:  # in another chunk: its prompts are read again
                msgs = cards.prompts(rows.unit_rows(other))[0]
            hit = _in_prompts(value, msgs)
            if hit is not None:
                if start <= place[u] < end:
                    ref = [place[u], *hit]
                break
        slot[index] = cards.strings(value) if ref is None else ref
    cards.refs.pending.clear()
