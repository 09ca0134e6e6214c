"""The backend registry: a judge backend is one module that registers itself.

A backend module calls :func:`register_backend` at import with its kind, the syntax of its
``--judge`` spec string, a parser of that string and a builder. The builder imports the
backend's heavy dependencies (llama.cpp, the OpenAI SDK) only when a judge is built, and the
modules themselves import none of them, so looking a kind up stays cheap and
``import judgelab.models`` loads neither.

The built-in backends live in :mod:`judgelab.models.backends`, one module each, and are
imported on the first lookup from the one-line table :data:`BUILTIN_BACKENDS`: a new built-in
backend is a module ``models/backends/mybackend.py`` that calls :func:`register_backend` plus its
name in that table. A backend defined elsewhere (a plugin, a test) registers the same way,
before use, and :func:`unregister_backend` removes it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from judgelab.answers import JudgeResponse
    from judgelab.models.base import Backend

__all__ = ["BackendEntry", "BUILTIN_BACKENDS", "register_backend", "unregister_backend", "backend_entry",
           "registered_kinds", "default_score", "known_syntaxes"]

#: The modules of :mod:`judgelab.models.backends` that register the built-in kinds (in this order).
BUILTIN_BACKENDS = ("local", "openai_compatible", "scripted")

_REGISTRY: dict[str, "BackendEntry"] = {}
_builtins_loaded = False


@dataclass(frozen=True)
class BackendEntry:
    """One registered backend (made by :func:`register_backend`).

    Attributes:
        kind: the name before the colon of a spec string (``openai``).
        syntax: the spec string's form, shown in errors and help (``openai:MODEL[@BASE_URL]``).
        parse: ``(text after "kind:", defaults) -> options`` for :attr:`build`; raises
            :class:`JudgelabError` on a malformed spec.
        build: ``(**options) -> Backend``; imports heavy dependencies itself.
        options: option names the backend takes from command-line defaults (``api_key`` …).
        description: one line for help texts.
        default_score: the score mode of ``--score auto`` for this backend (``logprob`` where the
            next-token distribution is the backend's natural output, as for the embedded judge).
        file_argument: the text after ``kind:`` is a file path (a run file resolves it against its
            own folder), as in ``local:PATH.gguf``.
        batch: the backend answers OpenAI batch files and has a batch API
            (:meth:`~judgelab.models.base.Backend.batch_request`, ``batch_client``): ``--export-batch``
            and ``--execution batch`` are refused for other kinds before any work.
        read_answer: ``(body, identity) -> JudgeResponse``: a batch-output line's body read as a live
            answer of the judge with that :meth:`~judgelab.models.base.Backend.identity` is
            (``judgelab batch import`` reads answers without building a judge); ``None`` without batches.

    Example:
        >>> backend_entry("scripted-test-double").options
        frozenset({'script'})
    """

    kind: str
    syntax: str
    parse: Callable[[str, dict[str, Any]], dict[str, Any]]
    build: Callable[..., "Backend"]
    options: frozenset[str] = frozenset()
    description: str = ""
    default_score: Literal["parsed", "logprob"] = "parsed"
    file_argument: bool = False
    batch: bool = False
    read_answer: Callable[[Any, dict[str, Any]], "JudgeResponse"] | None = None


def register_backend(kind: str, *, syntax: str, parse: Callable[[str, dict[str, Any]], dict[str, Any]],
                     build: Callable[..., "Backend"], options: tuple[str, ...] | frozenset[str] = (),
                     description: str = "", default_score: Literal["parsed", "logprob"] = "parsed",
                     file_argument: bool = False, batch: bool = False,
                     read_answer: Callable[[Any, dict[str, Any]], "JudgeResponse"] | None = None) -> BackendEntry:
    """Register a backend kind (called at import by the backend's module).

    Args:
        kind: the spec string's prefix; registering a kind again replaces it.
        syntax: the spec string's form, e.g. ``"echo:WORD"``.
        parse: turns the text after ``kind:`` and the command-line defaults into the
            builder's keyword options.
        build: makes the backend from those options.
        options: names of the options taken from defaults (documentation and filtering).
        description: one line for help texts.
        default_score: the score mode of ``--score auto`` (``parsed`` or ``logprob``).
        file_argument: the text after ``kind:`` names a file (resolved against a run file's folder).
        batch: the backend offers batch files and a batch API.
        read_answer: reads a batch-output body for an identity (:attr:`BackendEntry.read_answer`).

    Returns:
        The entry registered.

    Example:
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> entry = register_backend("always-three", syntax="always-three",
        ...                          parse=lambda rest, defaults: {},
        ...                          build=lambda: ScriptedTestJudge({"default": "3"}, model_id="always-three"))
        >>> from judgelab.models.spec import build_judge
        >>> build_judge("always-three").model_id
        'always-three'
        >>> unregister_backend("always-three")
    """
    if not kind or ":" in kind:
        raise ValueError(f"a backend kind is a name without ':', got {kind!r}")
    entry = BackendEntry(kind, syntax, parse, build, frozenset(options), description, default_score, file_argument, batch,
                         read_answer)
    _REGISTRY[kind] = entry
    return entry


def unregister_backend(kind: str) -> None:
    """Remove a registered kind (tests); an unknown kind is ignored.

    Args:
        kind: the kind to remove.
    """
    _REGISTRY.pop(kind, None)


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    for module in BUILTIN_BACKENDS:
        importlib.import_module(f"judgelab.models.backends.{module}")
    _builtins_loaded = True


def registered_kinds() -> tuple[str, ...]:
    """The registered kinds, built-ins first in a fixed order, then the rest by name.

    Returns:
        A tuple of kinds.

    Example:
        >>> registered_kinds()[:3]
        ('local', 'openai', 'scripted-test-double')
    """
    _load_builtins()
    first = [k for k in ("local", "openai", "scripted-test-double") if k in _REGISTRY]
    return tuple(first + sorted(k for k in _REGISTRY if k not in first))


def backend_entry(kind: str) -> BackendEntry:
    """The registry entry of ``kind`` (the built-in backends are loaded on the first lookup).

    Args:
        kind: a registered kind.

    Returns:
        The :class:`BackendEntry`.

    Raises:
        JudgelabError: an unknown kind, with the known spec forms in the message.

    Example:
        >>> backend_entry("openai").syntax
        'openai:MODEL[@BASE_URL[,BASE_URL…]]'
    """
    _load_builtins()
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise JudgelabError(f"unknown judge {kind!r}; choose one of {known_syntaxes()}") from None


def default_score(kind: str) -> Literal["parsed", "logprob"]:
    """The score mode of ``--score auto`` for a backend kind (``parsed`` for a kind not registered,
    such as a test double built directly).

    Example:
        >>> default_score("local"), default_score("openai"), default_score("not-registered")
        ('logprob', 'parsed', 'parsed')
    """
    _load_builtins()
    entry = _REGISTRY.get(kind)
    return entry.default_score if entry is not None else "parsed"


def known_syntaxes() -> str:
    """The registered spec forms as one phrase, for error messages and help texts.

    Returns:
        e.g. ``local[:GGUF], openai:MODEL[@BASE_URL] or scripted-test-double:FILE``.
    """
    forms = [_REGISTRY[k].syntax for k in registered_kinds()]
    if not forms:
        return "no backend registered"
    return forms[0] if len(forms) == 1 else ", ".join(forms[:-1]) + " or " + forms[-1]
