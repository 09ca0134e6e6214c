"""``judgelab probe padding``: pad each text without adding content, judge originals and copies
through the run core, and test whether the judge's score rises (issue 22, "know your judge's biases").

A planned run like DHP's (:mod:`judgelab.dhp.study`): the copies are made in memory by
:mod:`judgelab.perturb.padding` (seeded per item label), judged with the same template, criteria and
settings as the originals by :func:`judgelab.run.run_spec` (call ledger, run identity, resume), and
analysed by :func:`judgelab.probes.padding.padding_effects`. Outputs through
:class:`judgelab.output.OutputFolder`: ``padded.jsonl``, ``padding_design.csv``, ``ratings.csv``,
``padding_changes.csv``, ``padding_effect.csv``, README.md and run.json.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from judgelab.datasets.items import FieldMap, Item
from judgelab.errors import JudgelabError
from judgelab.perturb.padding import Padding, pad_text, padding_rng, parse_padding
from judgelab.probes.padding import DESIGN_COLUMNS, PaddingReport, padding_effects
from judgelab.status import DEFAULT_MAX_FAILURE_RATE

__all__ = ["DEFAULT_PADDINGS", "build_padded", "run_padding", "plan_padding", "PaddingResult", "padded_label"]

DEFAULT_PADDINGS = ("repeat:25", "repeat:50", "filler:25", "filler:50")
SEPARATOR = "+pad:"


def padded_label(system: str, padding: Padding) -> str:
    """The system label of a padded copy: ``<system>+pad:<padding>`` (``default+pad:filler-50``)."""
    return f"{system}{SEPARATOR}{padding.name}"


def build_padded(items: Sequence[Item], paddings: Sequence[Padding], seed: int = 0) -> tuple[list[Item], pd.DataFrame]:
    """The originals (unchanged) and one padded copy per item and padding, with the design table.

    A copy keeps the item's id, group, context and extra fields; its system is
    :func:`padded_label`. The design (:data:`judgelab.probes.padding.DESIGN_COLUMNS`) is what the
    analysis pairs by. Each copy is seeded by (seed, padding, system, item id).

    Raises:
        JudgelabError: repeated paddings, or a system label of the input that looks like a padded copy.
    """
    names = [p.name for p in paddings]
    if len(set(names)) != len(names):
        raise JudgelabError(f"the same padding is given twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    if not paddings:
        raise JudgelabError("give at least one --padding")
    clash = sorted({i.system for i in items if SEPARATOR in i.system})
    if clash:
        raise JudgelabError(f"system labels contain {SEPARATOR!r}, which marks padded copies: {', '.join(clash[:3])}")
    out = list(items)
    rows = []
    for p in paddings:
        for item in items:
            padded = pad_text(item.text, p, padding_rng(seed, p.name, item.system, item.item_id))
            label = padded_label(item.system, p)
            rows.append({"item_id": item.item_id, "system": item.system, "padding": p.name, "padded_system": label,
                         "words": padded.words, "added_words": padded.added_words, "changed": padded.changed,
                         "reason": padded.warning or ""})
            if padded.changed:
                out.append(Item(item.item_id, padded.text, label, item.group, item.context, item.extra))
    return out, pd.DataFrame(rows, columns=DESIGN_COLUMNS + ["reason"])


@dataclass(frozen=True)
class PaddingResult:
    """What ``probe padding`` produced: the report, the ratings, the raters and the folder."""

    out: Path
    report: PaddingReport
    ratings: pd.DataFrame = field(repr=False)
    raters: tuple[str, ...]
    messages: tuple[str, ...] = ()
    #: Each judge's status counts and failed answers (:func:`judgelab.rate.failure_lines`), to show.
    failures: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "raters": list(self.raters), "folder": str(self.out)}


def _load(items: Path | Sequence[Item], fields: FieldMap, n_items: int | None) -> list[Item]:
    from judgelab.datasets.items import load_items

    if isinstance(items, (str, Path)):
        return load_items(items, fields, limit=n_items)
    loaded = list(items)
    return loaded[:n_items] if n_items is not None else loaded


def _specs(template: str, judges: Sequence[str], criteria: list[str] | None, samples: int, score, options):
    from judgelab.models import Sampling
    from judgelab.prompts import load_template
    from judgelab.spec import JudgeSpec, RunSpec

    if not judges:
        raise JudgelabError("give at least one --judge")
    if not 1 <= samples <= 128:
        raise JudgelabError(f"--samples must be between 1 and 128, not {samples}")
    tpl = load_template(template)
    specs = [RunSpec(judge=JudgeSpec.of(j, options), template=tpl.name, criteria=criteria, samples=samples,
                     sampling=Sampling(temperature=0.0, max_tokens=64), score=score or "auto",
                     label="{model}@padding-" + tpl.name) for j in judges]
    return specs, tpl


def plan_padding(items: Path | Sequence[Item], template: str, judges: Sequence[str], *, criteria: list[str] | None = None,
                 paddings: Sequence[str] = DEFAULT_PADDINGS, seed: int = 0, samples: int = 1, score=None,
                 fields: FieldMap = FieldMap(), n_items: int | None = None, options=None, out: Path | None = None):
    """Plan the probe's judging without calling a model or writing anything (``--dry-run``)."""
    from judgelab.rate import StudyPlan, plan_rate

    specs, tpl = _specs(template, judges, criteria, samples, score, options)
    texts, _ = build_padded(_load(items, fields, n_items), [parse_padding(p) for p in paddings], seed)
    return StudyPlan(tuple(plan_rate(texts, specs, out, template=tpl)))


