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

The shape is checked when the spec is parsed (commands parse every ``--judge`` before any
work) and when the judge is built (:func:`check_script`): a JSON object with
only the keys ``rules`` (a list of rule objects), ``default`` (a text) and
``default_probs`` (probabilities); a rule has a text ``contains`` and ``reply`` (a text),
``replies`` (a non-empty list of texts) or ``probs``, or ``probs`` with one of the two;
probabilities are an object of label → number in [0, 1] whose sum is positive and at
most 1. A number is accepted where a text is expected (``"default": 4``). Anything else
is one error line saying what was expected, never a failure mid-run.
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

__all__ = ["ScriptedTestJudge", "load_script", "check_script"]


def load_script(path: str | Path) -> dict[str, Any]:
    """Read a test double's script from a JSON file.

    Args:
        path: the file.

    Returns:
        The script dict, checked by :func:`check_script` (see the module docstring for its shape).

    Raises:
        JudgelabError: a missing, unreadable or folder path, invalid JSON or a script of the wrong
            shape (one line).
    """
    file = Path(path)
    if file.is_dir():
        raise JudgelabError(f"script {path} is a folder, not a JSON file")
    try:
        script = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise JudgelabError(f"script file not found: {path}") from None
    except UnicodeDecodeError:
        raise JudgelabError(f"script {path} is not UTF-8 text") from None
    except OSError as exc:
        raise JudgelabError(f"script {path} cannot be read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise JudgelabError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return check_script(script, str(path))


_SCRIPT_KEYS = ("rules", "default", "default_probs")
_RULE_KEYS = ("contains", "reply", "replies", "probs")


def _kind(value: object) -> str:
    """The JSON name of a value's type, for error lines."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _is_text(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                      and math.isfinite(value))


def _check_probs(probs: object, where: str) -> None:
    expected = 'an object of label → probability, e.g. {"1": 0.5, "2": 0.5}'
    if not isinstance(probs, Mapping) or not probs:
        raise JudgelabError(f"{where} is {_kind(probs) if probs != {} else 'empty'}; expected {expected}")
    for label, p in probs.items():
        if not isinstance(label, str) or not label.strip():
            raise JudgelabError(f"{where} has the label {label!r}; expected {expected}")
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0.0 <= p <= 1.0):
            raise JudgelabError(f"{where}[{label!r}] is {p!r}; expected a probability in [0, 1]")
    total = math.fsum(probs.values())
    if not 0.0 < total <= 1.0 + 1e-9:
        raise JudgelabError(f"{where} sums to {total:g}; expected a sum above 0 and at most 1")


def _check_rule(rule: object, where: str) -> None:
    if not isinstance(rule, Mapping):
        raise JudgelabError(f'{where} is {_kind(rule)}; expected an object like {{"contains": "TEXT", "reply": "4"}}')
    unknown = sorted(set(rule) - set(_RULE_KEYS))
    if unknown:
        raise JudgelabError(f"{where} has the unknown key {unknown[0]!r}; a rule has the keys {', '.join(_RULE_KEYS)}")
    if not isinstance(rule.get("contains"), str):
        got = "no 'contains'" if "contains" not in rule else f"'contains' {_kind(rule['contains'])}"
        raise JudgelabError(f"{where} has {got}; expected a text that the prompt contains")
    if "reply" in rule and "replies" in rule:
        raise JudgelabError(f"{where} has both 'reply' and 'replies'; give one of them")
    if not any(k in rule for k in ("reply", "replies", "probs")):
        raise JudgelabError(f"{where} has no answer; expected 'reply', 'replies' or 'probs'")
    if "reply" in rule and not _is_text(rule["reply"]):
        raise JudgelabError(f"{where}.reply is {_kind(rule['reply'])}; expected a text")
    if "replies" in rule:
        replies = rule["replies"]
        if not isinstance(replies, (list, tuple)) or not replies or not all(_is_text(r) for r in replies):
            raise JudgelabError(f"{where}.replies is {_kind(replies) if replies != [] else 'empty'}"
                                f"{' with an entry that is not a text' if isinstance(replies, (list, tuple)) and replies else ''}; "
                                "expected a non-empty list of texts")
    if "probs" in rule:
        _check_probs(rule["probs"], f"{where}.probs")


def check_script(script: object, where: str = "script") -> dict[str, Any]:
    """Check a test double's script against its shape (the module docstring).

    Args:
        script: the parsed script.
        where: how error lines name it (the file on the command line).

    Returns:
        The script, as a dict.

    Raises:
        JudgelabError: one line saying what is wrong and what shape is expected.

    Example:
        >>> check_script({"rules": "nope"})
        Traceback (most recent call last):
        ...
        judgelab.errors.JudgelabError: script: 'rules' is a text; expected a list of rules like [{"contains": "TEXT", "reply": "4"}]
    """
    if not isinstance(script, Mapping):
        raise JudgelabError(f'{where} is {_kind(script)}; expected a JSON object like '
                            '{"rules": [{"contains": "TEXT", "reply": "4"}], "default": "3"}')
    unknown = sorted(str(k) for k in set(script) - set(_SCRIPT_KEYS))
    if unknown:
        raise JudgelabError(f"{where} has the unknown key {unknown[0]!r}; a script has the keys {', '.join(_SCRIPT_KEYS)}")
    rules = script.get("rules", [])
    if not isinstance(rules, (list, tuple)):
        raise JudgelabError(f"{where}: 'rules' is {_kind(rules)}; expected a list of rules like "
                            '[{"contains": "TEXT", "reply": "4"}]')
    for i, rule in enumerate(rules):
        _check_rule(rule, f"{where}: rule {i + 1}")
    if "default" in script and not _is_text(script["default"]):
        raise JudgelabError(f"{where}: 'default' is {_kind(script['default'])}; expected a text")
    if "default_probs" in script and script["default_probs"] is not None:
        _check_probs(script["default_probs"], f"{where}: 'default_probs'")
    return dict(script)


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
        if script is not None and not callable(script):
            script = check_script(script)
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
            text = str(replies[min(count, len(replies) - 1)]) if replies else str(rule.get("reply", ""))
            choices.append(Choice(text, None, "stop"))
        return JudgeResponse(choices, prompt_tokens=len(prompt.split()), completion_tokens=sum(len(c.text.split()) for c in choices))


# -- registry ------------------------------------------------------------------
def _parse_spec(rest: str, defaults: dict[str, Any]) -> dict[str, Any]:
    if not rest:
        raise JudgelabError("the scripted-test-double judge needs a script: scripted-test-double:FILE")
    load_script(rest)  # commands parse every --judge before any work: a bad script is refused there
    return {"script": rest}


def _build(script: Any = None, **_: Any) -> ScriptedTestJudge:
    if script is None:
        raise JudgelabError("the scripted-test-double judge needs a script: --judge scripted-test-double:SCRIPT.json "
                            "(it is a test double, not a model)")
    return ScriptedTestJudge(load_script(script) if isinstance(script, str) else script)


register_backend("scripted-test-double", syntax="scripted-test-double:FILE", parse=_parse_spec, build=_build,
                 options=("script",), description="a TEST DOUBLE answering from a JSON script", file_argument=True)
