"""Sample items that fill every field a shipped template reads (for the judge-prompt fixity test)."""
from __future__ import annotations

from typing import Any

import jinja2
import jinja2.meta

_ATTRIBUTES = ("text", "context", "premise", "hypothesis", "relationship", "post", "statement", "speaker", "label")


def _value(name: str) -> str:
    return f"<{name}: first line & 'quoted'\n  second line  >"


def field_names(template: Any) -> set[str]:
    env = jinja2.Environment()
    names: set[str] = set()
    for _, source in template.jinja_texts():
        # model-only tags are not Jinja of a plain environment: drop them before parsing for names
        source = source.replace("{% model_only %}", "").replace("{% endmodel_only %}", "")
        names |= jinja2.meta.find_undeclared_variables(env.parse(source))
    return names | {"text", "context"}


def sample_items(template: Any) -> list[tuple[str, dict[str, Any]]]:
    """(label, item) pairs: every field filled, once without and once with dynamic-prompting examples."""
    item: dict[str, Any] = {n: _value(n) for n in sorted(field_names(template)) if n != "examples"}
    for side in ("first", "second"):
        if side in item:
            item[side] = {a: _value(f"{side}.{a}") for a in _ATTRIBUTES}
            item[side]["turns"] = [{"role": r, "content": _value(f"{side}.turns.{r}")} for r in ("user", "assistant")]
    return [("plain", item), ("examples", {**item, "examples": _value("examples")})]
