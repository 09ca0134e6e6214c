"""Judge backends behind one protocol (:class:`~judgelab.models.base.Backend`), found in a registry.

Each backend is one module of :mod:`judgelab.models.backends` that registers itself
(:func:`~judgelab.models.registry.register_backend`); see :mod:`judgelab.models.registry`.
Importing this package loads neither llama.cpp nor the OpenAI SDK.
"""
from __future__ import annotations

from typing import Any

from judgelab.models.base import (
    Backend,
    Capabilities,
    Choice,
    JudgeRequest,
    JudgeResponse,
    Sampling,
)
from judgelab.models.registry import backend_entry, register_backend, registered_kinds

__all__ = ["Backend", "Capabilities", "Choice", "JudgeRequest", "JudgeResponse", "Sampling", "make_judge",
           "register_backend", "registered_kinds"]


def make_judge(kind: str = "local", **options: Any) -> Backend:
    """Build a judge by kind from the registry.

    Args:
        kind: a registered kind: ``local`` (the default, the embedded llama.cpp judge),
            ``openai``, ``scripted-test-double`` (a test double), or one registered later.
        **options: the backend's options (``model_path`` for ``local``; ``model``,
            ``base_url``, ``api_key`` … for ``openai``; ``script`` for the test double).

    Returns:
        The backend.

    Raises:
        JudgelabError: an unknown kind or a missing required option.

    Example:
        >>> make_judge("scripted-test-double", script={"default": "4"}).kind
        'scripted-test-double'
    """
    return backend_entry(kind).build(**options)
