"""What an annotation folder keeps across restarts, beside its store.

What stays fixed across restarts lives beside the store:

* ``annotation.json`` — the settings (template and its SHA-256, criteria, variant, items
  digest, ``--sample``, seed) and the selected items. Restarting with the same command reuses
  the selection (a ``disagreement`` selection would otherwise move as people rate); other
  settings are one clear error.
* ``annotators.json`` (mode 0600) — the per-annotator link tokens, the organiser's token and
  the secret that signs each form, so links and open forms survive a restart.
"""
from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from judgelab.annotate.selection import ItemKey, Selection
from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_text_atomic
from judgelab.store import describe_changes

__all__ = ["AnnotationPlan", "items_digest", "load_or_make_plan", "save_plan", "Annotators", "load_annotators",
           "valid_name", "PLAN_FILE", "ANNOTATORS_FILE"]

PLAN_FILE = "annotation.json"
ANNOTATORS_FILE = "annotators.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


def valid_name(name: str) -> bool:
    """Annotator names: 1–40 letters, digits, ``_ . -``, starting with a letter or digit (never a path)."""
    return bool(_NAME.match(name))




def items_digest(items: Sequence[Item]) -> str:
    """SHA-256 over the items' content (ids, systems, groups, texts, contexts, other fields), order-independent."""
    rows = sorted(json.dumps([i.system, i.item_id, i.group, i.text, i.context, i.extra], sort_keys=True,
                             ensure_ascii=False, default=str) for i in items)
    return hashlib.sha256("\n".join(rows).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AnnotationPlan:
    """What is annotated, fixed for the life of an annotation folder.

    Attributes:
        settings: template, its SHA-256, criteria, variant, items digest, ``--sample``, seed, stratification.
        keys: the selected items, in selection order.
        uniform: the selection is all items or a uniform random sample (valid for PPI).
    """

    settings: dict[str, Any]
    keys: tuple[ItemKey, ...]
    uniform: bool

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "settings": self.settings, "uniform_sample": self.uniform,
                "items": [{"system": s, "item_id": i} for s, i in self.keys]}


def _write_private(path: Path, text: str, mode: int = 0o600) -> None:
    """Write a file atomically (temporary file, then rename), readable by its owner only when ``mode`` says so."""
    write_text_atomic(path, text, mode=mode, fsync=True)


def _settings_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What differs between two plans' settings, digests of data in words."""
    words = {"items_sha256": "the items changed", "ids_sha256": "the ids file changed"}
    phrases = [w for k, w in words.items() if old.get(k) != new.get(k)]
    rest = describe_changes({k: v for k, v in old.items() if k not in words}, {k: v for k, v in new.items() if k not in words})
    return "; ".join(p for p in [*phrases, rest] if p)


def load_or_make_plan(folder: Path, settings: dict[str, Any], make: Callable[[], Selection]) -> tuple[AnnotationPlan, bool]:
    """(the folder's plan, whether it is new): reused when its settings equal ``settings``, else made with ``make()``.

    A new plan is not written yet (:func:`save_plan`), so that a start that fails later leaves no
    selection behind.

    Raises:
        JudgelabError: the folder holds a plan made with other settings (named in the message).
    """
    path = folder / PLAN_FILE
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            old = data["settings"]
            keys = tuple((str(r["system"]), str(r["item_id"])) for r in data["items"])
            uniform = bool(data.get("uniform_sample", False))
        except (OSError, ValueError, KeyError, TypeError):
            raise JudgelabError(f"{path} is damaged; move it away to make a new selection") from None
        if old != settings:
            raise JudgelabError(f"{folder} holds an annotation made with other settings ({_settings_changes(old, settings)}); "
                                f"use another --out, or the same options as before")
        return AnnotationPlan(old, keys, uniform), False
    selection = make()
    return AnnotationPlan(settings, selection.keys, selection.uniform), True


def save_plan(folder: Path, plan: AnnotationPlan) -> None:
    """Write ``annotation.json`` (atomically)."""
    _write_private(folder / PLAN_FILE, json.dumps(plan.to_json(), ensure_ascii=False, indent=1) + "\n", 0o644)


@dataclass(frozen=True)
class Annotators:
    """Who may annotate.

    Attributes:
        names: the annotators named with ``--annotators`` (empty: any valid name, name links only).
        tokens: annotator → link token (token links; empty without ``--tokens``).
        organiser: the token of the overview page (token links only).
        secret: signs each form (so a form is only accepted from a page this server served).
    """

    names: tuple[str, ...]
    tokens: dict[str, str] = field(default_factory=dict)
    organiser: str | None = None
    secret: bytes = b""

    @property
    def use_tokens(self) -> bool:
        return bool(self.tokens)


def load_annotators(folder: Path, names: Sequence[str], use_tokens: bool) -> Annotators:
    """Read (or create) ``annotators.json``: tokens and the form secret persist across restarts; new names get new tokens."""
    for name in names:
        if not valid_name(name):
            raise JudgelabError(f"bad annotator name {name!r}: 1-40 letters, digits, '_', '.' or '-'")
    if len(set(names)) != len(names):
        raise JudgelabError("--annotators lists a name twice")
    if use_tokens and not names:
        raise JudgelabError("--tokens needs --annotators (one secret link per annotator)")
    path = folder / ANNOTATORS_FILE
    data: dict[str, Any] = {}
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError
        except (OSError, ValueError):
            raise JudgelabError(f"{path} is damaged; move it away (existing links stop working)") from None
    changed = False
    if not data.get("secret"):
        data["secret"], changed = secrets.token_hex(32), True
    tokens: dict[str, str] = dict(data.get("tokens") or {})
    if use_tokens:
        for name in names:
            if name not in tokens:
                tokens[name], changed = secrets.token_urlsafe(24), True
        if not data.get("organiser"):
            data["organiser"], changed = secrets.token_urlsafe(24), True
        data["tokens"] = tokens
    if changed:
        _write_private(path, json.dumps(data, indent=1) + "\n")
    return Annotators(tuple(names), {n: tokens[n] for n in names} if use_tokens else {},
                      data.get("organiser") if use_tokens else None, bytes.fromhex(data["secret"]))
