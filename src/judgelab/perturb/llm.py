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

from judgelab.models.base import Backend, JudgeRequest, JudgeResponse, Sampling
from judgelab.prompts import render_text
from judgelab.store import Store, request_key

__all__ = ["LlmPerturbation", "perturb_with_llm", "clean_generation", "check_generation", "prompt_for"]

def _prompts_path() -> Path:
    return Path(str(resources.files("judgelab.perturb") / "llm_prompts.yaml"))


@lru_cache(maxsize=1)
def _prompts() -> dict:
    return yaml.safe_load(_prompts_path().read_text(encoding="utf-8"))


def prompt_for(kind: str, degree: str, unit: str, text: str) -> str:
    """The generation prompt, rendered in the same Jinja sandbox as the judge's templates."""
    return render_text(_prompts()[kind][degree], {"unit": unit, "text": text}, str(_prompts_path()))


@dataclass(frozen=True)
class LlmPerturbation:
    text: str
    ok: bool
    reason: str = ""


def clean_generation(output: str, unit: str) -> str:
    """Strip what models wrap around the revised text: a leading label, quotes, and everything
    after the first blank line (commentary, or a base model continuing the prompt)."""
    text = output.strip()
    text = re.sub(rf"^(?:\*\*)?revised\s+{re.escape(unit)}\s*:?(?:\*\*)?\s*", "", text, flags=re.IGNORECASE)
    text = re.split(r"\n\s*\n", text, maxsplit=1)[0]  # the revised unit is one paragraph; models run on after it
    return text.strip().strip('"“”').strip()


def check_generation(original: str, generated: str) -> tuple[bool, str]:
    """Whether a generated perturbation is usable, and why not."""
    if not generated:
        return False, "empty generation"
    norm = lambda s: re.sub(r"\s+", " ", s).strip().lower()  # noqa: E731
    if norm(generated) == norm(original):
        return False, "unchanged text"
    ratio = len(generated) / max(1, len(original))
    if not 0.5 <= ratio <= 2.5:
        return False, f"length {ratio:.2f}× the original"
    return True, ""


async def _one(backend: Backend, store: Store, prompt: str, max_tokens: int) -> JudgeResponse:
    sampling = Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens, seed=0 if backend.capabilities.seed else None)
    description = {"judge": backend.identity(), "purpose": "dhp-perturbation", "messages": [["user", prompt]],
                   "sampling": sampling.model_dump(), "n": 1}
    key = request_key(description)
    cached = store.get_call(key)
    if cached is not None:
        return JudgeResponse.from_json(cached)
    response = await backend.complete(JudgeRequest(messages=(("user", prompt),), sampling=sampling, key=key))
    store.put_call(key, description, response.to_json())
    return response


def perturb_with_llm(backend: Backend, store: Store, jobs: list[tuple[str, str, str, str]], concurrency: int = 8) -> list[LlmPerturbation]:
    """``jobs``: (kind, degree, unit, text) → one checked perturbation per job, in order."""

    async def main() -> list[LlmPerturbation]:
        sem = asyncio.Semaphore(max(1, min(concurrency, backend.capabilities.concurrency)))

        async def run(job: tuple[str, str, str, str]) -> LlmPerturbation:
            kind, degree, unit, text = job
            async with sem:
                response = await _one(backend, store, prompt_for(kind, degree, unit, text), max(64, len(text) // 2 + 64))
            generated = clean_generation(response.choices[0].text, unit)
            ok, reason = check_generation(text, generated)
            return LlmPerturbation(generated if ok else text, ok, reason)

        try:
            return await asyncio.gather(*(run(j) for j in jobs))
        finally:
            await backend.aclose()

    return asyncio.run(main())
