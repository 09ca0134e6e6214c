"""The ``judgelab`` command.

Every user error ends in one line on stderr and exit status 2 (never a traceback);
an interrupted run keeps every finished judgment in its store and resumes when the
same command is run again.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable, Optional

import typer
from pydantic import ValidationError

from judgelab.errors import JudgelabError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="judgelab: LLM judges, measured like human raters.")


# -- shared judge options ------------------------------------------------------
def judge_options(
    judge: str, model: Optional[str], base_url: Optional[str], api_key: Optional[str], style: str,
    model_path: Optional[Path], script: Optional[Path], concurrency: int, max_retries: int,
    no_n: bool = False, timeout: float = 120.0,
) -> dict:
    """Keyword options for :func:`judgelab.models.make_judge` from command-line values."""
    if judge == "local":
        return {"model_path": str(model_path) if model_path else None}
    if judge == "openai":
        return {"model": model, "base_url": base_url, "api_key": api_key, "style": style,
                "concurrency": concurrency, "max_retries": max_retries, "supports_n": not no_n, "timeout": timeout}
    if judge == "scripted-test-double":
        return {"script": str(script) if script else None}
    return {}


JudgeOpt = typer.Option("local", "--judge", help="local (embedded llama.cpp, default) | openai | scripted-test-double")
ModelOpt = typer.Option(None, "--model", help="model name for --judge openai")
BaseUrlOpt = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL or OpenAI)")
ApiKeyOpt = typer.Option(None, "--api-key", help="API key (default: $OPENAI_API_KEY)")
StyleOpt = typer.Option("chat", "--style", help="chat | completion requests (openai judge)")
ModelPathOpt = typer.Option(None, "--model-path", help="GGUF file for the local judge (default: the shipped Gemma 3 270M)")
ScriptOpt = typer.Option(None, "--script", help="JSON script for the scripted-test-double judge (tests only)")
ConcurrencyOpt = typer.Option(16, "--concurrency", min=1, max=1024, help="calls in flight at once (openai judge)")
RetriesOpt = typer.Option(6, "--max-retries", min=0, max=50, help="retries on 429/5xx/timeouts before giving up")


def _split(values: Optional[str]) -> Optional[list[str]]:
    if not values:
        return None
    return [v.strip() for v in values.split(",") if v.strip()]


@app.command()
def rate(
    items: Path = typer.Option(..., "--items", help="JSONL/CSV with id, text and optional context, system, group"),
    template: str = typer.Option("chiang-lee-story", "--template", help="shipped template name or path to a .yaml"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all of the template)"),
    variant: Optional[str] = typer.Option(None, "--variant", help="instruction variant, e.g. persona or explain"),
    judge: str = JudgeOpt, model: Optional[str] = ModelOpt, base_url: Optional[str] = BaseUrlOpt,
    api_key: Optional[str] = ApiKeyOpt, style: str = StyleOpt, model_path: Optional[Path] = ModelPathOpt,
    script: Optional[Path] = ScriptOpt, concurrency: int = ConcurrencyOpt, max_retries: int = RetriesOpt,
    no_n: bool = typer.Option(False, "--no-n", help="the server does not support n samples per request"),
    samples: int = typer.Option(3, "--samples", help="samples per item and criterion (the paper's three annotators)"),
    temperature: float = typer.Option(1.0, "--temperature"),
    top_p: float = typer.Option(0.9, "--top-p"),
    max_tokens: int = typer.Option(128, "--max-tokens"),
    seed: Optional[int] = typer.Option(None, "--seed"),
    score: str = typer.Option("auto", "--score", help="parsed | logprob | auto (logprob for the local judge)"),
    query_mode: str = typer.Option("independent", "--query-mode", help="independent | conversation"),
    max_refusal_retries: int = typer.Option(3, "--max-refusal-retries"),
    top_logprobs: int = typer.Option(0, "--top-logprobs", help="ask for top log-probabilities (parsed mode)"),
    rater: Optional[str] = typer.Option(None, "--rater", help="rater label (default: model@template[+variant])"),
    out: Path = typer.Option(Path("judgelab-runs/rate"), "--out", help="output folder: store.sqlite, ratings, summary"),
    ratings_format: str = typer.Option("csv", "--format", help="ratings file format: csv | jsonl | parquet"),
    compare: Optional[str] = typer.Option(None, "--compare", help="two systems for Welch's t-test, e.g. human,gpt2"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="rate only the first N items"),
    id_field: str = typer.Option("id", "--id-field"), text_field: str = typer.Option("text", "--text-field"),
    context_field: str = typer.Option("context", "--context-field"),
    system_field: str = typer.Option("system", "--system-field"), group_field: str = typer.Option("group", "--group-field"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bar"),
) -> None:
    """Rate items with a judge; write the ratings table and print the summary."""
    from judgelab.datasets.items import FieldMap, load_items
    from judgelab.models import Sampling
    from judgelab.run import RunSpec
    from judgelab.workflow import rate_items

    if ratings_format not in {"csv", "jsonl", "parquet"}:
        raise JudgelabError(f"unknown --format {ratings_format!r}: csv, jsonl or parquet")
    if score not in {"auto", "parsed", "logprob"}:
        raise JudgelabError(f"unknown --score {score!r}: parsed, logprob or auto")
    fields = FieldMap(id=id_field, text=text_field, context=context_field, system=system_field, group=group_field)
    loaded = load_items(items, fields, limit=n_items)
    spec = RunSpec(
        template=template, criteria=_split(criteria), variant=variant, samples=samples,
        sampling=Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed),
        score=("logprob" if judge == "local" else "parsed") if score == "auto" else score,
        query_mode=query_mode, max_refusal_retries=max_refusal_retries, top_logprobs=top_logprobs,
        rater=rater, concurrency=concurrency if judge != "local" else None,
    )
    pair = _split(compare)
    if pair is not None and len(pair) != 2:
        raise JudgelabError("--compare needs two systems, e.g. --compare human,gpt2")
    rate_items(
        loaded, spec, judge, judge_options(judge, model, base_url, api_key, style, model_path, script, concurrency, max_retries, no_n),
        out, ratings_format, compare=tuple(pair) if pair else None, progress=not quiet,
    )


@app.command()
def demo(
    n_items: int = typer.Option(8, "--n-items", min=1, max=8, help="demo summaries to use (1-8)"),
    out: Path = typer.Option(Path("judgelab-runs/demo"), "--out"),
    model_path: Optional[Path] = ModelPathOpt,
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """A small DHP benchmark of the embedded judge on shipped texts (offline, a few minutes)."""
    from judgelab.workflow import run_demo

    run_demo(n_items=n_items, out=out, model_path=str(model_path) if model_path else None, progress=not quiet)


@app.command()
def templates() -> None:
    """List the shipped prompt templates and their criteria."""
    from judgelab.prompts import available_templates, load_template

    for name in available_templates():
        t = load_template(name)
        variants = f"; variants: {', '.join(t.variants)}" if t.variants else ""
        typer.echo(f"{name}: {', '.join(t.criteria)}{variants} — {t.description}")


@app.command()
def export(
    store: Path = typer.Argument(..., help="a run's store.sqlite"),
    to: Path = typer.Option(..., "--to", help="output file: .csv, .jsonl or .parquet"),
    meta: bool = typer.Option(False, "--meta", help="include attempts, tokens, latency and metadata"),
) -> None:
    """Export the ratings table of a store (no model is called)."""
    from judgelab.store import Store, write_table

    if not store.exists():
        raise JudgelabError(f"store not found: {store}")
    with Store(store) as s:
        write_table(s.ratings(with_meta=meta), to)
    typer.echo(f"wrote {to}")


FormatOpt = typer.Option("table", "--format", help="table | csv | json")


@app.command()
def agree(
    ratings: list[Path] = typer.Argument(None, help="ratings files (judge runs and/or tidy human ratings)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings to import (CSV/JSONL)"),
    human_layout: str = typer.Option("long", "--human-layout", help="long (one row per rating) | wide (one column per criterion)"),
    item_col: str = typer.Option("item_id", "--item-col"), rater_col: str = typer.Option("rater", "--rater-col"),
    criterion_col: str = typer.Option("criterion", "--criterion-col"), score_col: str = typer.Option("score", "--score-col"),
    system_col: str = typer.Option("system", "--system-col"), group_col: str = typer.Option("group", "--group-col"),
    criteria_cols: Optional[str] = typer.Option(None, "--criteria-cols", help="wide layout: the criterion columns"),
    methods: str = typer.Option("kendall", "--method", help="comma-separated: kendall, pearson, spearman"),
    levels: str = typer.Option("overall,group,system", "--level", help="comma-separated: overall, group, system"),
    williams_level: str = typer.Option("overall", "--williams-level", help="overall | system"),
    kendall_variant: str = typer.Option("b", "--kendall-variant", help="b (tau-b, default) | c (Stuart's tau-c)"),
    fmt: str = FormatOpt,
    out: Optional[Path] = typer.Option(None, "--out", help="folder for the CSV tables"),
) -> None:
    """Judge-vs-human correlations, human baseline, self-consistency and Williams tests."""
    from judgelab.agree import human_baseline, judge_vs_human, self_consistency, williams_matrix
    from judgelab.ratings import combine, import_long, import_wide, read_ratings
    from judgelab.report.output import emit
    from judgelab.store import write_table

    frames = [read_ratings(p) for p in (ratings or [])]
    if human is not None:
        if human_layout == "long":
            frames.append(import_long(human, item_col, rater_col, criterion_col, score_col, system_col, group_col))
        elif human_layout == "wide":
            cols = _split(criteria_cols)
            if not cols:
                raise JudgelabError("--human-layout wide needs --criteria-cols")
            frames.append(import_wide(human, cols, item_col, rater_col, system_col, group_col))
        else:
            raise JudgelabError(f"unknown --human-layout {human_layout!r}: long or wide")
    df = combine(frames)
    method_list, level_list = _split(methods) or ["kendall"], _split(levels) or ["overall"]
    for m in method_list:
        if m not in {"kendall", "pearson", "spearman"}:
            raise JudgelabError(f"unknown method {m!r}: kendall, pearson or spearman")
    if kendall_variant not in {"b", "c"}:
        raise JudgelabError("--kendall-variant is b or c")
    tables = {
        "correlations": judge_vs_human(df, method_list, level_list, variant=kendall_variant),
        "human_baseline": human_baseline(df, method_list, level_list, variant=kendall_variant),
        "self_consistency": self_consistency(df),
        "williams": williams_matrix(df, williams_level, method_list[0], variant=kendall_variant),
    }
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name, table in tables.items():
            write_table(table, out / f"{name}.csv")
    if fmt == "json":
        import json as _json
        import math as _math

        def clean(v):
            return None if isinstance(v, float) and _math.isnan(v) else v

        typer.echo(_json.dumps({k: [{c: clean(v) for c, v in r.items()} for r in t.to_dict(orient="records")]
                                for k, t in tables.items()}, ensure_ascii=False))
        return
    for name, table in tables.items():
        if fmt == "csv":
            typer.echo(f"# {name}")
        emit(table, fmt, title=name.replace("_", " ") if fmt == "table" else None)


hanna_app = typer.Typer(help="The HANNA story-evaluation benchmark: meta-evaluation tables.", no_args_is_help=True)
app.add_typer(hanna_app, name="hanna")
ScoresOpt = typer.Option(..., "--scores", help="hanna_metric_scores.csv or hanna_metric_scores_llm.csv")


@hanna_app.command("correlations")
def hanna_correlations(
    scores: Path = ScoresOpt,
    level: str = typer.Option("system", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method", help="kendall | pearson | spearman"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG"),
) -> None:
    """Correlation of every measure with every human criterion (the ten generation systems)."""
    from judgelab.recipes.hanna import correlation_table, load_scores
    from judgelab.report.output import emit

    if level not in {"system", "story", "overall"}:
        raise JudgelabError(f"unknown --level {level!r}: system, story or overall")
    table = correlation_table(load_scores(scores), level, method)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"{method} correlation with human criteria ({level} level)")
    emit(table, fmt, title=f"{method} correlations, {level} level" if fmt == "table" else None)


@hanna_app.command("williams")
def hanna_williams(
    scores: Path = ScoresOpt,
    measure: str = typer.Option("Beluga-13B … 1", "--measure", help="a column, or an LLM family '<LLM> … <prompt>'"),
    level: str = typer.Option("overall", "--level", help="overall | system"),
    method: str = typer.Option("kendall", "--method"),
    versus: Optional[str] = typer.Option(None, "--versus", help="comma-separated measures to compare with (default: all)"),
    family: str = typer.Option("row", "--bh-family", help="row | column | table: the tests one BH adjustment covers"),
    fmt: str = FormatOpt,
    figure: Optional[Path] = typer.Option(None, "--figure", help="write a heatmap PNG of the p-values"),
) -> None:
    """BH-adjusted one-sided Williams p-values: MEASURE vs every other measure, per criterion."""
    from judgelab.recipes.hanna import load_scores, williams_table
    from judgelab.report.output import emit

    table = williams_table(load_scores(scores), measure, level, method, _split(versus), family)
    if figure is not None:
        from judgelab.report.figures import heatmap

        heatmap(table.set_index("measure"), figure, f"Williams p (BH, {family}): {measure} > other ({level})",
                cmap="viridis_r", vmin=0.0, vmax=1.0)
    emit(table, fmt, title=f"Williams tests, {measure} vs others ({level}, BH per {family})" if fmt == "table" else None)


@hanna_app.command("baseline")
def hanna_baseline(
    scores: Path = ScoresOpt,
    level: str = typer.Option("overall", "--level", help="system | story | overall"),
    method: str = typer.Option("kendall", "--method"),
    leave_one_out: bool = typer.Option(False, "--leave-one-out", help="compare each rater with the mean of the other two"),
    fmt: str = FormatOpt,
) -> None:
    """Human baseline: each human rater against the mean human rating, per criterion."""
    from judgelab.recipes.hanna import human_baseline, load_scores
    from judgelab.report.output import emit

    emit(human_baseline(load_scores(scores), level, method, leave_one_out), fmt,
         title=f"human baseline ({method}, {level})" if fmt == "table" else None)


@hanna_app.command("icc")
def hanna_icc(
    scores: Path = ScoresOpt,
    generated_only: bool = typer.Option(False, "--generated-only", help="leave out the human-written stories"),
    fmt: str = FormatOpt,
) -> None:
    """ICC(2,1) and ICC(2,k) with 95% CI of the three human raters, per criterion."""
    from judgelab.recipes.hanna import human_icc, load_scores
    from judgelab.report.output import emit

    emit(human_icc(load_scores(scores), not generated_only), fmt, title="human raters: ICC" if fmt == "table" else None)


dhp_app = typer.Typer(help="DHP discernment benchmark: perturb references, judge, test, score. "
                      "Run: judgelab dhp --task TASK [--data FILE] --judge SPEC [--judge SPEC …]; "
                      "recompute from ratings: judgelab dhp analyze RATINGS --task TASK.",
                      invoke_without_command=True)
app.add_typer(dhp_app, name="dhp")


@dhp_app.callback()
def dhp(
    ctx: typer.Context,
    task: Optional[str] = typer.Option(None, "--task", help="summarization | story-completion | question-answering | translation | a task .yaml"),
    data: Optional[Path] = typer.Option(None, "--data", help="JSONL/CSV of references (default: the task's shipped demo set)"),
    judges: list[str] = typer.Option(["local"], "--judge", help="local[:GGUF] | openai:MODEL[@BASE_URL] | scripted-test-double:FILE; repeatable"),
    generator: Optional[str] = typer.Option(None, "--generator", help="judge spec that writes the LLM-based perturbations (none: they are skipped)"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1),
    seed: int = typer.Option(0, "--seed"),
    samples: Optional[int] = typer.Option(None, "--samples", help="ratings per text at temperature 0 (default 5; 1 for log-probability scoring)"),
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights", help="votes per metric per perturbation (JSON or CSV)"),
    perturbed: Optional[Path] = typer.Option(None, "--perturbed", help="reuse a stored perturbed set (perturbed.jsonl)"),
    exact: bool = typer.Option(False, "--exact-hmp", help="combine with the asymptotically exact HMP instead of Wilson's statistic"),
    id_field: str = typer.Option("id", "--id-field"), text_field: str = typer.Option("text", "--text-field"),
    context_field: str = typer.Option("context", "--context-field"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, style: str = StyleOpt,
    concurrency: int = ConcurrencyOpt, max_retries: int = RetriesOpt,
    out: Path = typer.Option(Path("judgelab-runs/dhp"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Run the DHP benchmark (or, with a subcommand, analyse existing ratings)."""
    if ctx.invoked_subcommand is not None:
        return
    if task is None:
        raise JudgelabError("judgelab dhp needs --task (summarization, story-completion, question-answering, translation)")
    from judgelab.datasets.items import FieldMap
    from judgelab.dhp.workflow import run_dhp

    defaults = {"base_url": base_url, "api_key": api_key, "style": style, "concurrency": concurrency, "max_retries": max_retries}
    run_dhp(task, judges, out, data, FieldMap(id=id_field, text=text_field, context=context_field), n_items, seed,
            expert_weights, generator, perturbed, samples, defaults, exact, progress=not quiet)


