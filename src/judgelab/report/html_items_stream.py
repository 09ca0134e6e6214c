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
from typing import Any

from judgelab.report import html_parts
from judgelab.report.html_calls import CallCache
from judgelab.report.html_items import (
    CALL_BLOCK_UNITS,
    PAGE_SIZE,
    _Cards,
    _human_index,
    _in_prompts,
    humans_of,
    items_notes,
    ok_scores,
    texts_by_item,
    unit_numbers,
)
from judgelab.report.html_model import ItemBrowser, natural_key
from judgelab.report.humans import HumanRatings
from judgelab.report.store_reads import StoreRows

__all__ = ["build_items_streamed"]

_NONE = math.nan  # a number that is none, in the arrays of pass one


def _value(x: float) -> float | None:
    return None if math.isnan(x) else x


class _Ranked:
    """Pass one: every unit's key (in the store's key order) and the numbers it is ranked by."""

    def __init__(self, rows: StoreRows, humans: HumanRatings) -> None:
        human_idx = _human_index(humans)
        names: dict[str, str] = {}
        self.keys: list[tuple[str, str, str, str]] = []
        self.j, self.h, self.d, self.sp = array("d"), array("d"), array("d"), array("d")
        self.raters: dict[str, int] = {}
        self.criteria: dict[str, int] = {}
        systems: set[str] = set()
        unit: tuple[str, str, str, str] | None = None
        samples: list[tuple[Any, ...]] = []

        def close() -> None:
            assert unit is not None
            rater, criterion, system, item = unit
            per_rater, _ = humans_of(human_idx, humans, criterion, system, item)
            for column, x in zip((self.j, self.h, self.d, self.sp), unit_numbers(ok_scores(samples), per_rater)):
                column.append(_NONE if x is None else x)
            self.keys.append(unit)
            self.raters.setdefault(rater, len(self.raters))
            self.criteria.setdefault(criterion, len(self.criteria))
            systems.add(system)

        for rater, criterion, system, item, sample, status, score in rows.unit_keys():
            key = (names.setdefault(rater, rater), names.setdefault(criterion, criterion),
                   names.setdefault(system, system), item)
            if key != unit:
                if unit is not None:
                    close()
                unit, samples = key, []
            samples.append((sample, status, score))
        if unit is not None:
            close()
        self.systems = {s: k for k, s in enumerate(sorted(systems, key=natural_key))}
        self.has_human = any(not math.isnan(x) for x in self.h)

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, unit: tuple[str, str, str, str]) -> int | None:
        """The number of ``unit`` in pass one's order (the store's key order), or None."""
        at = bisect_left(self.keys, unit)
        return at if at < len(self.keys) and self.keys[at] == unit else None

    def order(self, embedded: int) -> tuple[list[int], array]:
        """The units in the page's and the parts' order, and each unit's place in the default order (``o``)."""
        keys, d, sp = self.keys, self.d, self.sp

        def card_key(u: int) -> tuple[str, str, str, str]:
            r, c, s, i = keys[u]
            return (c, s, i, r)
        if self.has_human:
            ranked = sorted(range(len(keys)), key=lambda u: (math.isnan(d[u]), 0.0 if math.isnan(d[u]) else -abs(d[u]),
                                                              card_key(u)))
        else:
            ranked = sorted(range(len(keys)), key=lambda u: (math.isnan(sp[u]), -(0.0 if math.isnan(sp[u]) else sp[u]),
                                                              card_key(u)))
        rank = array("l", bytes(8 * len(keys)))
        for place, u in enumerate(ranked):
            rank[u] = place
        ranked[embedded:] = sorted(ranked[embedded:], key=lambda u: (keys[u][0], keys[u][2], keys[u][3], keys[u][1]))
        return ranked, rank


def build_items_streamed(rows: StoreRows, humans: HumanRatings, calls: CallCache, page_size: int = PAGE_SIZE,
                         templates: dict[str, str] | None = None, embedded: int | None = None,
                         part_units: int | None = None) -> ItemBrowser | None:
    """The item browser of the store's judge judgments, built in two passes (module docstring); None when the
    units are not more than the page embeds (the one-pass build makes that page: it holds every unit)."""
    embedded = html_parts.EMBEDDED_UNITS if embedded is None else embedded
    part_units = html_parts.PART_UNITS if part_units is None else part_units
    ranked = _Ranked(rows, humans)
    if len(ranked) <= embedded:
        return None
    final, rank = ranked.order(embedded)
    place = array("l", bytes(8 * len(final)))
    for k, u in enumerate(final):
        place[u] = k
    human_idx = _human_index(humans)
    names = {"raters": list(ranked.raters), "criteria": list(ranked.criteria), "systems": list(ranked.systems)}
    chunks = [(0, embedded), *((s, min(len(final), s + part_units)) for s in range(embedded, len(final), part_units))]
    parts: list[str] = []
    page_index: dict[str, Any] = {}
    page_blob = ""
    available, shown = False, 0
    digest = hashlib.sha256()
    for number, (start, end) in enumerate(chunks):
        units = [ranked.keys[u] for u in final[start:end]]
        texts = rows.texts_of(units)
        cards = _Cards(humans, calls, templates, texts, texts_by_item(texts), human_idx, dict(ranked.raters),
                       dict(ranked.criteria), dict(ranked.systems))
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
        index["o"] = [rank[u] for u in final[start:end]]
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
                       notes=items_notes(humans, ranked.has_human, available, len(final), shown), embedded=embedded,
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
