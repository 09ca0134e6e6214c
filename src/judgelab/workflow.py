"""End-to-end workflows behind the commands: build a judge, run, store, export, summarise."""
from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.datasets.items import Item, load_items
from judgelab.errors import JudgelabError
from judgelab.models import make_judge
from judgelab.report.terminal import console, print_table, progress_bar
from judgelab.run import RunSpec, RunStats, Runner, run_to_end
from judgelab.store import Store, write_table
from judgelab.summary import compare_systems, summarize

__all__ = ["rate_items", "run_demo", "demo_items", "execute"]


def _prepare_out(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgelabError(f"cannot create output folder {out}: {exc.strerror}") from None
    return out


def execute(items: list[Item], spec: RunSpec, backend, store: Store, progress: bool = True, label: str = "judging",
            template=None) -> RunStats:
    """Run one spec with a progress bar; the backend is closed afterwards."""
    runner = Runner(backend, store, spec, template=template)
    total = len(items) * runner.outputs_per_sample * runner.samples
    with progress_bar(total, label, enabled=progress) as advance:
        runner._on_progress = advance
        return run_to_end(runner, items)


def rate_items(items: list[Item], spec: RunSpec, judge: str, judge_kwargs: dict[str, Any], out: Path,
               ratings_format: str = "csv", compare: tuple[str, str] | None = None, progress: bool = True) -> pd.DataFrame:
    """The ``judgelab rate`` workflow. Returns the summary table."""
    out = _prepare_out(out)
    backend = make_judge(judge, **judge_kwargs)
    with Store(out / "store.sqlite") as store:
        try:
            stats = execute(items, spec, backend, store, progress)
        finally:
            ratings = store.ratings()
            write_table(ratings, out / f"ratings.{ratings_format}")
    summary = summarize(ratings)
    write_table(summary, out / "summary.csv")
    print_table(summary.drop(columns=["rater"]), title=f"Ratings by {ratings['rater'].iloc[0] if len(ratings) else judge}")
    if compare:
        welch = compare_systems(ratings, *compare)
        write_table(welch, out / "welch.csv")
        print_table(welch.drop(columns=["rater"]), title=f"Welch's t-test, {compare[0]} vs {compare[1]} (per-item means)")
    _print_stats(stats)
    console.print(f"ratings: {out / f'ratings.{ratings_format}'}   summary: {out / 'summary.csv'}   store: {out / 'store.sqlite'}")
    return summary


def _print_stats(stats: RunStats) -> None:
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(stats.statuses.items())) or "none new"
    console.print(
        f"judgments: {stats.total} ({stats.already_done} already in the store); calls made {stats.calls_made}, "
        f"cache hits {stats.cache_hits}; refusals regenerated {stats.refusals_regenerated}; statuses: {statuses}; "
        f"tokens in/out {stats.prompt_tokens}/{stats.completion_tokens}; wall {stats.wall_s:.1f} s"
    )


def demo_items(n_items: int = 12) -> list[Item]:  # used by the benchmarks and tests
    """The shipped demo paragraphs (written for judgelab)."""
    path = Path(str(resources.files("judgelab.datasets") / "demo" / "paragraphs.jsonl"))
    return load_items(path, limit=n_items)


def run_demo(n_items: int = 8, out: Path = Path("judgelab-runs/demo"), model_path: str | None = None,
             progress: bool = True) -> dict:
    """DHP on the shipped summarization demo set with the embedded judge (rule-based perturbations)."""
    from judgelab.dhp.workflow import run_dhp

    console.print("judgelab demo: can the embedded judge (Gemma 3 270M via llama.cpp, offline) tell reference summaries "
                  "from damaged copies? DHP benchmark (Wang et al.), summarization, rule-based perturbations, "
                  "scores read from next-token log-probabilities.")
    judge = f"local:{model_path}" if model_path else "local"
    reports = run_dhp("summarization", [judge], out, n_items=n_items, progress=progress)
    rep = next(iter(reports.values()))
    verdict = "discerns" if rep["D_avg"] > 1 else "does not reliably discern"
    console.print(f"On average the embedded judge {verdict} damaged summaries (D_avg = {rep['D_avg']:.2f}; D > 1 means "
                  f"p < 0.05); its weakest case has D_min = {rep['D_min']:.2f}.")
    return reports
