"""Recipe: HANNA story evaluation with a judge (story-evaluation-hanna): the six criteria ×
the four Eval-Prompts, three tries each.

Outputs ICC(2,k) of the tries per criterion and Eval-Prompt (95% CI), the average rating per
Eval-Prompt with a 95% CI, the ASG table (average rating per generation system and criterion
with CI, systems ranked), explanation statistics for Eval-Prompts 2-4 (share of ratings
without an explanation; YAKE keywords per criterion when installed), and — with human ratings —
overall and system-level correlations and Williams tests through :mod:`judgelab.agree`.

Stories: ``hanna_llm_stories.csv`` (Prompt, Human, Story, Model). Story-prompt ids are the
order of first appearance of the human stories (ids 0-95, as in the HANNA score files); the
human story of each prompt is rated too, as system ``Human``.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from judgelab.summary import judges_summary
from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.output import OutputFolder
from judgelab.recipes.common import RecipeResult, finish_recipe, judge_run
from judgelab.recipes.explanations import explanation_map, explanation_share, keywords, strip_rating
from judgelab.recipes.hanna import CODES, load_stories
from judgelab.stats import icc
from judgelab.store import Store
from judgelab.status import DEFAULT_MAX_FAILURE_RATE, Status
from judgelab.choices import Score
from judgelab.spec import JudgeOptions

if TYPE_CHECKING:
    from judgelab.rate import StudyPlan

__all__ = ["run_hanna", "plan_hanna", "hanna_items", "icc_table", "asg_table"]

CRITERIA = [c.lower() for c in CODES.values()]


def hanna_items(path: Path, n_prompts: int | None = None, include_human: bool = True) -> list[Item]:
    """The stories of ``hanna_llm_stories.csv`` as items (group = story prompt, system = writer).

    Args:
        path: the stories file; n_prompts: the first N story prompts, each with all its stories;
        include_human: add each prompt's human-written story as system ``Human``.

    Returns:
        One :class:`~judgelab.datasets.items.Item` per story.
    """
    df = load_stories(path)
    prompt_id: dict[str, int] = {}
    for human in df["Human"]:
        prompt_id.setdefault(human, len(prompt_id))
    items: list[Item] = []
    seen_human: set[int] = set()
    for row in df.itertuples(index=False):
        pid = prompt_id[row.Human]
        if n_prompts is not None and pid >= n_prompts:
            continue
        extra = {"human_story": row.Human}
        items.append(Item(str(pid), str(row.Story), str(row.Model), str(pid), str(row.Prompt), extra))
        if include_human and pid not in seen_human:
            seen_human.add(pid)
            items.append(Item(str(pid), str(row.Human), "Human", str(pid), str(row.Prompt), extra))
    if not items:
        raise JudgelabError(f"{path}: no stories")
    return items


def _mean_interval(values):
    """The mean with its normal-approximation 95% CI (mean ± 1.96 SE), NaN values left out
    (:func:`judgelab.stats.describe.mean_interval` with ``quantile="normal"``, the interval this
    recipe has always reported: about 1,000 stories per system); the bounds are NaN with fewer than
    two values."""
    from judgelab.stats.describe import mean_interval

    return mean_interval(values, 0.95, quantile="normal")


def icc_table(ratings: pd.DataFrame) -> pd.DataFrame:
    """ICC(2,k) of the tries (samples as raters) per rater and criterion, with its 95% CI
    (:func:`judgelab.stats.icc`, the one ICC; HANNA's self-consistency).

    Returns:
        ``rater, criterion, icc2k, icc2k_low, icc2k_high, note`` (the ICC columns of ``agree``'s
        self-consistency and ``hanna icc``; NaN with a note for a single try).
    """
    rows = []
    for (rater, criterion), grp in ratings[ratings["status"] == Status.OK].groupby(["rater", "criterion"]):
        wide = grp.pivot_table(index=["system", "item_id"], columns="sample", values="score", aggfunc="first")
        if wide.shape[1] < 2:
            rows.append({"rater": rater, "criterion": criterion, "icc2k": np.nan, "icc2k_low": np.nan, "icc2k_high": np.nan,
                         "note": "one try per story: ICC needs several"})
            continue
        res = icc(wide.to_numpy(float)).average
        rows.append({"rater": rater, "criterion": criterion, "icc2k": res.estimate, "icc2k_low": res.ci_low,
                     "icc2k_high": res.ci_high, "note": ""})
    return pd.DataFrame(rows)


def asg_table(ratings: pd.DataFrame) -> pd.DataFrame:
    """HANNA's ASG table: the average rating per rater, system and criterion (over story means) with
    its 95% CI as two numeric columns ``<criterion>_ci_low`` and ``<criterion>_ci_high``, the
    overall mean, and the systems ranked per rater.
    """
    ok = ratings[ratings["status"] == Status.OK]
    item_means = ok.groupby(["rater", "system", "criterion", "item_id"])["score"].mean().reset_index()
    rows = []
    for (rater, system), grp in item_means.groupby(["rater", "system"]):
        row: dict[str, Any] = {"rater": rater, "system": system}
        for criterion, g in grp.groupby("criterion"):
            ci = _mean_interval(g["score"])
            row[criterion] = ci.mean
            row[f"{criterion}_ci_low"] = ci.low
            row[f"{criterion}_ci_high"] = ci.high
        row["overall"] = float(grp["score"].mean())
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["rank"] = table.groupby("rater")["overall"].rank(ascending=False, method="min").astype(int)
    return table.sort_values(["rater", "rank"]).reset_index(drop=True)


def run_hanna(stories: Path, out: Path, judge: str = "local", n_items: int | None = 4, eval_prompts=(1, 2, 3, 4),
              samples: int = 3, score: Score | None = None, human: Path | None = None,
              options: JudgeOptions | None = None, progress: bool = True, display=None,
              max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> RecipeResult:
    """Run the HANNA study (six criteria × Eval-Prompts) with one judge and write its tables into ``out``.

    Args:
        stories: ``hanna_llm_stories.csv`` (Prompt, Human, Story, Model).
        out: output folder (CSV tables, README.md, run.json, store.sqlite, report.html).
        judge: judge spec (:mod:`judgelab.models.spec`).
        n_items: story-prompts, each with all its stories (the human one included).
        eval_prompts: which of the four Eval-Prompts (1-4).
        samples: tries per story.
        score: ``parsed`` or ``logprob`` (default: logprob for the embedded judge).
        human: tidy human ratings of the same items (for correlations and Williams tests).
        options: options shared by judge specs; progress: progress bars on stderr.
        display: where tables and lines are shown (``None``: nothing is printed).
        max_failure_rate: the share of a judge's failed judgments above which :class:`judgelab.errors.TooManyFailures`
            is raised (after the outputs are written; exit status 3 on the command line).

    Returns:
        A :class:`judgelab.recipes.common.RecipeResult` whose ``raters`` are keyed ``"Eval-Prompt <p>"``.

    Example:
        >>> run_hanna(Path("hanna_llm_stories.csv"), Path("runs/hanna"), "openai:gpt-4o-mini", n_items=4)   # doctest: +SKIP
    """
    from judgelab.agree import judge_vs_human, williams_matrix
    from judgelab.ratings import combine, read_ratings

    output = OutputFolder(out, "HANNA recipe: six criteria × four Eval-Prompts", display=display)
    items = hanna_items(stories, n_items)
    raters = {}
    with Store(out / "store.sqlite") as store:
        for ep in eval_prompts:
            if ep not in (1, 2, 3, 4):
                raise JudgelabError(f"unknown Eval-Prompt {ep}: 1, 2, 3 or 4")
            raters[ep] = judge_run(items, f"hanna-ep{ep}", judge, store, samples=samples, score=score,
                                   max_tokens=256 if ep > 1 else 32, options=options, progress=progress)
        ratings = store.ratings()
    output.record(results={"summary": judges_summary(ratings)})
    ratings = ratings[ratings["rater"].isin(raters.values())]
    output.table(ratings, "ratings", "judge ratings (tidy table)", show=False)
    output.table(icc_table(ratings), "icc2k", "ICC(2,k) of the tries per criterion and Eval-Prompt, 95% CI")
    per_ep = []
    for ep, rater in raters.items():
        sub = ratings[(ratings["rater"] == rater) & (ratings["status"] == Status.OK)]
        ci = _mean_interval(sub.groupby(["system", "item_id", "criterion"])["score"].mean())
        per_ep.append({"eval_prompt": ep, "rater": rater, "mean": ci.mean, "ci_low": ci.low, "ci_high": ci.high,
                       "failed": int((ratings[ratings["rater"] == rater]["status"] != Status.OK).sum())})
    output.table(pd.DataFrame(per_ep), "average_rating", "average rating per Eval-Prompt, 95% CI")
    output.table(asg_table(ratings), "asg", "ASG: average rating per system and criterion (95% CI), ranked")
    expl_rows, kw_rows = [], []
    notes = []
    generated = ratings["score_parsed"].notna().any() or ratings["status"].ne(Status.OK).any()
    if not generated:
        notes.append("log-probability scoring generates no text: the explanation analysis needs --score parsed")
    for ep, rater in raters.items():
        if ep == 1 or not generated:
            continue
        sub = ratings[ratings["rater"] == rater]
        for criterion, grp in sub.groupby("criterion"):
            expl_rows.append({"eval_prompt": ep, "criterion": criterion, "answers": len(grp),
                              "without_explanation": 1 - explanation_share(grp["raw"])})
            try:
                for word, weight in keywords([strip_rating(t) for t in grp["raw"].fillna("")], top=10):
                    kw_rows.append({"eval_prompt": ep, "criterion": criterion, "keyword": word, "yake_score": weight})
            except JudgelabError as exc:
                kw_rows = [{"note": str(exc)}]
    if expl_rows:
        output.table(pd.DataFrame(expl_rows), "explanations", "share of ratings without an explanation (Eval-Prompts 2-4)")
        with_text = ratings[ratings["rater"].isin([r for ep, r in raters.items() if ep > 1])]
        figure = output.path("explanation_map.png")
        note = explanation_map([strip_rating(t) for t in with_text["raw"].fillna("")], list(with_text["criterion"]), figure)
        if figure.exists():
            output.file("explanation_map.png", "2-D map of explanation embeddings coloured by criterion")
        if note:
            notes.append(note)
        output.table(pd.DataFrame(kw_rows), "keywords", "YAKE 3-gram keywords per criterion", show=False)
    if human is not None:
        both = combine([ratings, read_ratings(human)])
        output.table(judge_vs_human(both, ["kendall"], ["overall", "system"]), "correlations", "judge vs human correlations (Kendall)")
        if len(raters) > 1:
            output.table(williams_matrix(both), "williams", "Williams tests between Eval-Prompts (BH-adjusted)")
    else:
        notes.append("no human ratings given (--human): correlations and Williams tests were not computed")
    folder = finish_recipe(output, notes, max_failure_rate)
    return RecipeResult(folder, {f"Eval-Prompt {ep}": r for ep, r in raters.items()}, tuple(notes))


def plan_hanna(stories: Path, judge: str = "local", n_items: int | None = 4, eval_prompts=(1, 2, 3, 4), samples: int = 3,
               score: Score | None = None, options: JudgeOptions | None = None, out: Path | None = None) -> StudyPlan:
    """Plan every Eval-Prompt run of :func:`run_hanna` without calling a model (``--dry-run``)."""
    from judgelab.recipes.common import recipe_spec
    from judgelab.rate import StudyPlan, plan_rate

    items = hanna_items(stories, n_items)
    plans = []
    for ep in eval_prompts:
        if ep not in (1, 2, 3, 4):
            raise JudgelabError(f"unknown Eval-Prompt {ep}: 1, 2, 3 or 4")
        spec, tpl = recipe_spec(f"hanna-ep{ep}", judge, samples=samples, score=score, max_tokens=256 if ep > 1 else 32,
                                options=options)
        plans += plan_rate(items, [spec], out, template=tpl, stage=f"Eval-Prompt {ep}")
    return StudyPlan(tuple(plans))
