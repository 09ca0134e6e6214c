"""End-to-end workflows behind the commands: build a judge, run, store, export, summarise."""
from __future__ import annotations

import math
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.datasets.items import Item, load_items
from judgelab.errors import JudgelabError, TooManyFailures
from judgelab.manifest import write_manifest
from judgelab.models import make_judge
from judgelab.report.terminal import console, print_table, progress_bar
from judgelab.run import RunSpec, RunStats, Runner, run_to_end
from judgelab.store import Store, write_table
from judgelab.summary import compare_systems, summarize

__all__ = ["rate_items", "run_demo", "demo_items", "execute", "failure_report", "check_failure_rate", "clear_outputs"]


def _prepare_out(out: Path) -> Path:
    from judgelab.paths import output_folder

    return output_folder(out)


def execute(items: list[Item], spec: RunSpec, backend, store: Store, progress: bool = True, label: str = "judging",
            template=None) -> RunStats:
    """Run one spec with a progress bar; the backend is closed afterwards. ``stats.rater`` is the run's label."""
    runner = Runner(backend, store, spec, template=template)
    total = len(items) * runner.outputs_per_sample * runner.samples
    with progress_bar(total, label, enabled=progress) as advance:
        runner._on_progress = advance
        return run_to_end(runner, items)


#: Output files of ``judgelab rate``; removed at the start of a run so none is left stale.
RATE_OUTPUTS = ("ratings.csv", "ratings.jsonl", "ratings.parquet", "summary.csv", "welch.csv", "run.json", "report.html")


def clear_outputs(out: Path, names: tuple[str, ...]) -> None:
    """Remove a command's earlier output files from ``out`` (never the store)."""
    for name in names:
        try:
            (out / name).unlink(missing_ok=True)
        except OSError as exc:
            raise JudgelabError(f"cannot replace {out / name}: {exc.strerror or exc}") from None


