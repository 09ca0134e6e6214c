"""A scripted judge: a TEST DOUBLE for tests and demonstrations of the statistics.

It answers from a script instead of a model. It is never a default and never chosen
implicitly; the command line names it ``--judge scripted-test-double:SCRIPT.json``.

Script (a dict, or a JSON file on the command line)::

    {"rules": [{"contains": "Story fragment:\\nOnce", "replies": ["I am an AI ...", "I rate it 4"]},
               {"contains": "typo", "probs": {"1": 0.5, "2": 0.5}}],
     "default": "3"}

A rule matches when its ``contains`` text is in the prompt. ``replies`` are given in
order for repeated calls with the same prompt (the last one repeats), ``reply`` is a
single answer, ``probs`` a next-token distribution over labels (score mode).
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Mapping

from judgelab.errors import JudgelabError
from judgelab.models.base import (
    Backend,
    Capabilities,
    Choice,
    JudgeRequest,
    JudgeResponse,
    flatten_messages,
)
from judgelab.models.registry import register_backend

__all__ = ["ScriptedTestJudge", "load_script"]


def load_script(path: str | Path) -> dict[str, Any]:
    """Read a test double's script from a JSON file.

    Args:
        path: the file.

    Returns:
        The script dict (see the module docstring for its shape).

    Raises:
        JudgelabError: a missing file or invalid JSON (one line).
    """
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgelabError(f"script file not found: {path}") from None
    except json.JSONDecodeError as exc:
        raise JudgelabError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


class ScriptedTestJudge(Backend):
    """TEST DOUBLE: answers from a script or a Python function ``prompt -> reply``; never a default.

    Args:
        script: a script dict (module docstring), a function of the flattened prompt, or
            ``None`` (always "3").
        model_id: the model name it reports.
        max_n: the most answers per request it offers.
        score_fn: in score mode, a function of the prompt giving a label distribution.

    Attributes:
        calls: every request received, in order (what tests assert on).

    Example:
        >>> import asyncio
        >>> from judgelab.models.base import Sampling
        >>> judge = ScriptedTestJudge({"rules": [{"contains": "bad", "reply": "2"}], "default": "4"})
        >>> request = JudgeRequest((("user", "a bad story"),), Sampling())
        >>> asyncio.run(judge.complete(request)).choices[0].text, len(judge.calls)
        ('2', 1)
    """

    kind = "scripted-test-double"

    def __init__(
        self,
        script: Mapping[str, Any] | Callable[[str], str] | None = None,
        model_id: str = "scripted-test-double",
        max_n: int = 16,
        score_fn: Callable[[str], Mapping[str, float]] | None = None,
    ) -> None:
        self.model_id = model_id
        self._script: Mapping[str, Any] | Callable[[str], str] = script if script is not None else {"default": "3"}
        self._score_fn = score_fn
        self._seen: Counter[str] = Counter()
        self.calls: list[JudgeRequest] = []
        self.capabilities = Capabilities(max_n=max_n, top_logprobs=20, seed=True, score_mode=True, concurrency=64)

    def _rule_for(self, prompt: str) -> Mapping[str, Any]:
        if callable(self._script):
            return {"reply": self._script(prompt)}
        for rule in self._script.get("rules", []):
            if rule.get("contains", "") in prompt:
                return rule
        return {"reply": self._script.get("default", "3"), "probs": self._script.get("default_probs")}

    async def _complete(self, request: JudgeRequest) -> JudgeResponse:
        self.calls.append(request)
        prompt = flatten_messages(request.messages)
        rule = self._rule_for(prompt)
        if request.score_cue is not None:
            probs = self._score_fn(prompt) if self._score_fn else rule.get("probs")
            if not probs:
                probs = {str(rule.get("reply", "3")).strip(): 1.0}
            alts = {k: (math.log(v) if v > 0 else float("-inf")) for k, v in probs.items()}
            best = max(alts, key=lambda label: alts[label])
            return JudgeResponse([Choice(best, [(best, alts[best], alts)], "score")], prompt_tokens=len(prompt.split()))
        choices = []
        for _ in range(request.n):
            count = self._seen[prompt]
            self._seen[prompt] += 1
            replies = rule.get("replies")
            text = replies[min(count, len(replies) - 1)] if replies else str(rule.get("reply", ""))
            choices.append(Choice(text, None, "stop"))
        return JudgeResponse(choices, prompt_tokens=len(prompt.split()), completion_tokens=sum(len(c.text.split()) for c in choices))


# -- registry ------------------------------------------------------------------
def _parse_spec(rest: str, defaults: dict[str, Any]) -> dict[str, Any]:
    if not rest:
        raise JudgelabError("the scripted-test-double judge needs a script: scripted-test-double:FILE")
    return {"script": rest}


def _build(script: Any = None, **_: Any) -> ScriptedTestJudge:
    if script is None:
        raise JudgelabError("the scripted-test-double judge needs a script: --judge scripted-test-double:SCRIPT.json "
                            "(it is a test double, not a model)")
    return ScriptedTestJudge(load_script(script) if isinstance(script, str) else script)


register_backend("scripted-test-double", syntax="scripted-test-double:FILE", parse=_parse_spec, build=_build,
                 options=("script",), description="a TEST DOUBLE answering from a JSON script")
