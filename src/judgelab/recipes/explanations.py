"""Explanation analysis (HANNA paper, "ASE3: Explainability of Ratings").

* Error annotations of explanations in the layout of HANNA's ``user_study.csv``: one row per
  worker and explanation (``Input.story_id``, ``Input.explanation``) and one 0/1 column per
  error type (``Answer.a-<k>-<type>.1``). Per category: the rate (share of all annotations
  that flag the error, the paper's percentages), the share of explanations flagged by a
  majority of workers, and Gwet's AC1 among the workers (items = explanations).
* Keywords per criterion with YAKE (3-grams, the paper's setting), and the share of ratings
  that come without an explanation.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.datasets.readers import read_csv, record_columns, records_frame
from judgelab.errors import JudgelabError
from judgelab.stats import gwet_ac1

__all__ = ["error_annotations", "keywords", "explanation_share", "strip_rating", "explanation_map"]

_ERROR_COL = re.compile(r"^Answer\.a-\d+-(?P<name>[a-z]+)\.1$")
#: An annotation: 1 = the explanation has the error, 0 = it has not, empty = not annotated.
_FLAGS = {"0": 0.0, "1": 1.0, "0.0": 0.0, "1.0": 1.0, "": float("nan")}


def error_annotations(path: str | Path) -> pd.DataFrame:
    """Per error category: annotations, explanations, rate, majority share and Gwet's AC1."""
    path = Path(path)
    records = read_csv(path)
    columns = record_columns(records)
    for need in ("Input.story_id", "Input.explanation"):
        if need not in columns:
            raise JudgelabError(f"{path}: missing column {need!r} (the layout of HANNA's user_study.csv)")
    categories = {c: m["name"] for c in columns if (m := _ERROR_COL.match(c))}
    if not categories:
        raise JudgelabError(f"{path}: no error columns named like 'Answer.a-1-guidelines.1'")
    if not records:
        raise JudgelabError(f"{path}: no annotations")
    flags: dict[str, list[float]] = {col: [] for col in categories}
    for i, row in enumerate(records):
        for col in categories:
            raw = (row[col] or "").strip()
            if raw not in _FLAGS:
                raise JudgelabError(f"{path}: {records.where(i)}: column {col!r} holds {row[col]!r}; allowed: 0, 1 or empty")
            flags[col].append(_FLAGS[raw])
    df = records_frame(records)
    key = df["Input.story_id"].astype(str) + "\x00" + df["Input.explanation"].astype(str)
    df = df.assign(_item=key, _worker=df.groupby(key).cumcount())
    rows = []
    for col, name in categories.items():
        values = pd.Series(flags[col], index=df.index, dtype=float)
        wide = df.assign(v=values).pivot_table(index="_item", columns="_worker", values="v", aggfunc="first")
        matrix = [[None if np.isnan(v) else int(v) for v in row] for row in wide.to_numpy(float)]
        per_item = wide.mean(axis=1)
        rows.append({"category": name, "annotations": int(values.notna().sum()), "explanations": len(wide),
                     "rate": float(values.mean()), "majority_share": float((per_item > 0.5).mean()),
                     "gwet_ac1": gwet_ac1(matrix, categories=[0, 1])})
    return pd.DataFrame(rows)


def strip_rating(text: str) -> str:
    """The explanation part of an answer: the text without the sentence that states the rating."""
    sentences = re.split(r"(?<=[.!?])\s+", (text or "").strip())
    rest = [s for s in sentences if not re.search(r"\b(rat(e|ing)|score)\b[^.]*\d", s, re.IGNORECASE) and not re.fullmatch(r"\W*\d(\.\d)?\W*", s)]
    return " ".join(rest).strip()


def explanation_share(answers: pd.Series, min_words: int = 5) -> float:
    """Share of answers that explain their rating (at least ``min_words`` words beside it)."""
    if answers.empty:
        return float("nan")
    return float(answers.fillna("").map(lambda t: len(strip_rating(t).split()) >= min_words).mean())


def keywords(texts: list[str], top: int = 30, ngram: int = 3) -> list[tuple[str, float]]:
    """YAKE keywords (lower score = more relevant) over the concatenated explanations."""
    try:
        import yake
    except ImportError:
        raise JudgelabError("keyword extraction needs YAKE: pip install 'judgelab[explain]'") from None
    text = "\n".join(t for t in texts if t)
    if not text.strip():
        return []
    extractor = yake.KeywordExtractor(lan="en", n=ngram, top=top)
    return [(k, float(s)) for k, s in extractor.extract_keywords(text)]


def explanation_map(texts: list[str], labels: list[str], path: str | Path, seed: int = 0) -> str:
    """2-D map of explanation embeddings coloured by criterion (HANNA paper, UMAP figure).

    Embeddings: sentence-transformers when the ``explain`` extra and a model are available,
    else TF-IDF vectors. Projection: UMAP (``umap-learn``) when installed, else PCA. Returns a
    note saying which were used; an empty input writes nothing.
    """
    from judgelab.report.figures import _plt, _save
    from judgelab.retrieve import Retriever

    keep = [(t, l) for t, l in zip(texts, labels) if t and t.strip()]
    if len(keep) < 3:
        return "fewer than three explanations: no map"
    texts, labels = [t for t, _ in keep], [l for _, l in keep]
    retriever = Retriever("auto")
    vectors = retriever._embed(texts, fit=True)
    notes = [retriever.note] if retriever.note else []
    try:
        import umap

        coords = umap.UMAP(n_components=2, random_state=seed).fit_transform(vectors)
        method = "UMAP"
    except ImportError:
        centred = vectors - vectors.mean(axis=0)
        _, _, vt = np.linalg.svd(centred, full_matrices=False)
        coords = centred @ vt[:2].T if vt.shape[0] >= 2 else np.column_stack([centred @ vt[:1].T, np.zeros(len(texts))])
        method = "PCA"
        notes.append("umap-learn not installed: PCA projection (pip install 'judgelab[explain]' for UMAP)")
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 5))
    for label in sorted(set(labels)):
        idx = [i for i, l in enumerate(labels) if l == label]
        ax.scatter(coords[idx, 0], coords[idx, 1], s=14, alpha=0.7, label=label)
    ax.set_title(f"Explanations by criterion ({method})")
    ax.legend(fontsize=8)
    _save(fig, path)
    return "; ".join(notes)
