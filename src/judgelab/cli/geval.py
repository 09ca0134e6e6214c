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
    data: str = typer.Option(..., "--data", help="summeval | topical-chat (from ../shared/data or $JUDGELAB_SHARED_DATA) | PATH"),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="summeval | topical-chat: the dataset of a --data PATH (default: from the file type)"),
    judges: list[str] = typer.Option(["local"], "--judge", help="local[:GGUF] | openai:MODEL[@BASE_URL] | scripted-test-double:FILE; repeatable"),
    n_items: Optional[int] = typer.Option(None, "--n-items", min=1, help="the first N documents (dialogue contexts), each with all its systems"),
    score: Optional[Score] = ScoreOpt,
    samples: int = typer.Option(1, "--samples", min=1, help="answers per item in parsed mode (averaged)"),
    n_resamples: int = typer.Option(999, "--n-resamples", min=0, help="bootstrap resamples of documents for the CIs (0: none)"),
    seed: int = typer.Option(0, "--seed", help="bootstrap and sampling seed"),
    base_url: Optional[str] = BaseUrlOpt, api_key: Optional[str] = ApiKeyOpt, concurrency: int = ConcurrencyOpt,
    out: Path = typer.Option(Path("judgelab-runs/geval"), "--out"),
    quiet: bool = typer.Option(False, "--quiet", help="no progress bars"), max_failure_rate: float = MaxFailureRateOpt,
    dry_run: bool = DryRunOpt, price_in: Optional[float] = PriceInOpt, price_out: Optional[float] = PriceOutOpt,
) -> None:
    """Summary-level and system-level Spearman/Kendall of judges against SummEval's or Topical-Chat's human means (G-Eval)."""
    from judgelab.recipes.geval import plan_geval, run_geval

    judges = judge_specs(judges)
    defaults = judge_options(base_url=base_url, api_key=api_key, concurrency=concurrency)
    if dry_run:
        plan = plan_geval(data, judges, dataset=dataset, n_items=n_items, score=score, samples=samples,
                                  seed=seed, options=defaults, out=out)
        show_plans(plan.judges, price_in, price_out, plan.later)
        return
    run_geval(data, out, judges, dataset=dataset, n_items=n_items, score=score, samples=samples, n_resamples=n_resamples,
              seed=seed, options=defaults, progress=not quiet, display=TerminalDisplay(),
              max_failure_rate=max_failure_rate)