@dhp_app.command("analyze")
def dhp_analyze(
    ratings: Path = typer.Argument(..., help="tidy ratings: item_id, system, criterion, rater, sample, score"),
    task: str = typer.Option(..., "--task"),
    expert_weights: Optional[Path] = typer.Option(None, "--expert-weights"),
    exact: bool = typer.Option(False, "--exact-hmp"),
    rater: Optional[str] = typer.Option(None, "--rater", help="analyse one rater of the file"),
    fmt: str = FormatOpt,
) -> None:
    """Recompute every DHP table from a ratings file, without calling a model."""
    import json as _json

    from judgelab.dhp.analysis import perturbation_table, summary_table
    from judgelab.dhp.task import load_task
    from judgelab.dhp.workflow import dhp_analyze_file, public_report
    from judgelab.report.output import emit

    reports = dhp_analyze_file(ratings, task, expert_weights, exact, rater)
    if fmt == "json":
        payload = {r: public_report(rep) for r, rep in reports.items()}
        typer.echo(_json.dumps(next(iter(payload.values())) if len(payload) == 1 else {"judges": payload}))
        return
    metrics = load_task(task).metrics
    emit(perturbation_table(reports, metrics), fmt, title="per perturbation" if fmt == "table" else None)
    if fmt == "csv":
        typer.echo("")
    emit(summary_table(reports), fmt, title="discernment" if fmt == "table" else None)


