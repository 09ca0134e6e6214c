"""YAML data files (templates, DHP tasks, run files): read safely, and where in one a value is.

A template, DHP task or run file is validated after YAML has become Python data, so a
validation error knows the field (``criteria.fluency.question``) but not the line. These
functions find the line again in the file's text (``yaml.compose`` keeps every node's position),
so that every error about a data file is one line naming the file, the line and the field.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Sequence

import yaml

from judgelab.datasets.readers import read_text
from judgelab.errors import JudgelabError

__all__ = ["yaml_line", "validation_message", "read_yaml"]


def _child(node: Any, key: Any) -> tuple[Any, Any] | None:
    """(key node, value node) of ``key`` in a mapping node, or (item, item) of index ``key`` in a sequence node."""
    if isinstance(node, yaml.MappingNode):
        return next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(key)), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        return node.value[key], node.value[key]
    return None


def yaml_line(text: str, keys: Sequence[Any], *, at_key: bool = False) -> tuple[int, bool] | None:
    """The place of the value at ``keys`` (mapping keys and list indexes) in a YAML text.

    Args:
        text: the file's text.
        keys: the path to the value, e.g. ``("criteria", "fluency", "question")`` or ``("scale", 1)``.
        at_key: give the line of the key (where a field's name is written) rather than of its value.

    Returns:
        (1-based line, whether the value is a block scalar ``|``/``>``), or None when the text is not
        YAML or the path is not in it.

    Example:
        >>> yaml_line("a:\\n  b: [1, 2]\\n", ("a", "b", 1))
        (2, False)
    """
    try:
        node = yaml.compose(text)
    except (yaml.YAMLError, RecursionError):
        return None
    key_node = node
    for key in keys:
        found = _child(node, key)
        if found is None:
            return None
        key_node, node = found
    place = key_node if at_key else node
    return place.start_mark.line + 1, getattr(node, "style", None) in ("|", ">")


def _deepest_line(text: str, keys: Sequence[Any]) -> tuple[int | None, tuple[Any, ...]]:
    """The line of the deepest part of ``keys`` the text has (a missing field: its parent's line)."""
    for end in range(len(keys), 0, -1):
        found = yaml_line(text, keys[:end], at_key=True)
        if found is not None:
            return found[0], tuple(keys[:end])
    return None, ()


def validation_message(errors: Sequence[Any], path: str | Path, text: str, what: str,
                       model: Any = None) -> str:
    """One line for pydantic's validation ``errors`` of a YAML file: the file, the field and its line.

    An unknown field comes first (a misspelt field also makes the intended one "missing"), named
    with the fields that are known there and the closest one.

    Example:
        >>> from pydantic import BaseModel, ConfigDict, ValidationError
        >>> class M(BaseModel):
        ...     model_config = ConfigDict(extra="forbid")
        ...     question: str
        >>> try:
        ...     M.model_validate({"questoin": "?"})
        ... except ValidationError as exc:
        ...     print(validation_message(exc.errors(), "m.yaml", "questoin: '?'\\n", "template", M))
        m.yaml: unknown field 'questoin' at line 1 (did you mean 'question'?; known fields: question)
    """
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = (unknown or errors)[0]
    loc = tuple(first["loc"])
    line, _ = _deepest_line(text, loc)
    at = f" at line {line}" if line is not None else ""
    if first in unknown:
        name = str(loc[-1])
        where = ".".join(map(str, loc[:-1]))
        known = _known_fields(model, loc[:-1])
        close = difflib.get_close_matches(name, known, n=1)
        hint = "; ".join(x for x in (f"did you mean {close[0]!r}?" if close else "",
                                     f"known fields: {', '.join(known)}" if known else "") if x)
        return (f"{path}: unknown field {name!r}{' in ' + where if where else ''}{at}"
                f"{' (' + hint + ')' if hint else ''}")
    where = ".".join(map(str, loc)) or "the top level"
    return f"{path}: invalid {what} at {where}{at}: {first['msg']}"


def _known_fields(model: Any, loc: Sequence[Any]) -> list[str]:
    """The field names of the pydantic model reached by ``loc`` from ``model`` (dict values and list items skipped)."""
    import typing

    from pydantic import BaseModel

    current: Any = model
    for key in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(key))
            if field is None:
                return []
            current = field.annotation
            continue
        args = [a for a in typing.get_args(current) if a is not type(None)]
        if not args:
            return []
        current = args[-1]  # dict[str, X] / list[X] / X | None: the value type
    while not (isinstance(current, type) and issubclass(current, BaseModel)):
        args = [a for a in typing.get_args(current) if a is not type(None)]
        if not args:
            return []
        current = args[-1]
    return list(current.model_fields)


def read_yaml(path: Path) -> Any:
    """A YAML data file (template, DHP task, run file) read safely; a malformed one is one line
    naming the file and line.

    Raises:
        JudgelabError: unreadable file, invalid YAML, or nesting too deep.
    """
    return _parse_yaml(read_text(path), path)


def _parse_yaml(text: str, path: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise JudgelabError(f"{path}: not valid YAML{at} ({str(exc).splitlines()[0]})") from None
    except RecursionError:
        raise JudgelabError(f"{path}: not valid YAML (nested too deeply)") from None
