"""Prompt templates stored as YAML data files, rendered with Jinja2.

A template holds an ``instruction`` (shared by every criterion unless a criterion
brings its own), one ``question`` per criterion, instruction ``variants`` that
prepend or append a sentence (Chiang & Lee 2023, section 3.3.2), the ``scale`` and
the ``logprob_cue`` written after the prompt when a score is read from next-token
log-probabilities. A criterion may bring its own ``scale`` (G-Eval rates SummEval's fluency
1-3 and the other criteria 1-5); a run asks only criteria that share one scale
(:meth:`Template.for_criteria`), so an answer is never read on another criterion's scale. The shipped templates reproduce the papers' prompts verbatim;
users add their own by passing a path to a YAML file of the same shape.

Templates come from users, so they are rendered in Jinja2's immutable sandbox
(:class:`jinja2.sandbox.ImmutableSandboxedEnvironment`, strict undefined, no autoescape:
prompts are plain text): a template can read the item's fields but cannot reach Python
internals, call unsafe methods or modify data; trying to is one error naming the file. Every
Jinja text of a template file is compiled when the file is loaded, so a syntax error is one
error naming the file and line.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Mapping

import jinja2
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, field_validator, model_validator

from judgelab.datasets.readers import read_text
from judgelab.errors import JudgelabError
from judgelab.prompts.model_only import without_tags
from judgelab.prompts.render import _compile, _render_pair, _syntax_error, render_text
from judgelab.prompts.yaml_places import _parse_yaml, validation_message, yaml_line

__all__ = ["Criterion", "Variant", "Template", "load_template", "available_templates", "load_yaml_model", "parse_yaml_model",
           "resolve_data_file", "render_text", "template_source"]

class Criterion(BaseModel):
    """One criterion of a template: its question, an optional instruction of its own, the item
    fields it requires, the metrics one answer carries and an optional scale of its own."""

    model_config = ConfigDict(extra="forbid")  # a misspelt field is an error naming it, not ignored
    question: str
    instruction: str | None = None
    requires: list[str] = []
    #: Metrics rated together in one answer (each becomes its own rating); empty = the criterion itself.
    metrics: list[str] = []
    #: This criterion's own scale (low, high); None = the template's ``scale``.
    scale: tuple[float, float] | None = None
    #: Labels of scale points shown to people in ``judgelab annotate`` (e.g. ``{1: "Very incoherent"}``);
    #: display only: never part of the judge's prompt or of the template's digest.
    anchors: dict[int, str] = {}


class Variant(BaseModel):
    """An instruction variant (Chiang & Lee 2023, §3.3.2): a sentence prepended and/or appended."""

    model_config = ConfigDict(extra="forbid")
    prepend: str | None = None
    append: str | None = None


class Template(BaseModel):
    """A prompt template (YAML data): instruction, criteria, variants, scale and log-probability cue.

    Rendered in Jinja2's immutable sandbox; see docs/ARCHITECTURE.md, "A template".
    """

    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    scale: tuple[float, float] = (1, 5)
    fields: dict[str, str] = {}
    instruction: str | None = None
    criteria: dict[str, Criterion]
    variants: dict[str, Variant] = {}
    logprob_cue: str = "Answer:"
    #: ``rating`` (a number on the scale), ``comparison`` (Yes / No / Neutral → +1 / -1 / 0) or ``preference``
    #: (a pairwise verdict ``[[A]]`` / ``[[B]]`` / ``[[tie]]`` → +1 / -1 / 0, :func:`judgelab.parse.parse_preference`).
    answer: Literal["rating", "comparison", "preference"] = "rating"
    #: How one item with its human scores is written as an in-prompt example (dynamic prompting).
    example_format: str | None = None
    #: The file the template was read from (error messages name it).
    _source: str | None = PrivateAttr(default=None)
    #: The file's text and the template's place in it (a DHP task's ``template``): render errors name the line.
    _yaml: tuple[str, tuple[str, ...]] | None = PrivateAttr(default=None)

    @property
    def origin(self) -> str:
        """How error messages name the template: its file, or its name when built in code."""
        return self._source or f"template {self.name!r}"

    def _at(self, *keys: str) -> str:
        """How a render error names the text at ``keys``: ``{origin}: criteria.q.question (line 7)``."""
        found = yaml_line(self._yaml[0], (*self._yaml[1], *keys)) if self._yaml else None
        at = "" if found is None else f" (starting at line {found[0]})" if found[1] else f" (line {found[0]})"
        return f"{self.origin}: {'.'.join(keys)}{at}"

    def jinja_texts(self) -> list[tuple[tuple[str, ...], str]]:
        """Every text rendered with Jinja, with its place in the template (variants are plain text)."""
        texts: list[tuple[tuple[str, ...], str]] = []
        if self.instruction is not None:
            texts.append((("instruction",), self.instruction))
        for name, criterion in self.criteria.items():
            if criterion.instruction is not None:
                texts.append((("criteria", name, "instruction"), criterion.instruction))
            texts.append((("criteria", name, "question"), criterion.question))
        if self.example_format is not None:
            texts.append((("example_format",), self.example_format))
        return texts

    def digest(self) -> str:
        """SHA-256 of the template's content as the judge gets it (instructions, questions, scale, variants …).

        What only people see is left out, so that it does not change a run's identity: the
        criteria's ``anchors`` and the exact ``{% model_only %}`` / ``{% endmodel_only %}`` tags
        (:mod:`judgelab.prompts.model_only`; the wording between them stays in).
        """
        from judgelab.digest import sha256_hex

        content = self.model_dump(mode="json")
        if content.get("instruction") is not None:
            content["instruction"] = without_tags(content["instruction"])
        for criterion in content["criteria"].values():
            criterion.pop("anchors", None)
            criterion["question"] = without_tags(criterion["question"])
            if criterion.get("instruction") is not None:
                criterion["instruction"] = without_tags(criterion["instruction"])
        return sha256_hex(content)

    def render_example(self, fields: Mapping[str, Any]) -> str:
        if not self.example_format:
            raise JudgelabError(f"template {self.name!r} has no example_format for dynamic prompting")
        return render_text(self.example_format, fields, self.origin)

    def scale_of(self, criterion: str) -> tuple[float, float]:
        """The scale of one criterion: its own ``scale``, else the template's."""
        return self.criteria[criterion].scale or self.scale

    def for_criteria(self, criteria: list[str]) -> "Template":
        """The template as a run of ``criteria`` uses it: ``scale`` set to their common scale.

        Args:
            criteria: the criteria one run asks (known criteria of this template).

        Returns:
            The template itself when no criterion has its own scale (so its digest, and the run
            identity, do not change), else a copy whose ``scale`` is the criteria's common scale.

        Raises:
            JudgelabError: the criteria have different scales (one line naming them); rate
                them in separate runs.

        Example:
            >>> t = load_template("geval-summeval")
            >>> t.for_criteria(["fluency"]).scale
            (1.0, 3.0)
        """
        if not any(self.criteria[c].scale for c in criteria if c in self.criteria):
            return self
        scales = {c: tuple(self.scale_of(c)) for c in criteria}
        if len(set(scales.values())) > 1:
            listed = ", ".join(f"{c} {lo:g}-{hi:g}" for c, (lo, hi) in scales.items())
            raise JudgelabError(f"template {self.name!r}: the criteria have different scales ({listed}); "
                                "rate criteria of one scale per run (--criteria)")
        copy = self.model_copy(update={"scale": next(iter(scales.values()))})
        copy._source, copy._yaml = self._source, self._yaml
        return copy

    def outputs(self, criterion: str) -> list[str]:
        """The rating names one answer to ``criterion`` yields."""
        return self.criteria[criterion].metrics or [criterion]

    @field_validator("criteria")
    @classmethod
    def _non_empty(cls, value: dict[str, Criterion]) -> dict[str, Criterion]:
        if not value:
            raise ValueError("a template needs at least one criterion")
        return value

    @model_validator(mode="after")
    def _anchors_on_the_scale(self) -> "Template":
        for name, criterion in self.criteria.items():
            lo, hi = criterion.scale or self.scale
            outside = [k for k in criterion.anchors if not lo <= k <= hi]
            if outside:
                raise ValueError(f"criterion {name!r}: anchors {outside} are not points of its scale {lo:g}-{hi:g}")
        return self

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

    def render(self, criterion: str, item: Mapping[str, Any], variant: str | None = None, *,
               for_people: bool = False) -> str:
        """The exact text the judge is sent for one criterion (``for_people``: what a person is shown).

        Parts are joined by newlines: [variant prepend] instruction question [variant append].
        With ``for_people`` the ``{% model_only %}`` wording is left out
        (:mod:`judgelab.prompts.model_only`); the judge's text never changes with it.
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
        own = ("criteria", criterion, "instruction") if spec.instruction is not None else ("instruction",)
        instruction = spec.instruction or self.instruction or ""
        both = _render_pair(instruction, spec.question, context, for_people)
        if both is not None:
            parts += both
        else:  # the places are looked up (the YAML file parsed) only when a text fails to render
            parts.append(render_text(instruction, context, lambda: self._at(*own), for_people))
            parts.append(render_text(spec.question, context, lambda: self._at("criteria", criterion, "question"), for_people))
        if chosen and chosen.append:
            parts.append(chosen.append)
        return "\n".join(p for p in parts if p)


def _attach_source(model: BaseModel, path: Path, text: str, prefix: tuple[str, ...] = ()) -> None:
    """Mark every template inside ``model`` as read from ``path`` and compile its Jinja texts,
    so a syntax error is reported at load time with the file and line."""
    if isinstance(model, Template):
        model._source, model._yaml = str(path), (text, prefix)
        for keys, source in model.jinja_texts():
            try:
                _compile(source)
            except jinja2.TemplateSyntaxError as exc:
                found = yaml_line(text, (*prefix, *keys))
                line = None if found is None else found[0] + (exc.lineno or 1) - (0 if found[1] else 1)
                raise _syntax_error(exc, str(path), ".".join((*prefix, *keys)), line) from None
        return
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            _attach_source(value, path, text, (*prefix, name))


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


def template_source(name_or_path: str) -> str:
    """The YAML text of a shipped template (by name) or of a template file, exactly as written.

    The template is loaded first, so an invalid file is the one-line error of :func:`load_template`
    (file, line and field) rather than text that ``rate --template`` would refuse.

    Example:
        >>> template_source("plain-quality").splitlines()[6]
        'name: plain-quality'
    """
    load_template(name_or_path)
    return read_text(resolve_data_file(name_or_path, _shipped_dir(), "template", available_templates()))


@lru_cache(maxsize=64)
def _load_template_file(path: str, mtime_ns: int, size: int) -> Template:
    return load_yaml_model(Path(path), Template, "template")


def resolve_data_file(name_or_path: str, folder: Path, what: str, shipped: list[str]) -> Path:
    """A user's ``.yaml`` path, or a shipped file by name; unknown names are one clear error."""
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} and path.exists():
        return path
    if name_or_path not in shipped:  # a name is looked up among the shipped files, never used as a path
        raise JudgelabError(f"unknown {what} {name_or_path!r}; shipped: {', '.join(shipped)} (or give a path to a .yaml file)")
    return folder / f"{name_or_path}.yaml"


def load_yaml_model(path: Path, model: type[BaseModel], what: str):
    """Validate a YAML data file against a pydantic model; errors are one line naming the file,
    the field and its line (an unknown field too: models of templates forbid them).

    Templates inside the model remember the file, and their Jinja texts are compiled here.
    """
    return parse_yaml_model(read_text(path), path, model, what)


def parse_yaml_model(text: str, path: Path, model: type[BaseModel], what: str):
    """:func:`load_yaml_model` of a file's ``text`` (``path`` names it in errors)."""
    data = _parse_yaml(text, path)
    try:
        loaded = model.model_validate(data)
    except ValidationError as exc:
        raise JudgelabError(validation_message(exc.errors(), path, text, what, model)) from None
    _attach_source(loaded, path, text)
    return loaded