@app.command()
def contamination(
    texts: Path = typer.Option(..., "--texts", help="JSONL/CSV with id and text (and optionally a 0/1 member label)"),
    k: float = typer.Option(0.2, "--k", help="share of least likely tokens averaged (Min-K%)"),
    label_field: Optional[str] = typer.Option(None, "--label-field", help="column with 1 = member, 0 = non-member"),
    model_path: Optional[Path] = ModelPathOpt,
    id_field: str = typer.Option("id", "--id-field"), text_field: str = typer.Option("text", "--text-field"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1),
    out: Optional[Path] = typer.Option(None, "--out", help="write the per-text scores as CSV"),
    fmt: str = FormatOpt,
) -> None:
    """Min-K% Prob membership score of each text under a local GGUF model; ROC AUC with labels."""
    import pandas as pd

    from judgelab.contamination import TokenScorer, roc_auc
    from judgelab.datasets.items import FieldMap, load_items
    from judgelab.report.output import emit
    from judgelab.store import write_table

    items = load_items(texts, FieldMap(id=id_field, text=text_field), limit=n_items)
    if label_field is not None:
        bad = [i.item_id for i in items if str(i.extra.get(label_field)) not in {"0", "1", "0.0", "1.0"}]
        if bad:
            raise JudgelabError(f"{texts}: item {bad[0]!r} has no 0/1 value in {label_field!r}")
    scorer = TokenScorer(model_path)
    rows = []
    for item in items:
        lp = scorer.token_logprobs(item.text)
        from judgelab.contamination import min_k_prob

        row = {"id": item.item_id, "tokens": len(lp), "min_k_prob": min_k_prob(lp, k), "mean_logprob": float(lp.mean()) if len(lp) else float("nan")}
        if label_field is not None:
            row["member"] = int(float(item.extra[label_field]))
        rows.append(row)
    table = pd.DataFrame(rows)
    if out is not None:
        write_table(table, out)
    emit(table, fmt, title=f"Min-{int(k * 100)}% Prob under {scorer.model_id}" if fmt == "table" else None)
    if label_field is not None:
        auc = roc_auc(table["min_k_prob"], table["member"])
        typer.echo(f"ROC AUC (members vs non-members): {auc:.3f}" if fmt != "json" else f'{{"roc_auc": {auc}}}')


