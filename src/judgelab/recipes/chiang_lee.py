"""Recipe: Chiang & Lee (2023), "Can Large Language Models Be an Alternative to Human Evaluations?"

* Story rating (§3): the four attributes with the appendix D.2.2 prompts, three samples per
  story as three annotators → Table 1 (mean ± SD, Krippendorff's alpha, % full agreement per
  writer), Welch's t-test between writers (§3.3), Kendall's tau against the teachers (Table 2)
  and between teachers (Table 6).
* Variance study (§3.3.2–3.3.3, Table 3): original / persona / explain instructions at T = 1,
  and temperatures 1, 0.7, 0.3, 0 with the original instructions — one run, one table.
* Adversarial samples (§4, Table 4): fluency of benign and attacked titles, meaning
  preservation of each pair, and the sanity check of identical pairs, which should get 5.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgelab.summary import judges_summary
from judgelab.datasets.items import FieldMap, Item
from judgelab.datasets.readers import read_json, read_records
from judgelab.errors import JudgelabError
from judgelab.raters import human_mask
from judgelab.ratings import combine
from judgelab.recipes.chiang_lee_data import check_wp, wp_human_ratings, wp_items
from judgelab.output import OutputFolder
from judgelab.recipes.common import RecipeResult, SanityCheck, finish_recipe, judge_run
from judgelab.recipes.tables import kendall_vs_humans, pairwise_kendall, table1
from judgelab.store import Store
from judgelab.status import DEFAULT_MAX_FAILURE_RATE, Status
from judgelab.choices import Score
from judgelab.spec import JudgeOptions

if TYPE_CHECKING:
    from judgelab.rate import StudyPlan

__all__ = ["run_chiang_lee", "plan_chiang_lee", "sanity_check", "welch_by_writer", "variance_table", "adversarial_items"]

TEMPERATURES = (1.0, 0.7, 0.3, 0.0)


def _stories(path: Path, n_items: int | None, fields: FieldMap) -> tuple[list[Item], pd.DataFrame | None]:
    if path.suffix.lower() == ".json" and isinstance(raw := read_json(path), dict):  # wp_a.json; a list is read below
        data = check_wp(raw, path)
        humans = wp_human_ratings(data)
        items = wp_items(data, n_items)
        keep = {i.item_id for i in items}
        return items, humans[humans["item_id"].isin(keep)]
    rows = read_records(path)
    items = []
    counts: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        for need in (fields.text, fields.system):
            if row.get(need) in (None, ""):
                raise JudgelabError(f"{path}: story {n} has no field {need!r} (columns: {', '.join(map(str, row))})")
        writer = str(row[fields.system])
        if n_items is not None and counts.get(writer, 0) >= n_items:
            continue
        counts[writer] = counts.get(writer, 0) + 1
        story_id = str(row[fields.id]) if row.get(fields.id) not in (None, "") else str(n)
        items.append(Item(story_id, str(row[fields.text]), writer, story_id, row.get(fields.context)))
    return items, None


def welch_by_writer(df: pd.DataFrame) -> pd.DataFrame:
    """Welch's t between the two writers with the most stories, per rater group and criterion (item means).

    Human raters are pooled into one group ``human``; the test itself is
    :func:`judgelab.summary.compare_systems` (the one Welch comparison).
    """
    from judgelab.summary import compare_systems

    writers = df["system"].value_counts().index.tolist()[:2]
    if len(writers) < 2:
        return pd.DataFrame()
    a, b = sorted(writers)
    ok = df[df["status"] == Status.OK]
    pooled = ok.assign(rater=ok["rater"].where(~human_mask(ok["rater"]), "human"))
    return compare_systems(pooled, a, b).rename(columns={"system_a": "writer_a", "system_b": "writer_b"})


def variance_table(df: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    """Table 3: one row per setup; per attribute and writer two numeric columns,
    ``<attribute> <writer> mean`` and ``<attribute> <writer> sd`` (the paper's "mean ± SD")."""
    rows = []
    for rater, setup in labels.items():
        sub = df[(df["rater"] == rater) & (df["status"] == Status.OK)]
        row: dict[str, Any] = {"setup": setup}
        for (criterion, writer), grp in sub.groupby(["criterion", "system"]):
            row[f"{criterion} {writer} mean"] = float(grp["score"].mean())
            row[f"{criterion} {writer} sd"] = float(grp["score"].std(ddof=1)) if len(grp) > 1 else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def adversarial_items(path: Path | None, n_items: int | None) -> tuple[list[Item], list[Item]]:
    """(fluency items, meaning items). Meaning items include the identical benign pairs (system 'identical')."""
    from importlib import resources

    source = path or Path(str(resources.files("judgelab.datasets") / "demo" / "adversarial-titles.jsonl"))
    rows = read_records(source)[: n_items or None]
    fluency, meaning = [], []
    for n, row in enumerate(rows, 1):
        for need in ("id", "benign", "adversarial"):
            if row.get(need) in (None, ""):
                raise JudgelabError(f"{source}: row {n} has no field {need!r}")
        for need in ("benign", "adversarial"):
            if not isinstance(row[need], str):
                raise JudgelabError(f"{source}: row {n}: field {need!r} must be text")
        attack = str(row.get("attack") or "adversarial")
        fluency.append(Item(f"{row['id']}", row["benign"], "benign"))
        fluency.append(Item(f"{row['id']}", row["adversarial"], attack))
        meaning.append(Item(f"{row['id']}", row["adversarial"], attack, context=row["benign"]))
        meaning.append(Item(f"{row['id']}", row["benign"], "identical", context=row["benign"]))
    # benign titles may repeat across attacks: keep each (system, id) once
    unique = {(i.system, i.item_id): i for i in fluency}
    return list(unique.values()), list({(i.system, i.item_id): i for i in meaning}.values())


def sanity_check(meaning: pd.DataFrame, tolerance: float = 0.5) -> SanityCheck:
    """Identical pairs should be rated 5 (Table 4, †). Flags a judge whose mean is below 5 - tolerance."""
    ident = meaning[(meaning["system"] == "identical") & (meaning["status"] == Status.OK)]
    if ident.empty:
        return SanityCheck(False, float("nan"), float("nan"), "no identical pair was rated")
    mean = float(ident["score"].mean())
    share = float((ident["score"] >= 5).mean())
    passed = mean >= 5 - tolerance
    msg = (f"sanity check passed: identical pairs rated {mean:.2f} on average ({share:.0%} rated 5)" if passed else
           f"SANITY CHECK FAILED: identical pairs rated {mean:.2f} on average, only {share:.0%} rated 5 — "
           f"the judge does not understand the meaning-preservation question")
    return SanityCheck(passed, mean, share, msg)


def run_chiang_lee(stories: Path, out: Path, judge: str = "local", n_items: int | None = None,
                   human: Path | None = None, adversarial: Path | None = None, variance: bool = False,
                   samples: int = 3, score: Score | None = None, fields: FieldMap = FieldMap(text="story", context="prompt", system="writer"),
                   options: JudgeOptions | None = None, progress: bool = True, display=None,
                   max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> RecipeResult:
    """Run the Chiang & Lee (2023) study with one judge and write its tables into ``out``.

    Args:
        stories: ``wp_a.json`` (with the teachers' ratings) or JSONL/CSV of stories (``fields`` names the columns).
        out: output folder (tables as CSV, README.md, run.json, store.sqlite, report.html).
        judge: judge spec (:mod:`judgelab.models.spec`).
        n_items: stories per writer, and adversarial titles.
        human: human ratings (long layout) when the stories file has none.
        adversarial: JSONL/CSV with id, benign, adversarial, attack (default: the shipped demo titles).
        variance: also run the Table 3 study (instructions × temperatures).
        samples: samples per story (the paper's three annotators).
        score: ``parsed`` or ``logprob`` (default: logprob for the embedded judge).
        fields: column names of a JSONL/CSV stories file.
        options: options shared by judge specs (``base_url``, ``api_key`` …).
        progress: progress bars on stderr.
        display: where tables and lines are shown (the command line passes one; ``None`` prints nothing).
        max_failure_rate: the share of a judge's failed judgments above which :class:`judgelab.errors.TooManyFailures`
            is raised (after the outputs are written; exit status 3 on the command line).

    Returns:
        A :class:`judgelab.recipes.common.RecipeResult`: raters per stage, ``tables["table1"]`` and
        ``sanity`` (:func:`sanity_check`).

    Example:
        >>> run_chiang_lee(Path("wp_a.json"), Path("runs/cl"), "openai:gpt-4o-mini", n_items=10)   # doctest: +SKIP
    """
    from judgelab.ratings import import_long

    from judgelab.recipes.common import recipe_spec

    mode = recipe_spec("chiang-lee-story", judge, score=score, options=options)[0].score_mode
    output = OutputFolder(out, "Chiang & Lee (2023) recipe: story rating, variance study, adversarial samples", display=display)
    items, humans = _stories(stories, n_items, fields)
    if human is not None:
        humans = import_long(human)
    notes = []
    with Store(out / "store.sqlite") as store:
        rater = judge_run(items, "chiang-lee-story", judge, store, samples=samples, score=score, options=options, progress=progress)
        labels = {rater: "original, T = 1.0"}
        if variance:
            for variant in ("persona", "explain"):
                labels[judge_run(items, "chiang-lee-story", judge, store, samples=samples, score=score, variant=variant,
                                 options=options, progress=progress)] = f"+ {variant}, T = 1.0"
            for t in TEMPERATURES[1:]:
                labels[judge_run(items, "chiang-lee-story", judge, store, samples=samples, score=score, temperature=t,
                                 rater=f"{rater}@T={t}", options=options, progress=progress)] = f"original, T = {t}"
        adv_fluency, adv_meaning = adversarial_items(adversarial, n_items)
        r_flu = judge_run(adv_fluency, "chiang-lee-adversarial", judge, store, samples=samples, score=score,
                          criteria=["fluency"], options=options, progress=progress)
        r_mean = judge_run(adv_meaning, "chiang-lee-adversarial", judge, store, samples=samples, score=score,
                           criteria=["meaning"], options=options, progress=progress)
        ratings = store.ratings()
    output.record(results={"summary": judges_summary(ratings)})
    story = ratings[ratings["rater"] == rater]
    frames = [story] + ([humans] if humans is not None else [])
    both = combine(frames)
    output.table(story, "ratings", "judge ratings of the stories (tidy table)", show=False)
    t1 = output.table(table1(both), "table1", "Table 1: mean, SD, Krippendorff's alpha (interval) and % full agreement of three annotators, per writer")
    output.table(welch_by_writer(both), "welch", "Welch's t-test between writers (per-item means)")
    if humans is not None:
        output.table(kendall_vs_humans(both), "table2_kendall", "Table 2: Kendall's tau between mean teacher and mean judge ratings")
        output.table(pairwise_kendall(humans), "table6_human_pairwise_kendall", "Table 6: mean pairwise Kendall's tau between teachers")
    else:
        notes.append("no human ratings given: Tables 2 and 6 were not computed")
    if variance:
        output.table(variance_table(ratings, labels), "table3_variance", "Table 3: instructions and sampling temperature")
        if mode == "logprob":
            notes.append("log-probability scores do not depend on the temperature; use --score parsed to study sampling")
    adv = ratings[ratings["rater"].isin({r_flu, r_mean}) & (ratings["status"] == Status.OK)]
    t4 = adv.groupby(["system", "criterion"])["score"].mean().unstack()
    output.table(t4.reset_index(), "table4_adversarial", "Table 4: mean fluency and meaning preservation per attack")
    mean_ = ratings[(ratings["rater"] == r_mean) & (ratings["criterion"] == "meaning")]
    check = sanity_check(mean_)
    notes.append(check.message)
    output.say(check.message)
    if mode == "logprob":
        notes.append("log-probability scoring gives one deterministic score per story: alpha and % agreement need --score parsed")
    folder = finish_recipe(output, notes, max_failure_rate)
    raters = {"story rating": rater, **{f"variance: {label}": r for r, label in labels.items() if r != rater},
              "adversarial fluency": r_flu, "adversarial meaning": r_mean}
    return RecipeResult(folder, raters, tuple(notes), {"table1": t1}, check)


def plan_chiang_lee(stories: Path, judge: str = "local", n_items: int | None = None, adversarial: Path | None = None,
                    variance: bool = False, samples: int = 3, score: Score | None = None,
                    fields: FieldMap = FieldMap(text="story", context="prompt", system="writer"),
                    options: JudgeOptions | None = None, out: Path | None = None) -> StudyPlan:
    """Plan every stage of :func:`run_chiang_lee` without calling a model (``--dry-run``); no stage
    depends on the judge's answers, so all are planned. Returns a :class:`judgelab.rate.StudyPlan`."""
    from judgelab.recipes.common import recipe_spec
    from judgelab.rate import StudyPlan, plan_rate

    items, _ = _stories(stories, n_items, fields)
    stages: list[tuple[str, list[Item], Any]] = []
    base: dict[str, Any] = dict(samples=samples, score=score, options=options)
    stages.append(("story rating", items, recipe_spec("chiang-lee-story", judge, **base)))
    if variance:
        for variant in ("persona", "explain"):
            stages.append((f"variance: + {variant}", items, recipe_spec("chiang-lee-story", judge, variant=variant, **base)))
        for t in TEMPERATURES[1:]:
            stages.append((f"variance: T = {t}", items, recipe_spec("chiang-lee-story", judge, temperature=t,
                                                                   rater=f"{{model}}@chiang-lee-story@T={t}", **base)))
    fluency, meaning = adversarial_items(adversarial, n_items)
    stages.append(("adversarial fluency", fluency, recipe_spec("chiang-lee-adversarial", judge, criteria=["fluency"], **base)))
    stages.append(("adversarial meaning", meaning, recipe_spec("chiang-lee-adversarial", judge, criteria=["meaning"], **base)))
    plans = []
    for stage, stage_items, (spec, tpl) in stages:
        plans += plan_rate(stage_items, [spec], out, template=tpl, stage=stage)
    return StudyPlan(tuple(plans))
