"""The two meta-evaluation sets of G-Eval (Liu et al. 2023, §3.2) as judgelab items and human ratings.

* **SummEval** (Fabbri et al. 2021): ``summeval_expert_means.jsonl``, one row per summary
  (``doc_id``, ``system``, ``source`` article, ``reference``, ``summary`` and the mean of three
  experts for ``coherence``, ``consistency``, ``fluency``, ``relevance``; 100 documents × 16
  systems). Item: ``item_id`` = ``group`` = the document id, ``system`` = the system,
  ``text`` = the summary, ``context`` = the article.
* **Topical-Chat** (Mehri & Eskenazi 2020, as used by G-Eval): ``topical_chat.json``, a list of
  responses (``source`` = dialogue history, ``context`` = the grounding fact, ``system_id``,
  ``system_output``, ``scores{...}`` means of three raters; 60 contexts × 6 systems). The file has
  no context id: dialogue contexts are numbered ``tc-000`` … in order of first appearance of
  their history. Item: ``item_id`` = ``group`` = that id, ``text`` = the response,
  ``context`` = the fact, ``extra["history"]`` = the dialogue history.

The human table is judgelab's tidy ratings layout (:data:`judgelab.ratings.TIDY_COLUMNS`) with
rater ``human:mean``: these files hold means of three raters only, one score per item × criterion.
``n_items`` keeps the first N documents (dialogue contexts) in file order, each with all its systems.
Files are read by :mod:`judgelab.datasets.readers`; a missing or malformed file is one
:class:`~judgelab.errors.JudgelabError` naming the file and the row.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.datasets.items import Item
from judgelab.datasets.readers import parse_score, read_records
from judgelab.errors import JudgelabError
from judgelab.status import Status

__all__ = ["GevalData", "DATASETS", "SUMMEVAL_CRITERIA", "TOPICAL_CHAT_CRITERIA", "HUMAN_RATER", "shared_data_path",
           "resolve_data", "load_summeval", "load_topical_chat", "load_geval_data"]

SUMMEVAL_CRITERIA = ("coherence", "consistency", "fluency", "relevance")
#: The four aspects G-Eval reports (understandability and overall are in the file but not in G-Eval's table).
TOPICAL_CHAT_CRITERIA = ("naturalness", "coherence", "engagingness", "groundedness")
HUMAN_RATER = "human:mean"
#: dataset name → file below the shared data folder
DATASETS = {"summeval": "summeval/summeval_expert_means.jsonl", "topical-chat": "topical-chat/topical_chat.json"}


@dataclass(frozen=True)
class GevalData:
    """Items to judge and the human ratings of one meta-evaluation set."""

    dataset: str
    path: Path
    items: tuple[Item, ...]
    #: tidy ratings (item_id, system, group, criterion, rater, sample, score, status), rater ``human:mean``
    human: Any
    criteria: tuple[str, ...]

    @property
    def n_groups(self) -> int:
        return len({i.group for i in self.items})


def shared_data_path() -> Path:
    """The shared data folder: ``$JUDGELAB_SHARED_DATA``, else ``../shared/data`` (from the project root)."""
    return Path(os.environ.get("JUDGELAB_SHARED_DATA") or Path("..") / "shared" / "data")


def resolve_data(data: str | Path, dataset: str | None = None) -> tuple[str, Path]:
    """``data`` (``summeval``, ``topical-chat`` or a path: ``--dataset NAME`` or ``--items FILE``) and ``dataset``
    (the layout of a path) → (dataset, file).

    A dataset name is looked up in the shared data folder; a path's dataset is ``dataset`` or,
    when not given, guessed from the file type (``.jsonl`` SummEval, ``.json`` Topical-Chat).
    """
    if dataset is not None and dataset not in DATASETS:
        raise JudgelabError(f"unknown --dataset {dataset!r}: summeval or topical-chat")
    text = str(data)
    if text in DATASETS:
        if dataset is not None and dataset != text:
            raise JudgelabError(f"data set {text} contradicts --dataset {dataset}")
        folder = shared_data_path()
        path = folder / DATASETS[text]
        if not path.exists():
            where = ("$JUDGELAB_SHARED_DATA" if os.environ.get("JUDGELAB_SHARED_DATA")
                     else "../shared/data seen from the folder you run in")
            raise JudgelabError(f"--dataset {text} reads {DATASETS[text]} in the shared data folder ({where}: "
                                f"{folder.resolve()}), and it is not there: run from the project folder beside shared/, "
                                "set JUDGELAB_SHARED_DATA to the data folder, or give the file with --items FILE")
        return text, path
    path = Path(data)
    if not path.exists():
        raise JudgelabError(f"{path}: no such file (--items takes a file of the summeval or topical-chat layout)")
    if dataset is None:
        guess = {".jsonl": "summeval", ".json": "topical-chat"}.get(path.suffix.lower())
        if guess is None:
            raise JudgelabError(f"{path}: cannot tell the dataset from the file type; give --dataset summeval|topical-chat")
        dataset = guess
    return dataset, path


def _human_rows(scores: dict[str, Any], criteria: tuple[str, ...] | list[str], item_id: str, system: str,
                where: str) -> list[dict[str, Any]]:
    """The tidy human rows of one item (rater ``human:mean``, the document as its group); a missing
    or non-numeric score is one line naming the place."""
    rows = []
    for criterion in criteria:
        score = parse_score(scores.get(criterion), where, what=criterion)
        if score is None:
            raise JudgelabError(f"{where}: no {criterion!r} score")
        rows.append({"item_id": item_id, "system": system, "group": item_id, "criterion": criterion, "rater": HUMAN_RATER,
                     "sample": 0, "score": score, "status": Status.OK.value})
    return rows


def _text(row: dict[str, Any], key: str, path: Path, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise JudgelabError(f"{path}: {where}: field {key!r} must be non-empty text")
    return value


def _human_frame(rows: list[dict[str, Any]]):
    import pandas as pd

    from judgelab.ratings import TIDY_COLUMNS

    return pd.DataFrame(rows, columns=TIDY_COLUMNS)


def _check_limit(n_items: int | None) -> None:
    if n_items is not None and n_items < 1:
        raise JudgelabError(f"--n-items must be at least 1, not {n_items}")


def load_summeval(path: str | Path, n_items: int | None = None) -> GevalData:
    """SummEval's expert means as items and tidy human ratings (first ``n_items`` documents).

    Args:
        path: ``summeval_expert_means.jsonl`` (or a JSONL/CSV file with the same columns).
        n_items: keep the first N documents in file order, each with all its systems.

    Returns:
        :class:`GevalData` with one item per summary and one ``human:mean`` score per item × criterion.

    Raises:
        JudgelabError: missing file, missing field, a score that is not a finite number, or a
            (document, system) pair listed twice.

    Example:
        >>> data = load_summeval("../shared/data/summeval/summeval_expert_means.jsonl", n_items=2)  # doctest: +SKIP
        >>> len(data.items), data.n_groups
        (32, 2)
    """
    _check_limit(n_items)
    path = Path(path)
    rows = read_records(path)
    items: list[Item] = []
    human: list[dict[str, Any]] = []
    docs: list[str] = []
    seen: set[tuple[str, str]] = set()
    for n, row in enumerate(rows):
        where = rows.where(n)
        doc = row.get("doc_id")
        if doc in (None, ""):
            raise JudgelabError(f"{path}: {where}: no field 'doc_id' (a SummEval file has doc_id, system, source, summary and the four scores)")
        doc, system = str(doc), str(row.get("system") or "")
        if not system:
            raise JudgelabError(f"{path}: {where}: no field 'system'")
        if doc not in docs:
            if n_items is not None and len(docs) >= n_items:
                continue
            docs.append(doc)
        if (doc, system) in seen:
            raise JudgelabError(f"{path}: {where}: document {doc!r} lists system {system!r} twice")
        seen.add((doc, system))
        items.append(Item(doc, _text(row, "summary", path, where), system, doc, _text(row, "source", path, where)))
        human += _human_rows(row, SUMMEVAL_CRITERIA, doc, system, f"{path}: {where}")
    if not items:
        raise JudgelabError(f"{path}: no summaries")
    return GevalData("summeval", path, tuple(items), _human_frame(human), SUMMEVAL_CRITERIA)


def load_topical_chat(path: str | Path, n_items: int | None = None) -> GevalData:
    """Topical-Chat's rated responses as items and tidy human ratings (first ``n_items`` contexts).

    Args:
        path: ``topical_chat.json`` (a JSON list of objects with source, context, system_id,
            system_output and scores).
        n_items: keep the first N dialogue contexts in order of appearance, each with all its systems.

    Returns:
        :class:`GevalData`; the items carry the dialogue history as the field ``history``.

    Raises:
        JudgelabError: missing file, missing field, a score that is not a finite number, or a
            (context, system) pair listed twice.

    Example:
        >>> data = load_topical_chat("../shared/data/topical-chat/topical_chat.json", n_items=1)  # doctest: +SKIP
        >>> len(data.items), data.items[0].item_id
        (6, 'tc-000')
    """
    _check_limit(n_items)
    path = Path(path)
    rows = read_records(path)
    ids: dict[str, str] = {}
    items: list[Item] = []
    human: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for n, row in enumerate(rows):
        where = rows.where(n)
        history = _text(row, "source", path, where)
        if history not in ids:
            if n_items is not None and len(ids) >= n_items:
                continue
            ids[history] = f"tc-{len(ids):03d}"
        cid = ids[history]
        system = _text(row, "system_id", path, where)
        if (cid, system) in seen:
            raise JudgelabError(f"{path}: {where}: dialogue context {cid} lists system {system!r} twice")
        seen.add((cid, system))
        scores = row.get("scores")
        if not isinstance(scores, dict):
            raise JudgelabError(f"{path}: {where}: field 'scores' must be an object of criterion scores")
        items.append(Item(cid, _text(row, "system_output", path, where), system, cid, _text(row, "context", path, where),
                          {"history": history}))
        human += _human_rows(scores, TOPICAL_CHAT_CRITERIA, cid, system, f"{path}: {where}")
    if not items:
        raise JudgelabError(f"{path}: no responses")
    return GevalData("topical-chat", path, tuple(items), _human_frame(human), TOPICAL_CHAT_CRITERIA)


def load_geval_data(data: str | Path, dataset: str | None = None, n_items: int | None = None) -> GevalData:
    """``--dataset`` or ``--items`` and ``--dataset`` as the recipe takes them → :class:`GevalData` (see :func:`resolve_data`)."""
    name, path = resolve_data(data, dataset)
    return (load_summeval if name == "summeval" else load_topical_chat)(path, n_items)
