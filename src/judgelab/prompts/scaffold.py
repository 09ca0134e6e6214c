"""A template from the instructions human raters got (``judgelab templates new``).

The judge should be asked what the people were asked. :func:`scaffold_template` writes a template
whose instruction is the raters' instructions **verbatim**, then the text to rate, then one
question per criterion on the given scale. Verbatim means byte for byte as the judge gets it:

* text that looks like Jinja (``{{``, ``{%``, ``{#``) is wrapped in ``{% raw %}…{% endraw %}``
  (an ``{% endraw %}`` inside the text is split so that it stays text), so nothing in the
  instructions is executed or dropped;
* the YAML holds the text as a literal block (``|-``) when YAML can keep it exactly, else as one
  double-quoted string with escapes (Windows line ends, trailing spaces, control characters);
* before anything is written, the template is read back through the same loader as
  ``rate --template`` and its prompt is rendered: the instructions must come out exactly as the
  file holds them, or nothing is written (never a silently altered prompt).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from judgelab.datasets.readers import read_text
from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_text_atomic

__all__ = ["parse_scale", "parse_criteria", "jinja_literal", "scaffold_yaml", "write_scaffold", "Scaffold"]

_SCALE = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*(?:-|–|\.\.|to)\s*([+-]?\d+(?:\.\d+)?)\s*")
#: What Jinja reads as the start of a tag, an expression or a comment (the default delimiters).
_JINJA_START = re.compile(r"\{[{%#]")
#: What ends a raw block inside it (Jinja's lexer: ``{%`` [-+] spaces ``endraw``).
_ENDRAW = re.compile(r"\{%[-+]?\s*endraw")
#: Where the text to rate goes, after the instructions (a blank line between).
_TEXT_BLOCK = "Text to rate:\n{{ text }}\n(End of text)"
_SENTINEL = "\x00judgelab-text\x00"


def parse_scale(value: str) -> tuple[float, float]:
    """``"1-5"`` (or ``1..5``, ``1 to 5``, ``0-1``, ``-2-2``) as (low, high), low < high.

    Example:
        >>> parse_scale("1-5"), parse_scale("-3 to 3")
        ((1.0, 5.0), (-3.0, 3.0))
    """
    match = _SCALE.fullmatch(value or "")
    if not match:
        raise JudgelabError(f"--scale {value!r}: expected LOW-HIGH, e.g. --scale 1-5")
    low, high = float(match.group(1)), float(match.group(2))
    if not low < high:
        raise JudgelabError(f"--scale {value!r}: the low end must be below the high end, e.g. --scale 1-5")
    return low, high


def parse_criteria(value: str) -> list[str]:
    """``"fluency,coherence"`` as names; an empty or repeated name is an error."""
    names = [c.strip() for c in (value or "").split(",")]
    if not value or not all(names):
        raise JudgelabError(f"--criteria {value!r}: expected comma-separated names, e.g. --criteria fluency,coherence")
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise JudgelabError(f"--criteria names {', '.join(map(repr, repeated))} twice")
    return names


def jinja_literal(text: str) -> str:
    """Jinja source that renders to ``text`` exactly (``text`` is never executed).

    Jinja reads ``{{``, ``{%`` and ``{#`` as its own syntax and turns ``\\r\\n`` and ``\\r`` into
    ``\\n``: such text goes inside ``{% raw %}…{% endraw %}`` and every carriage return is written
    as the expression ``{{ "\\r" }}``.

    Example:
        >>> jinja_literal("Plain words.")
        'Plain words.'
        >>> jinja_literal("Write {{ name }}")
        '{% raw %}Write {{ name }}{% endraw %}'
    """
    return '{{ "\\r" }}'.join(_literal_piece(piece) for piece in text.split("\r"))


def _literal_piece(text: str) -> str:
    """Jinja source for a text without carriage returns."""
    if not _JINJA_START.search(text) and not text.endswith("{"):  # "{" then "{{ ..." would open a tag
        return text
    parts = []
    last = 0
    for match in _ENDRAW.finditer(text):  # "{%" of an endraw inside the text: close raw, write "{%" as a string
        parts.append("{% raw %}" + text[last:match.start()] + "{% endraw %}{{ '{%' }}")
        last = match.start() + 2
    parts.append("{% raw %}" + text[last:] + "{% endraw %}")
    return "".join(parts)


def _number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def _question(criterion: str, scale: tuple[float, float]) -> str:
    low, high = (_number(x) for x in scale)
    return f"How would you rate the {criterion} of the text, from {low} (lowest) to {high} (highest)?"


class _Dumper(yaml.SafeDumper):
    """Multi-line texts as literal blocks (``|``) where YAML can keep them exactly."""


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value and _reads_back(value, "|") else None
    if not _reads_back(value, style):  # YAML reads some characters written as they are as line breaks (U+0085)
        style = '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _reads_back(value: str, style: str | None) -> bool:
    """Whether YAML reads ``value`` written in ``style`` back as ``value``."""
    node = yaml.ScalarNode("tag:yaml.org,2002:str", value, style=style)
    return yaml.safe_load(yaml.serialize(node, allow_unicode=True, width=100_000)) == value


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, lambda dumper, value: dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=True))


def scaffold_yaml(instructions: str, criteria: list[str], scale: tuple[float, float], name: str,
                  source: str = "the raters' instructions") -> str:
    """The YAML text of a template asking ``criteria`` on ``scale`` after the raters' ``instructions``.

    The instruction is ``instructions`` verbatim, a blank line, then ``Text to rate:``, the item's
    ``{{ text }}`` and ``(End of text)``; each criterion's question names the scale's ends.

    Example:
        >>> text = scaffold_yaml("Rate each story.", ["fluency"], (1, 5), "mine")
        >>> "instruction: |-\\n  Rate each story.\\n\\n  Text to rate:" in text
        True
    """
    if not instructions.strip():
        raise JudgelabError(f"{source}: no text (the raters' instructions go here)")
    if not name.strip() or name != name.strip() or "\n" in name:
        raise JudgelabError(f"--name {name!r}: give a name without surrounding spaces, e.g. --name my-study")
    core = instructions.rstrip("\n")  # the final line breaks stay outside {% raw %}: the file reads as it will be sent
    tail = instructions[len(core):]
    gap = "\n" if tail else "\n\n"
    doc = {
        "name": name,
        "description": f"The raters' instructions of {source}, verbatim (judgelab templates new)",
        "scale": [_number(x) for x in scale],
        "fields": {"text": "the text to rate"},
        "instruction": jinja_literal(core) + tail + gap + _TEXT_BLOCK,
        "criteria": {c: {"question": _question(c, scale)} for c in criteria},
        "logprob_cue": "Answer:",
    }
    header = (f"# Written by `judgelab templates new` from {source}.\n"
              "# The instruction is the raters' instructions verbatim (text that looks like Jinja is inside\n"
              "# {% raw %} … {% endraw %}, so it reaches the judge as written), then the text to rate.\n"
              "# Edit the questions and the layout as you like; `judgelab templates show FILE` checks the file\n"
              "# and `judgelab rate --template FILE --dry-run` shows the prompts exactly as sent.\n")
    return header + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100_000)


def _check_verbatim(text: str, path: Path, instructions: str, criteria: list[str]) -> None:
    """Read the YAML back as ``rate --template`` does; the prompt must start with the instructions exactly."""
    from judgelab.prompts import Template, parse_yaml_model

    template = parse_yaml_model(text, path, Template, "template")
    template.check(criteria, None)
    for criterion in criteria:
        prompt = template.render(criterion, {"item_id": "check", "text": _SENTINEL})
        if not prompt.startswith(instructions) or _SENTINEL not in prompt[len(instructions):]:
            raise JudgelabError(f"{path}: the template would not give the judge the instructions verbatim; "
                                "nothing was written (please report this with the instructions file)")


@dataclass(frozen=True)
class Scaffold:
    """What :func:`write_scaffold` wrote: the file, the template's name and criteria."""

    path: Path
    name: str
    criteria: tuple[str, ...]
    scale: tuple[float, float]


def write_scaffold(instructions: str | Path, criteria: str | list[str], scale: str | tuple[float, float], out: str | Path,
                   name: str | None = None, overwrite: bool = False) -> Scaffold:
    """Write a template made from the raters' instructions file (``judgelab templates new``).

    Args:
        instructions: a UTF-8 text file of the instructions the human raters got.
        criteria: the criteria (names, or one comma-separated text).
        scale: ``"1-5"`` or (low, high).
        out: the ``.yaml`` file to write.
        name: the template's name (default: the file name of ``out`` without ``.yaml``).
        overwrite: replace an existing ``out`` (default: refuse).

    Returns:
        :class:`Scaffold`.

    Raises:
        JudgelabError: an unreadable or empty instructions file, a bad scale or criteria list, an
            ``out`` that is not a ``.yaml`` file, exists (without ``overwrite``) or cannot be written.
    """
    out = Path(out)
    if out.suffix not in {".yaml", ".yml"}:
        raise JudgelabError(f"--out {out}: a template file ends in .yaml, e.g. --out {out.with_suffix('.yaml')}")
    if out.is_dir():
        raise JudgelabError(f"--out {out} is a folder; give a file name, e.g. --out {out / 'template.yaml'}")
    if out.exists() and not overwrite:
        raise JudgelabError(f"--out {out} exists; choose another file or add --force to replace it")
    if not out.parent.is_dir():
        raise JudgelabError(f"--out {out}: the folder {out.parent} does not exist")
    names = parse_criteria(criteria) if isinstance(criteria, str) else list(criteria)
    bounds = parse_scale(scale) if isinstance(scale, str) else (float(scale[0]), float(scale[1]))
    text = read_text(instructions)
    name = out.stem if name is None else name
    yaml_text = scaffold_yaml(text, names, bounds, name, source=Path(instructions).name)
    _check_verbatim(yaml_text, out, text, names)
    write_text_atomic(out, yaml_text)
    return Scaffold(out, name, tuple(names), bounds)


