"""Reference texts for the DHP tasks: local files, the shipped demo sets, and the paper's
sources on the HuggingFace hub when it is reachable.

Local files are JSONL/CSV with an id, the reference ``text`` and its ``context`` (source
article, story, question, source-language text); column names are options. Rows repeating
an (id, text) pair are kept once (SummEval files list each reference once per system).
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from judgelab.datasets.items import FieldMap, Item, read_records
from judgelab.errors import JudgelabError

__all__ = ["load_reference_items", "demo_set", "HUB_SOURCES", "load_from_hub"]

#: The paper's sources (DHP appendix A) on the HuggingFace hub: dataset id, config, split, field mapping.
HUB_SOURCES = {
    "summeval": ("mteb/summeval", None, "test", {"id": "id", "text": "human_summaries", "context": "text"}),
    "story-cloze": ("LSDSem/story_cloze", "2016", "validation", {"id": "story_id", "text": "ending", "context": "story"}),
    "answer-equivalence": ("google-research-datasets/answer_equivalence", None, "dev", {"id": "qid", "text": "reference", "context": "question"}),
    "wmt22-de-en": ("wmt/wmt22", "de-en", "test", {"id": "id", "text": "en", "context": "de"}),
    "wmt22-zh-en": ("wmt/wmt22", "zh-en", "test", {"id": "id", "text": "en", "context": "zh"}),
}


def demo_set(task: str) -> Path:
    """The shipped demo references of a task (``datasets/demo/dhp-<task>.jsonl``)."""
    folder = Path(str(resources.files("judgelab.datasets") / "demo"))
    shipped = {p.name[len("dhp-"):-len(".jsonl")] for p in folder.glob("dhp-*.jsonl")}
    if task not in shipped:  # a task name (from a user's task file) is looked up, never used as a path
        raise JudgelabError(f"no demo set for task {task!r}; give --items FILE")
    return folder / f"dhp-{task}.jsonl"


def load_reference_items(path: str | Path, fields: FieldMap = FieldMap(), limit: int | None = None) -> list[Item]:
    """The reference texts of a DHP task (DHP §3: the originals that are perturbed).

    Args:
        path: JSONL or CSV file, read by the project's one reader (byte-faithful text).
        fields: which columns hold the id, the text and the context (source article, prompt …).
        limit: keep only the first ``limit`` references.

    Returns:
        One :class:`~judgelab.datasets.items.Item` per row, ``system="original"`` and
        ``group`` = the reference id, so each perturbed copy is compared with its own original.

    Raises:
        JudgelabError: a row without id or text, a non-text value, or a repeated id (one line).

    Example:
        >>> from judgelab.datasets.dhp_sources import demo_set, load_reference_items
        >>> items = load_reference_items(demo_set("summarization"), limit=2)
        >>> len(items), items[0].system
        (2, 'original')
    """
    rows = read_records(path)
    seen: dict[str, str] = {}
    items: list[Item] = []
    for n, row in enumerate(rows, 1):
        for need in (fields.id, fields.text):
            if row.get(need) in (None, ""):
                raise JudgelabError(f"{path}: row {n} has no field {need!r} (columns: {', '.join(row)})")
        if not isinstance(row[fields.text], str):
            raise JudgelabError(f"{path}: row {n} ({rows.where(n - 1)}): field {fields.text!r} must be text")
        item_id, text = str(row[fields.id]), row[fields.text]
        if item_id in seen:
            if seen[item_id] == text:
                continue  # the same reference again (e.g. once per system in SummEval)
            raise JudgelabError(f"{path}: row {n}: id {item_id!r} appears with two different texts")
        seen[item_id] = text
        context = row.get(fields.context)
        extra = {k: v for k, v in row.items() if k in {"wrong_ending"}}
        items.append(Item(item_id, text, "original", item_id, None if context in (None, "") else str(context), extra))
        if limit is not None and len(items) >= limit:
            break
    if not items:
        raise JudgelabError(f"{path}: no items")
    return items


def load_from_hub(source: str, limit: int | None = None) -> list[Item]:
    """Load a paper source from the hub (needs the ``datasets`` package and network)."""
    if source not in HUB_SOURCES:
        raise JudgelabError(f"unknown source {source!r}; known: {', '.join(HUB_SOURCES)}")
    try:
        import datasets
    except ImportError:
        raise JudgelabError("loading from the HuggingFace hub needs the 'datasets' package (pip install datasets); offline, pass --items FILE") from None
    name, config, split, mapping = HUB_SOURCES[source]
    try:
        ds = datasets.load_dataset(name, config, split=split)
    except Exception as exc:  # network errors come in many types
        raise JudgelabError(f"cannot load {name} from the HuggingFace hub ({type(exc).__name__}); offline, pass --items FILE") from None
    items = []
    for row in ds:
        text = row[mapping["text"]]
        text = text[0] if isinstance(text, list) else text
        context = row[mapping["context"]]
        context = " ".join(context) if isinstance(context, list) else context
        items.append(Item(str(row[mapping["id"]]), str(text), "original", None, str(context)))
        if limit is not None and len(items) >= limit:
            break
    return items