def run_padding(items: Path | Sequence[Item], template: str, judges: Sequence[str], out: Path, *,
                criteria: list[str] | None = None, paddings: Sequence[str] = DEFAULT_PADDINGS, seed: int = 0,
                samples: int = 1, score=None, fields: FieldMap = FieldMap(), n_items: int | None = None,
                options=None, progress: bool = True, display: Any = None,
                max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> PaddingResult:
    """Pad, judge and test (module docstring).

    Args:
        items: an items file (JSONL/CSV: id, text, optional system, group, context …) or items.
        template: the template (name or path) the originals and copies are judged with.
        judges: judge specs, one rater each.
        out: output folder.
        criteria: default every criterion of the template.
        paddings: ``KIND:PERCENT`` (``repeat:50``, ``filler:25``; :func:`judgelab.perturb.padding.parse_padding`).
        seed: padding seed (the same seed gives byte-identical copies).
        samples: ratings per text at temperature 0 (averaged per item).
        score: ``parsed`` or ``logprob`` (default: the judge's).
        fields: the items file's column names; n_items: the first N items.
        options: :class:`judgelab.spec.JudgeOptions` shared by the judges.
        progress: progress bars; display: where tables and lines go (the CLI's terminal display).
        max_failure_rate: a judge failing more than this share ends with :class:`TooManyFailures`
            after the outputs are written.

    Returns:
        :class:`PaddingResult`.

    Example:
        >>> run_padding(Path("items.jsonl"), "geval-topical-chat", ["local"], Path("/tmp/pad"),
        ...             criteria=["engagingness"])                                   # doctest: +SKIP
    """
    from judgelab.dhp.build import save_items
    from judgelab.output import OutputFolder
    from judgelab.paths import output_folder
    from judgelab.errors import TooManyFailures
    from judgelab.rate import check_failure_rate, failure_lines
    from judgelab.run import run_spec
    from judgelab.store import Store

    parsed = [parse_padding(p) for p in paddings]
    specs, tpl = _specs(template, judges, criteria, samples, score, options)  # malformed judges fail before any work
    originals = _load(items, fields, n_items)
    texts, design = build_padded(originals, parsed, seed)
    made = int(design["changed"].sum())
    messages = [f"padded {len(originals)} texts: {made} copies made, {len(design) - made} left out "
                f"({', '.join(p.name for p in parsed)}; seed {seed})"]
    with OutputFolder(out, f"Padding probe: {tpl.name}", command="probe padding", display=display) as output:
        with Store(output_folder(out) / "store.sqlite") as store:
            save_items(texts, output.file("padded.jsonl", "the originals and their padded copies (system "
                                          "<system>+pad:<padding>)"))
            output.table(design, "padding_design", "per text and padding: words, words added, made or not", show=False)
            raters = [run_spec(spec, texts, store, template=tpl, progress=progress).rater for spec in specs]
            stored = store.ratings()
            runs = {r: {"settings": store.runs().get(r), **store.run_totals(r)} for r in raters}
        ratings = stored[stored["rater"].isin(raters)]
        report = padding_effects(ratings, design, criteria)
        output.table(ratings, "ratings", "the judges' ratings of originals and padded copies (tidy table)", show=False)
        output.table(report.changes, "padding_changes", "per judge, criterion, padding and item: original and padded "
                     "score and the change, paired by item id and system", show=False)
        output.table(report.to_frame(), "padding_effect", "per judge, criterion and padding: mean change padded - "
                     "original with its 95% t interval and the one-sided Wilcoxon test of a rise")
        notes = [*messages, *report.lines(),
                 *[f"note: {e.rater}, {e.criterion}, {e.padding}: {e.note}" for e in report.effects if e.note]]
        output.finish(notes, runs=[{"rater": r, **runs[r]} for r in raters],
                      extra={"template": tpl.name, "paddings": [p.name for p in parsed], "seed": seed,
                             "texts": len(originals)})
    failures = tuple(f"{rater}: {line}" for rater in raters for line in failure_lines(ratings[ratings["rater"] == rater]))
    try:
        check_failure_rate(ratings, max_failure_rate)
    except TooManyFailures as exc:  # the command line shows the counts and examples before the error line
        exc.details = failures  # type: ignore[attr-defined]
        raise
    return PaddingResult(Path(out), report, ratings, tuple(raters), tuple(messages), failures)
