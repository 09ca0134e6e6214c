"""Prompt templates stored as YAML data files, rendered with Jinja2.

A template holds an ``instruction`` (shared by every criterion unless a criterion
brings its own), one ``question`` per criterion, instruction ``variants`` that
prepend or append a sentence (Chiang & Lee 2023, section 3.3.2), the ``scale`` and
the ``logprob_cue`` written after the prompt when a score is read from next-token
log-probabilities. The shipped templates reproduce the papers' prompts verbatim;
users add their own by passing a path to a YAML file of the same shape.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Mapping

import jinja2
import yaml
from pydantic import BaseModel, ValidationError, field_validator

from judgelab.errors import JudgelabError

__all__ = ["Criterion", "Variant", "Template", "load_template", "available_templates", "load_yaml_model", "resolve_data_file"]

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)


class Criterion(BaseModel):
    question: str
    instruction: str | None = None
    requires: list[str] = []
    #: Metrics rated together in one answer (each becomes its own rating); empty = the criterion itself.
    metrics: list[str] = []


class Variant(BaseModel):
    prepend: str | None = None
    append: str | None = None


class Template(BaseModel):
    name: str
    description: str = ""
    scale: tuple[float, float] = (1, 5)
    fields: dict[str, str] = {}
    instruction: str | None = None
    criteria: dict[str, Criterion]
    variants: dict[str, Variant] = {}
    logprob_cue: str = "Answer:"
    #: ``rating`` (a number on the scale) or ``comparison`` (Yes / No / Neutral → +1 / -1 / 0).
    answer: Literal["rating", "comparison"] = "rating"
    #: How one item with its human scores is written as an in-prompt example (dynamic prompting).
    example_format: str | None = None

    def digest(self) -> str:
        """SHA-256 of the template's full content (instructions, questions, scale, variants …)."""
        import hashlib
        import json

        blob = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def render_example(self, fields: Mapping[str, Any]) -> str:
        if not self.example_format:
            raise JudgelabError(f"template {self.name!r} has no example_format for dynamic prompting")
        return _render(self.example_format, fields)

    def outputs(self, criterion: str) -> list[str]:
        """The rating names one answer to ``criterion`` yields."""
        return self.criteria[criterion].metrics or [criterion]

    @field_validator("criteria")
    @classmethod
    def _non_empty(cls, value: dict[str, Criterion]) -> dict[str, Criterion]:
        if not value:
            raise ValueError("a template needs at least one criterion")
        return value

    def check(self, criteria: list[str], variant: str | None) -> None:
        """Fail with one line on unknown criteria or variants."""
        unknown = [c for c in criteria if c not in self.criteria]
        if unknown:
            raise JudgelabError(
                f"unknown criterion {', '.join(map(repr, unknown))} for template {self.name!r}; "
                f"known: {', '.join(self.criteria)}"
            )
        if variant and variant not in self.variants:
            known = ", ".join(self.variants) or "none"
            raise JudgelabError(f"unknown instruction variant {variant!r} for template {self.name!r}; known: {known}")
        for c in criteria:
            if self.criteria[c].instruction is None and self.instruction is None:
                raise JudgelabError(f"template {self.name!r}: criterion {c!r} has no instruction")

    def required_fields(self, criterion: str) -> list[str]:
        return ["text", *self.criteria[criterion].requires]

    def render(self, criterion: str, item: Mapping[str, Any], variant: str | None = None) -> str:
        """The exact text a human rater (and the judge) is shown for one criterion.

        Parts are joined by newlines: [variant prepend] instruction question [variant append].
        """
        spec = self.criteria[criterion]
        for field in self.required_fields(criterion):
            value = item.get(field)
            if value is None or (isinstance(value, str) and not value.strip()):
                raise JudgelabError(
                    f"item {item.get('item_id', '?')!r}: criterion {criterion!r} of template {self.name!r} "
                    f"needs the field {field!r}"
                )
        context = {"examples": None, **item}  # optional: retrieved examples (dynamic prompting)
        parts: list[str] = []
        chosen = self.variants.get(variant) if variant else None
        if chosen and chosen.prepend:
            parts.append(chosen.prepend)
        parts.append(_render(spec.instruction or self.instruction or "", context))
        parts.append(_render(spec.question, context))
        if chosen and chosen.append:
            parts.append(chosen.append)
        return "\n".join(p for p in parts if p)


@lru_cache(maxsize=256)
def _compile(source: str) -> jinja2.Template:
    return _ENV.from_string(source)


def _render(source: str, context: Mapping[str, Any]) -> str:
    try:
        return _compile(source).render(**context)
    except jinja2.UndefinedError as exc:
        raise JudgelabError(f"template field missing: {exc.message}") from None


def _shipped_dir() -> Path:
    return Path(str(resources.files("judgelab.prompts") / "templates"))


def available_templates() -> list[str]:
    """Names of the templates shipped with judgelab."""
    return sorted(p.stem for p in _shipped_dir().glob("*.yaml"))


def load_template(name_or_path: str) -> Template:
    """Load a shipped template by name, or a user's YAML template by path.

    Parsed files are cached by path, modification time and size, so an edited file is read again.
    """
    path = resolve_data_file(name_or_path, _shipped_dir(), "template", available_templates())
    stat = path.stat()
    return _load_template_file(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load_template_file(path: str, mtime_ns: int, size: int) -> Template:
    return load_yaml_model(Path(path), Template, "template")


def resolve_data_file(name_or_path: str, folder: Path, what: str, shipped: list[str]) -> Path:
    """A user's ``.yaml`` path, or a shipped file by name; unknown names are one clear error."""
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} and path.exists():
        return path
    path = folder / f"{name_or_path}.yaml"
    if not path.exists():
        raise JudgelabError(f"unknown {what} {name_or_path!r}; shipped: {', '.join(shipped)} (or give a path to a .yaml file)")
    return path


def load_yaml_model(path: Path, model: type[BaseModel], what: str):
    """Validate a YAML data file against a pydantic model; errors are one line naming the place."""
    try:
        return model.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        raise JudgelabError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise JudgelabError(f"{path}: invalid {what} at {where}: {first['msg']}") from None
