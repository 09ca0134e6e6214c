"""Responses of several systems to the same instructions: the input of preference judging.

One row per instruction × system (``docs/preference-judging.md``): the instruction's id (``item_id``, or
the items' id column), the instruction (``instruction``, or the items' text column), ``system``,
``response``, optionally ``reference`` (a reference answer, the same for every system of an instruction)
and ``turns`` (the earlier turns of the conversation that system had: a list of ``{"role", "content"}``
messages, MT-Bench's multi-turn questions; in a CSV cell, that list as JSON). Files are read by
:mod:`judgelab.datasets.readers` (text byte for byte), a DataFrame gives the same rows. Bad input is one
:class:`~judgelab.errors.JudgelabError` naming the file and the row.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.datasets.readers import Records, frame_records, is_frame, read_records
from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Response", "Responses", "ResponseFields", "load_responses", "responses_from_records"]

_ROLES = ("user", "assistant", "system")


@dataclass(frozen=True)
class Response:
    """One system's response to one instruction (``turns``: the earlier turns of its conversation)."""

    item_id: str
    instruction: str
    system: str
    response: str
    reference: str | None = None
    turns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ResponseFields:
    """Which columns hold what; ``id`` and ``instruction`` fall back to ``item_id`` / ``id`` and
    ``instruction`` / ``text``, whichever the file has (the first named wins)."""

    id: tuple[str, ...] = ("item_id", "id")
    instruction: tuple[str, ...] = ("instruction", "text")
    system: str = "system"
    response: str = "response"
    reference: str = "reference"
    turns: str = "turns"


@dataclass(frozen=True)
class Responses:
    """The responses, by (item_id, system), with the instructions and systems in input order."""

    path: str
    rows: dict[tuple[str, str], Response]
    instructions: dict[str, str] = field(default_factory=dict)
    systems: tuple[str, ...] = ()

    def get(self, item_id: str, system: str) -> Response | None:
        return self.rows.get((item_id, system))

    def systems_of(self, item_id: str) -> list[str]:
        """The systems that answered ``item_id``, in input order."""
        return [s for s in self.systems if (item_id, s) in self.rows]


def load_responses(source: "str | Path | pd.DataFrame", fields: ResponseFields = ResponseFields()) -> Responses:
    """Read responses from a ``.jsonl``/``.json``/``.csv`` file or a DataFrame (one row per instruction × system).

    Raises:
        JudgelabError: no rows; a missing id, instruction, system or response; a repeated (item_id, system);
            an instruction or reference that differs between the systems of one item; ``turns`` that are not
            a list of ``{"role", "content"}`` messages — one line naming the file and the row.

    Example:
        >>> import pandas as pd
        >>> r = load_responses(pd.DataFrame({"item_id": [1, 1], "instruction": ["Say hi."] * 2,
        ...                                  "system": ["a", "b"], "response": ["Hi.", "Hello!"]}))
        >>> r.systems, r.get("1", "b").response
        (('a', 'b'), 'Hello!')
    """
    if is_frame(source):
        return responses_from_records(frame_records(source, "responses DataFrame"), fields)
    if not isinstance(source, (str, Path)):
        raise JudgelabError(f"responses: expected a file path or a pandas DataFrame, not {type(source).__name__}")
    return responses_from_records(read_records(source), fields)


def _column(rows: Records, names: tuple[str, ...], what: str) -> str:
    present = set(rows.columns) if rows.columns is not None else {k for row in rows for k in row}
    for name in names:
        if name in present:
            return name
    raise JudgelabError(f"{rows.path}: no {what} column ({' or '.join(map(repr, names))}); responses have one row per "
                        "instruction × system with item_id, instruction, system and response")


def _text(row: dict[str, Any], name: str, where: str, required: bool = True) -> str | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and value == ""):
        if required:
            raise JudgelabError(f"{where} has no {name!r}")
        return None
    if isinstance(value, (dict, list, bool)):
        raise JudgelabError(f"{where}: {name!r} must be text, not {type(value).__name__}")
    return value if isinstance(value, str) else str(value)


def _turns(value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise JudgelabError(f"{where}: 'turns' is not a JSON list of messages") from None
    if not isinstance(value, list) or not all(isinstance(m, dict) and m.get("role") in _ROLES
                                              and isinstance(m.get("content"), str) for m in value):
        raise JudgelabError(f"{where}: 'turns' must be a list of messages {{\"role\": user|assistant|system, "
                            "\"content\": text}} (the conversation before the instruction)")
    return tuple((m["role"], m["content"]) for m in value)


def responses_from_records(rows: Records, fields: ResponseFields = ResponseFields()) -> Responses:
    """:func:`load_responses` of rows read from a file or a DataFrame (the one place that makes responses)."""
    if not rows:
        raise JudgelabError(f"{rows.path}: no responses")
    id_col = _column(rows, fields.id, "id")
    text_col = _column(rows, fields.instruction, "instruction")
    for name in (fields.system, fields.response):
        _column(rows, (name,), name)
    found: dict[tuple[str, str], Response] = {}
    instructions: dict[str, str] = {}
    references: dict[str, str | None] = {}
    systems: dict[str, None] = {}
    for index, row in enumerate(rows):
        where = f"{rows.path}: row {index + 1} ({rows.where(index)})"
        item_id, system = _text(row, id_col, where), _text(row, fields.system, where)
        assert item_id is not None and system is not None
        instruction, response = _text(row, text_col, where), _text(row, fields.response, where)
        assert instruction is not None and response is not None
        reference = _text(row, fields.reference, where, required=False)
        if (item_id, system) in found:
            raise JudgelabError(f"{where}: system {system!r} answers item {item_id!r} twice")
        if instructions.setdefault(item_id, instruction) != instruction:
            raise JudgelabError(f"{where}: item {item_id!r} has another instruction than in its earlier row "
                                f"(one instruction per item_id)")
        if references.setdefault(item_id, reference) != reference:
            raise JudgelabError(f"{where}: item {item_id!r} has another reference than in its earlier row "
                                f"(one reference answer per item_id)")
        found[(item_id, system)] = Response(item_id, instruction, system, response, reference,
                                            _turns(row.get(fields.turns), where))
        systems.setdefault(system)
    return Responses(rows.path, found, instructions, tuple(systems))
