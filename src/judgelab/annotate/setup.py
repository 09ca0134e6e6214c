"""Setting up an annotation: template, items, selection, store, annotators — every input checked first.

:func:`prepare` does everything ``judgelab annotate`` needs before it serves: it loads the
template the judge uses (Chiang & Lee 2023, §2.2: the same instructions, sample and questions)
and refuses what cannot be a rating form, loads the items, opens the store (this process then
holds it), makes or reuses the selection (:mod:`judgelab.annotate.selection`), reads the
annotators' links and renders every form once, so that a missing field is an error before the
server starts. Nothing here prints.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from judgelab.annotate.selection import parse_sample_spec, read_ids, select_items
from judgelab.annotate.form import scale_labels
from judgelab.annotate.folder_state import items_digest, load_annotators, load_or_make_plan, save_plan
from judgelab.annotate.session import AnnotationSession
from judgelab.datasets.items import FieldMap, load_items
from judgelab.errors import JudgelabError
from judgelab.prompts import load_template
from judgelab.store import Store

__all__ = ["prepare", "links"]


def prepare(items_path: Path, template_name: str, out: Path, *, criteria: Sequence[str] | None = None,
            variant: str | None = None, annotators: Sequence[str] = (), tokens: bool = False,
            sample: str | None = None, seed: int = 0, stratify: bool = False,
            fields: FieldMap = FieldMap()) -> AnnotationSession:
    """Check every input and open the session; the caller closes ``session.store``.

    Raises:
        JudgelabError: unknown template, criterion or variant; a comparison template; a scale that
            is not a few integer points; a missing or malformed items file; a bad ``--sample``; a
            store in use by another process; an annotation folder made with other settings.
    """
    template = load_template(template_name)
    chosen = list(criteria) if criteria else list(template.criteria)
    template.check(chosen, variant)
    if template.answer != "rating":
        raise JudgelabError(f"template {template.name!r} asks for comparisons of two texts; annotate shows rating templates")
    for criterion in chosen:  # each criterion on its own scale (G-Eval's fluency 1-3 beside 1-5)
        scale_labels(template, criterion)
    spec = parse_sample_spec(sample)
    if stratify and spec.kind != "random":
        raise JudgelabError("--stratify-by-system applies to --sample random:N only")
    ids = read_ids(spec.path) if spec.kind == "ids" and spec.path is not None else None  # a missing ids file fails before the store is opened
    items = load_items(items_path, fields)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgelabError(f"cannot create output folder {out}: {exc.strerror}") from None
    outputs = [o for c in chosen for o in template.outputs(c)]
    settings = {
        "template": template.name, "template_sha256": template.digest(), "criteria": chosen, "variant": variant,
        "items_sha256": items_digest(items), "sample": str(spec), "seed": seed, "stratify_by_system": stratify,
    }
    if ids is not None:
        settings["ids_sha256"] = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()
    store = Store(out / "store.sqlite")
    try:
        def make():
            ratings = store.ratings() if spec.kind == "disagreement" else None
            return select_items([(i.system, i.item_id) for i in items], spec, seed, stratify, ratings, outputs, ids)

        plan, new = load_or_make_plan(out, settings, make)
        people = load_annotators(out, list(annotators), tokens)
        session = AnnotationSession(store, template, chosen, variant, items, plan, people)  # renders every form
        if new:
            save_plan(out, plan)
        return session
    except BaseException:
        store.close()
        raise


def links(session: AnnotationSession) -> list[tuple[str, str]]:
    """(who, path) for each named annotator and for the overview (token paths with ``--tokens``)."""
    people = session.annotators
    out = [(name, f"/t/{people.tokens[name]}" if people.use_tokens else f"/a/{name}") for name in people.names]
    out.append(("overview", f"/overview?token={people.organiser}" if people.use_tokens else "/overview"))
    return out
