"""The ``judgelab rate`` workflow and what other commands share with it: build the judges, run, store, export.

Library code: it returns typed results and prints nothing (``cli/`` shows them). It imports
no other workflow module (``judgelab.dhp.study`` and ``judgelab.recipes`` import this one),
so there is no import cycle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from judgelab.datasets.items import Item, load_items
from judgelab.errors import JudgelabError
from judgelab.run import RunSpec, RunStats, Runner, run_spec
from judgelab.output import write_html_report
from judgelab.paths import output_folder
from judgelab.preference.pairs import PairSet, verdict_summary as _verdict_summary, verdicts_of as _verdicts_of
from judgelab.rate_outputs import (FailureReport, RateRows, check_failure_rate, failure_lines, failure_report,
                                  report_lines)
from judgelab.store import Store
from judgelab.summary import compare_systems, score_summary, summarize
from judgelab.status import DEFAULT_MAX_FAILURE_RATE

__all__ = ["rate_items", "plan_rate", "JudgePlan", "StudyPlan", "RateResult", "JudgeRun", "demo_items", "failure_report", "FailureReport", "check_failure_rate", "stats_line", "failure_lines",
           "report_lines"]


@dataclass(frozen=True)
class JudgeRun:
    """One judge's run inside ``judgelab rate``: its rater label, counts, tokens and backend notes.

    ``stats`` and ``cost_usd`` are this command's; ``totals`` (:meth:`judgelab.store.Store.run_totals`,
    with ``cost_usd`` at this command's prices) are the rater's calls, tokens and time accumulated over
    its runs that made calls, so a resume answered by the ledger keeps the cost of the judgments.
    """

    judge: str
    rater: str
    stats: RunStats
    notes: tuple[str, ...] = ()
    statuses: dict[str, int] = field(default_factory=dict)
    #: Dollars of the calls made at ``--price-in``/``--price-out`` (None without prices).
    cost_usd: float | None = None
    totals: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """run.json's entry: the totals at the top (``calls_made``, tokens, ``cost_usd``, ``wall_s``), this
        command's own in ``this_run`` (docs/runs-and-stores.md, "What run.json records")."""
        s = self.stats
        this_run = {"calls_made": s.calls_made, "cache_hits": s.cache_hits, "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens, "cost_usd": _round(self.cost_usd), "wall_s": round(s.wall_s, 3)}
        totals = self.totals or {**this_run, "runs_with_calls": int(s.calls_made > 0)}
        return {"judge": self.judge, "rater": self.rater, "judgments": s.total, "already_in_store": s.already_done,
                "asked_again_prompt_changed": s.changed, "asked_again_after_error": s.retried_errors,
                "read_again_by_the_current_parser": s.reparsed,
                "calls_made": totals["calls_made"], "failed_attempts": s.failed_attempts, "cache_hits": s.cache_hits,
                "statuses": dict(self.statuses),
                "retries": dict(s.retries), "prompt_tokens": totals["prompt_tokens"],
                "completion_tokens": totals["completion_tokens"], "cost_usd": _round(totals.get("cost_usd")),
                "wall_s": totals["wall_s"], "runs_with_calls": totals["runs_with_calls"],
                **({"totals_note": totals["totals_note"]} if totals.get("totals_note") else {}),
                "this_run": this_run, "backend_notes": list(self.notes)}


def _round(dollars: float | None) -> float | None:
    return None if dollars is None else round(dollars, 6)


@dataclass(frozen=True)
class RateResult:
    """What ``judgelab rate`` produced: the tables (also written into ``out``) and one :class:`JudgeRun` per judge.

    ``table`` is the compact ratings table of this run's raters (every rater of the store with
    ``all_runs``): the tidy columns :data:`judgelab.table.TIDY_COLUMNS`, ``system``, ``group``,
    ``criterion``, ``rater`` and ``status`` as categories; ``ratings`` (the ratings file's table: every
    column, the answers too) is read from the folder's store when first asked. ``failures`` holds each
    judge's status counts and a few failed answers; ``welch`` is ``None`` without ``compare``; ``files``
    maps each output's role to its path.
    """

    out: Path
    runs: tuple[JudgeRun, ...]
    table: pd.DataFrame
    summary: pd.DataFrame
    welch: pd.DataFrame | None
    compare: tuple[str, str] | None
    files: dict[str, Path]
    #: With pairs: the verdicts table (:mod:`judgelab.preference.verdicts`) and what results.json records of it.
    verdicts: pd.DataFrame | None = None
    verdict_summary: dict[str, Any] | None = None
    #: rater → :class:`FailureReport` of its judgments in this folder.
    failures: dict[str, FailureReport] = field(default_factory=dict)
    #: Which rows of the store the folder holds (None: every row).
    rows: RateRows | None = field(default=None, repr=False, compare=False)

    @property
    def raters(self) -> list[str]:
        return [r.rater for r in self.runs]

    @cached_property
    def ratings(self) -> pd.DataFrame:
        """The ratings table the ratings file holds (:meth:`judgelab.store.Store.ratings`' columns, this run's rows),
        read from ``out/store.sqlite`` when first asked, then kept."""
        rows = self.rows or RateRows(None)
        if rows.raters is not None:  # the rows of the items the compact table holds, whatever the store gained since
            keys = self.table[["system", "item_id"]].drop_duplicates()
            rows = RateRows(rows.raters, lambda: keys.itertuples(index=False, name=None))
        with Store(self.files["store"], read_only=True) as store:
            return rows.open(store).full(store)

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "out": str(self.out), "runs": [r.to_dict() for r in self.runs],
                "files": {k: str(v) for k, v in self.files.items()}}


