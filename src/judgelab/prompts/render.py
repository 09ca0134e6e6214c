"""Rendering a template's Jinja texts in the sandbox: one compiled template per text, one context per render.

Templates come from users, so they are rendered in Jinja2's immutable sandbox, which also refuses
``*`` and ``**`` that would build huge values. A criterion's instruction and question are rendered
in one context where that is the same text as rendering each (:func:`_render_pair`).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from judgelab.errors import JudgelabError
from judgelab.prompts.model_only import ModelOnly

__all__ = ["render_text"]

#: Longest string or list one ``*`` may build, and largest exponent of ``**``, inside a template.
_MAX_REPEAT = 1_000_000
_MAX_EXPONENT = 1_000


class _PromptEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, also refusing ``*`` and ``**`` that would build huge values."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context, operator, left, right):
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > _MAX_EXPONENT:
            raise SecurityError(f"exponent {right!r} is too large")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(n, int) and len(seq) * n > _MAX_REPEAT:
                    raise SecurityError("the repetition would be too long")
        return super().call_binop(context, operator, left, right)


_ENV = _PromptEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
                          extensions=[ModelOnly])
#: The same sandbox for the people's form: ``{% model_only %}`` blocks render to nothing.
_PEOPLE_ENV = _PromptEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
                                 extensions=[ModelOnly])
_PEOPLE_ENV.judgelab_for_people = True  # type: ignore[attr-defined]



class _Compiled:
    """A compiled text with its globals as one plain dict: a render builds one context from them.

    ``jinja2.Template.render`` merges the template's globals (a ``ChainMap``) into every context and
    copies their names again; this does the same merge from a dict made once (the same text).
    """

    __slots__ = ("template", "globals")

    def __init__(self, template: jinja2.Template) -> None:
        self.template = template
        self.globals = dict(template.globals)

    def render(self, context: Mapping[str, Any]) -> str:
        t = self.template
        env = t.environment
        ctx = env.context_class(env, {**self.globals, **context}, t.name, t.blocks, globals=self.globals)
        return env.concat(t.root_render_func(ctx))


@lru_cache(maxsize=256)
def _compile(source: str, for_people: bool = False) -> _Compiled:
    return _Compiled((_PEOPLE_ENV if for_people else _ENV).from_string(source))


#: Between the instruction and the question when both are rendered in one context (:func:`_render_pair`).
_PART = "\x00judgelab:part\x00"


@lru_cache(maxsize=256)
def _pair(first: str, second: str, for_people: bool) -> _Compiled | None:
    """Two texts as one template, where rendering it is the same as rendering each (else ``None``): each
    compiles on its own (so neither leaves a tag open), neither has a statement or comment (no ``set``
    reaches the other) nor ``_PART``, and the first does not end with the newline its own render drops."""
    if first.endswith(("\n", "\r")) or any(m in t for t in (first, second) for m in ("{%", "{#", _PART)):
        return None
    try:
        _compile(first, for_people), _compile(second, for_people)
        return _compile(first + _PART + second, for_people)
    except jinja2.TemplateError:
        return None


def _render_pair(first: str, second: str, context: Mapping[str, Any], for_people: bool) -> list[str] | None:
    """``[render(first), render(second)]`` from one context, or ``None``: render each (their errors name the text)."""
    pair = _pair(first, second, for_people)
    if pair is None:
        return None
    try:
        text = pair.render(context)
    except Exception:  # noqa: BLE001 - each text is rendered again on its own, which says what failed
        return None
    if text.count(_PART) != 1:  # a field holds the separator itself
        return None
    return text.split(_PART)


def _syntax_error(exc: jinja2.TemplateSyntaxError, origin: str, place: str = "", line: int | None = None) -> JudgelabError:
    at = f"line {line}" if line is not None else f"line {exc.lineno} of the text"
    return JudgelabError(f"{origin}: Jinja syntax error{' in ' + place if place else ''} at {at}: {exc.message}")


def render_text(source: str, context: Mapping[str, Any], origin: str | Callable[[], str], for_people: bool = False) -> str:
    """Render one Jinja text in the sandbox; any failure is one error naming ``origin`` (the file).

    ``context`` is passed as one mapping, so a field may have any name (``self`` included).
    ``for_people`` leaves out ``{% model_only %}`` wording (the form of ``judgelab annotate``).
    ``origin`` may be a function giving it, called only when the text fails to render.
    """
    try:
        return _compile(source, for_people).render(context)
    except (jinja2.TemplateError, SecurityError, ArithmeticError, TypeError, ValueError, LookupError, AttributeError,
            RecursionError) as exc:
        raise _render_error(exc, origin() if callable(origin) else origin, context) from None


def _render_error(exc: Exception, origin: str, context: Mapping[str, Any]) -> JudgelabError:
    if isinstance(exc, jinja2.UndefinedError):
        return JudgelabError(f"{origin}: template field missing: {exc.message} (the item's fields: "
                             f"{', '.join(sorted(map(str, context)))})")
    if isinstance(exc, SecurityError):
        return JudgelabError(f"{origin}: the template tried an operation the sandbox forbids ({exc})")
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return _syntax_error(exc, origin)
    return JudgelabError(f"{origin}: the template failed to render ({type(exc).__name__}: {exc})")