recipe_app = typer.Typer(help="The papers' studies as one command each.", no_args_is_help=True)
app.add_typer(recipe_app, name="recipe")
JudgeSpecOpt = typer.Option("local", "--judge", help="local[:GGUF] | openai:MODEL[@BASE_URL] | scripted-test-double:FILE")
ScoreOpt = typer.Option(None, "--score", help="parsed | logprob (default: logprob for the local judge, else parsed)")


@recipe_app.command("chiang-lee")
def recipe_chiang_lee(
    stories: Path = typer.Option(..., "--stories", help="wp_a.json, or JSONL/CSV with id, story, prompt, writer"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="stories per writer (and adversarial titles)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings (long layout) when the stories file has none"),
    adversarial: Optional[Path] = typer.Option(None, "--adversarial", help="JSONL/CSV with id, benign, adversarial, attack (default: shipped demo titles)"),
    variance: bool = typer.Option(False, "--variance", help="also run the Table 3 study (instructions × temperatures)"),
    samples: int = typer.Option(3, "--samples"),
    id_field: str = typer.Option("id", "--id-field", help="story id column (row number when absent)"),
    story_field: str = typer.Option("story", "--story-field"), prompt_field: str = typer.Option("prompt", "--prompt-field"),
    writer_field: str = typer.Option("writer", "--writer-field", help="e.g. Model for hanna_llm_stories.csv"),
    score: Optional[str] = ScoreOpt,
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: int = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/chiang-lee"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Story rating (Tables 1, 2, 6), Welch's t, the variance study (Table 3) and adversarial samples (Table 4)."""
    from judgelab.recipes.chiang_lee import run_chiang_lee

    from judgelab.datasets.items import FieldMap

    run_chiang_lee(stories, out, judge, n_items, human, adversarial, variance, samples, score,
                   FieldMap(id=id_field, text=story_field, context=prompt_field, system=writer_field),
                   defaults={"base_url": base_url, "api_key": api_key, "concurrency": concurrency}, progress=not quiet)


@recipe_app.command("hanna")
def recipe_hanna(
    stories: Path = typer.Option(..., "--stories", help="hanna_llm_stories.csv (Prompt, Human, Story, Model)"),
    judge: str = JudgeSpecOpt,
    n_items: int = typer.Option(4, "--n-items", min=1, help="story-prompts (each with all its stories)"),
    eval_prompts: str = typer.Option("1,2,3,4", "--eval-prompts"),
    samples: int = typer.Option(3, "--samples", help="tries per story"),
    score: Optional[str] = ScoreOpt,
    human: Optional[Path] = typer.Option(None, "--human", help="tidy human ratings of the same items"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: int = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/hanna"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Six criteria × four Eval-Prompts: ICC(2,k), average ratings, ASG ranking, explanations."""
    from judgelab.recipes.hanna_run import run_hanna

    try:
        eps = tuple(int(x) for x in (_split(eval_prompts) or []))
    except ValueError:
        raise JudgelabError("--eval-prompts takes numbers 1-4, e.g. 1,2") from None
    run_hanna(stories, out, judge, n_items, eps, samples, score, human,
              defaults={"base_url": base_url, "api_key": api_key, "concurrency": concurrency}, progress=not quiet)


@recipe_app.command("nle")
def recipe_nle(
    dataset: str = typer.Option("esnli", "--dataset", help="esnli | liar | latent-hatred"),
    data: Path = typer.Option(..., "--data", help="the dataset's CSV (e.g. ../shared/data/nle/e-snli.csv)"),
    human: Optional[Path] = typer.Option(None, "--human", help="human scores: id, informativeness, clarity (rows per rater are averaged)"),
    human_comparisons: Optional[Path] = typer.Option(None, "--human-comparisons", help="a second set of human comparisons: first, second, metric, verdict"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1),
    samples: int = typer.Option(3, "--samples"),
    per_delta: int = typer.Option(100, "--per-delta", help="pairs per score gap"),
    seed: int = typer.Option(0, "--seed"),
    dynamic: bool = typer.Option(True, "--dynamic/--no-dynamic", help="also compare dynamic prompting (needs human scores)"),
    retrieval: str = typer.Option("auto", "--retrieval", help="auto | sentence-transformers | tfidf"),
    price_in: Optional[float] = typer.Option(None, "--price-in", help="USD per 1M prompt tokens"),
    price_out: Optional[float] = typer.Option(None, "--price-out", help="USD per 1M completion tokens"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: int = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/nle"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Rating, scales, pairwise comparison, dynamic prompting and cost accounting of the NLE study."""
    from judgelab.recipes.nle import run_nle

    run_nle(dataset, data, out, judge, human, n_items, samples, per_delta, seed, dynamic, price_in, price_out, retrieval,
            defaults={"base_url": base_url, "api_key": api_key, "concurrency": concurrency}, progress=not quiet,
            human_comparisons=human_comparisons)


@app.command()
def scales(
    judge_scores: Path = typer.Option(..., "--judge", help="tidy ratings of a judge (ratings.csv); samples are averaged"),
    human: Path = typer.Option(..., "--human", help="tidy human ratings, or a CSV with id and one column per metric"),
    binary: str = typer.Option("4", "--binary-edges", help="edge of the binary bins (a value on an edge goes up)"),
    ternary: str = typer.Option("3,5", "--ternary-edges", help="edges of the ternary bins"),
    figure_dir: Optional[Path] = typer.Option(None, "--figures", help="folder for scatter plots against y = x"),
    fmt: str = FormatOpt,
) -> None:
    """Agreement at binary, ternary and full-scale granularity: weighted F1, RMSE, majority baseline, Pearson, Spearman."""
    import pandas as pd

    from judgelab.ratings import read_ratings
    from judgelab.report.output import emit
    from judgelab.stats import correlate
    from judgelab.stats.scales import scale_report

    def table(path: Path) -> pd.DataFrame:
        try:
            df = read_ratings(path)
            df = df[df["status"] == "ok"]
            return df.groupby(["item_id", "criterion"])["score"].mean().unstack()
        except JudgelabError:
            from judgelab.datasets.items import read_records

            raw = pd.DataFrame(read_records(path))
            if "id" not in raw.columns:
                raise JudgelabError(f"{path}: neither a tidy ratings file nor a table with an id column") from None
            raw["id"] = raw["id"].astype(str)
            return raw.set_index("id").apply(pd.to_numeric, errors="coerce").groupby(level=0).mean()

    j, h = table(judge_scores), table(human)
    common = [c for c in j.columns if c in h.columns]
    if not common:
        raise JudgelabError(f"no metric in common: judge has {', '.join(map(str, j.columns))}; humans have {', '.join(map(str, h.columns))}")
    try:
        edges = {"binary": [float(x) for x in binary.split(",")], "ternary": [float(x) for x in ternary.split(",")], "7-way": None}
    except ValueError:
        raise JudgelabError("bin edges are numbers separated by commas, e.g. --ternary-edges 3,5") from None
    rows = []
    for metric in common:
        joined = pd.concat([h[metric].rename("h"), j[metric].rename("j")], axis=1, join="inner").dropna()
        for granularity, e in edges.items():
            rows.append({"metric": metric, **scale_report(joined["h"], joined["j"], granularity, e)})
        rows.append({"metric": metric, "granularity": "pearson", "n": len(joined), "f1": correlate(joined["h"], joined["j"], "pearson").r})
        rows.append({"metric": metric, "granularity": "spearman", "n": len(joined), "f1": correlate(joined["h"], joined["j"], "spearman").r})
        if figure_dir is not None:
            from judgelab.report.figures import scatter_identity

            figure_dir.mkdir(parents=True, exist_ok=True)
            scatter_identity(joined["j"], joined["h"], figure_dir / f"scatter_{metric}.png", f"{metric}: judge vs human", "judge", "human")
    emit(pd.DataFrame(rows), fmt, title="agreement by granularity (f1 column holds r for pearson/spearman)" if fmt == "table" else None)


@app.command()
def pairwise(
    dataset: str = typer.Option("esnli", "--dataset", help="esnli | liar | latent-hatred"),
    data: Path = typer.Option(..., "--data"),
    human: Path = typer.Option(..., "--human", help="human scores: id, informativeness, clarity"),
    human_comparisons: Optional[Path] = typer.Option(None, "--human-comparisons", help="a second set of human comparisons: first, second, metric, verdict"),
    judge: str = JudgeSpecOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1),
    per_delta: int = typer.Option(100, "--per-delta"), seed: int = typer.Option(0, "--seed"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: int = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/pairwise"), "--out"),
    quiet: bool = typer.Option(False, "--quiet"),
) -> None:
    """Pairwise comparison by score gap Δ in both orders: F1 per Δ, position consistency, Bradley–Terry."""
    from judgelab.recipes.common import RecipeOutput
    from judgelab.recipes.nle import load_human_scores, load_nle_items, pairwise_study
    from judgelab.store import Store

    items = {i.item_id: i for i in load_nle_items(data, dataset, n_items)}
    output = RecipeOutput(out, f"pairwise comparison: {dataset}")
    with Store(out / "store.sqlite") as store:
        pairwise_study(items, load_human_scores(human), dataset, judge, store, f"{judge}@nle-{dataset}", per_delta, seed, output,
                       {"base_url": base_url, "api_key": api_key, "concurrency": concurrency}, not quiet, human_comparisons)
    output.finish()


@recipe_app.command("user-study")
def recipe_user_study(
    annotations: Path = typer.Option(..., "--annotations", help="error annotations in the layout of HANNA's user_study.csv"),
    fmt: str = FormatOpt,
) -> None:
    """Per-category error rates and Gwet's AC1 of explanation annotations."""
    from judgelab.recipes.explanations import error_annotations
    from judgelab.report.output import emit

    emit(error_annotations(annotations), fmt, title="explanation errors: rates and Gwet's AC1" if fmt == "table" else None)


def _run_cli(entry: Callable[..., object]) -> None:
    try:
        entry(standalone_mode=False)
    except JudgelabError as exc:
        typer.echo(f"judgelab: error: {exc}", err=True)
        sys.exit(2)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        typer.echo(f"judgelab: error: invalid value for {where}: {first['msg']}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("judgelab: interrupted; finished judgments are kept in the store — run the same command to resume", err=True)
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors, then anything unexpected
        import os

        import click

        if isinstance(exc, click.ClickException):
            typer.echo(f"judgelab: error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        if os.environ.get("JUDGELAB_DEBUG"):
            raise
        typer.echo(f"judgelab: internal error: {type(exc).__name__}: {exc} (set JUDGELAB_DEBUG=1 for the traceback; "
                   "finished judgments are kept in the store)", err=True)
        sys.exit(1)


def main() -> None:
    _run_cli(typer.main.get_command(app))


if __name__ == "__main__":  # pragma: no cover
    main()