def rate_items(items: list[Item], runs: list[RunSpec], out: str | Path, ratings_format: str = "csv",
               compare: tuple[str, str] | None = None, progress: bool = True, all_runs: bool = False,
               max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE, price_in: float | None = None, price_out: float | None = None, pairs: PairSet | None = None) -> RateResult:
    """The ``judgelab rate`` workflow: every (judge, spec) pair rates the items into one store.

    Writes ``ratings.<format>`` (this run's raters only, unless ``all_runs``; streamed from the store,
    :mod:`judgelab.rate_outputs`), ``summary.csv``,
    ``welch.csv`` (with ``compare``), ``verdicts.csv`` (with ``pairs``), ``results.json`` (the record: settings and the summary with intervals), ``run.json`` and ``README.md`` into ``out`` (``report.html``
    follows, :func:`finish_rate`). The files are written aside and swapped in at the end, so a run
    that is refused, fails or is interrupted leaves the earlier outputs as they were (the store keeps
    every finished judgment). Prints nothing.

    Args:
        items: the items to rate (:func:`judgelab.datasets.items.load_items`).
        runs: one :class:`judgelab.spec.RunSpec` per judge, e.g. from :meth:`judgelab.runfile.RunFile.run_specs`.
        out: the output folder (a path or its name; created; ``store.sqlite`` in it is the cache and resume point).
        ratings_format: ``csv``, ``jsonl`` or ``parquet``.
        compare: two systems for Welch's t-test on per-item means (Chiang & Lee 2023, §3.3).
        progress: show a progress bar on stderr.
        all_runs: write every run of the store, not only this one.
        max_failure_rate: the share of failed judgments above which :class:`TooManyFailures` is raised
            (after the outputs are written).
        price_in, price_out: USD per 1M prompt / completion tokens: the calls' cost goes into run.json.
        pairs: the :class:`judgelab.preference.pairs.PairSet` whose items these are: their verdicts are written too.

    Returns:
        :class:`RateResult` with the compact ratings table, the summary (:func:`judgelab.summary.summarize`),
        Welch's table, each judge's :class:`JudgeRun` and failures; the whole ratings table on demand.

    Raises:
        JudgelabError: an unknown ``compare`` system, a bad format, an unusable output folder.
        TooManyFailures: too many failed judgments (exit status 3 on the command line).

    Example:
        >>> from judgelab.runfile import RunFile
        >>> spec = RunFile(items="items.jsonl", judge="scripted-test-double:script.json", samples=1)  # doctest: +SKIP
        >>> result = rate_items(spec.load_items(), spec.run_specs(), Path("out"), progress=False)      # doctest: +SKIP
        >>> result.summary[["criterion", "mean"]]                                                      # doctest: +SKIP
    """
    out = Path(out)
    if ratings_format not in {"csv", "jsonl", "parquet"}:
        raise JudgelabError(f"unknown --format {ratings_format!r}: csv, jsonl or parquet")
    if compare:
        systems = {i.system for i in items}
        unknown = [s for s in compare if s not in systems]
        if unknown:
            raise JudgelabError(f"--compare names unknown system(s) {', '.join(map(repr, unknown))}; the items have "
                                f"{', '.join(map(repr, sorted(systems)))}")
    from judgelab.output import OutputFolder

    backends = [spec.judge.build() for spec in runs]  # a judge that cannot be built writes nothing
    done: list[JudgeRun] = []
    with Store(output_folder(out) / "store.sqlite") as store, OutputFolder(out, "judgelab rate", command="rate") as output:
        for spec, backend in zip(runs, backends):
            stats = run_spec(spec, items, store, backend=backend, progress=progress)
            done.append(JudgeRun(spec.judge.spec, stats.rater, stats, backend.notes))
        raters = [r.rater for r in done]
        rows = RateRows(None, None) if all_runs else RateRows(tuple(raters), lambda: ((i.system, i.item_id) for i in items))
        rows = rows.open(store)
        table = rows.compact(store)
        failures = rows.failures(store, table, raters)
        settings = store.runs()
        done = [JudgeRun(r.judge, r.rater, r.stats, r.notes, failures[r.rater].counts,
                         _cost(r.stats.prompt_tokens, r.stats.completion_tokens, price_in, price_out),
                         _with_cost(store.run_totals(r.rater), price_in, price_out)) for r in done]
        rows.write(store, output.file(f"ratings.{ratings_format}", "the tidy ratings table: one row per item × criterion × rater × sample", table="ratings"))
        summary = output.table(summarize(table), "summary", "mean, SD, n and failures per rater, system and criterion",
                               show=False)
        welch = None if not compare else output.table(compare_systems(table, *compare), "welch",
                                                      "Welch's t-test between the two --compare systems (per-item means)", show=False)
        verdicts = None if pairs is None else output.table(  # pair runs are small: their verdicts read the whole table
            _verdicts_of(rows.full(store), pairs), "verdicts", "the verdicts table: one row per pair as shown × criterion × rater × sample", show=False)
        judged = None if verdicts is None or pairs is None else _verdict_summary(verdicts, pairs)
        output.record("rate", settings={"ratings_format": ratings_format, "compare": list(compare) if compare else None,
                                        "all_runs": all_runs, "max_failure_rate": max_failure_rate,
                                        "prices_usd_per_million_tokens": {"in": price_in, "out": price_out}},
                      results={"items": len(items), "raters": raters, "summary": score_summary(table, summary).to_record(),
                               **({"verdicts": judged} if judged else {})})
        output.finish(runs=[{**r.to_dict(), "settings": settings.get(r.rater), **b.run_facts()} for r, b in zip(done, backends)],
                      extra={"items": len(items), "prices_usd_per_million_tokens": {"in": price_in, "out": price_out}},
                      report=False)
    files = {"ratings": out / f"ratings.{ratings_format}", "summary": out / "summary.csv",
             **{k: out / f"{k}.csv" for k, t in (("welch", welch), ("verdicts", verdicts)) if t is not None}}
    files.update(readme=out / "README.md", manifest=out / "run.json", record=out / "results.json", store=out / "store.sqlite")
    return RateResult(out, tuple(done), table, summary, welch, compare, files, verdicts, judged, failures, rows)


