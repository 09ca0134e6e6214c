"""Rating extraction from free-text judge answers.

The rules follow Chiang & Lee (2023), appendix D.2.1 ("Parsing the LLM outputs"):
remove the strings ``1-5``, ``out of 5`` and ``/5``; for the adversarial task remove
``title 1`` / ``title 2``; then take the first number; keep half steps such as 4.5.

Real answers need a little more care, so the same idea is applied to every way a
model restates the scale ("on a scale of 1 to 5", "with 1 being the lowest",
"5 = strongly agree"), markdown emphasis, en/em dashes and number words. When an
explicit rating phrase is present ("I would rate ... as a 4", "Score: 4") its
number wins over an earlier incidental number. Chat-template tags a server leaves in
the text (``[INST]``, ``<|im_end|>``, ``<start_of_turn>`` …) are turn boundaries, not
text, and a list item's number ("1. The story …") is not a rating. A failed extraction
is never a score: it is ``None`` with a reason (:class:`ParseResult.status`).
"""
from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

from judgelab.answer_layout import strip_list_markers, turn_breaks
from judgelab.status import Status

__all__ = ["ParseResult", "parse_judgment", "parse_metric", "parse_comparison", "parse_preference", "parse_rating",
           "is_refusal", "truncation_checked", "parse_structured", "PARSER_VERSION"]

#: The version of the rules above. Every judgment records it (``meta.parser``); a run re-reads, from the
#: recorded answer and with no new call, a judgment an earlier version parsed. Raise it whenever a
#: rule changes what an answer parses to. 1: until judgelab 0.2.0's anchor-list rule; 2: anchor lists
#: and "1-5." are scale restatements; 3: chat-template tags are turn boundaries and list markers
#: ("1. The story …") are not ratings.
PARSER_VERSION = 3

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}
_NUM = r"\d+(?:\.\d+)?"
_DASH = r"(?:-|–|—|‒|to)"

_REFUSAL_PATTERNS = [
    r"\bas an ai\b",
    r"\bi am an ai\b",
    r"\bi'm an ai\b",
    r"\bi am a language model\b",
    r"\bas a (?:large )?language model\b",
    r"\bi (?:do not|don't) have (?:the ability|personal|feelings|emotions|preferences)",
    r"\bi (?:cannot|can't|can not|am unable to|am not able to|won't|will not) (?:rate|provide|evaluate|assess|answer|give|comply|help)",
    r"\bviolates? (?:the )?(?:openai )?content polic",
    r"\bi'm sorry, but\b",
]
_REFUSAL_RE = re.compile("|".join(_REFUSAL_PATTERNS), re.IGNORECASE)

