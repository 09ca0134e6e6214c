"""Step 1 of DHP: hierarchical perturbation of reference texts into stored, reusable sets.

Every perturbation of every item is seeded by (seed, perturbation name, item id), so a
set is reproducible item by item and independent of the order or number of items. The
result is one JSONL file with the originals (system ``original``) and each successful
perturbation (system = its name), plus a report of what could not be perturbed and why.
Several judges are then compared on identical copies.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd

from judgelab.datasets.items import Item, read_records
from judgelab.dhp.task import DhpTask, Perturbation
from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_atomic
from judgelab.models.base import Backend
from judgelab.perturb import rules
from judgelab.store import Store

__all__ = ["build_perturbed", "save_items", "load_saved_items"]


def _rng(seed: int, perturbation: str, item_id: str) -> random.Random:
    return random.Random(f"{seed}|{perturbation}|{item_id}")


def _rule(p: Perturbation, item: Item, items: list[Item], seed: int) -> rules.Perturbed:
    rng = _rng(seed, p.name, item.item_id)
    k = p.k if isinstance(p.k, int) else 0  # the task validator requires an integer k for the sized kinds
    if p.kind == "delete_characters":
        return rules.delete_characters(item.text, k, rng)
    if p.kind == "typos":
        return rules.add_typos(item.text, k, rng)
    if p.kind == "delete_words":
        return rules.delete_words(item.text, k, rng)
    if p.kind == "shuffle_sentences":
        return rules.shuffle_sentences(item.text, None if p.k in (None, "all") else k, rng)
    if p.kind == "random_other":
        others = [o for o in items if o.item_id != item.item_id and o.text.strip() != item.text.strip()]
        if not others:
            return rules.Perturbed(item.text, False, 0, "no other item to take a replacement from")
        return rules.Perturbed(rng.choice(others).text, True, 1)
    if p.kind == "wrong_ending":
        wrong = item.extra.get("wrong_ending")
        if not wrong or str(wrong).strip() == item.text.strip():
            return rules.Perturbed(item.text, False, 0, "the item has no wrong_ending")
        return rules.Perturbed(str(wrong), True, 1)
    raise JudgelabError(f"unknown rule perturbation {p.kind!r}")  # pragma: no cover - validated by the task model


def build_perturbed(items: list[Item], task: DhpTask, seed: int = 0, generator: Backend | None = None,
                    store: Store | None = None) -> tuple[list[Item], pd.DataFrame]:
    """Originals plus every perturbation of the task; the report says what was left out and why."""
    out = [Item(i.item_id, i.text, "original", i.group or i.item_id, i.context, i.extra) for i in items]
    report = []
    llm_jobs: list[tuple[Perturbation, Item]] = []
    for p in task.perturbations:
        for item in items:
            if p.method == "llm":
                if generator is None:
                    report.append({"perturbation": p.name, "item_id": item.item_id, "ok": False,
                                   "reason": "LLM-based: no generator given (--generator)"})
                else:
                    llm_jobs.append((p, item))
                continue
            result = _rule(p, item, items, seed)
            report.append({"perturbation": p.name, "item_id": item.item_id, "ok": result.changed, "reason": result.warning or ""})
            if result.changed:
                out.append(Item(item.item_id, result.text, p.name, item.group or item.item_id, item.context, item.extra))
    if llm_jobs:
        from judgelab.perturb.llm import perturb_with_llm

        if store is None or generator is None:
            raise JudgelabError("LLM-based perturbations need a generator judge and a store for their calls")
        results = perturb_with_llm(generator, store, [(p.kind, p.degree or "minor", task.unit, item.text) for p, item in llm_jobs])
        for (p, item), generated in zip(llm_jobs, results):
            report.append({"perturbation": p.name, "item_id": item.item_id, "ok": generated.ok, "reason": generated.reason})
            if generated.ok:
                out.append(Item(item.item_id, generated.text, p.name, item.group or item.item_id, item.context, item.extra))
    return out, pd.DataFrame(report, columns=["perturbation", "item_id", "ok", "reason"])


def save_items(items: list[Item], path: Path) -> Path:
    """Write perturbed items as JSON lines (``perturbed.jsonl``), atomically (temporary file, then rename).

    Args:
        items: originals and perturbed copies; each line keeps id, system (the perturbation),
            group, text, context and the extra fields, so :func:`load_saved_items` restores them.
        path: the file to write.

    Returns:
        ``path``.
    """
    def fill(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8") as f:
            for i in items:
                f.write(json.dumps({"id": i.item_id, "system": i.system, "group": i.group, "text": i.text,
                                    "context": i.context, **i.extra}, ensure_ascii=False) + "\n")

    return write_atomic(path, fill)


def load_saved_items(path: Path) -> list[Item]:
    """A stored perturbed set (as written by :func:`save_items`)."""
    rows = read_records(path)
    out = []
    for n, r in enumerate(rows, 1):
        if "id" not in r or "text" not in r or "system" not in r:
            raise JudgelabError(f"{path}: line {n} is not a judgelab perturbed set row (needs id, system, text)")
        extra = {k: v for k, v in r.items() if k not in {"id", "system", "group", "text", "context"}}
        out.append(Item(str(r["id"]), r["text"], str(r["system"]), r.get("group"), r.get("context"), extra))
    return out
