"""The shape a constrained answer must take (``--constrain``), said once for every backend.

A run with ``constrain`` asks each rating call with an :class:`AnswerFormat`: the scale's whole
points, the metrics one answer rates (a multi-metric criterion such as NLE's informativeness and
clarity) or a Yes / No / Neutral comparison. Each backend turns it into its own mechanism — the
embedded judge into a llama.cpp GBNF grammar (:meth:`AnswerFormat.gbnf`), an OpenAI-compatible
endpoint into a JSON-schema ``response_format`` (:meth:`AnswerFormat.response_format`) — and
declares which one it offers (:attr:`judgelab.models.base.Capabilities.constrain`). Both shapes are
read by :func:`judgelab.parse.parse_structured` and the ordinary parse rules, so a constrained
answer cannot fail to parse where the backend enforces the format.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["AnswerFormat", "COMPARISON_WORDS", "SCORE_FIELD", "ANSWER_FIELD"]

#: The words of a comparison answer (:func:`judgelab.parse.parse_comparison`).
COMPARISON_WORDS = ("Yes", "No", "Neutral")
#: The JSON field of a single rating.
SCORE_FIELD = "score"
#: The JSON field of a comparison.
ANSWER_FIELD = "answer"


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid GBNF literal (quotes and backslashes escaped)


@dataclass(frozen=True)
class AnswerFormat:
    """What a constrained answer may say.

    Attributes:
        kind: ``rating`` (whole points ``low``..``high``) or ``comparison`` (Yes / No / Neutral).
        low, high: the scale's lowest and highest point (whole numbers).
        metrics: the metrics one answer rates, in order (empty: one rating).

    Example:
        >>> AnswerFormat("rating", 1, 5).gbnf().splitlines()[0]
        'root ::= [ \\\\n]{0,2} score'
        >>> AnswerFormat("rating", 1, 3).response_format()["json_schema"]["schema"]["properties"]
        {'score': {'type': 'integer', 'enum': [1, 2, 3]}}
    """

    kind: Literal["rating", "comparison"] = "rating"
    low: int = 1
    high: int = 5
    metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("rating", "comparison"):
            raise ValueError(f"unknown answer kind {self.kind!r}")
        if self.kind == "rating" and not self.low <= self.high:
            raise ValueError(f"empty scale {self.low}..{self.high}")

    @property
    def points(self) -> list[int]:
        """The scale's whole points."""
        return list(range(self.low, self.high + 1))

    def fields(self) -> tuple[str, ...]:
        """The JSON answer's fields: the metrics, ``score`` or ``answer``."""
        if self.kind == "comparison":
            return (ANSWER_FIELD,)
        return self.metrics or (SCORE_FIELD,)

    def to_json(self) -> dict[str, Any]:
        """The format as it enters a request's ledger key."""
        return {"kind": self.kind, "low": self.low, "high": self.high, "metrics": list(self.metrics)}

    # -- the embedded judge: a llama.cpp grammar -----------------------------------------------
    def gbnf(self) -> str:
        """A GBNF grammar whose every sentence the parse rules read as a valid rating.

        At most two leading spaces or line breaks (where a completion-style model starts its
        answer), then the number alone, ``metric: N`` per metric on its own line, or the
        comparison word; nothing after it, so generation ends there.
        """
        if self.kind == "comparison":
            words = " | ".join(_gbnf_literal(w) for w in COMPARISON_WORDS)
            return f"root ::= [ \\n]{{0,2}} answer\nanswer ::= {words}\n"
        score = " | ".join(_gbnf_literal(str(p)) for p in sorted(self.points, reverse=True))
        if not self.metrics:
            return f"root ::= [ \\n]{{0,2}} score\nscore ::= {score}\n"
        parts = " \"\\n\" ".join(f"{_gbnf_literal(m + ': ')} score" for m in self.metrics)
        return f"root ::= [ \\n]{{0,2}} {parts}\nscore ::= {score}\n"

    # -- OpenAI-compatible endpoints: a JSON schema -------------------------------------------------
    def json_schema(self) -> dict[str, Any]:
        """The answer's JSON schema (strict mode: every field required, no other field)."""
        if self.kind == "comparison":
            prop: dict[str, Any] = {"type": "string", "enum": list(COMPARISON_WORDS)}
        else:
            prop = {"type": "integer", "enum": self.points}
        fields = self.fields()
        return {"type": "object", "properties": {f: dict(prop) for f in fields}, "required": list(fields),
                "additionalProperties": False}

    def response_format(self) -> dict[str, Any]:
        """The chat-completion ``response_format`` that enforces :meth:`json_schema`."""
        return {"type": "json_schema", "json_schema": {"name": "rating", "strict": True, "schema": self.json_schema()}}