def _cost(prompt_tokens: int | None, completion_tokens: int | None, price_in: float | None,
          price_out: float | None) -> float | None:
    """Dollars of calls' tokens at prices per million tokens (None without any price or tokens)."""
    if (price_in is None and price_out is None) or prompt_tokens is None or completion_tokens is None:
        return None
    return prompt_tokens * (price_in or 0.0) / 1e6 + completion_tokens * (price_out or 0.0) / 1e6


def _with_cost(totals: dict[str, Any], price_in: float | None, price_out: float | None) -> dict[str, Any]:
    """A rater's totals (:meth:`judgelab.store.Store.run_totals`) with their ``cost_usd`` at these prices."""
    return {**totals, "cost_usd": _cost(totals["prompt_tokens"], totals["completion_tokens"], price_in, price_out)}


@dataclass(frozen=True)
class JudgePlan:
    """One judge's planned run (``--dry-run``): the :class:`judgelab.run.RunPlan` and a token estimate.

    ``prompt_tokens`` counts the uncached calls' messages: with the embedded judge's own tokenizer
    (``token_method == "tokenizer"``; the chat template's few tokens are not counted), else
    characters / 4 (``"chars/4"``, an estimate). ``max_completion_tokens`` is an upper bound:
    ``max_tokens`` for every answer asked (0 for log-probability scoring, which generates nothing).
    ``calls_at_most`` is the calls made if the endpoint ignores ``n`` (each sample a call of its own),
    when it is not yet known whether it does (:func:`judgelab.models.capabilities.calls_at_most`); None
    when ``calls`` is exact.
    """

    judge: str
    model_id: str
    stage: str
    plan: Any
    prompt_tokens: int
    token_method: str
    max_completion_tokens: int
    calls_at_most: int | None = None

    def cost_usd(self, price_in: float | None, price_out: float | None) -> tuple[float | None, float | None]:
        """(prompt dollars, at most completion dollars) at prices per million tokens."""
        return (None if price_in is None else self.prompt_tokens * price_in / 1e6,
                None if price_out is None else self.max_completion_tokens * price_out / 1e6)

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        return {"judge": self.judge, "stage": self.stage, "rater": p.rater, "calls": p.n_calls,
                "cached_calls": len(p.calls) - p.n_calls, "judgments": p.judgments, "already_done": p.already_done,
                "prompt_changed": p.changed, "after_error": p.retried_errors, "reparsed": p.reparsed,
                "calls_at_most": self.calls_at_most,
                "prompt_tokens": self.prompt_tokens, "token_method": self.token_method,
                "max_completion_tokens": self.max_completion_tokens}


