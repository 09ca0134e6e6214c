"""Judge backends behind one protocol (:class:`~judgelab.models.base.Backend`)."""
from __future__ import annotations

from typing import Any

from judgelab.errors import JudgelabError
from judgelab.models.base import Backend, Capabilities, Choice, JudgeRequest, JudgeResponse, Sampling

__all__ = ["Backend", "Capabilities", "Choice", "JudgeRequest", "JudgeResponse", "Sampling", "make_judge", "JUDGE_KINDS"]

JUDGE_KINDS = ("local", "openai", "scripted-test-double")


def make_judge(kind: str = "local", **options: Any) -> Backend:
    """Build a judge by kind. ``local`` (the default) is the embedded llama.cpp judge."""
    if kind == "local":
        from judgelab.models.local import LocalBackend

        return LocalBackend(**{k: v for k, v in options.items() if k in {"model_path", "n_ctx", "n_threads", "reuse_prefix", "seed"}})
    if kind == "openai":
        from judgelab.models.openai_backend import OpenAIBackend

        if not options.get("model"):
            raise JudgelabError("the openai judge needs --model")
        return OpenAIBackend(**options)
    if kind == "scripted-test-double":
        from judgelab.models.scripted import ScriptedTestJudge, load_script

        script = options.get("script")
        if script is None:
            raise JudgelabError("the scripted-test-double judge needs --script FILE (it is a test double, not a model)")
        return ScriptedTestJudge(load_script(script) if isinstance(script, str) else script)
    raise JudgelabError(f"unknown judge {kind!r}; choose one of {', '.join(JUDGE_KINDS)}")
