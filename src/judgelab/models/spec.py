"""Judge specifications as one string, so a command can take several ``--judge`` options.

``local`` (the embedded judge) · ``local:/path/model.gguf`` · ``openai:MODEL`` (base URL and
key from ``--base-url``/``--api-key`` or the environment) · ``openai:MODEL@http://host:port/v1``
· ``scripted-test-double:script.json`` (a test double, for tests only). Each form is declared
by its backend's module in the registry (:mod:`judgelab.models.registry`).
"""
from __future__ import annotations

from typing import Any

from judgelab.errors import JudgelabError
from judgelab.models import Backend, make_judge
from judgelab.models.registry import backend_entry, known_syntaxes, registered_kinds

__all__ = ["parse_judge", "build_judge"]


def parse_judge(spec: str, defaults: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Split a judge spec string into its kind and the options for :func:`judgelab.models.make_judge`.

    Args:
        spec: ``KIND`` or ``KIND:REST`` (``local``, ``local:PATH.gguf``, ``openai:MODEL``,
            ``openai:MODEL@BASE_URL``, ``scripted-test-double:FILE``).
        defaults: command-line values (``api_key``, ``base_url``, ``model_path`` …); each
            backend takes the ones it declares.

    Returns:
        ``(kind, options)``.

    Raises:
        JudgelabError: an unknown kind or a malformed spec (one line naming the forms).

    Example:
        >>> parse_judge("openai:gpt-4o-mini@http://localhost:8000/v1")
        ('openai', {'model': 'gpt-4o-mini', 'base_url': 'http://localhost:8000/v1'})
    """
    kind, _, rest = spec.partition(":")
    if kind not in registered_kinds():
        raise JudgelabError(f"unknown judge {spec!r}: {known_syntaxes()}")
    return kind, backend_entry(kind).parse(rest, dict(defaults or {}))


def build_judge(spec: str, defaults: dict[str, Any] | None = None) -> Backend:
    """Build the judge a spec string names (see :func:`parse_judge`).

    Args:
        spec: the judge spec string.
        defaults: command-line values the backend may take.

    Returns:
        The backend, ready for :class:`judgelab.run.Runner`.

    Example:
        >>> import json, tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     json.dump({"default": "4"}, f)
        >>> build_judge(f"scripted-test-double:{f.name}").kind
        'scripted-test-double'
    """
    kind, options = parse_judge(spec, defaults)
    return make_judge(kind, **options)
