"""The papers' studies (recipe …), scales, pairwise comparison and the contamination check."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from judgelab.cli.common import (
    STUDIES,
    app,
    BaseUrlOpt,
    ApiKeyOpt,
    ModelPathOpt,
    ConcurrencyOpt,
    FormatOpt,
    JudgeSpecOpt,
    ScoreOpt,
    DryRunOpt,
    MaxFailureRateOpt,
    PriceInOpt,
    PriceOutOpt,
    judge_options,
    show_plans,
    split_list,
    TerminalDisplay,
    IdFieldOpt,
    TextFieldOpt,
    QuietOpt,
)
from judgelab.choices import Score
from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from judgelab.rate import StudyPlan


@app.command(rich_help_panel=STUDIES)
def contamination(
    texts: Path = typer.Option(..., "--items", help="JSONL/CSV of the texts to score: id and text (and optionally a "
                               "0/1 member label)"),
    k: float = typer.Option(0.2, "--k", help="share of least likely tokens averaged (Min-K%)"),
    label_field: Optional[str] = typer.Option(None, "--label-field", help="column with 1 = member, 0 = non-member"),
    model_path: Optional[Path] = ModelPathOpt,
    id_field: str = IdFieldOpt, text_field: str = TextFieldOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="texts: score only the first N rows of --items"),
    out: Optional[Path] = typer.Option(None, "--out", help="output folder: min_k_prob.csv, README.md, run.json"),
    fmt: str = FormatOpt,
    dry_run: bool = typer.Option(False, "--dry-run", help="score nothing: print how many texts and tokens would be scored"),
) -> None:
    """Min-K% Prob membership score of each text under a local GGUF model; ROC AUC with labels."""
    import json as _json


    from judgelab.cli.output import emit
    from judgelab.contamination import check_labels, score_texts
    from judgelab.datasets.items import FieldMap, load_items
    from judgelab.output.steps import write_contamination
    from judgelab.output import json_document

    items = load_items(texts, FieldMap(id=id_field, text=text_field), limit=n_items)
    check_labels(items, label_field, texts)
    if dry_run:
        chars = sum(len(i.text) for i in items)
        typer.echo(f"dry run: {len(items)} texts scored by one forward pass each under the local model "
                   f"({model_path or 'the shipped Gemma 3 270M'}); about {round(chars / 4)} tokens "
                   "(estimated as characters / 4); nothing is written")
        return
    result = score_texts(items, k, label_field, model_path)
    if out is not None:
        write_contamination(result, out, label_field, TerminalDisplay() if fmt == "table" else None)  # csv/json: stdout is data
    if fmt == "json":
        typer.echo(_json.dumps(json_document("contamination", rows=result.table, roc_auc=result.roc_auc, k=k,
                                             model=result.model_id)))
        return
    emit(result.table, fmt, "contamination", title=result.title if fmt == "table" else None)
    if result.roc_auc is not None:
        typer.echo(f"ROC AUC (members vs non-members): {result.roc_auc:.3f}")


OUT_HELP = "output folder: CSV tables, figures, README.md index, run.json, store.sqlite, report.html"


def _with_prices(planned: StudyPlan, price_in: Optional[float], price_out: Optional[float]) -> tuple:
    """(plans, prices, later) in the order :func:`show_plans` takes them."""
    return planned.judges, price_in, price_out, planned.later


recipe_app = typer.Typer(help="The papers' studies as one command each.", no_args_is_help=True)
app.add_typer(recipe_app, name="recipe", rich_help_panel=STUDIES)


@recipe_app.command("chiang-lee")
def recipe_chiang_lee(
    stories: Path = typer.Option(..., "--items", help="the stories to rate: wp_a.json, or JSONL/CSV with id, story, "
                                 "prompt, writer"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="stories: the first N per writer, and the first N adversarial titles"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings (long layout) when the stories file has none"),
    adversarial: Optional[Path] = typer.Option(None, "--adversarial", help="JSONL/CSV with id, benign, adversarial, attack (default: shipped demo titles)"),
    variance: bool = typer.Option(False, "--variance", help="also run the Table 3 study (instructions × temperatures)"),
    samples: int = typer.Option(3, "--samples", help="ratings per story and question (the paper's three annotators)"),
    id_field: str = typer.Option("id", "--id-field", help="the column of each story's id (row number when absent)"),
    story_field: str = typer.Option("story", "--text-field", help="the column of the story"),
    prompt_field: str = typer.Option("prompt", "--context-field", help="the column of the story's prompt"),
    writer_field: str = typer.Option("writer", "--system-field", help="the column of the story's writer (the "
                                     "system), e.g. Model for hanna_llm_stories.csv"),
    score: Optional[Score] = ScoreOpt,
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/chiang-lee"), "--out", help=OUT_HELP),
    quiet: bool = QuietOpt, max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Story rating (Tables 1, 2, 6), Welch's t, the variance study (Table 3) and adversarial samples (Table 4)."""
    from judgelab.datasets.items import FieldMap
    from judgelab.recipes.chiang_lee import plan_chiang_lee, run_chiang_lee

    fields = FieldMap(id=id_field, text=story_field, context=prompt_field, system=writer_field)
    defaults = judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency)
    if dry_run:
        show_plans(*_with_prices(plan_chiang_lee(stories, judge, n_items, adversarial, variance, samples, score, fields,
                                                 defaults, out), price_in, price_out))
        return
    run_chiang_lee(stories, out, judge, n_items, human, adversarial, variance, samples, score, fields,
                   options=defaults, progress=not quiet, display=TerminalDisplay(), max_failure_rate=max_failure_rate)


