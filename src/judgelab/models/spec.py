"""Judge specifications as one string, so a command can take several ``--judge`` options.

``local`` (the embedded judge) · ``local:/path/model.gguf`` · ``openai:MODEL`` (base URL and
key from ``--base-url``/``--api-key`` or the environment) · ``openai:MODEL@http://host:port/v1``
· ``scripted-test-double:script.json`` (a test double, for tests only).
"""
from __future__ import annotations

from typing import Any

from judgelab.errors import JudgelabError
from judgelab.models import Backend, make_judge

__all__ = ["parse_judge", "build_judge"]


def parse_judge(spec: str, defaults: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """``spec`` → (kind, options for :func:`judgelab.models.make_judge`)."""
    defaults = defaults or {}
    kind, _, rest = spec.partition(":")
    if kind == "local":
        return "local", {"model_path": rest or defaults.get("model_path")}
    if kind == "openai":
        if not rest:
            raise JudgelabError("an openai judge needs a model: openai:MODEL or openai:MODEL@BASE_URL")
        model, _, url = rest.partition("@")
        opts = {k: v for k, v in defaults.items() if k in {"api_key", "style", "concurrency", "max_retries", "supports_n", "timeout", "transport", "max_tokens_param"}}
        opts.update(model=model, base_url=url or defaults.get("base_url"))
        return "openai", opts
    if kind == "scripted-test-double":
        if not rest:
            raise JudgelabError("the scripted-test-double judge needs a script: scripted-test-double:FILE")
        return kind, {"script": rest}
    raise JudgelabError(f"unknown judge {spec!r}: local[:GGUF], openai:MODEL[@BASE_URL] or scripted-test-double:FILE")


def build_judge(spec: str, defaults: dict[str, Any] | None = None) -> Backend:
    kind, options = parse_judge(spec, defaults)
    return make_judge(kind, **options)