@dataclass(frozen=True)
class StudyPlan:
    """The dry run of a study (a recipe or DHP): what every planned stage will ask, and what cannot be planned.

    Attributes:
        judges: one :class:`JudgePlan` per judge and stage, in the order the study runs them.
        later: lines naming the stages that cannot be planned before earlier answers exist (empty when
            every call is known in advance).
    """

    judges: tuple[JudgePlan, ...]
    later: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"judges": [JudgePlan.to_dict(), ...], "later": [...]}``."""
        return {"judges": [p.to_dict() for p in self.judges], "later": list(self.later)}


def plan_rate(items: list[Item], runs: list[RunSpec], out: Path | None = None, template=None,
              stage: str = "rating") -> list[JudgePlan]:
    """Plan every run over ``items`` without calling a model or writing anything.

    Calls already in ``out/store.sqlite`` (opened read-only when it exists) count as cached.

    Args:
        items: the items; runs: one :class:`RunSpec` per judge; out: the output folder of a later run;
        template: a loaded template (else ``spec.template``); stage: a name for the stage (recipes plan several).

    Returns:
        One :class:`JudgePlan` per run.

    Example:
        >>> from judgelab.runfile import RunFile
        >>> spec = RunFile(items="items.jsonl", judge="openai:gpt-4o-mini")   # doctest: +SKIP
        >>> [p.plan.n_calls for p in plan_rate(spec.load_items(), spec.run_specs())]   # doctest: +SKIP
    """
    import asyncio

    from judgelab.models.capabilities import calls_at_most

    existing = None if out is None else Path(out) / "store.sqlite"
    plans = []
    for spec in runs:
        backend = spec.judge.build()
        try:
            with Store(existing, read_only=True) if existing is not None and existing.is_file() else Store(":memory:") as store:
                runner = Runner(backend, store, spec, template=template)
                plan = runner.plan(items)
            uncached = [c for c in plan.calls if not c.cached]
            counts = [backend.count_prompt_tokens(c.messages) for c in uncached]
            if counts and all(n is not None for n in counts):  # the judge's own tokenizer (the embedded judge)
                prompt_tokens = sum(n for n in counts if n is not None)
                method = "tokenizer"
            else:
                prompt_tokens = round(sum(c.prompt_chars() for c in uncached) / 4)
                method = "chars/4"
            completion = 0 if runner.spec.score_mode == "logprob" else sum(c.n for c in uncached) * spec.sampling.max_tokens
            plans.append(JudgePlan(spec.judge.spec, backend.model_id, stage, plan, prompt_tokens, method, completion,
                                   calls_at_most(plan.calls, backend.learned)))
        finally:
            asyncio.run(backend.aclose())
    return plans


def finish_rate(result: RateResult, max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE,
                show: Callable[[str], None] | None = None) -> Path | None:
    """After the outputs are shown: the HTML report (its line passed to ``show``), then
    :class:`TooManyFailures` when a judge failed too often. Returns the report's path."""
    path, line = write_html_report(result.out)
    if show is not None:
        show(line)
    for judge_run in result.runs:
        check_failure_rate(result.table[result.table["rater"] == judge_run.rater], max_failure_rate, judge_run.rater)
    return path


def stats_line(stats: RunStats) -> str:
    """One line on a finished run: judgments, calls, cache hits, statuses, tokens, time."""
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(stats.statuses.items())) or "none new"
    return (
        f"run {stats.rater}: judgments {stats.total} ({stats.already_done} already in the store"
        + (f", {stats.changed} asked again because their prompt changed" if stats.changed else "")
        + (f", {stats.retried_errors} asked again after an error" if stats.retried_errors else "")
        + (f", {stats.reparsed} read again by the current answer parser" if stats.reparsed else "")
        + f"); calls made {stats.calls_made}, cache hits {stats.cache_hits}; "
        + (f"retries: {_retry_words(stats.retries)}; " if stats.retries else "")
        + f"refusals regenerated {stats.refusals_regenerated}; "
        f"new statuses: {statuses}; tokens in/out {stats.prompt_tokens}/{stats.completion_tokens}; wall {stats.wall_s:.1f} s"
    )


def _retry_words(retries: dict[str, int]) -> str:
    """``{"rate_limited": 9, "gave_up": 1}`` → ``rate limited 9, gave up 1``."""
    return ", ".join(f"{reason.replace('_', ' ')} {n}" for reason, n in sorted(retries.items()))


def demo_items(n_items: int = 12) -> list[Item]:  # used by the benchmarks and tests
    """The shipped demo paragraphs (written for judgelab)."""
    path = Path(str(resources.files("judgelab.datasets") / "demo" / "paragraphs.jsonl"))
    return load_items(path, limit=n_items)