@recipe_app.command("hanna")
def recipe_hanna(
    stories: Path = typer.Option(..., "--items", help="the stories to rate: hanna_llm_stories.csv (Prompt, Human, "
                                 "Story, Model)"),
    judge: str = JudgeSpecOpt,
    n_items: int = typer.Option(4, "--n-items", min=1, help="story-prompts: the first N, each with all its stories (the human one included)"),
    eval_prompts: str = typer.Option("1,2,3,4", "--eval-prompts", help="comma-separated: which of the paper's four "
                                     "Eval-Prompts (1-4) to ask"),
    samples: int = typer.Option(3, "--samples", help="tries per story"),
    score: Optional[Score] = ScoreOpt,
    human: Optional[Path] = typer.Option(None, "--human", help="tidy human ratings of the same items"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/hanna"), "--out", help=OUT_HELP),
    quiet: bool = QuietOpt, max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Six criteria × four Eval-Prompts: ICC(2,k), average ratings, ASG ranking, explanations."""
    from judgelab.recipes.hanna_run import plan_hanna, run_hanna

    try:
        eps = tuple(int(x) for x in (split_list(eval_prompts) or []))
    except ValueError:
        raise JudgelabError("--eval-prompts takes numbers 1-4, e.g. 1,2") from None
    defaults = judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency)
    if dry_run:
        show_plans(*_with_prices(plan_hanna(stories, judge, n_items, eps, samples, score, defaults, out), price_in, price_out))
        return
    run_hanna(stories, out, judge, n_items, eps, samples, score, human, options=defaults, progress=not quiet,
              display=TerminalDisplay(), max_failure_rate=max_failure_rate)


@recipe_app.command("nle")
def recipe_nle(
    dataset: str = typer.Option("esnli", "--dataset", help="the data set of --items: esnli | liar | latent-hatred (a name, not a file)"),
    data: Path = typer.Option(..., "--items", help="the explanations to rate: the --dataset's CSV (e.g. "
                              "../shared/data/nle/e-snli.csv)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human scores: id, informativeness, clarity (rows per rater are averaged)"),
    human_comparisons: Optional[Path] = typer.Option(None, "--human-comparisons", help="a second set of human comparisons: first, second, metric, verdict"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="explanations: the first N rows of --items"),
    samples: int = typer.Option(3, "--samples", help="ratings per explanation and question"),
    per_delta: int = typer.Option(100, "--per-delta", min=1, help="pairs per score gap"),
    seed: int = typer.Option(0, "--seed", help="seed of the pairs drawn per score gap"),
    dynamic: bool = typer.Option(True, "--dynamic/--no-dynamic", help="also compare dynamic prompting (needs human scores)"),
    retrieval: str = typer.Option("auto", "--retrieval", help="auto | sentence-transformers | tfidf"),
    price_in: Optional[float] = typer.Option(None, "--price-in", help="USD per 1M prompt tokens"),
    price_out: Optional[float] = typer.Option(None, "--price-out", help="USD per 1M completion tokens"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/nle"), "--out", help=OUT_HELP),
    quiet: bool = QuietOpt, max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt,
) -> None:
    """Rating, scales, pairwise comparison, dynamic prompting and cost accounting of the NLE study."""
    from judgelab.recipes.nle import plan_nle, run_nle

    if dry_run:
        show_plans(*_with_prices(plan_nle(dataset, data, judge, human, n_items, samples, per_delta, seed, dynamic,
                                          judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency), out),
                                 price_in, price_out))
        return
    run_nle(dataset, data, out, judge, human, n_items, samples, per_delta, seed, dynamic, price_in, price_out, retrieval,
            options=judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency), progress=not quiet,
            human_comparisons=human_comparisons, display=TerminalDisplay(), max_failure_rate=max_failure_rate)


@app.command(rich_help_panel=STUDIES)
def scales(
    judge_scores: Path = typer.Argument(..., metavar="RATINGS", help="the judge's ratings file (ratings.csv, tidy); "
                                        "samples are averaged"),
    human: Path = typer.Option(..., "--human", help="tidy human ratings, or a CSV with id and one column per metric"),
    binary: str = typer.Option("4", "--binary-edges", help="edge of the binary bins (a value on an edge goes up)"),
    ternary: str = typer.Option("3,5", "--ternary-edges", help="edges of the ternary bins"),
    figure_dir: Optional[Path] = typer.Option(None, "--figures", help="folder for scatter plots against y = x"),
    out: Optional[Path] = typer.Option(None, "--out", help="also write scales.csv, README.md and run.json into this folder"),
    fmt: str = FormatOpt,
) -> None:
    """Agreement at binary, ternary and full-scale granularity: weighted F1, RMSE, majority baseline; Pearson and Spearman (r, p, n)."""
    from judgelab.cli.output import emit
    from judgelab.recipes.scales import parse_edges, scales_study, write_figures

    from judgelab.cli.common import NotesDisplay

    result = scales_study(judge_scores, human, parse_edges(binary, ternary), out, NotesDisplay())
    if figure_dir is not None:
        write_figures(result, figure_dir)
    emit(result.table, fmt, "scales", title="agreement by granularity (pearson/spearman rows: r, p, n)" if fmt == "table" else None)


@app.command(rich_help_panel=STUDIES)
def pairwise(
    dataset: str = typer.Option("esnli", "--dataset", help="the data set of --items: esnli | liar | latent-hatred (a name, not a file)"),
    data: Path = typer.Option(..., "--items", help="the explanations to compare: the --dataset's CSV"),
    human: Path = typer.Option(..., "--human", help="human scores: id, informativeness, clarity"),
    human_comparisons: Optional[Path] = typer.Option(None, "--human-comparisons", help="a second set of human comparisons: first, second, metric, verdict"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="explanations: the first N rows of --items"),
    per_delta: int = typer.Option(100, "--per-delta", min=1, help="pairs per score gap"),
    seed: int = typer.Option(0, "--seed", help="seed of the pairs drawn per score gap"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/pairwise"), "--out", help=OUT_HELP),
    quiet: bool = QuietOpt, max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Pairwise comparison by score gap Δ in both orders: F1 per Δ, position consistency, Bradley–Terry."""
    from judgelab.recipes.nle import plan_nle, run_pairwise

    if dry_run:
        show_plans(*_with_prices(plan_nle(dataset, data, judge, human, n_items, per_delta=per_delta, seed=seed, dynamic=False,
                                          options=judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency),
                                          out=out, pairwise_only=True), price_in, price_out))
        return
    run_pairwise(dataset, data, human, out, judge, n_items, per_delta, seed, human_comparisons,
                 judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency), not quiet, TerminalDisplay(),
                 max_failure_rate)


@recipe_app.command("user-study")
def recipe_user_study(
    annotations: Path = typer.Argument(..., metavar="ANNOTATIONS", help="human error annotations of explanations, "
                                       "in the layout of HANNA's user_study.csv"),
    fmt: str = FormatOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="output folder: error_rates.csv, README.md, run.json"),
) -> None:
    """Per-category error rates and Gwet's AC1 of explanation annotations (no model is called)."""
    from judgelab.recipes.explanations import error_annotations
    from judgelab.cli.output import emit

    table = error_annotations(annotations)
    if out is not None:
        from judgelab.output import write_tables
        from judgelab.output.record import input_file

        write_tables(out, "recipe user-study", "explanation errors: rates and Gwet's AC1",
                     [(table, "error_rates", "per error category: explanations, annotations, rate, Gwet's AC1")],
                     inputs=[input_file("annotations", annotations)],
                     display=TerminalDisplay() if fmt == "table" else None)  # csv/json: stdout is data
    emit(table, fmt, "recipe user-study", title="explanation errors: rates and Gwet's AC1" if fmt == "table" else None)
