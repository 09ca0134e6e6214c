"""The folder's README.md as the page shows it: the Markdown judgelab writes (``output/index.py``: a title, a
table of files, notes as a list; a step's section between HTML comments) read into typed blocks that the
template renders escaped, so the page never shows raw Markdown. Anything else is a paragraph of text.

Inline, only code spans (`` `x` ``) and bold (``**x**``) are read; every other character is text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Inline", "ReadmeBlock", "readme_blocks"]

#: One inline run: plain text, a code span or bold text.
Inline = tuple[Literal["text", "code", "strong"], str]

_INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*")
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


@dataclass
class ReadmeBlock:
    """A heading (``level`` 1–6), a table (``header`` and ``rows``), a list (``items``) or a paragraph."""

    kind: Literal["heading", "table", "list", "paragraph"]
    level: int = 0
    text: list[Inline] = field(default_factory=list)
    header: list[list[Inline]] = field(default_factory=list)
    rows: list[list[list[Inline]]] = field(default_factory=list)
    items: list[list[Inline]] = field(default_factory=list)


def inline(text: str) -> list[Inline]:
    """``text`` as runs of plain text, code spans and bold."""
    out: list[Inline] = []
    at = 0
    for m in _INLINE.finditer(text):
        if m.start() > at:
            out.append(("text", text[at:m.start()]))
        out.append(("code", m.group(1)) if m.group(1) is not None else ("strong", m.group(2)))
        at = m.end()
    if at < len(text):
        out.append(("text", text[at:]))
    return out


def _cells(line: str) -> list[list[Inline]]:
    return [inline(c.strip()) for c in line.strip().strip("|").split("|")]


def readme_blocks(text: str) -> list[ReadmeBlock]:
    """The blocks of a README's Markdown (HTML comments dropped; blank lines end a paragraph, list or table)."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    blocks: list[ReadmeBlock] = []
    para: list[str] = []

    def end_paragraph() -> None:
        if para:
            blocks.append(ReadmeBlock("paragraph", text=inline(" ".join(para))))
            para.clear()

    fresh = True  # a blank line (or the start) was last: a table row or list item opens a new block
    for raw in text.splitlines():
        line = raw.strip()
        last = None if fresh or not blocks else blocks[-1]
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        fresh = not line
        if not line:
            end_paragraph()
        elif heading:
            end_paragraph()
            blocks.append(ReadmeBlock("heading", level=len(heading.group(1)), text=inline(heading.group(2).strip())))
            fresh = True
        elif line.startswith("|"):
            end_paragraph()
            if last is not None and last.kind == "table":
                if not _SEPARATOR.match(line):
                    last.rows.append(_cells(line))
            else:
                blocks.append(ReadmeBlock("table", header=_cells(line)))
        elif re.match(r"^[-*]\s+", line):
            end_paragraph()
            item = inline(re.sub(r"^[-*]\s+", "", line))
            if last is not None and last.kind == "list":
                last.items.append(item)
            else:
                blocks.append(ReadmeBlock("list", items=[item]))
        else:
            if last is not None and last.kind in ("table", "list"):
                fresh = True
            para.append(line)
    end_paragraph()
    return blocks