def failure_report(ratings: pd.DataFrame, examples: int = 3) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Counts of judgments by status and up to ``examples`` (status, raw answer) pairs of failures."""
    counts = {str(k): int(v) for k, v in ratings["status"].value_counts().sort_index().items()}
    failed = ratings[ratings["status"] != "ok"]
    shown = [(str(r.status), "" if r.raw is None or (isinstance(r.raw, float) and math.isnan(r.raw)) else str(r.raw))
             for r in failed.head(examples).itertuples()]
    return counts, shown


#: The share of failed judgments above which a command ends with exit status 3 (``--max-failure-rate``).
DEFAULT_MAX_FAILURE_RATE = 0.5


def check_failure_rate(ratings: pd.DataFrame, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
                       what: str | None = None) -> None:
    """Raise :class:`TooManyFailures` when, for any judge rater in ``ratings`` (human raters are not
    judged), the share of failed judgments exceeds ``max_failure_rate``."""
    if not len(ratings):
        return
    judged = ratings[~ratings["rater"].astype(str).str.startswith("human")]
    for rater, group in judged.groupby("rater", sort=True):
        failed = int((group["status"] != "ok").sum())
        share = failed / len(group)
        if share > max_failure_rate:
            raise TooManyFailures(f"{failed} of {len(group)} judgments of {what or rater} failed ({share:.0%} > "
                                  f"--max-failure-rate {max_failure_rate:.0%}); see the failure counts above")


def print_failures(ratings: pd.DataFrame) -> None:
    counts, shown = failure_report(ratings)
    total = sum(counts.values())
    ok = counts.get("ok", 0)
    line = ", ".join(f"{k} {v}" for k, v in counts.items())
    console.print(f"statuses of {total} judgments: {line}" + ("" if ok == total else f" — {total - ok} failed"))
    for status, raw in shown:
        text = " ".join(raw.split())
        console.print(f"  example {status}: {text[:200]!r}" + (" …" if len(text) > 200 else ""))


def rate_items(items: list[Item], spec: RunSpec, judge: str, judge_kwargs: dict[str, Any], out: Path,
               ratings_format: str = "csv", compare: tuple[str, str] | None = None, progress: bool = True,
               all_runs: bool = False, max_failure_rate: float = 0.5) -> pd.DataFrame:
    """The ``judgelab rate`` workflow. Returns the summary table.

    Writes ratings (this run's rater only, unless ``all_runs``), summary, Welch (with
    ``compare``) and ``run.json`` into ``out``; an interrupted run writes none of them
    (the store keeps every finished judgment). Ends with :class:`TooManyFailures` when
    more than ``max_failure_rate`` of the judgments failed.
    """
    started = time.time()
    out = _prepare_out(out)
    if compare:
        systems = {i.system for i in items}
        unknown = [s for s in compare if s not in systems]
        if unknown:
            raise JudgelabError(f"--compare names unknown system(s) {', '.join(map(repr, unknown))}; the items have "
                                f"{', '.join(map(repr, sorted(systems)))}")
    with Store(out / "store.sqlite") as store:
        clear_outputs(out, RATE_OUTPUTS)
        backend = make_judge(judge, **judge_kwargs)
        stats = execute(items, spec, backend, store, progress)
        ratings = store.ratings() if all_runs else store.ratings(rater=stats.rater)
        runs = store.runs()
    ratings_path = write_table(ratings, out / f"ratings.{ratings_format}")
    summary = summarize(ratings)
    write_table(summary, out / "summary.csv")
    print_table(summary.drop(columns=["rater"]), title=f"Ratings by {stats.rater}")
    if compare:
        welch = compare_systems(ratings, *compare)
        write_table(welch, out / "welch.csv")
        print_table(welch.drop(columns=["rater"]), title=f"Welch's t-test, {compare[0]} vs {compare[1]} (per-item means)")
    _print_stats(stats)
    for note in getattr(backend, "notes", []):
        console.print(f"note: {note}")
    print_failures(ratings[ratings["rater"] == stats.rater])
    write_manifest(out, "rate", [{
        "rater": stats.rater, "settings": runs.get(stats.rater), "transport": getattr(backend, "transport", None),
        "cpu_path": getattr(getattr(backend, "cpu_path", None), "name", None),
        "max_tokens_param": getattr(backend, "max_tokens_param", None), "backend_notes": list(getattr(backend, "notes", [])),
        "judgments": stats.total, "already_in_store": stats.already_done, "calls_made": stats.calls_made,
        "statuses": failure_report(ratings[ratings["rater"] == stats.rater])[0],
        "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens, "wall_s": round(stats.wall_s, 3),
    }], extra={"items": len(items), "outputs": sorted(p.name for p in out.iterdir() if p.name in RATE_OUTPUTS)},
        started=started)
    console.print(f"ratings: {ratings_path}   summary: {out / 'summary.csv'}   manifest: {out / 'run.json'}   "
                  f"store: {out / 'store.sqlite'}")
    report_folder(out)
    check_failure_rate(ratings[ratings["rater"] == stats.rater], max_failure_rate, stats.rater)
    return summary


def report_folder(out: Path) -> Path | None:
    """Write ``out/report.html`` (the self-contained HTML report) and say where; a folder the report
    cannot read is a warning, never a reason to fail the command whose results are already written."""
    from judgelab.report.html import write_report

    import sys

    try:
        path = write_report(out)
    except JudgelabError as exc:
        print(f"judgelab: warning: no HTML report: {exc}", file=sys.stderr)
        return None
    print(f"report: {path}", file=sys.stderr)  # stderr: stdout may carry --format json/csv
    return path


def _print_stats(stats: RunStats) -> None:
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(stats.statuses.items())) or "none new"
    console.print(
        f"run {stats.rater}: judgments {stats.total} ({stats.already_done} already in the store); calls made "
        f"{stats.calls_made}, cache hits {stats.cache_hits}; refusals regenerated {stats.refusals_regenerated}; "
        f"new statuses: {statuses}; tokens in/out {stats.prompt_tokens}/{stats.completion_tokens}; wall {stats.wall_s:.1f} s"
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
