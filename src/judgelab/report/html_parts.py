"""The item browser's bounded page: the first units embedded, the rest in sidecar parts loaded on demand.

A report of many judgments would otherwise embed every card. Above :data:`EMBEDDED_UNITS` units the
page embeds the index and details of the first :data:`EMBEDDED_UNITS` units in the page's default
order (the largest disagreements first, or the largest sample spread), and the others go, by rater, system,
item and criterion (so that the texts of an item are stored in one part), :data:`PART_UNITS` to a part, to
``<page>-items/part-0001.js`` … beside the page (for ``report.html``: ``report-items/``); the index column
``o`` gives each unit's place in the default order. A part is a script (a page opened from ``file://`` may not
``fetch`` a local file, but it may load a ``<script src>``): it calls
``window.judgelabItemPart(k, {"index": …, "data": …})`` with its units' index columns (the name lists
are the page's) and its details, gzip-compressed and base64-encoded with their own string table ``S``
(:mod:`judgelab.report.html_items` describes the payload). A text reference into another unit's prompt
points only within the same part (else the text is stored). Units keep their global numbers, so the
page appends each part as it loads; filters, sorts, search, item links and the download load every
part first (:mod:`judgelab.report.html_script`). ``judgelab view`` serves the same parts
(:mod:`judgelab.report.live`). A large store's cards are built a chunk (the page's, then a part's) at a time
(:mod:`judgelab.report.html_items_stream`), packed with :func:`pack_own` and :func:`part_script` as here.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from judgelab.errors import JudgelabError

__all__ = ["EMBEDDED_UNITS", "PART_UNITS", "UNIT_COLUMNS", "ItemParts", "split_units", "part_of", "pack",
           "sidecar_name", "part_name", "write_parts", "pack_own", "part_script"]

#: Units whose cards the page itself holds (the first ones in its default order).
EMBEDDED_UNITS = 2000
#: Units per sidecar part.
PART_UNITS = 5000
#: The per-unit columns of the index (the name lists ``raters``, ``criteria``, ``systems`` are the page's);
#: ``o``, a unit's place in the default order, where there are parts.
UNIT_COLUMNS = ("r", "c", "s", "i", "j", "h", "d", "sp", "n", "ok", "nh", "o")


def part_of(position: int, embedded: int, part_units: int) -> int:
    """The part holding the unit at ``position`` of the default order: 0 for the page, then 1, 2, …"""
    return 0 if position < embedded else 1 + (position - embedded) // part_units


def pack(strings: list[str], details: list[Any]) -> str:
    """``{"S": strings, "D": details}`` as gzip-compressed, base64-encoded JSON."""
    payload = json.dumps({"S": strings, "D": details}, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(payload.encode("utf-8"), compresslevel=6, mtime=0)).decode("ascii")


class _Remap:
    """The details of some units with their string indices renumbered into a table of their own."""

    def __init__(self, old: list[str]) -> None:
        self.old = old
        self.strings: list[str] = []
        self._at: dict[int, int] = {}

    def s(self, k: int | None) -> int | None:
        if k is None:
            return None
        new = self._at.get(k)
        if new is None:
            new = self._at[k] = len(self.strings)
            self.strings.append(self.old[k])
        return new

    def ref(self, ref: Any) -> Any:
        return self.s(ref) if isinstance(ref, int) else ref  # a list points into prompts, not S

    def detail(self, d: list[Any]) -> list[Any]:
        prompts, samples, humans, cue, rated = d
        prompts = [[[role, [self.s(k) for k in lines]] for role, lines in p] for p in prompts]
        samples = [[*s[:6], self.s(s[6]), s[7],
                    None if s[8] is None else [[self.s(a[0]), a[1], a[2], self.s(a[3])] for a in s[8]], s[9]]
                   for s in samples]
        if rated is not None:
            rated = [self.ref(rated[0]), self.ref(rated[1]), [[name, self.ref(r)] for name, r in rated[2]]]
        return [prompts, samples, humans, cue, rated]


def pack_own(strings: list[str], details: list[Any]) -> str:
    """:func:`pack` of some units' details with a string table of their own (indices renumbered from ``strings``)."""
    remap = _Remap(strings)
    return pack(remap.strings, [remap.detail(d) for d in details])


def part_script(k: int, index: dict[str, Any], blob: str) -> str:
    """The script text of part ``k``: its units' index columns and their packed details."""
    data = json.dumps({"index": index, "data": blob}, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return f"window.judgelabItemPart({k}, {data});\n"


@dataclass
class ItemParts:
    """The page's share of the units and the sidecar parts (each part's script text, in order)."""

    index: dict[str, Any]
    details_gzip_base64: str
    embedded: int
    part_units: int
    parts: list[str]
    version: str


def split_units(index: dict[str, Any], details: list[Any], strings: list[str], embedded: int = EMBEDDED_UNITS,
                part_units: int = PART_UNITS) -> ItemParts:
    """The first ``embedded`` units for the page, the rest in parts of ``part_units`` (module docstring).

    Above ``embedded`` units, ``details`` is consumed: each entry is set to None once it is packed."""
    total = len(details)
    if total <= embedded:  # the page holds every unit, as a page of any size did before parts
        return ItemParts(index, pack(strings, details), total, part_units, [], "")
    page_index = {k: v for k, v in index.items() if k not in UNIT_COLUMNS}
    page_index.update({k: index[k][:embedded] for k in UNIT_COLUMNS if k in index})
    page_blob = pack_own(strings, details[:embedded])
    details[:embedded] = [None] * embedded  # each unit's details are let go once packed: ``details`` is consumed
    parts: list[str] = []
    digest = hashlib.sha256(page_blob.encode("ascii"))
    for start in range(embedded, total, part_units):
        end = min(total, start + part_units)
        blob = pack_own(strings, details[start:end])
        details[start:end] = [None] * (end - start)
        parts.append(part_script(len(parts) + 1, {k: index[k][start:end] for k in UNIT_COLUMNS if k in index}, blob))
        digest.update(blob.encode("ascii"))
    return ItemParts(page_index, page_blob, min(embedded, total), part_units, parts, digest.hexdigest()[:16])


def same_part(embedded: int, part_units: int) -> Callable[[int, int], bool]:
    """Whether two positions of the default order fall in the same part."""
    return lambda a, b: part_of(a, embedded, part_units) == part_of(b, embedded, part_units)


def sidecar_name(page: Path) -> str:
    """The folder of a page's parts, beside it: ``report-items`` for ``report.html``."""
    return f"{page.stem}-items"


def part_name(k: int) -> str:
    """The file name of part ``k`` (1, 2, …)."""
    return f"part-{k:04d}.js"


def write_parts(page: Path, parts: list[str]) -> Path | None:
    """Write the parts into the sidecar folder beside ``page``, replacing the one an earlier report left (only a
    folder of parts is replaced); with no parts, that earlier folder is removed. Returns the folder, or None."""
    folder = page.parent / sidecar_name(page)
    if folder.exists() and not (folder.is_dir() and all(p.name.startswith("part-") and p.suffix == ".js"
                                                          for p in folder.iterdir())):
        raise JudgelabError(f"{folder} exists and is not a folder of report parts; move it away or give another "
                            "--out name for the report")
    if not parts:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=page.parent))
    try:
        for k, text in enumerate(parts, start=1):
            (staging / part_name(k)).write_text(text, encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staging.rename(folder)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise JudgelabError(f"cannot write the report's parts into {folder}: {exc.strerror or exc}") from None
    return folder
