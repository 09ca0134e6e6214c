"""Contamination check: Min-K% Prob membership scores under a local model (HANNA paper, ASG2).

Shi et al. (2023), "Detecting pretraining data from large language models": a text seen in
training has few very unlikely tokens. Score = the mean log-probability of the k% least
likely tokens of the text (higher = more likely a member). With member / non-member labels,
the ROC AUC measures how well the score separates them.

Token log-probabilities come from llama.cpp (any GGUF; the shipped Gemma 3 270M by default).
Each position's logits are read right after decoding, so memory stays at one vocabulary row
instead of llama-cpp-python's n_ctx × vocabulary matrix.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as _st

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TokenScorer", "min_k_prob", "roc_auc", "ContaminationResult", "score_texts"]


def min_k_prob(logprobs, k: float = 0.2) -> float:
    """Mean of the ``ceil(k · n)`` lowest token log-probabilities (NaN for an empty text).

    Args:
        logprobs: the text's token log-probabilities.
        k: the share of least likely tokens, in (0, 1].

    Returns:
        The Min-K% Prob score (Shi et al. 2023, section 3).

    Raises:
        JudgelabError: ``k`` outside (0, 1].

    Example:
        >>> min_k_prob([-0.1, -5.0, -0.2, -3.0], k=0.5)
        -4.0
    """
    lp = np.asarray(logprobs, dtype=float)
    if lp.size == 0:
        return float("nan")
    if not 0 < k <= 1:
        raise JudgelabError(f"k must be in (0, 1], got {k}")
    n = max(1, math.ceil(k * lp.size))
    return float(np.sort(lp)[:n].mean())


def roc_auc(scores, labels) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (1 = member), ties counted half.

    Computed as the Mann–Whitney U of the members' scores over ``n1 · n0``.

    Args:
        scores: one score per text (higher = more likely a member).
        labels: 1 for members, 0 for non-members.

    Returns:
        The AUC (NaN without both classes).

    Example:
        >>> roc_auc([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
        1.0
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=int)
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    return float(_st.mannwhitneyu(pos, neg, alternative="two-sided").statistic / (pos.size * neg.size))


class TokenScorer:
    """Per-token log-probabilities of a text (optionally after a context) under a GGUF model.

    Args:
        model_path: a GGUF file (the shipped model when ``None``).
        n_ctx: the context length; longer texts are an error.
        n_threads: CPU threads.

    Example:
        >>> scorer = TokenScorer()  # doctest: +SKIP
        >>> scorer.min_k("The cat sat on the mat.", k=0.2)  # doctest: +SKIP
        -6.1...
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, n_ctx: int = 4096, n_threads: int | None = None) -> None:
        import llama_cpp

        from judgelab.models.backends.local_model import open_llama

        self._llm, path = open_llama(model_path, n_ctx=n_ctx, n_batch=512, n_threads=n_threads or os.cpu_count() or 1)
        self._lib = llama_cpp
        self.model_id = path.stem
        self.n_ctx = n_ctx
        self._n_vocab = self._llm.n_vocab()

    def token_logprobs(self, text: str, context: str = "") -> np.ndarray:
        """log p(token | everything before it) for each token of ``text``.

        Args:
            text: the text scored.
            context: text before it, conditioned on but not scored.

        Returns:
            One log-probability per token of ``text`` (the first token after BOS included).

        Raises:
            JudgelabError: context and text longer than the model's context.
        """
        llm = self._llm
        head = llm.tokenize(context.encode("utf-8"), add_bos=True, special=False) if context else [llm.token_bos()]
        body = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        tokens = head + body
        if len(tokens) > self.n_ctx:
            raise JudgelabError(f"text of {len(tokens)} tokens does not fit the model context of {self.n_ctx}")
        out: list[float] = []
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        step = 512
        for start in range(0, len(tokens), step):
            chunk = tokens[start:start + step]
            llm._batch.set_batch(batch=chunk, n_past=start, logits_all=True)
            llm._ctx.decode(llm._batch)
            for i in range(len(chunk)):
                j = start + i  # logits at position j predict token j + 1
                if len(head) <= j + 1 < len(tokens):
                    ptr = self._lib.llama_get_logits_ith(llm._ctx.ctx, i)
                    logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,)).astype(np.float64)
                    top = logits.max()
                    out.append(float(logits[tokens[j + 1]] - (top + math.log(np.exp(logits - top).sum()))))
        llm.n_tokens = 0  # the generation cache no longer matches
        return np.array(out)

    def min_k(self, text: str, k: float = 0.2, context: str = "") -> float:
        """The Min-K% Prob score of a text (:func:`min_k_prob` of :meth:`token_logprobs`).

        Args:
            text: the text.
            k: the share of least likely tokens.
            context: text before it, not scored.

        Returns:
            The score (higher = more likely seen in training).
        """
        return min_k_prob(self.token_logprobs(text, context), k)


@dataclass(frozen=True)
class ContaminationResult:
    """Min-K% Prob of each text (:func:`score_texts`).

    Attributes:
        table: one row per text: ``id``, ``tokens``, ``min_k_prob``, ``mean_logprob`` (and ``member``
            when labels were given).
        roc_auc: ROC AUC of ``min_k_prob``, members vs non-members (None without labels).
        k: the share of least likely tokens averaged.
        model_id: the scoring model.
    """

    table: "pd.DataFrame"
    roc_auc: float | None
    k: float
    model_id: str

    @property
    def title(self) -> str:
        return f"Min-{int(self.k * 100)}% Prob under {self.model_id}"


def check_labels(items, label_field: str | None, source) -> None:
    """Refuse texts whose ``label_field`` is not 0/1 (one line naming the first)."""
    if label_field is None:
        return
    bad = [i.item_id for i in items if str(i.extra.get(label_field)) not in {"0", "1", "0.0", "1.0"}]
    if bad:
        raise JudgelabError(f"{source}: item {bad[0]!r} has no 0/1 value in {label_field!r}")


def score_texts(items, k: float = 0.2, label_field: str | None = None, model_path=None,
                scorer: "TokenScorer | None" = None) -> ContaminationResult:
    """Min-K% Prob (Shi et al. 2024) of each item's text under a local GGUF model, with the ROC AUC of
    members vs non-members when ``label_field`` names a 0/1 field of the items.

    Args:
        items: :class:`judgelab.datasets.items.Item` objects (their ``text`` is scored as is).
        k: share of least likely tokens averaged.
        label_field: the items' ``extra`` field with 1 = member, 0 = non-member (None: no AUC).
        model_path: a GGUF file (None: the shipped model); ignored when ``scorer`` is given.
        scorer: a ready :class:`TokenScorer` (tests, repeated calls).
        out: write ``min_k_prob.csv`` (and ``roc_auc.csv``), README.md, run.json and results.json into this
            folder (``None``: nothing is written); display: where the folder's lines go.
    """
    import pandas as pd

    check_labels(items, label_field, "texts")
    scorer = scorer or TokenScorer(model_path)
    rows = []
    for item in items:
        lp = scorer.token_logprobs(item.text)
        row = {"id": item.item_id, "tokens": len(lp), "min_k_prob": min_k_prob(lp, k),
               "mean_logprob": float(lp.mean()) if len(lp) else float("nan")}
        if label_field is not None:
            row["member"] = int(float(item.extra[label_field]))
        rows.append(row)
    table = pd.DataFrame(rows)
    auc = roc_auc(table["min_k_prob"], table["member"]) if label_field is not None else None
    result = ContaminationResult(table, auc, k, scorer.model_id)
    return result
