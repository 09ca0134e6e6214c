"""LLM-based perturbations (DHP appendix B): any judge backend used as a generator.

Each request renders an Auto-CoT prompt from ``llm_prompts.yaml`` and asks for greedy
generation (temperature 0). Calls go through the same ledger as judgments, so a rerun or a
resumed run never asks twice. The answer is cleaned (a leading "Revised …:" label, quotes
and trailing commentary removed) and checked: empty output, an unchanged text and a length
far from the original's are failures, reported with a reason and never counted as perturbed.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from judgelab.models.base import Backend, JudgeRequest, Sampling
from judgelab.models.cache import CachedJudge
from judgelab.prompts import render_text
from judgelab.store import Store

__all__ = ["LlmPerturbation", "perturb_with_llm", "clean_generation", "check_generation", "prompt_for"]

def _prompts_path() -> Path:
    return Path(str(resources.files("judgelab.perturb") / "llm_prompts.yaml"))


@lru_cache(maxsize=1)
def _prompts() -> dict:
    return yaml.safe_load(_prompts_path().read_text(encoding="utf-8"))


def prompt_for(kind: str, degree: str, unit: str, text: str) -> str:
    """The generation prompt, rendered in the same Jinja sandbox as the judge's templates.

    Args:
        kind: the perturbation (``fictional-entities``, ``grammatical-errors``, ``rewrite-insert``).
        degree: ``minor`` or ``major``.
        unit: what the text is (summary, ending, answer …).
        text: the text to perturb.

    Returns:
        The prompt text.

    Example:
        >>> "The cat sat." in prompt_for("fictional-entities", "minor", "sentence", "The cat sat.")
        True
    """
    return render_text(_prompts()[kind][degree], {"unit": unit, "text": text}, str(_prompts_path()))


@dataclass(frozen=True)
class LlmPerturbation:
    """One LLM perturbation after cleaning and checking.

    Attributes:
        text: the perturbed text, or the original when the check failed.
        ok: whether the generation passed :func:`check_generation`.
        reason: why it failed ("" when ok).

    Example:
        >>> LlmPerturbation("The cat sat.", False, "unchanged text").ok
        False
    """
    text: str
    ok: bool
    reason: str = ""


def clean_generation(output: str, unit: str) -> str:
    """Strip what models wrap around the revised text: a leading label, quotes, and everything
    after the first blank line (commentary, or a base model continuing the prompt).

    Args:
        output: the generator's answer.
        unit: the unit's name, as in the prompt's "Revised <unit>:" label.

    Returns:
        The revised text alone.

    Example:
        >>> clean_generation('Revised sentence: "Zorb sat."' + chr(10) * 2 + "I changed the name.", "sentence")
        'Zorb sat.'
    """
    text = output.strip()
    text = re.sub(rf"^(?:\*\*)?revised\s+{re.escape(unit)}\s*:?(?:\*\*)?\s*", "", text, flags=re.IGNORECASE)
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0]  # the revised unit is one paragraph; models run on after it
    return text.strip().strip('"“”').strip()


def check_generation(original: str, generated: str) -> tuple[bool, str]:
    """Whether a generated perturbation is usable, and why not.

    Args:
        original: the text asked to be perturbed.
        generated: the cleaned generation.

    Returns:
        ``(usable, reason)``: empty, unchanged, or a length outside 0.5–2.5× the original fails.

    Example:
        >>> check_generation("The cat sat on the mat.", "the cat  sat on the mat.")
        (False, 'unchanged text')
    """
    if not generated:
        return False, "empty generation"
    norm = lambda s: re.sub(r"\s+", " ", s).strip().lower()  # noqa: E731
    if norm(generated) == norm(original):
        return False, "unchanged text"
    ratio = len(generated) / max(1, len(original))
    if not 0.5 <= ratio <= 2.5:
        return False, f"length {ratio:.2f}× the original"
    return True, ""


def _request(backend: Backend, prompt: str, max_tokens: int) -> JudgeRequest:
    sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=0 if backend.capabilities.seed else None)
    return JudgeRequest(messages=(("user", prompt),), sampling=sampling)


#: The ledger key's extra field of a perturbation call (tells it apart from a rating call).
PURPOSE = "dhp-perturbation"


def perturb_with_llm(backend: Backend, store: Store, jobs: list[tuple[str, str, str, str]], concurrency: int = 8) -> list[LlmPerturbation]:
    """Generate LLM perturbations (DHP appendix B) through the store's call ledger.

    Each job is rendered with :func:`prompt_for`, asked greedily (temperature 0, seed 0 when
    the backend takes seeds) through :class:`~judgelab.models.cache.CachedJudge`, so a
    rerun asks nothing already answered, then cleaned and checked.

    Args:
        backend: the generator (any judge backend); closed afterwards.
        store: the store whose ledger caches the generations.
        jobs: ``(kind, degree, unit, text)`` per perturbation (kind and degree name a prompt
            in ``llm_prompts.yaml``).
        concurrency: most calls at once (capped by the backend's concurrency).

    Returns:
        One :class:`LlmPerturbation` per job, in order; a failed check keeps the original
        text with ``ok=False`` and the reason.

    Example:
        >>> from judgelab.models.backends.scripted import ScriptedTestJudge
        >>> judge = ScriptedTestJudge({"default": "Revised sentence: The cat sat on a mat."})
        >>> perturb_with_llm(judge, Store(":memory:"), [("fictional-entities", "minor", "sentence", "The cat sat on the mat.")])[0].ok
        True
    """
    cached = CachedJudge(backend, store)

    async def main() -> list[LlmPerturbation]:
        sem = asyncio.Semaphore(max(1, min(concurrency, backend.capabilities.concurrency)))

        async def run(job: tuple[str, str, str, str]) -> LlmPerturbation:
            kind, degree, unit, text = job
            request = _request(backend, prompt_for(kind, degree, unit, text), max(64, len(text) // 2 + 64))
            async with sem:
                response, _ = await cached.complete(request, purpose=PURPOSE)
            generated = clean_generation(response.choices[0].text, unit)
            ok, reason = check_generation(text, generated)
            return LlmPerturbation(generated if ok else text, ok, reason)

        try:
            return await asyncio.gather(*(run(j) for j in jobs))
        finally:
            await cached.aclose()  # writes what waits for the group commit, closes the backend

    return asyncio.run(main())
