"""Padding: copies of a text that are longer without saying more (the length probe of issue 22).

Two kinds, each adding about a given share of the text's words (``repeat:50``: +50%):

* ``repeat``: sentences of the text are repeated, each copy inserted right after its sentence
  (sentences drawn in a seeded random order; a second pass when the text is too short);
* ``filler``: neutral sentences from :data:`FILLERS` (judgelab's own wording, carrying no content
  about any text) are appended in a seeded random order.

Sentences are added whole until the added words reach the target, so the realised share is at
least the target and can be well above it for short texts (a one-sentence response repeated once
is +100%); :class:`Padded` records it. The original text is never edited: padding is inserted
between its characters, and :func:`strip_padding` removes the recorded spans to give the original
back byte for byte. Every copy is seeded by (seed, padding, system, item id), as the DHP rule
perturbations are (:mod:`judgelab.dhp.build`), so the same seed gives the same copies whatever the
order or number of items.
"""
from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from judgelab.errors import JudgelabError
from judgelab.perturb.rules import split_sentences

__all__ = ["FILLERS", "KINDS", "Padding", "Padded", "parse_padding", "pad_text", "repeat_sentences", "add_filler",
           "strip_padding", "padding_rng", "word_count"]

KINDS = ("repeat", "filler")

#: Neutral filler sentences: no facts, no judgement of the text, no reference to a particular topic.
FILLERS: tuple[str, ...] = (
    "This is worth keeping in mind.",
    "There is more that could be said about this.",
    "That is one way of looking at it.",
    "Each of these points matters in its own way.",
    "It is something many people think about.",
    "All of this fits together in a certain way.",
    "It can be seen from more than one angle.",
    "Some would put it differently, of course.",
    "That much seems clear enough.",
    "In any case, the main point stays the same.",
    "Things like this happen from time to time.",
    "It is good to think about these things carefully.",
    "There are several ways to describe it.",
    "This is how the matter stands.",
    "One could say a great deal more here.",
    "These are the things to note.",
    "Time will tell how it all turns out.",
    "It is what it is.",
    "Much depends on how one reads it.",
    "That is all there is to it for now.",
)


@dataclass(frozen=True)
class Padding:
    """One padding: its kind (``repeat`` or ``filler``) and the share of words to add (0.5 = +50%).

    ``name`` is ``<kind>-<percent>`` (``filler-50``), the system suffix of the padded copies."""

    kind: str
    share: float

    @property
    def name(self) -> str:
        return f"{self.kind}-{self.share * 100:g}"


@dataclass(frozen=True)
class Padded:
    """A padded copy.

    Attributes:
        text: the padded text (the original when ``changed`` is False).
        changed: whether padding was added.
        words: words of the original (white-space tokens).
        added_words: words added.
        spans: ``(start, end)`` character spans of the inserted padding in ``text``, in order.
        warning: why nothing was added.
    """

    text: str
    changed: bool
    words: int
    added_words: int
    spans: tuple[tuple[int, int], ...] = ()
    warning: str | None = None

    @property
    def added_share(self) -> float:
        """Added words / original words (NaN for an empty text)."""
        return self.added_words / self.words if self.words else math.nan


def word_count(text: str) -> int:
    """White-space tokens, as ``judgelab audit --lengths`` counts them."""
    return len(text.split())


def parse_padding(spec: str) -> Padding:
    """``repeat:50`` or ``filler:25`` (percent of the text's words to add) → :class:`Padding`.

    Example:
        >>> parse_padding("filler:50").name
        'filler-50'
    """
    kind, sep, percent = spec.strip().partition(":")
    if not sep or kind not in KINDS:
        raise JudgelabError(f"--padding {spec!r}: expected KIND:PERCENT with KIND one of {', '.join(KINDS)}, e.g. filler:50")
    try:
        value = float(percent)
    except ValueError:
        raise JudgelabError(f"--padding {spec!r}: {percent!r} is not a number (percent of words to add)") from None
    if not (math.isfinite(value) and 0 < value <= 500):
        raise JudgelabError(f"--padding {spec!r}: the percent of words to add is above 0 and at most 500")
    return Padding(kind, value / 100)


def padding_rng(seed: int, padding: str, system: str, item_id: str) -> random.Random:
    """The generator of one item's copy: seeded by its labels, not its position."""
    return random.Random(f"{seed}|padding|{padding}|{system}|{item_id}")


