"""Which items people rate, and in which order each annotator sees them (pure, seeded).

An item is identified by ``(system, item_id)``, as in the ratings table. Four ways to choose:

* ``all`` — every item (the default);
* ``random:N`` — a uniform random sample without replacement, reproducible from the seed;
  with ``stratify=True`` the ``N`` items are allocated to systems in proportion to their
  size (largest remainder, ties by system name) and drawn uniformly within each system.
  Prediction-powered inference (Angelopoulos et al. 2023) needs exactly this: the
  human-rated items must be a uniform random sample of the items the judge rated (of each
  system, for per-system estimates);
* ``disagreement:N`` — the ``N`` items where the judge disagrees most: the mean squared
  difference between the judge's samples and the reference, which is the variance over the
  judge's samples, plus the squared gap between the judge's mean and the people's mean where
  people have rated the item already (``E[(s - h)^2] = Var(s) + (mean(s) - h)^2``), averaged
  over the criteria and judges; ties are broken by a seeded shuffle. Useful to find
  problems, **not** a valid labelled set for PPI;
* ``ids:FILE`` — the items whose id is listed in FILE (one per line; blank lines and lines
  starting with ``#`` are skipped); an id selects that id in every system, a line
  ``system<TAB>item_id`` (``judgelab escalate``'s ``escalated_ids.txt``) that system's item only.

Items are sorted by ``(system, item_id)`` before any draw, so the order of the input file does
not change the selection. Each annotator sees the selection in their own order, a shuffle
seeded by the annotator's name and the seed (:func:`annotator_order`), so position effects
average out over annotators and one annotator's order is the same every time they return.
"""
from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Literal, Sequence

from judgelab.errors import JudgelabError
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ItemKey", "SampleSpec", "Selection", "parse_sample_spec", "select_items", "select_random",
    "select_disagreement", "select_ids", "read_ids", "disagreement_scores", "annotator_order", "allocate",
]

#: ``(system, item_id)``: the identity of an item in the ratings table.
ItemKey = tuple[str, str]

_SPEC = re.compile(r"^(?P<kind>random|disagreement|ids):(?P<arg>.+)$")


@dataclass(frozen=True)
class SampleSpec:
    """A parsed ``--sample`` value.

    Attributes:
        kind: ``all``, ``random``, ``disagreement`` or ``ids``.
        n: how many items (``random`` and ``disagreement``).
        path: the ids file (``ids``).
    """

    kind: Literal["all", "random", "disagreement", "ids"]
    n: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        if self.kind == "all":
            return "all"
        return f"{self.kind}:{self.path if self.kind == 'ids' else self.n}"


@dataclass(frozen=True)
class Selection:
    """The chosen items, in canonical order (sorted by system and id, or by disagreement).

    Attributes:
        keys: the chosen ``(system, item_id)`` pairs.
        spec: how they were chosen.
        seed: the seed of the draw.
        stratified: drawn per system (``random`` only).
        uniform: a uniform random sample of the items (or all of them) — what PPI requires
            of the human-rated items.
        scores: the disagreement score of each chosen item (``disagreement`` only).
    """

    keys: tuple[ItemKey, ...]
    spec: SampleSpec
    seed: int
    stratified: bool = False
    uniform: bool = True
    scores: tuple[float, ...] | None = None

    def __len__(self) -> int:
        return len(self.keys)


def parse_sample_spec(text: str | None) -> SampleSpec:
    """``all`` (or None), ``random:N``, ``disagreement:N`` or ``ids:FILE``; anything else is one clear error.

    Example:
        >>> parse_sample_spec("random:30")
        SampleSpec(kind='random', n=30, path=None)
    """
    if text is None or text.strip() in {"", "all"}:
        return SampleSpec("all")
    match = _SPEC.match(text.strip())
    if not match:
        raise JudgelabError(f"bad --sample {text!r}: use all, random:N, disagreement:N or ids:FILE")
    kind, arg = match.group("kind"), match.group("arg").strip()
    if kind == "ids":
        return SampleSpec("ids", path=arg)
    try:
        n = int(arg)
    except ValueError:
        raise JudgelabError(f"bad --sample {text!r}: N must be a whole number, e.g. {kind}:30") from None
    if n < 1:
        raise JudgelabError(f"bad --sample {text!r}: N must be at least 1")
    return SampleSpec(kind, n=n)  # type: ignore[arg-type]


