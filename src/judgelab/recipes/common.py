"""Shared plumbing of the paper recipes: each stage a :class:`judgelab.spec.RunSpec` run through the
run core; the outputs through the one folder writer (:class:`judgelab.output.OutputFolder`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from judgelab.choices import Score
from judgelab.datasets.items import Item
from judgelab.prompts import Template, load_template
from judgelab.raters import human_mask
from judgelab.run import run_spec
from judgelab.settings import SamplingConfig, run_sampling
from judgelab.spec import JudgeOptions, JudgeSpec, RunSpec
from judgelab.output import OutputFolder
from judgelab.status import DEFAULT_MAX_FAILURE_RATE
from judgelab.store import Store

__all__ = ["judge_run", "recipe_spec", "finish_recipe", "check_judges", "RecipeResult", "SanityCheck"]


@dataclass(frozen=True)
class SanityCheck:
    """A recipe's sanity check of the judge on control items whose answer is known (Chiang & Lee:
    identical pairs must be rated 5 for meaning preservation, Table 4, †).

    Attributes:
        passed: the judge's mean on the control items is within the tolerance of the known answer.
        mean: the judge's mean rating of the control items (NaN when none was rated).
        share_top: the share of control items rated the top point (NaN when none was rated).
        message: the line shown and written into the README.
    """

    passed: bool
    mean: float
    share_top: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "mean": self.mean, "share_top": self.share_top, "message": self.message}


@dataclass(frozen=True)
class RecipeResult:
    """What a paper recipe (``run_chiang_lee``, ``run_hanna``, ``run_nle``) produced; its tables are in ``folder``.

    Attributes:
        folder: the output folder (tables, figures, ``run.json``, ``report.html``).
        raters: stage → rater label of the judge's ratings in ``folder/store.sqlite`` (stages named as in
            the recipe's :class:`judgelab.workflow.StudyPlan`).
        notes: the lines the recipe left in the folder's README (skipped analyses, caveats).
        tables: result tables the recipe also returns in memory (Chiang & Lee: ``table1``).
        sanity: the recipe's sanity check, when it has one (Chiang & Lee: identical pairs rated 5;
            :func:`judgelab.recipes.chiang_lee.sanity_check`).
    """

    folder: Path
    raters: dict[str, str]
    notes: tuple[str, ...] = ()
    tables: Mapping[str, Any] = field(default_factory=dict)
    sanity: SanityCheck | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: folder, raters, notes, the names of the tables, sanity."""
        return {"folder": str(self.folder), "raters": dict(self.raters), "notes": list(self.notes),
                "tables": list(self.tables), "sanity": None if self.sanity is None else self.sanity.to_dict()}


#: The recipes' own sampling choice, under what a recipe stage asks for itself: answers of up to 256 tokens
#: (the papers' prompts ask for a rating with its explanation); the rest is the run defaults
#: (:data:`judgelab.settings.RUN_SAMPLING_DEFAULTS`).
RECIPE_SAMPLING = SamplingConfig(max_tokens=256)


def recipe_spec(template: str | Template, judge: str | JudgeSpec, *, samples: int = 3, score: Score | None = None,
                temperature: float | None = None, top_p: float | None = None, max_tokens: int | None = None,
                variant: str | None = None,
                rater: str | None = None, criteria: list[str] | None = None, options: JudgeOptions | None = None,
                seed: int | None = None) -> tuple[RunSpec, Template]:
    """The :class:`judgelab.spec.RunSpec` (and loaded template) of one recipe stage, without building the
    judge. ``score`` ``None`` is the judge's default (``RunSpec(score="auto")``); ``rater`` is a
    preferred label (``{model}`` is the judge's model id; default ``model@template[+variant]``). Sampling
    left ``None`` is not set: the stage's choices, then :data:`RECIPE_SAMPLING`, then the run defaults
    (:func:`judgelab.settings.run_sampling`)."""
    tpl = template if isinstance(template, Template) else load_template(template)
    spec = RunSpec(judge=JudgeSpec.of(judge, options), template=tpl.name, criteria=criteria, variant=variant,
                   samples=samples, sampling=run_sampling(
                       SamplingConfig(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
                       RECIPE_SAMPLING),
                   score=score or "auto", label=rater)
    return spec, tpl


def judge_run(items: list[Item], template: str | Template, judge: str | JudgeSpec, store: Store, *, samples: int = 3,
              score: Score | None = None, temperature: float | None = None, top_p: float | None = None,
              max_tokens: int | None = None,
              variant: str | None = None, rater: str | None = None, criteria: list[str] | None = None,
              options: JudgeOptions | None = None, progress: bool = True, seed: int | None = None) -> str:
    """Run one judge over items with one template through the run core (and its call ledger).

    Args:
        items: the items; template: a template name/path or a loaded :class:`Template`;
        judge: a judge spec; store: the recipe's store; the rest as in :func:`recipe_spec`;
        progress: advance the installed progress display.

    Returns:
        The rater label of the ratings in ``store``.

    Example:
        >>> with Store(Path("runs/x/store.sqlite")) as store:                       # doctest: +SKIP
        ...     rater = judge_run(items, "chiang-lee-story", "local", store)
    """
    spec, tpl = recipe_spec(template, judge, samples=samples, score=score, temperature=temperature, top_p=top_p,
                            max_tokens=max_tokens, variant=variant, rater=rater, criteria=criteria, options=options, seed=seed)
    return run_spec(spec, items, store, template=tpl, progress=progress).rater


def check_judges(folder: Path, say: Callable[[str], None], max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> None:
    """Show each judge's status counts and failed answers in a folder's store (as ``rate`` shows them:
    :func:`judgelab.rate.failure_lines`) and end with :class:`judgelab.errors.TooManyFailures` when one
    failed more than ``max_failure_rate`` of its judgments (:func:`judgelab.rate.check_failure_rate`): a
    recipe whose judge never answers in the expected form must not pass silently."""
    from judgelab.rate import check_failure_rate, failure_lines

    store = folder / "store.sqlite"
    if not store.exists():
        return
    with Store(store, read_only=True) as s:
        ratings = s.ratings()
    judged = ratings[~human_mask(ratings["rater"])]
    raters = sorted(set(judged["rater"]))
    for rater in raters:
        for n, line in enumerate(failure_lines(judged[judged["rater"] == rater])):
            say(f"{rater}: {line}" if n == 0 and len(raters) > 1 else line)
    check_failure_rate(judged, max_failure_rate)


def finish_recipe(output: OutputFolder, notes: list[str] | None = None,
                  max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> Path:
    """A recipe's last step: its folder finished (index, run.json, report.html), then its judges' failures
    (status counts and examples shown; :class:`judgelab.errors.TooManyFailures` above ``max_failure_rate``)."""
    output.finish(notes)
    check_judges(output.folder, output.say, max_failure_rate)
    return output.folder
