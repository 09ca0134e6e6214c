"""Shared plumbing of the paper recipes: one output folder with CSV tables, figures, the
store and a README.md index; judges given as specs; every call through the runner."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import pandas as pd

from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.manifest import write_manifest
from judgelab.paths import output_folder
from judgelab.models import Sampling
from judgelab.models.spec import build_judge, parse_judge
from judgelab.paths import safe_filename
from judgelab.prompts import Template, load_template
from judgelab.report.output import write_index
from judgelab.run import RunSpec
from judgelab.store import Store, write_table

__all__ = ["RecipeOutput", "Display", "judge_run", "recipe_spec"]


class Display(Protocol):
    """Where a recipe's progress goes: the command line passes one (``cli.common.TerminalDisplay``);
    library callers pass none and nothing is printed."""

    def table(self, df: pd.DataFrame, title: str) -> None: ...

    def line(self, text: str) -> None: ...

    def note(self, text: str) -> None: ...


@dataclass
class RecipeOutput:
    """The output folder of a recipe or command: CSV tables and files listed in a README.md index
    (:func:`judgelab.report.output.write_index`), ``run.json`` (:func:`judgelab.manifest.write_manifest`)
    and ``report.html``. It prints nothing itself: tables and lines go to ``display`` when one is given.

    Example:
        >>> output = RecipeOutput(Path("runs/x"), "my study")              # doctest: +SKIP
        >>> output.table(df, "scores", "scores per item", show=False)      # doctest: +SKIP
        >>> output.finish(["a note"])                                       # doctest: +SKIP
    """

    folder: Path
    title: str
    entries: list[tuple[str, str]] = field(default_factory=list)
    #: The command recorded in run.json (default ``recipe: <title>``).
    command: str | None = None
    display: Display | None = None

    def __post_init__(self) -> None:
        output_folder(self.folder)

    def table(self, df: pd.DataFrame, name: str, description: str, show: bool = True) -> pd.DataFrame:
        """Write ``<name>.csv`` into the folder (``name`` made a safe file name) and list it in the index."""
        file = f"{safe_filename(name)}.csv"
        write_table(df, self.folder / file)
        self.entries.append((file, description))
        if show and not df.empty and self.display is not None:
            self.display.table(df, description)
        return df

    def file(self, name: str, description: str) -> None:
        self.entries.append((name, description))

    def say(self, text: str) -> None:
        """A line for the display (e.g. a sanity check's verdict)."""
        if self.display is not None:
            self.display.line(text)

    def finish(self, notes: list[str] | None = None) -> Path:
        """Write the README.md index, run.json and report.html, then end with
        :class:`judgelab.errors.TooManyFailures` when a judge failed too many judgments."""
        write_index(self.folder, self.title, self.entries, notes)
        self._manifest()
        self.say(f"outputs: {self.folder} (index: README.md)")
        from judgelab.workflow import html_report

        _, line = html_report(self.folder)
        if self.display is not None:
            self.display.note(line)
        self._check_failures()
        return self.folder

    def _check_failures(self) -> None:
        """Show each judge's failures and end with exit status 3 when one failed more than half its
        judgments (a recipe whose judge never answers in the expected form must not pass silently)."""
        from judgelab.workflow import check_failure_rate, failure_lines

        store = self.folder / "store.sqlite"
        if not store.exists():
            return
        with Store(store, read_only=True) as s:
            ratings = s.ratings()
        judged = ratings[~ratings["rater"].astype(str).str.startswith("human")]
        for rater in sorted(set(judged["rater"])):
            for line in failure_lines(judged[judged["rater"] == rater]):
                self.say(line)
        check_failure_rate(judged)

    def _manifest(self, command: str | None = None) -> None:
        runs: list[dict[str, Any]] = []
        store = self.folder / "store.sqlite"
        if store.exists():
            with Store(store, read_only=True) as s:
                runs = [{"rater": r, "settings": settings} for r, settings in sorted(s.runs().items())]
        write_manifest(self.folder, command or self.command or f"recipe: {self.title}", runs)


def recipe_spec(template: str | Template, judge: str, *, samples: int = 3, score: str | None = None,
                temperature: float = 1.0, top_p: float = 0.9, max_tokens: int = 256, variant: str | None = None,
                rater: str | None = None, criteria: list[str] | None = None, defaults: dict[str, Any] | None = None,
                seed: int | None = None) -> tuple[RunSpec, Template]:
    """The :class:`judgelab.run.RunSpec` (and loaded template) of one recipe stage, without building the
    judge: ``score`` defaults to ``logprob`` for the embedded judge (one sample), else ``parsed``; the
    preferred label is ``{model}@template[+variant]`` with ``{model}`` filled in by the caller."""
    kind, _ = parse_judge(judge, defaults)
    tpl = template if isinstance(template, Template) else load_template(template)
    mode: Literal["parsed", "logprob"]
    if not score:
        mode = "logprob" if kind == "local" else "parsed"
    elif score == "parsed" or score == "logprob":
        mode = "parsed" if score == "parsed" else "logprob"
    else:
        raise JudgelabError(f"unknown --score {score!r}: parsed or logprob")
    spec = RunSpec(template=tpl.name, criteria=criteria, variant=variant, samples=1 if mode == "logprob" else samples,
                   sampling=Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed), score=mode,
                   label=rater or "{model}@" + tpl.name + (f"+{variant}" if variant else ""))
    return spec, tpl


def judge_run(items: list[Item], template: str | Template, judge: str, store: Store, *, samples: int = 3,
              score: str | None = None, temperature: float = 1.0, top_p: float = 0.9, max_tokens: int = 256,
              variant: str | None = None, rater: str | None = None, criteria: list[str] | None = None,
              defaults: dict[str, Any] | None = None, progress: bool = True, seed: int | None = None) -> str:
    """Run one judge over items with one template through the runner (and its call ledger).

    Args:
        items: the items; template: a template name/path or a loaded :class:`Template`;
        judge: a judge spec (:mod:`judgelab.models.spec`); store: the recipe's store;
        the rest as in :func:`recipe_spec`; progress: a progress bar on stderr.

    Returns:
        The rater label of the ratings in ``store``.

    Example:
        >>> with Store(Path("runs/x/store.sqlite")) as store:                       # doctest: +SKIP
        ...     rater = judge_run(items, "chiang-lee-story", "local", store)
    """
    from judgelab.workflow import execute

    spec, tpl = recipe_spec(template, judge, samples=samples, score=score, temperature=temperature, top_p=top_p,
                            max_tokens=max_tokens, variant=variant, rater=rater, criteria=criteria, defaults=defaults, seed=seed)
    backend = build_judge(judge, defaults)
    assert spec.label is not None  # recipe_spec always sets one
    spec = spec.model_copy(update={"label": spec.label.replace("{model}", backend.model_id)})
    stats = execute(items, spec, backend, store, progress, label=f"{spec.label}", template=tpl)
    return stats.rater
