"""Nearest-example selection for dynamic prompting (NLE quality study, section 6 and appendix D).

The paper embeds every explanation with Sentence-BERT and gives each test item the pool item
with the highest cosine similarity as its in-prompt example. With the optional extra
(``pip install 'judgelab[embeddings]'``) a sentence-transformers model is used — from a local
path or name available offline; without it judgelab falls back to TF-IDF cosine similarity and
says so.
"""
from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from judgelab.errors import JudgelabError

__all__ = ["Retriever", "tfidf_vectors"]

_TOKEN = re.compile(r"[a-z0-9]+")


def tfidf_vectors(texts: list[str], vocabulary: dict[str, int] | None = None, idf: np.ndarray | None = None):
    """L2-normalised TF-IDF vectors (smooth idf: ln((1 + n) / (1 + df)) + 1, as scikit-learn)."""
    docs = [Counter(_TOKEN.findall(t.lower())) for t in texts]
    if vocabulary is None:
        vocabulary = {w: i for i, w in enumerate(sorted({w for d in docs for w in d}))}
        df = np.zeros(len(vocabulary))
        for d in docs:
            for w in d:
                df[vocabulary[w]] += 1
        idf = np.log((1 + len(docs)) / (1 + df)) + 1
    assert idf is not None, "a vocabulary is given with its idf"
    matrix = np.zeros((len(docs), len(vocabulary)))
    for r, d in enumerate(docs):
        for w, c in d.items():
            if w in vocabulary:
                matrix[r, vocabulary[w]] = c * idf[vocabulary[w]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms), vocabulary, idf


class Retriever:
    """Fit on the example pool; ``nearest(texts)`` → index of the most similar pool item."""

    def __init__(self, method: str = "auto", model: str = "all-MiniLM-L6-v2") -> None:
        self.method = method
        self.model_name = model
        self.note = ""
        if method in {"auto", "sentence-transformers"}:
            try:
                from sentence_transformers import SentenceTransformer

                self._model = SentenceTransformer(model)
                self.method = "sentence-transformers"
            except ImportError:
                if method == "sentence-transformers":
                    raise JudgelabError("sentence-transformers is not installed: pip install 'judgelab[embeddings]'") from None
                self.method, self.note = "tfidf", "sentence-transformers not installed: using TF-IDF cosine similarity"
            except Exception as exc:  # model not available offline, and similar
                if method == "sentence-transformers":
                    raise JudgelabError(f"cannot load the sentence-transformers model {model!r} ({type(exc).__name__})") from None
                self.method, self.note = "tfidf", f"sentence-transformers model {model!r} unavailable: using TF-IDF cosine similarity"
        elif method != "tfidf":
            raise JudgelabError(f"unknown retrieval method {method!r}: auto, sentence-transformers or tfidf")

    def _embed(self, texts: list[str], fit: bool) -> np.ndarray:
        if self.method == "sentence-transformers":
            return np.asarray(self._model.encode(texts, normalize_embeddings=True))
        if fit:
            vectors, self._vocab, self._idf = tfidf_vectors(texts)
            return vectors
        return tfidf_vectors(texts, self._vocab, self._idf)[0]

    def fit(self, pool: list[str]) -> "Retriever":
        if not pool:
            raise JudgelabError("the example pool is empty")
        self._pool = self._embed(pool, fit=True)
        return self

    def similarities(self, texts: list[str]) -> np.ndarray:
        return self._embed(texts, fit=False) @ self._pool.T

    def nearest(self, texts: list[str]) -> list[int]:
        sims = self.similarities(texts)
        return [int(np.argmax(row)) if not math.isnan(float(np.max(row))) else 0 for row in sims]
