"""judgelab: LLM judges, measured like human raters.

Public API::

    from judgelab import parse_rating, RunSpec, Store, make_judge, load_items, run_sync

See README.md for a worked example. Names are imported on first use, so that
``import judgelab`` (and the ``judgelab`` command's start-up) stays instant: pandas,
scipy, llama_cpp and openai load only when something needs them.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.2.0"

_EXPORTS = {
    "Item": "judgelab.datasets.items",
    "load_items": "judgelab.datasets.items",
    "JudgelabError": "judgelab.errors",
    "BackendError": "judgelab.errors",
    "CapabilityError": "judgelab.errors",
    "Sampling": "judgelab.models",
    "make_judge": "judgelab.models",
    "parse_rating": "judgelab.parse",
    "parse_judgment": "judgelab.parse",
    "expected_score": "judgelab.parse",
    "available_templates": "judgelab.prompts",
    "load_template": "judgelab.prompts",
    "RunSpec": "judgelab.run",
    "Runner": "judgelab.run",
    "run_sync": "judgelab.run",
    "Store": "judgelab.store",
    "summarize": "judgelab.summary",
    "compare_systems": "judgelab.summary",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
