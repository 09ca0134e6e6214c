"""Recipe: G-Eval meta-evaluation (Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with
Better Human Alignment") on SummEval and Topical-Chat.

Judges rate every item with the ``geval-summeval`` or ``geval-topical-chat`` template (criteria of
one scale per run, so fluency 1-3 is read on 1-3), through :func:`judgelab.recipes.common.judge_run`
(call ledger, run identity, failure accounting, run.json). :func:`meta_evaluate` then correlates
each judge with the human means, per criterion and method, at three levels:

* **summary level** (G-Eval Table 1, after Zhong et al. 2022): within each document the
  correlation across its systems, averaged over documents
  (``level_correlation(..., "group")``);
* **system level**: the correlation of per-system means (``"system"``);
* **turn level** (Topical-Chat; G-Eval's dialogue table, Pearson and Spearman): all responses
  pooled (``"overall"``). G-Eval follows Zhong et al. (2022), whose
  turn-level correlation is computed over all responses together; pooled is judgelab's reading.

Every level is computed by :func:`judgelab.stats.correlation.level_correlation` (judgelab's one
level dispatch, as in ``agree``), with a 95% clustered bootstrap CI: documents (dialogue contexts)
are resampled with all their systems. Every NaN carries a note.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np
import pandas as pd

from judgelab.summary import judges_summary
from judgelab.errors import JudgelabError
from judgelab.choices import Score
from judgelab.spec import JudgeOptions
from judgelab.status import DEFAULT_MAX_FAILURE_RATE

if TYPE_CHECKING:
    from judgelab.published_results import PublishedComparison
    from judgelab.rate import StudyPlan

__all__ = ["CorrelationRow", "GevalReport", "meta_evaluate", "scale_groups", "published_table", "published_comparison",
           "run_geval",
           "PUBLISHED", "PUBLISHED_SOURCE", "TEMPLATES", "LEVELS"]

TEMPLATES = {"summeval": "geval-summeval", "topical-chat": "geval-topical-chat"}
LEVELS = ("summary", "system", "turn")

PUBLISHED_SOURCE = ("Liu et al. 2023, G-Eval, EMNLP 2023 version (pp. 2511-2522): Table 1 (SummEval, summary-level "
                    "Spearman/Kendall, G-EVAL-4) and Table 2 (Topical-Chat, turn-level Pearson/Spearman, G-EVAL-4)")
#: G-EVAL-4's published correlations: (dataset, level, criterion, method) → r, as printed.
PUBLISHED: dict[tuple[str, str, str, str], float] = {
    **{("summeval", "summary", c, "spearman"): v for c, v in
       {"coherence": 0.582, "consistency": 0.507, "fluency": 0.506, "relevance": 0.547}.items()},
    **{("summeval", "summary", c, "kendall"): v for c, v in
       {"coherence": 0.457, "consistency": 0.425, "fluency": 0.455, "relevance": 0.433}.items()},
    **{("topical-chat", "turn", c, "pearson"): v for c, v in
       {"naturalness": 0.549, "coherence": 0.594, "engagingness": 0.627, "groundedness": 0.531}.items()},
    **{("topical-chat", "turn", c, "spearman"): v for c, v in
       {"naturalness": 0.565, "coherence": 0.605, "engagingness": 0.631, "groundedness": 0.551}.items()},
}

_COLUMNS = ["rater", "criterion", "method", "level", "r", "ci_low", "ci_high", "n", "note"]


@dataclass(frozen=True)
class CorrelationRow:
    """One judge × criterion × method × level correlation with its clustered bootstrap CI.

    ``n``: documents with a defined correlation (summary level), systems (system level) or
    responses (turn level). ``note`` explains a NaN, or what was left out of an average.
    """

    rater: str
    criterion: str
    method: str
    level: str
    r: float
    ci_low: float
    ci_high: float
    n: int
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in _COLUMNS}


@dataclass(frozen=True)
class GevalReport:
    """All correlations of a G-Eval meta-evaluation (see :func:`meta_evaluate`)."""

    dataset: str
    rows: tuple[CorrelationRow, ...]
    groups: int
    n_resamples: int

    def to_frame(self, level: str | None = None) -> pd.DataFrame:
        """The rows (of one ``level``: summary, system, turn) as a table with columns
        rater, criterion, method, level, r, ci_low, ci_high, n, note (the columns of every
        correlation table in judgelab)."""
        rows = [r.to_dict() for r in self.rows if level is None or r.level == level]
        return pd.DataFrame(rows, columns=_COLUMNS)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "dataset": self.dataset, "groups": self.groups, "n_resamples": self.n_resamples,
                "rows": [r.to_dict() for r in self.rows]}


def _paired(ratings: pd.DataFrame, judge: str, criterion: str, human_rater: str) -> pd.DataFrame:
    """One row per (group, system, item): the judge's mean over its ok samples (x) and the human
    score (y), from :func:`judgelab.ratings.item_means` (the per-item means ``agree`` uses)."""
    from judgelab.ratings import item_means

    means = item_means(ratings[(ratings["criterion"] == criterion) & ratings["rater"].isin([judge, human_rater])])
    wide = means.pivot_table(index=["group", "system", "item_id"], columns="rater", values="score", aggfunc="first")
    return wide.reindex(columns=[judge, human_rater]).set_axis(["x", "y"], axis=1).reset_index()


def meta_evaluate(ratings: pd.DataFrame, dataset: str = "summeval", *, judges: Iterable[str] | None = None,
                  criteria: Iterable[str] | None = None, methods: Iterable[str] = ("spearman", "kendall"),
                  levels: Iterable[str] = ("summary", "system"), human_rater: str = "human:mean",
                  n_resamples: int = 999, seed: int = 0) -> GevalReport:
    """Correlate judges with the human ratings at G-Eval's levels, each r with a clustered bootstrap CI.

    Args:
        ratings: tidy ratings (item_id, system, group, criterion, rater, sample, score, status) of the
            judges and of ``human_rater``; a judge's samples are averaged per item; ``group`` is the
            document (dialogue context).
        dataset: a name carried into the report.
        judges: raters to evaluate (default: every rater except ``human_rater``).
        criteria: default: every criterion the human rater has.
        methods: of ``pearson``, ``spearman``, ``kendall`` (tau-b).
        levels: of ``summary`` (per document across systems, averaged; G-Eval Table 1),
            ``system`` (per-system means) and ``turn`` (all responses pooled; G-Eval's Topical-Chat table).
        human_rater: the rater label of the human scores.
        n_resamples: bootstrap resamples of documents (0 skips the CIs).
        seed: the bootstrap's seed.

    Returns:
        A :class:`GevalReport`; ``to_frame(level)`` gives the CSV table of one level.

    Raises:
        JudgelabError: no human ratings, or an unknown method or level.

    Example:
        >>> rows = [dict(item_id=d, system=s, group=d, criterion="fluency", rater=r, sample=0,
        ...              score=float(i + (j if r == "judge" else 0)), status="ok")
        ...         for d in "ab" for j, s in enumerate("pqrs") for i, r in [(j, "judge"), (j, "human:mean")]]
        >>> report = meta_evaluate(pd.DataFrame(rows), n_resamples=0)
        >>> float(report.to_frame("summary").query("method == 'spearman'")["r"].iloc[0])
        1.0
    """
    from judgelab.stats.coefficient import METHODS

    methods, levels = list(methods), list(levels)
    for m in methods:
        if m not in METHODS:
            raise JudgelabError(f"unknown correlation method {m!r}: {', '.join(METHODS)}")
    for level in levels:
        if level not in LEVELS:
            raise JudgelabError(f"unknown level {level!r}: {', '.join(LEVELS)}")
    human = ratings[ratings["rater"] == human_rater]
    if human.empty:
        raise JudgelabError(f"no human ratings (rater {human_rater!r}) to compare with")
    judges = list(judges) if judges is not None else sorted(set(ratings["rater"]) - {human_rater})
    criteria = list(criteria) if criteria is not None else list(dict.fromkeys(human["criterion"]))
    groups = int(human["group"].nunique())
    out: list[CorrelationRow] = []
    _correlations(ratings, judges, criteria, methods, levels, human_rater, n_resamples, seed, out)
    return GevalReport(dataset, tuple(out), groups, n_resamples)


#: G-Eval's level names → :func:`judgelab.stats.correlation.level_correlation`'s.
_LEVEL_OF = {"summary": "group", "system": "system", "turn": "overall"}


def _correlations(ratings: pd.DataFrame, judges: list[str], criteria: list[str], methods: list[str], levels: list[str],
                  human_rater: str, n_resamples: int, seed: int, out: list[CorrelationRow]) -> None:
    """Append one :class:`CorrelationRow` per judge × criterion × method × level to ``out``.

    Every level goes through :func:`judgelab.stats.correlation.level_correlation`, judgelab's one
    level dispatch, with the document (dialogue context) as the item: the summary level resamples
    documents' correlations, the system and turn levels resample documents with all their systems.
    """
    from judgelab.stats.correlation import level_correlation

    for judge in judges:
        for criterion in criteria:
            frame = _paired(ratings, judge, criterion, human_rater)
            if frame["x"].notna().sum() == 0:
                for level in levels:
                    for m in methods:
                        out.append(CorrelationRow(judge, criterion, m, level, float("nan"), float("nan"), float("nan"), 0,
                                                  f"{judge} has no ok rating of {criterion}"))
                continue
            frame = frame.assign(item_id=frame["group"])  # the document is the cluster at every level
            for m in methods:
                for level in levels:
                    c = level_correlation(frame, _LEVEL_OF[level], m, x="x", y="y", n_resamples=n_resamples, seed=seed)
                    note = c.note
                    if level == "summary" and not np.isnan(c.r):
                        documents = int(frame["group"].nunique())
                        if c.n < documents:
                            note = "; ".join(x for x in (f"{documents - c.n} of {documents} documents have no defined "
                                                         "correlation (fewer than three systems or constant ratings)",
                                                         note) if x)
                    out.append(CorrelationRow(judge, criterion, m, level, float(c.r), float(c.ci_low), float(c.ci_high),
                                              int(c.n), note))


def published_table(report: GevalReport) -> pd.DataFrame:
    """The measured correlations beside G-EVAL-4's published ones (:data:`PUBLISHED`), where published."""
    rows = []
    for r in report.rows:
        key = (report.dataset, r.level, r.criterion, r.method)
        if key in PUBLISHED:
            rows.append({**r.to_dict(), "geval4_r": PUBLISHED[key]})
    cols = _COLUMNS[:-1] + ["geval4_r", "note"]
    return pd.DataFrame(rows, columns=cols)


#: What n counts and what the bootstrap resamples at each level (singular), per dataset.
_UNITS = {"summary": ("document", "document"), "system": ("system", "document"), "turn": ("response", "dialogue context")}


def published_comparison(report: GevalReport) -> PublishedComparison:
    """The record of :func:`published_table` (results.json's ``published``, the report's first screen): each
    correlation G-EVAL-4 published, ours beside it with its interval and n, each named by what it counts."""
    from judgelab.published_results import PublishedComparison, PublishedRow

    rows = []
    for r in report.rows:
        key = (report.dataset, r.level, r.criterion, r.method)
        if key not in PUBLISHED:
            continue
        text, cluster = _UNITS[r.level]
        if report.dataset == "topical-chat" and r.level == "system":
            cluster = "dialogue context"
        clusters = r.n if r.level == "summary" else report.groups
        rows.append(PublishedRow(r.rater, r.criterion, r.method, r.level, r.r, r.ci_low, r.ci_high, r.n, clusters,
                                 text, cluster, PUBLISHED[key], r.note))
    return PublishedComparison("G-EVAL-4", PUBLISHED_SOURCE, "means of three raters", tuple(rows))


def scale_groups(template, criteria: Iterable[str]) -> list[list[str]]:
    """Criteria grouped by their scale, in template order (one judge run per group)."""
    groups: dict[tuple[float, float], list[str]] = {}
    for c in criteria:
        groups.setdefault(tuple(template.scale_of(c)), []).append(c)
    return list(groups.values())


def plan_geval(data: str | Path, judges: list[str], *, dataset: str | None = None, n_items: int | None = None,
               score: Score | None = None, samples: int = 1, seed: int = 0, options: JudgeOptions | None = None,
               out: Path | None = None) -> StudyPlan:
    """Plan every judge run of :func:`run_geval` without calling a model or writing anything (``--dry-run``).

    Args:
        the same as :func:`run_geval`; ``out`` is the folder whose store may already answer calls.

    Returns:
        A :class:`judgelab.rate.StudyPlan`: one ``JudgePlan`` per judge and scale group, and no
        ``later`` stage (every G-Eval prompt is known before any answer).

    Example:
        >>> plan_geval("summeval", ["local"], n_items=1).judges  # doctest: +SKIP
    """
    from judgelab.datasets.geval_sources import load_geval_data
    from judgelab.prompts import load_template
    from judgelab.recipes.common import recipe_spec
    from judgelab.rate import StudyPlan, plan_rate

    if not judges:
        raise JudgelabError("give at least one --judge")
    loaded = load_geval_data(data, dataset, n_items)
    template = load_template(TEMPLATES[loaded.dataset])
    plans = []
    for judge in judges:
        for k, group in enumerate(scale_groups(template, loaded.criteria)):
            lo, hi = template.scale_of(group[0])
            label = None if k == 0 else f"{{model}}@{template.name}/{lo:g}-{hi:g}"  # as run_geval labels them
            spec, tpl = recipe_spec(template, judge, samples=samples, score=score, criteria=group,
                                    options=options, seed=seed, rater=label)
            plans += plan_rate(list(loaded.items), [spec], out, template=tpl,
                               stage=f"{loaded.dataset}, scale {lo:g}-{hi:g}")
    return StudyPlan(tuple(plans))


def run_geval(data: str | Path, out: Path, judges: list[str], *, dataset: str | None = None, n_items: int | None = None,
              score: Score | None = None, samples: int = 1, n_resamples: int = 999, seed: int = 0,
              options: JudgeOptions | None = None, progress: bool = True, display: Any = None,
              max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> GevalReport:
    """Judge SummEval or Topical-Chat with the G-Eval template and write the meta-evaluation tables.

    Args:
        data: ``summeval``, ``topical-chat`` (files in the shared data folder) or a path.
        out: output folder (CSV tables, README.md index, run.json, store.sqlite).
        judges: judge specs (``local``, ``local:PATH.gguf``, ``openai:MODEL@URL``, ``scripted-test-double:FILE``).
        dataset: the dataset of a path (default: guessed from the file type).
        n_items: the first N documents (dialogue contexts), each with all its systems.
        score: ``logprob`` or ``parsed`` (default: logprob for the local judge, else parsed).
        samples: answers per item in parsed mode (averaged).
        n_resamples: bootstrap resamples for the CIs.
        seed: bootstrap seed (and the sampling seed of the judges).
        options: backend options (base_url, api_key, concurrency).
        progress: show progress bars.
        display: where tables and lines are shown (the CLI passes its terminal display; None shows nothing).
        max_failure_rate: the share of a judge's failed judgments above which :class:`judgelab.errors.TooManyFailures`
            is raised (after the outputs are written; exit status 3 on the command line).

    Returns:
        The :class:`GevalReport` whose tables were written.

    Example:
        >>> run_geval("summeval", Path("runs/geval"), ["local"], n_items=2)  # doctest: +SKIP
    """
    from judgelab.datasets.geval_sources import load_geval_data
    from judgelab.prompts import load_template
    from judgelab.ratings import combine
    from judgelab.output import OutputFolder
    from judgelab.recipes.common import finish_recipe, judge_run
    from judgelab.store import Store

    if not judges:
        raise JudgelabError("give at least one --judge")
    if n_resamples < 0:
        raise JudgelabError("--n-resamples must be 0 or more")
    loaded = load_geval_data(data, dataset, n_items)
    template = load_template(TEMPLATES[loaded.dataset])
    output = OutputFolder(out, f"G-Eval meta-evaluation on {loaded.dataset}", display=display)
    items = list(loaded.items)
    labels: dict[str, str] = {}  # rater label in the store → judge label in the tables
    with Store(out / "store.sqlite") as store:
        for judge in judges:
            first = None
            for group in scale_groups(template, loaded.criteria):
                lo, hi = template.scale_of(group[0])
                rater = judge_run(items, template, judge, store, samples=samples, score=score, criteria=group,
                                  rater=None if first is None else f"{first}/{lo:g}-{hi:g}", options=options,
                                  progress=progress, seed=seed)
                first = first or rater
                labels[rater] = first
        stored = store.ratings()
    judged = stored[stored["rater"].isin(list(labels))].copy()
    judged["rater"] = judged["rater"].map(labels)
    output.table(judged, "ratings", "judge ratings (tidy table; human means are in the data file)", show=False)
    both = combine([judged, loaded.human])
    levels = ["summary", "system"] + (["turn"] if loaded.dataset == "topical-chat" else [])
    methods = ["spearman", "kendall"] + (["pearson"] if loaded.dataset == "topical-chat" else [])
    report = meta_evaluate(both, loaded.dataset, judges=list(dict.fromkeys(labels.values())), criteria=loaded.criteria,
                           methods=methods, levels=levels, n_resamples=n_resamples, seed=seed)
    where = f"{loaded.n_groups} {'documents' if loaded.dataset == 'summeval' else 'dialogue contexts'}"
    output.table(report.to_frame("summary"), "summary_level",
                 f"summary level: per-document correlation across systems, averaged ({where}), 95% cluster bootstrap CI")
    output.table(report.to_frame("system"), "system_level",
                 "system level: correlation of per-system means, 95% cluster bootstrap CI over documents")
    if "turn" in levels:
        output.table(report.to_frame("turn"), "turn_level",
                     "turn level: all responses pooled (G-Eval's Topical-Chat table), 95% cluster bootstrap CI")
    output.table(published_table(report), "published_comparison",
                 "measured beside G-EVAL-4's published correlations", show=False)
    output.record(results={"summary": judges_summary(stored), "published": published_comparison(report).to_record()})
    notes = [f"published figures: {PUBLISHED_SOURCE}",
             f"data: {loaded.path} ({len(items)} items, {where}); human scores are means of three raters"]
    finish_recipe(output, notes, max_failure_rate)
    return report
