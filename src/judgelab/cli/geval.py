"""`judgelab recipe geval`: G-Eval meta-evaluation on SummEval and Topical-Chat."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.choices import Score
from judgelab.cli.common import (
    ApiKeyOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    DryRunOpt,
    JudgeOpt,
    QuietOpt,
    MaxFailureRateOpt,
    PriceInOpt,
    PriceOutOpt,
    ScoreOpt,
    TerminalDisplay,
    judge_options,
    judge_specs,
    show_plans,
)
from judgelab.cli.recipes import recipe_app


@recipe_app.command("geval")
def recipe_geval(
    dataset: Optional[str] = typer.Option(None, "--dataset", help="summeval | topical-chat: the data set (a name, not "
                                          "a file): read from ../shared/data or $JUDGELAB_SHARED_DATA, or the layout "
                                          "of --items (default: from its file type)"),
    items: Optional[Path] = typer.Option(None, "--items", help="the data set's file, when not in the shared data "
                                         "folder: summeval_expert_means.jsonl or topical_chat.json"),
    judges: list[str] = JudgeOpt,
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="the first N documents (dialogue contexts), each with all its systems"),
    score: Optional[Score] = ScoreOpt,
    samples: int = typer.Option(1, "--samples", min=1, help="answers per item in parsed mode (averaged)"),
    n_resamples: int = typer.Option(999, "--n-resamples", min=0, help="bootstrap resamples of documents for the CIs (0: none)"),
    seed: int = typer.Option(0, "--seed", help="bootstrap and sampling seed"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: Optional[int] = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/geval"), "--out", help="output folder: correlations, ratings, "
                             "README.md, run.json, store.sqlite, report.html"),
    quiet: bool = QuietOpt, max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Summary-level and system-level Spearman/Kendall of judges against SummEval's or Topical-Chat's human means (G-Eval)."""
    from judgelab.recipes.geval import plan_geval, run_geval

    judges = judge_specs(judges)
    data = _data(dataset, items)
    if items is None:
        dataset = None  # the name is the data: resolve_data reads it from the shared data folder
    defaults = judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency)
    if dry_run:
        plan = plan_geval(data, judges, dataset=dataset, n_items=n_items, score=score, samples=samples,
                                  seed=seed, options=defaults, out=out)
        show_plans(plan.judges, price_in, price_out, plan.later)
        return
    run_geval(data, out, judges, dataset=dataset, n_items=n_items, score=score, samples=samples, n_resamples=n_resamples,
              seed=seed, options=defaults, progress=not quiet, display=TerminalDisplay(),
              max_failure_rate=max_failure_rate)


def _data(dataset: Optional[str], items: Optional[Path]) -> "str | Path":
    """``--dataset NAME`` (from the shared data folder) or ``--items FILE`` (its layout from ``--dataset`` or the
    file type): what :func:`judgelab.recipes.geval.run_geval` takes as ``data``."""
    if items is not None:
        return items
    if dataset is None:
        from judgelab.errors import JudgelabError

        raise JudgelabError("recipe geval needs --dataset summeval|topical-chat (the shared data folder's file) "
                            "or --items FILE")
    return dataset