# An explicit rating phrase: the number that follows it is the rating.
_CUE_RE = re.compile(
    r"(?:\brat(?:e|ed|ing)\b|\bscore\b|\bgrade\b|\bgive\b|\bgiving\b|\bassign\b|\bverdict\b|\banswer\b)"
    r"[^.\d\n]{0,120}?(?<![\w.])(" + _NUM + r")(?![\w])",
    re.IGNORECASE,
)
_MARKDOWN_RE, _DASHES_RE = re.compile(r"[*_`#]+"), re.compile(r"[–—‒−]")
_FIRST_NUM_RE = re.compile(r"(?<![\w.])(" + _NUM + r")(?![\w])")
_WORD_CUE_RE = re.compile(
    r"(?:\brat(?:e|ed|ing)\b|\bscore\b|\bgrade\b|\bgive\b)[^.\n]{0,80}?\b("
    + "|".join(_NUMBER_WORDS)
    + r")\b(?!\s+of\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParseResult:
    """Outcome of rating extraction.

    ``status`` is one of ``ok``, ``refusal``, ``no_rating``, ``out_of_range``, ``empty``, and
    ``truncated`` (:func:`truncation_checked`). ``score`` is set only when ``status == "ok"``.
    ``start`` is the character offset of the rating in the answer (``None`` without one).

    Attributes:
        score: the rating, or ``None``.
        status: a :class:`~judgelab.status.Status`.
        rule: the rule that found the rating ("rating phrase", "first number", "number word" …).
        start: the rating's character offset.

    Example:
        >>> parse_judgment("Score: 4", (1, 5)).ok
        True
    """

    score: float | None
    status: Status
    rule: str = ""
    start: int | None = None

    @property
    def explicit(self) -> bool:
        """The rating was introduced by a rating phrase ("I would rate it a 4", "Score: 4")."""
        return self.rule in {"rating phrase", "number word", "json"}

    @property
    def ok(self) -> bool:
        """Whether a score was read (``status`` is ``ok``)."""
        return self.status == Status.OK


def is_refusal(text: str) -> bool:
    """True when the answer declines to rate ("I am an AI and do not have ...").

    Args:
        text: the answer (``None`` is no refusal).

    Returns:
        Whether a refusal phrase occurs.

    Example:
        >>> is_refusal("As an AI language model, I cannot rate this.")
        True
    """
    return bool(_REFUSAL_RE.search(text or ""))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _normalise(text: str) -> str:
    """Normalise chat-template tags (line breaks), quotes, markdown and dashes; every replacement keeps
    the text's length, so positions in the normalised text are positions in the answer."""
    text = _MARKDOWN_RE.sub(_blank, turn_breaks(text).replace("\u2019", "'"))  # markdown emphasis and headings
    return _DASHES_RE.sub("-", text)


def _strip_scale_mentions(text: str, lo: float, hi: float) -> str:
    """Remove the places where the answer restates the scale (appendix D.2.1, generalised)."""
    for pattern in _scale_mention_patterns(lo, hi):
        text = pattern.sub(_blank, text)  # length kept: positions stay valid
    return _strip_anchor_lists(text)


@functools.lru_cache(maxsize=64)
def _scale_mention_patterns(lo: float, hi: float) -> tuple[re.Pattern[str], ...]:
    """The scale's restatement patterns, compiled once per scale (a run parses every answer on one scale)."""
    lo_s, hi_s = _fmt(lo), _fmt(hi)
    hi_word = next((w for w, v in _NUMBER_WORDS.items() if v == hi), None)
    patterns = [
        # "1-5", "1 to 5", "(1-5)", "from 1 to 5"
        rf"(?<![\w.]){re.escape(lo_s)}\s*{_DASH}\s*{re.escape(hi_s)}(?!\w|\.\d)",  # "1-5." ends a sentence
        # "out of 5", "out of five"
        rf"\bout\s+of\s+(?:a\s+(?:possible|maximum\s+of)\s+)?(?:{re.escape(hi_s)}{'|' + hi_word if hi_word else ''})\b",
        rf"/\s*{re.escape(hi_s)}(?![\d])",  # "/5", "/ 5"
        # "with 1 being the lowest", "5 = strongly agree", "1 means poor"
        rf"(?<![\w.]){_NUM}\s*(?:being|=|is|means|represents|indicates|for)\s+(?:the\s+)?"
        r"(?:\w+\s+){0,3}?(?:lowest|highest|worst|best|poor|poorest|excellent|low|high|disagree|agree|"
        r"least|most|minimum|maximum|bad|good)\b",
        # adversarial task: "title 1", "news title 2"
        r"\btitles?\s*[12]\b",
        # "scale of 1 ... 5" where the pair got separated: "scale (1 lowest, 5 highest)"
        r"\bscale\s+of\s+" + _NUM + r"\b",
    ]
    if float(lo).is_integer() and float(hi).is_integer() and 3 <= hi - lo + 1 <= 11:
        # every scale point listed in order: "1. 2. 3. 4. 5.", "1, 2, 3, 4, 5", "[1] [2] [3] [4] [5]", "(1) (2) …"
        sep = r"[.,;:)\]/|]?\s*[(\[]?"
        patterns.append(r"(?<![\w.])" + sep.join(_fmt(v) for v in range(int(lo), int(hi) + 1)) + r"[.,;:)\]]?(?!\w)")
    return tuple(re.compile(pattern, re.IGNORECASE) for pattern in patterns)


# A scale point with its anchor: "1: very incoherent", "2 = poor", "(3: neutral".
_ANCHOR_RE = re.compile(r"(?<![\w.])(" + _NUM + r")\s*[:=]\s*(?=[^\W\d_])")


def _strip_anchor_lists(text: str) -> str:
    """Remove an answer's restated anchor list ("1: very incoherent, 2: somewhat incoherent, …"):
    two or more different numbers each followed by ``:`` or ``=`` and a word, or one in parentheses
    ("1-5 (1: mostly unsupported)"). A single "4: mostly coherent" stays (it may be the rating)."""
    anchors = list(_ANCHOR_RE.finditer(text))
    if len({m.group(1) for m in anchors}) < 2:
        anchors = [m for m in anchors if text[:m.start(1)].rstrip().endswith("(")]
    if not anchors:  # the common case: nothing to blank
        return text
    chars = list(text)
    for m in anchors:
        chars[m.start(1):m.end(1)] = " " * (m.end(1) - m.start(1))
    return "".join(chars)


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def parse_judgment(text: str | None, scale: tuple[float, float] = (1, 5)) -> ParseResult:
    """Extract a rating and say why when there is none.

    Chiang & Lee (2023), appendix D.2.1. Order of rules: empty answer; chat-template
    tags read as line breaks and list markers ("1. The story …") removed; scale
    restatements removed; explicit rating phrase ("rate ... as a 4"); otherwise the
    first number; number words in a rating phrase ("I would rate it a four");
    refusal detection when no number is given.

    Args:
        text: the judge's answer.
        scale: the rating scale (lowest, highest).

    Returns:
        A :class:`ParseResult`: the score and ``ok``, or no score and why.

    Example:
        >>> parse_judgment("On a scale of 1-5, I would rate it a 4.", (1, 5))
        ParseResult(score=4.0, status=<Status.OK: 'ok'>, rule='rating phrase', start=37)
    """
    lo, hi = float(scale[0]), float(scale[1])
    if text is None or not text.strip():
        return ParseResult(None, Status.EMPTY)
    cleaned = _strip_scale_mentions(strip_list_markers(_normalise(text)), lo, hi)

    candidates: list[tuple[str, str, int]] = []
    cue = _CUE_RE.search(cleaned)
    if cue:
        candidates.append((cue.group(1), "rating phrase", cue.start(1)))
    first = _FIRST_NUM_RE.search(cleaned)
    if first:
        candidates.append((first.group(1), "first number", first.start(1)))
    if not candidates:
        word = _WORD_CUE_RE.search(cleaned)
        if word:
            candidates.append((str(_NUMBER_WORDS[word.group(1).lower()]), "number word", word.start(1)))
    if not candidates:
        if is_refusal(text):
            return ParseResult(None, Status.REFUSAL)
        return ParseResult(None, Status.NO_RATING)
    raw, rule, start = candidates[0]
    value = float(raw)
    if not (lo <= value <= hi) or math.isnan(value):
        return ParseResult(None, Status.OUT_OF_RANGE, rule, start)
    return ParseResult(value, Status.OK, rule, start)


def truncation_checked(result: ParseResult, finish_reason: str | None) -> ParseResult:
    """An answer cut off at ``max_tokens`` (``finish_reason == "length"``) keeps its score only
    when a rating phrase introduced it; otherwise it is ``truncated``: an incidental number in a
    cut-off explanation is not a rating.

    Args:
        result: the parse of the answer.
        finish_reason: the backend's finish reason.

    Returns:
        ``result``, or a ``truncated`` result without a score.

    Example:
        >>> truncation_checked(parse_judgment("The plot has 3 twists and", (1, 5)), "length").status
        <Status.TRUNCATED: 'truncated'>
    """
    if finish_reason != "length" or result.status in {Status.REFUSAL, Status.EMPTY} or result.explicit:
        return result
    return ParseResult(None, Status.TRUNCATED, result.rule, result.start)


def parse_rating(text: str | None, scale: tuple[float, float] = (1, 5)) -> float | None:
    """The rating in a free-text answer, or ``None`` (refusal, no number, out of range).

    >>> parse_rating("On a scale of 1-5, with 1 being the lowest, I would rate it as a 5.")
    5.0
    >>> parse_rating("I am an AI and I do not have the ability to experience enjoyment.") is None
    True

    Args:
        text: the answer.
        scale: the rating scale.

    Returns:
        The rating, or ``None``.
    """
    return parse_judgment(text, scale).score


def parse_metric(text: str | None, metric: str, scale: tuple[float, float] = (1, 7)) -> ParseResult:
    """The rating of one named metric in an answer that rates several (NLE study, tables 10-12).

    Finds the metric's name ("[Informativeness] 6", "Clarity: 5", "informativeness score of 4")
    and takes the first number after it, with the scale restatements removed first.

    Args:
        text: the answer.
        metric: the metric's name as the template asks for it.
        scale: the rating scale.

    Returns:
        A :class:`ParseResult` for that metric.

    Example:
        >>> parse_metric("[Informativeness] 6 [Clarity] 5", "clarity").score
        5.0
    """
    lo, hi = float(scale[0]), float(scale[1])
    if text is None or not text.strip():
        return ParseResult(None, Status.EMPTY)
    cleaned = _strip_scale_mentions(_normalise(text), lo, hi)
    match = re.search(re.escape(metric) + r"[^\d\n]{0,40}?(?<![\w.])(" + _NUM + r")(?![\w])", cleaned, re.IGNORECASE)
    if not match:
        return ParseResult(None, Status.REFUSAL if is_refusal(text) else Status.NO_RATING)
    value = float(match.group(1))
    if not lo <= value <= hi:
        return ParseResult(None, Status.OUT_OF_RANGE, "metric name")
    return ParseResult(value, Status.OK, "metric name")


_COMPARISON = {"yes": 1.0, "no": -1.0, "neutral": 0.0}


def parse_comparison(text: str | None) -> ParseResult:
    """A Yes / No / Neutral answer to "is the first more … than the second?" (NLE study, table 13).

    Score +1 = the first is better, -1 = the second is better, 0 = equal. The first of the
    three words in the answer counts ("Yes, because …", "**No**").

    Args:
        text: the answer.

    Returns:
        A :class:`ParseResult` with +1 (yes), -1 (no) or 0 (neutral).

    Example:
        >>> parse_comparison("Yes, the first is more informative.").score
        1.0
    """
    if text is None or not text.strip():
        return ParseResult(None, Status.EMPTY)
    match = re.search(r"\b(yes|no|neutral)\b", _normalise(text), re.IGNORECASE)
    if not match:
        return ParseResult(None, Status.REFUSAL if is_refusal(text) else Status.NO_RATING)
    return ParseResult(_COMPARISON[match.group(1).lower()], Status.OK, "comparison word")


_VERDICT_RE = re.compile(r"\[\[\s*(A|B|C|tie)\s*\]\]", re.IGNORECASE)
_VERDICT = {"a": 1.0, "b": -1.0, "c": 0.0, "tie": 0.0}


def parse_preference(text: str | None) -> ParseResult:
    """A pairwise verdict (MT-Bench's form): the last ``[[A]]``, ``[[B]]`` or ``[[tie]]`` (MT-Bench's ``[[C]]``
    too) in the answer, else an answer that is only ``A``, ``B`` or ``tie`` (one token, AlpacaEval's form).
    Score +1 = the first response (A), -1 = the second (B), 0 = a tie; ``start`` is the verdict's offset.

    Example:
        >>> parse_preference("B covers both cases. [[B]]").score, parse_preference(" A.").score
        (-1.0, 1.0)
    """
    if text is None or not text.strip():
        return ParseResult(None, Status.EMPTY)
    found = list(_VERDICT_RE.finditer(text))
    if found:
        return ParseResult(_VERDICT[found[-1].group(1).lower()], Status.OK, "verdict brackets", found[-1].start(1))
    bare = re.fullmatch(r"[\s*_`\"'(]*(A|B|tie)[\s*_`\"'.)]*", text, re.IGNORECASE)
    if bare:
        return ParseResult(_VERDICT[bare.group(1).lower()], Status.OK, "verdict token", bare.start(1))
    return ParseResult(None, Status.REFUSAL if is_refusal(text) else Status.NO_RATING)


def parse_structured(text: str | None, field: str, scale: tuple[float, float] | None = (1, 5)) -> ParseResult | None:
    """One field of a JSON-object answer (a constrained answer from a JSON-schema ``response_format``:
    ``{"score": 4}``, ``{"informativeness": 6, "clarity": 5}``, ``{"answer": "Yes"}``).

    Args:
        text: the answer.
        field: the field to read (``score``, a metric's name, or ``answer`` for a comparison).
        scale: the rating scale; ``None`` reads a comparison word (Yes / No / Neutral → +1 / -1 / 0).

    Returns:
        ``None`` when the answer is not a JSON object (the free-text rules apply), else the
        field's :class:`ParseResult`: ``ok`` with the value, ``no_rating`` without the field or
        with a value of the wrong type, ``out_of_range`` off the scale. ``start`` is the value's
        character offset in the answer.

    Example:
        >>> parse_structured('{"score": 4}', "score", (1, 5))
        ParseResult(score=4.0, status=<Status.OK: 'ok'>, rule='json', start=10)
        >>> parse_structured("I would rate it a 4", "score") is None
        True
    """
    if text is None or not text.lstrip().startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    value = data.get(field)
    match = re.search(re.escape(json.dumps(field)) + r"\s*:\s*", text)
    start = match.end() if match else None
    if scale is None:
        if not isinstance(value, str) or value.strip().lower() not in _COMPARISON:
            return ParseResult(None, Status.NO_RATING, "json")
        return ParseResult(_COMPARISON[value.strip().lower()], Status.OK, "json", start)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return ParseResult(None, Status.NO_RATING, "json")
    if not float(scale[0]) <= float(value) <= float(scale[1]):
        return ParseResult(None, Status.OUT_OF_RANGE, "json", start)
    return ParseResult(float(value), Status.OK, "json", start)