def _insert(text: str, inserts: list[tuple[int, str]]) -> tuple[str, tuple[tuple[int, int], ...]]:
    """Insert strings at character offsets of ``text`` (stable for equal offsets); the spans in the result."""
    out, spans, last, shift = [], [], 0, 0
    for offset, piece in sorted(inserts, key=lambda x: x[0]):
        out.append(text[last:offset])
        start = offset + shift
        out.append(piece)
        spans.append((start, start + len(piece)))
        shift += len(piece)
        last = offset
    out.append(text[last:])
    return "".join(out), tuple(spans)


def _unchanged(text: str, reason: str) -> Padded:
    return Padded(text, False, word_count(text), 0, (), reason)


_LOOSE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)")


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``: :func:`judgelab.perturb.rules.split_sentences`'
    sentences, or, when it finds only one, the pieces ending in ``.``, ``!`` or ``?`` before white
    space (lower-cased, tokenised text such as Topical-Chat's "i like it . do you ?" has no capital
    letter after its full stops, so the DHP splitter sees one sentence)."""
    spans, pos = [], 0
    for sentence in split_sentences(text):
        start = text.find(sentence, pos)
        if start < 0:  # pragma: no cover - the splitter returns stripped slices of the text
            raise JudgelabError("internal: a sentence was not found in its text")
        spans.append((start, start + len(sentence)))
        pos = start + len(sentence)
    if len(spans) != 1:
        return spans
    loose, start = [], 0
    for match in _LOOSE_END.finditer(text):
        loose.append((start, match.end()))
        start = match.end()
    loose.append((start, len(text)))
    trimmed = []
    for a, b in loose:
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            trimmed.append((a + lead, a + lead + len(piece.strip())))
    return trimmed if len(trimmed) > 1 else spans


def repeat_sentences(text: str, share: float, rng: random.Random) -> Padded:
    """Repeat sentences of ``text`` (each copy right after its sentence) until at least ``share``
    of its words are added.

    Example:
        >>> p = repeat_sentences("One two. Three four five.", 0.3, random.Random(0))
        >>> p.added_words >= 2, strip_padding(p) == "One two. Three four five."
        (True, True)
    """
    words = word_count(text)
    spans = _sentence_spans(text)
    if words == 0 or not spans:
        return _unchanged(text, "empty text: nothing to repeat")
    target = math.ceil(share * words)
    inserts: list[tuple[int, str]] = []
    added = 0
    order: list[int] = []
    while added < target:
        if not order:
            order = rng.sample(range(len(spans)), len(spans))
        start, end = spans[order.pop()]
        sentence = text[start:end]
        inserts.append((end, " " + sentence))
        added += word_count(sentence)
    padded, inserted = _insert(text, inserts)
    return Padded(padded, True, words, added, inserted)


def add_filler(text: str, share: float, rng: random.Random, fillers: tuple[str, ...] = FILLERS) -> Padded:
    """Append neutral filler sentences (``fillers``, in a seeded order, cycled) until at least
    ``share`` of the text's words are added.

    Example:
        >>> p = add_filler("A short reply.", 0.5, random.Random(0))
        >>> p.text.startswith("A short reply. "), p.added_words >= 2
        (True, True)
    """
    words = word_count(text)
    if words == 0:
        return _unchanged(text, "empty text: no words to add a share of")
    if not fillers:
        raise JudgelabError("no filler sentences given")
    target = math.ceil(share * words)
    chosen: list[str] = []
    added = 0
    order: list[str] = []
    while added < target:
        if not order:
            order = rng.sample(list(fillers), len(fillers))
        sentence = order.pop()
        chosen.append(sentence)
        added += word_count(sentence)
    sep = "" if re.search(r"\s$", text) else " "
    padded, inserted = _insert(text, [(len(text), sep + " ".join(chosen))])
    return Padded(padded, True, words, added, inserted)


def pad_text(text: str, padding: Padding, rng: random.Random) -> Padded:
    """The padded copy of ``text`` for one :class:`Padding`."""
    if padding.kind == "repeat":
        return repeat_sentences(text, padding.share, rng)
    if padding.kind == "filler":
        return add_filler(text, padding.share, rng)
    raise JudgelabError(f"unknown padding kind {padding.kind!r}; known: {', '.join(KINDS)}")


def strip_padding(padded: Padded) -> str:
    """The text without its padding (the original, byte for byte)."""
    out, last = [], 0
    for start, end in padded.spans:
        out.append(padded.text[last:start])
        last = end
    out.append(padded.text[last:])
    return "".join(out)