def _rng(seed: int, *parts: str) -> random.Random:
    """A generator seeded by the seed and some text (stable across runs and Python versions)."""
    digest = hashlib.sha256("\x1f".join([str(seed), *parts]).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _canonical(keys: Iterable[ItemKey]) -> list[ItemKey]:
    out = sorted(set(keys))
    if not out:
        raise JudgelabError("no items to choose from")
    return out


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Split ``n`` over strata in proportion to their sizes (largest remainder; ties by name).

    Example:
        >>> allocate({"a": 10, "b": 5}, 6)
        {'a': 4, 'b': 2}
    """
    total = sum(sizes.values())
    if n > total:
        raise ValueError(f"cannot take {n} of {total}")
    exact = {s: n * size / total for s, size in sizes.items()}
    out = {s: int(v) for s, v in exact.items()}
    rest = n - sum(out.values())
    for s in sorted(sizes, key=lambda s: (-(exact[s] - out[s]), s))[:rest]:
        out[s] += 1
    return out


def select_random(keys: Iterable[ItemKey], n: int, seed: int, stratify: bool = False) -> Selection:
    """A uniform random sample of ``n`` items without replacement (per system with ``stratify``)."""
    pool = _canonical(keys)
    spec = SampleSpec("random", n=n)
    if n > len(pool):
        raise JudgelabError(f"--sample random:{n} asks for more items than there are ({len(pool)})")
    if not stratify:
        chosen = _rng(seed, "random").sample(pool, n)
        return Selection(tuple(sorted(chosen)), spec, seed)
    by_system: dict[str, list[ItemKey]] = {}
    for key in pool:
        by_system.setdefault(key[0], []).append(key)
    quota = allocate({s: len(v) for s, v in by_system.items()}, n)
    chosen = []
    for system in sorted(by_system):
        chosen.extend(_rng(seed, "random", system).sample(by_system[system], quota[system]))
    return Selection(tuple(sorted(chosen)), spec, seed, stratified=True)


def read_ids(path: str | Path) -> list[str]:
    """The ids of an ids file: one per line; blank lines and ``#`` comments skipped."""
    path = Path(path)
    if not path.is_file():
        raise JudgelabError(f"ids file not found: {path}")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise JudgelabError(f"{path}: not UTF-8 text") from None
    ids = [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]
    if not ids:
        raise JudgelabError(f"{path}: no ids (one item id per line)")
    return ids


def select_ids(keys: Iterable[ItemKey], ids: Sequence[str], spec: SampleSpec | None = None, seed: int = 0) -> Selection:
    """The items whose id is in ``ids`` (in every system), or, for a line ``system<TAB>item_id`` (as
    ``judgelab escalate`` writes), that one system's item; an unknown id is one clear error."""
    pool = _canonical(keys)
    known = {item_id for _, item_id in pool}
    pairs = {tuple(i.split("\t", 1)) for i in ids if "\t" in i}
    plain = [i for i in ids if "\t" not in i]
    unknown = [i for i in dict.fromkeys(plain) if i not in known]
    in_pool = set(pool)
    unknown += [f"{s}\t{i}" for s, i in sorted(pairs) if (s, i) not in in_pool]
    if unknown:
        shown = ", ".join(map(repr, unknown[:3])) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        raise JudgelabError(f"the ids file names {len(unknown)} id(s) that are not among the items: {shown}")
    wanted = set(plain)
    return Selection(tuple(k for k in pool if k[1] in wanted or k in pairs), spec or SampleSpec("ids"), seed)


def disagreement_scores(ratings: "pd.DataFrame", criteria: Sequence[str] | None = None) -> "pd.Series":
    """Per item ``(system, item_id)``: how much the judge disagrees, with itself and with people.

    For each judge (non-human rater), criterion and item: the mean squared difference between
    the judge's successful samples and a reference — their own mean (so: the variance over
    samples, ddof 0) or, where people rated the item, the mean human rating (variance plus
    squared bias). Averaged over judges and criteria. Items the judge never rated are absent.
    """
    import pandas as pd

    from judgelab.raters import human_mask

    ok = ratings[(ratings["status"] == Status.OK) & ratings["score"].notna()]
    if criteria is not None:
        ok = ok[ok["criterion"].isin(list(criteria))]
    humans = human_mask(ok["rater"])
    judge = ok[~humans]
    if judge.empty:
        return pd.Series(dtype=float)
    keys = ["system", "item_id", "criterion"]
    human = ok[humans].groupby(keys)["score"].mean().rename("human")
    judge = judge.join(human, on=keys)
    stats = judge.groupby(["rater", *keys]).agg(mean=("score", "mean"), var=("score", lambda s: float(s.var(ddof=0))),
                                                human=("human", "first")).reset_index()
    gap = (stats["mean"] - stats["human"]) ** 2
    stats["score"] = stats["var"] + gap.fillna(0.0)
    return stats.groupby(["system", "item_id"])["score"].mean()


def select_disagreement(keys: Iterable[ItemKey], ratings: "pd.DataFrame", n: int, seed: int,
                        criteria: Sequence[str] | None = None) -> Selection:
    """The ``n`` items with the largest :func:`disagreement_scores` (ties in seeded random order)."""
    pool = _canonical(keys)
    scores = disagreement_scores(ratings, criteria)
    spec = SampleSpec("disagreement", n=n)
    if scores.empty:
        raise JudgelabError("--sample disagreement:N needs the judge's ratings of these items in the store "
                            "(run `judgelab rate --out FOLDER` with the same items first)")
    candidates = [k for k in pool if k in scores.index]
    if len(candidates) < n:
        raise JudgelabError(f"--sample disagreement:{n}: the judge rated only {len(candidates)} of these items in the store")
    if not any(scores[k] > 0 for k in candidates):
        raise JudgelabError("--sample disagreement:N has nothing to rank by: the judge's samples agree on every item "
                            "(one sample per item, e.g. log-probability scores) and no person has rated them yet; "
                            "rate with --samples 3 --score parsed, or use --sample random:N")
    shuffled = list(candidates)
    _rng(seed, "disagreement").shuffle(shuffled)
    ranked = sorted(shuffled, key=lambda k: -float(scores[k]))[:n]  # stable: ties keep the seeded order
    return Selection(tuple(ranked), spec, seed, uniform=False, scores=tuple(float(scores[k]) for k in ranked))


def select_items(keys: Iterable[ItemKey], spec: SampleSpec, seed: int = 0, stratify: bool = False,
                 ratings: "pd.DataFrame | None" = None, criteria: Sequence[str] | None = None,
                 ids: Sequence[str] | None = None) -> Selection:
    """Dispatch on ``spec.kind`` (see the module docstring); ``ids`` are the ids file's lines when already read."""
    if stratify and spec.kind != "random":
        raise JudgelabError("--stratify-by-system applies to --sample random:N only")
    if spec.kind == "all":
        return Selection(tuple(_canonical(keys)), spec, seed)
    if spec.kind == "random":
        return select_random(keys, spec.n or 0, seed, stratify)
    if spec.kind == "ids":
        return select_ids(keys, ids if ids is not None else read_ids(spec.path or ""), spec, seed)
    if ratings is None:
        raise JudgelabError("--sample disagreement:N needs the judge's ratings in the store")
    return select_disagreement(keys, ratings, spec.n or 0, seed, criteria)


def annotator_order(n_items: int, annotator: str, seed: int) -> tuple[int, ...]:
    """The order (indices into the selection) in which ``annotator`` sees the items.

    A shuffle seeded by the annotator's name and the seed: different annotators see different
    orders; the same annotator always sees the same one, so a returning annotator continues
    where they left.

    Example:
        >>> annotator_order(5, "alice", 1) == annotator_order(5, "alice", 1)
        True
    """
    order = list(range(n_items))
    _rng(seed, "order", annotator).shuffle(order)
    return tuple(order)
