"""Recipe: the NLE explanation-quality study (nle-quality-rating-scales), end to end.

1. Rating (§3.2.2): informativeness and clarity (1-7) in one call with the dataset's prompt
   (tables 10-12), three samples per item, averaged.
2. Scales (§4, tables 3-5, figure 1): binary / ternary / 7-way weighted F1 and RMSE with the
   majority baseline; Pearson and Spearman; scatter plots against y = x.
3. Pairwise comparison (§5, figure 2, tables 7-9): pairs by human score gap Δ, asked in both
   orders (table 13 prompt); F1 per Δ, position consistency, Bradley–Terry scores vs humans.
4. Dynamic prompting (§6, table 6, figure 3): 50:50 split; each test item gets its nearest pool
   item (with its human scores) as the example; vanilla vs dynamic on the test half.
5. Cost and time (table 2): wall time, seconds per item, tokens, money with given prices.

Without human scores only the judge-side parts run; the others say why they were skipped.
"""
from __future__ import annotations

import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgelab.summary import judges_summary
from judgelab.datasets.items import Item
from judgelab.datasets.readers import parse_score, read_records, record_columns
from judgelab.errors import JudgelabError
from judgelab.raters import judge as judge_rater, with_stage, with_variant
from judgelab.pairwise import bradley_terry, f1_by_delta, position_consistency, sample_pairs
from judgelab.prompts import load_template
from judgelab.output import OutputFolder
from judgelab.recipes.common import RecipeResult, finish_recipe, judge_run
from judgelab.retrieve import Retriever
from judgelab.stats import correlate
from judgelab.stats.scales import scale_table
from judgelab.store import Store
from judgelab.status import DEFAULT_MAX_FAILURE_RATE, Status
from judgelab.spec import JudgeOptions

if TYPE_CHECKING:
    from judgelab.rate import StudyPlan

__all__ = ["DATASETS", "load_nle_items", "run_nle", "plan_nle", "pairwise_study", "run_pairwise", "load_human_scores"]

METRICS = ("informativeness", "clarity")
#: Source columns of the shared NLE inputs → template fields.
DATASETS: dict[str, dict[str, str]] = {
    "esnli": {"premise": "Sentence1", "hypothesis": "Sentence2", "relationship": "gold_label", "text": "Explanation_1"},
    "liar": {"statement": "statement", "label": "label", "speaker": "speaker", "context": "context", "text": "justification"},
    "latent-hatred": {"post": "post", "text": "implied statement"},
}


def load_nle_items(path: Path, dataset: str, limit: int | None = None) -> list[Item]:
    """The explanations of one NLE dataset's CSV (e-SNLI, LIAR-PLUS, Latent Hatred) as items.

    Args:
        path: the dataset's CSV; dataset: ``esnli``, ``liar`` or ``latent-hatred``;
        limit: the first N rows.

    Returns:
        One item per explanation, its input fields in ``context``/``extra`` as the template needs.
    """
    if dataset not in DATASETS:
        raise JudgelabError(f"unknown NLE dataset {dataset!r}: {', '.join(DATASETS)}")
    mapping = DATASETS[dataset]
    rows = read_records(path)
    items = []
    for n, row in enumerate(rows):
        missing = [src for src in mapping.values() if row.get(src) is None]
        if missing:
            raise JudgelabError(f"{path}: row {n + 1} ({rows.where(n)}) has no column {missing[0]!r} for dataset {dataset!r}")
        fields = {dst: str(row[src]).strip() for dst, src in mapping.items()}
        if dataset == "latent-hatred":  # table 1: the explanation is built from the implied statement
            fields["text"] = f"The post is implicitly hateful because it implies that {fields['text']}."
        item_id = str(row.get("id", n))
        text = fields.pop("text")
        items.append(Item(item_id, text, "explanation", None, fields.get("context"), fields))
        if limit is not None and len(items) >= limit:
            break
    return items


def load_human_scores(path: Path | None) -> pd.DataFrame | None:
    """Human scores: columns id, informativeness, clarity; every score a finite number; rows per rater are averaged."""
    if path is None:
        return None
    records = read_records(path)
    columns = record_columns(records)
    missing = [c for c in ("id", *METRICS) if c not in columns]
    if missing:
        raise JudgelabError(f"{path}: human scores need columns id, informativeness, clarity (missing {missing[0]!r})")
    rows = []
    for i, record in enumerate(records):
        row: dict[str, Any] = {"id": str(record.get("id"))}
        for metric in METRICS:
            value = parse_score(record.get(metric), f"{path}: {records.where(i)}, column {metric!r}")
            if value is None:
                raise JudgelabError(f"{path}: {records.where(i)}: item {row['id']!r} has no {metric} score")
            row[metric] = value
        rows.append(row)
    return pd.DataFrame(rows, columns=["id", *METRICS]).groupby("id")[list(METRICS)].mean()  # several raters per item are averaged


def _item_means(ratings: pd.DataFrame, rater: str) -> pd.DataFrame:
    """Items × criteria: one rater's mean successful score per item (samples averaged)."""
    ok = ratings[(ratings["rater"] == rater) & (ratings["status"] == Status.OK)]
    return ok.groupby(["item_id", "criterion"])["score"].mean().unstack()


def _scales(judge: pd.DataFrame, human: pd.DataFrame, label: str) -> pd.DataFrame:
    """Tables 3-5 for one prompting: :func:`judgelab.stats.scales.scale_table` (the one scale
    agreement) over the study's metrics, with a ``prompting`` column."""
    table = scale_table(human, judge, metrics=[m for m in METRICS if m in judge])
    table.insert(0, "prompting", label)
    return table


def _pair_items(items: dict[str, Item], pairs, both_orders: bool = True, examples: dict[str, str] | None = None) -> list[Item]:
    out = []
    for p in pairs:
        for a, b in ((p.first, p.second), (p.second, p.first)) if both_orders else ((p.first, p.second),):
            fa = {**items[a].extra, "text": items[a].text}
            fb = {**items[b].extra, "text": items[b].text}
            extra: dict[str, Any] = {"first": fa, "second": fb}
            if examples is not None:
                extra["examples"] = examples[a]
            out.append(Item(f"{a}|{b}", f"{a} vs {b}", "pair", None, None, extra))
    return out


def _verdicts(ratings: pd.DataFrame, rater: str, metric: str) -> dict[tuple[str, str], float]:
    ok = ratings[(ratings["rater"] == rater) & (ratings["criterion"] == metric) & (ratings["status"] == Status.OK)]
    means = ok.groupby("item_id")["score"].mean()
    return {tuple(k.split("|", 1)): float(v) for k, v in means.items()}


def run_nle(dataset: str, data: Path, out: Path, judge: str = "local", human: Path | None = None,
            n_items: int | None = None, samples: int = 3, per_delta: int = 100, seed: int = 0, dynamic: bool = True,
            price_in: float | None = None, price_out: float | None = None, retrieval: str = "auto",
            options: JudgeOptions | None = None, progress: bool = True, human_comparisons: Path | None = None, display=None,
            max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> RecipeResult:
    """Run the NLE explanation-quality study with one judge and write its tables into ``out``.

    Args:
        dataset: ``esnli``, ``liar`` or ``latent-hatred``; data: the dataset's CSV.
        out: output folder (CSV tables, figures, README.md, run.json, store.sqlite, report.html).
        judge: judge spec (:mod:`judgelab.models.spec`).
        human: human scores (id, informativeness, clarity); without them only the judge side runs.
        n_items: explanations: the first N rows of ``data``.
        samples: ratings per explanation; per_delta: pairs per human score gap; seed: pair sampling and split.
        dynamic: also compare dynamic prompting (§6); price_in, price_out: USD per 1M tokens for the cost table.
        retrieval: ``auto``, ``sentence-transformers`` or ``tfidf``; options: shared judge options;
        progress: progress bars on stderr; human_comparisons: a second set of human comparisons.
        display: where tables and lines are shown (``None``: nothing is printed).
        max_failure_rate: the share of a judge's failed judgments above which :class:`judgelab.errors.TooManyFailures`
            is raised (after the outputs are written; exit status 3 on the command line).

    Returns:
        A :class:`judgelab.recipes.common.RecipeResult` (``raters["rating"]``: the judge's label).

    Example:
        >>> run_nle("esnli", Path("e-snli.csv"), Path("runs/nle"), "openai:gpt-4o-mini", n_items=20)   # doctest: +SKIP
    """
    from judgelab.report.figures import scatter_identity

    output = OutputFolder(out, f"NLE quality study recipe: {dataset}", display=display)
    items = load_nle_items(data, dataset, n_items)
    by_id = {i.item_id: i for i in items}
    humans = load_human_scores(human)
    template = load_template(f"nle-{dataset}")
    notes: list[str] = []
    with Store(out / "store.sqlite") as store:
        start = time.perf_counter()
        calls_before = store.n_calls()
        rater = judge_run(items, template, judge, store, samples=samples, score="parsed", max_tokens=160,
                          options=options, progress=progress)
        wall = time.perf_counter() - start
        ratings = store.ratings(with_meta=True)
        output.record(results={"summary": judges_summary(store.ratings())})
        mine = ratings[ratings["rater"] == rater]
        calls = store.n_calls() - calls_before
        tokens_in = int(mine["prompt_tokens"].sum())  # counted once per call (Store.ratings(with_meta=True))
        tokens_out = int(mine["completion_tokens"].sum())
        cost = {"items": len(items), "samples": samples, "judgments": len(mine), "new_calls": calls,
                "wall_s": wall, "s_per_item": wall / max(1, len(items)), "tokens_in": tokens_in, "tokens_out": tokens_out,
                "parse_failures": int((mine["status"] != Status.OK).sum())}
        if price_in is not None and price_out is not None:
            cost["cost_usd"] = (tokens_in * price_in + tokens_out * price_out) / 1e6
        output.table(pd.DataFrame([cost]), "cost", "cost and time of the rating run (table 2, judge side)")
        output.table(store.ratings(rater=rater), "ratings", "judge ratings (tidy table, the columns of every command)",
                     show=False)
        judge_scores = _item_means(ratings, rater)
        output.table(judge_scores.reset_index(), "judge_scores", "judge scores per item (mean of samples)", show=False)
        if humans is None:
            notes.append("no human scores (--human): scales, pairwise comparison and dynamic prompting need them and were skipped")
            return RecipeResult(finish_recipe(output, notes, max_failure_rate), {"rating": rater}, tuple(notes))
        output.table(_scales(judge_scores, humans, "vanilla"), "scales", "agreement at three granularities (tables 3-5) and correlations")
        for metric in METRICS:
            if metric not in judge_scores:  # the judge never gave this metric (see the failure counts)
                notes.append(f"no judge score for {metric}: no scatter plot")
                continue
            joined = pd.concat([humans[metric], judge_scores[metric]], axis=1, join="inner").dropna()
            if len(joined):
                figure = output.file(f"scatter_{metric}.png", f"judge vs human {metric} with the y = x line (figure 1)")
                scatter_identity(joined.iloc[:, 1], joined.iloc[:, 0], figure, f"{metric}: judge vs human", "judge", "human")
        pairwise_study(by_id, humans, dataset, judge, store, rater, per_delta, seed, output, options, progress, human_comparisons)
        if dynamic:
            _dynamic(by_id, humans, template, load_template(f"nle-{dataset}-pairwise"), judge, store, rater, samples, per_delta, seed, retrieval,
                     output, notes, options, progress)
    return RecipeResult(finish_recipe(output, notes, max_failure_rate), {"rating": rater}, tuple(notes))


def load_human_comparisons(path: Path) -> dict[str, dict[tuple[str, str], float]]:
    """A second set of human comparisons: columns first, second, metric, verdict (Yes/No/Neutral or 1/-1/0)."""
    from judgelab.parse import parse_comparison

    rows = read_records(path)
    out: dict[str, dict[tuple[str, str], float]] = {m: {} for m in METRICS}
    for n, row in enumerate(rows, 1):
        missing = [c for c in ("first", "second", "metric", "verdict") if row.get(c) is None]
        if missing:
            raise JudgelabError(f"{path}: row {n} has no column {missing[0]!r} (first, second, metric, verdict)")
        if not isinstance(row["metric"], str) or row["metric"] not in out:
            raise JudgelabError(f"{path}: row {n}: unknown metric {row['metric']!r}; use informativeness or clarity")
        raw = str(row["verdict"]).strip()
        value = {"1": 1.0, "-1": -1.0, "0": 0.0, "1.0": 1.0, "-1.0": -1.0, "0.0": 0.0}.get(raw)
        if value is None:
            value = parse_comparison(raw).score
        if value is None:
            raise JudgelabError(f"{path}: row {n}: verdict {raw!r} is not Yes, No, Neutral, 1, -1 or 0")
        out[row["metric"]][(str(row["first"]), str(row["second"]))] = value
    return out


def pairwise_study(by_id: dict[str, Item], humans: pd.DataFrame, dataset: str, judge: str, store: Store, rater: str,
                   per_delta: int, seed: int, output: OutputFolder, options=None, progress: bool = True,
                   human_comparisons: Path | None = None) -> None:
    """Pairs by Δ, asked in both orders: F1 per Δ (judge, and humans when a second set of human
    comparisons is given), position consistency, Bradley–Terry vs humans. A NaN in the summary comes
    with a note saying why (verdicts that could not be read are counted by status)."""
    second = load_human_comparisons(human_comparisons) if human_comparisons else None
    pair_rows, summary_rows = [], []
    pair_template = load_template(f"nle-{dataset}-pairwise")
    for metric in METRICS:
        pairs = sample_pairs({i: humans.loc[i, metric] for i in humans.index if i in by_id}, per_delta, seed)
        pitems = _pair_items(by_id, pairs)
        prater = judge_run(pitems, pair_template, judge, store, samples=1, score="parsed", criteria=[metric],
                           max_tokens=96, temperature=0.0, rater=with_stage(rater, "pairwise"), options=options, progress=progress)
        judged = store.ratings(rater=prater)
        verdicts = _verdicts(judged, prater, metric)
        pair_rows.append(f1_by_delta(pairs, verdicts).assign(metric=metric, rater="judge"))
        if second is not None:
            pair_rows.append(f1_by_delta(pairs, second[metric]).assign(metric=metric, rater="human comparisons"))
        fit = bradley_terry([(a, b, v) for (a, b), v in verdicts.items()])
        bt = fit.scores
        bt_r = correlate([humans.loc[k, metric] for k in bt], list(bt.values()), "spearman")
        consistency = position_consistency(pairs, verdicts)
        notes = [_unread_verdicts(judged[judged["criterion"] == metric])]
        if consistency != consistency and verdicts:  # NaN although some verdicts were read
            notes.append("position consistency: no pair has a verdict in both orders")
        if bt_r.r != bt_r.r and bt_r.reason and verdicts:
            notes.append(f"r: {bt_r.reason}")
        if not fit.converged:
            notes.append(f"Bradley–Terry did not converge in {fit.iterations} iterations: the scores are not final")
        summary_rows.append({"metric": metric, "pairs": len(pairs), "position_consistency": consistency,
                             "method": "spearman (Bradley–Terry vs human)", "r": bt_r.r, "p": bt_r.p, "n": bt_r.n,
                             "note": "; ".join(n for n in notes if n)})
    output.table(pd.concat(pair_rows), "pairwise_f1", "pairwise comparison: F1 per score gap Δ (figure 2)")
    output.table(pd.DataFrame(summary_rows), "pairwise_summary",
                 "position consistency, and Spearman's r (p, n items) of the Bradley–Terry scores vs the human scores")


def _unread_verdicts(judged: pd.DataFrame) -> str:
    """Why verdicts are missing, from the statuses of the pairwise judgments: ``no verdict could be read:
    16 of 16 no_rating`` when none was read (``… 16 of 16 failed (no_rating 12, error 4)`` for several
    statuses), ``3 of 16 verdicts could not be read (no_rating 3)`` when some were not, ``no pair was
    asked …`` without judgments, else ``""``."""
    from judgelab.rate import failure_report

    if not len(judged):
        return "no pair was asked (fewer than two explanations with human scores)"
    report = failure_report(judged)
    failed = ", ".join(f"{status} {n}" for status, n in report.counts.items() if status != Status.OK)
    if not report.failed:
        return ""
    kinds = [status for status in report.counts if status != Status.OK]
    if report.failed == report.total:
        return f"no verdict could be read: {report.failed} of {report.total} " + (kinds[0] if len(kinds) == 1 else f"failed ({failed})")
    return f"{report.failed} of {report.total} verdicts could not be read ({failed})"


def run_pairwise(dataset: str, data: Path, human: Path, out: Path, judge: str = "local", n_items: int | None = None,
                 per_delta: int = 100, seed: int = 0, human_comparisons: Path | None = None,
                 options: JudgeOptions | None = None, progress: bool = True, display=None,
                 max_failure_rate: float = DEFAULT_MAX_FAILURE_RATE) -> Path:
    """``judgelab pairwise``: the NLE study's pairwise comparison (:func:`pairwise_study`) on its own.

    Writes ``pairwise_f1.csv``, ``pairwise_summary.csv``, README.md, run.json and store.sqlite into ``out``,
    then shows the judge's status counts and failed answers and raises :class:`judgelab.errors.TooManyFailures`
    when more than ``max_failure_rate`` of its verdicts could not be read (as every recipe does).

    Returns:
        The output folder.

    Example:
        >>> run_pairwise("esnli", Path("e-snli.csv"), Path("human.csv"), Path("runs/pw"), "openai:gpt-4o-mini")  # doctest: +SKIP
    """
    items = {i.item_id: i for i in load_nle_items(data, dataset, n_items)}
    humans = load_human_scores(human)
    output = OutputFolder(out, f"pairwise comparison: {dataset}", command="pairwise", display=display)
    with Store(out / "store.sqlite") as store:
        pairwise_study(items, humans, dataset, judge, store, f"{{model}}@nle-{dataset}", per_delta, seed, output,
                       options, progress, human_comparisons)
    return finish_recipe(output, max_failure_rate=max_failure_rate)


def plan_nle(dataset: str, data: Path, judge: str = "local", human: Path | None = None, n_items: int | None = None,
             samples: int = 3, per_delta: int = 100, seed: int = 0, dynamic: bool = True,
             options: JudgeOptions | None = None, out: Path | None = None, pairwise_only: bool = False) -> StudyPlan:
    """Plan :func:`run_nle` (or, with ``pairwise_only``, :func:`pairwise_study`) without calling a model.

    The rating stage and the pairwise stage (pairs come from the human scores) are planned; the
    dynamic-prompting stage is not (its examples come from a retrieval model fitted at run time)."""
    from judgelab.recipes.common import recipe_spec
    from judgelab.rate import StudyPlan, plan_rate

    items = load_nle_items(data, dataset, n_items)
    by_id = {i.item_id: i for i in items}
    humans = load_human_scores(human)
    plans, later = [], []
    if not pairwise_only:
        spec, tpl = recipe_spec(load_template(f"nle-{dataset}"), judge, samples=samples, score="parsed", max_tokens=160,
                                options=options)
        plans += plan_rate(items, [spec], out, template=tpl, stage="rating")
    if humans is None:
        later.append("pairwise comparison and dynamic prompting need human scores (--human)")
        return StudyPlan(tuple(plans), tuple(later))
    pair_template = load_template(f"nle-{dataset}-pairwise")
    for metric in METRICS:
        pairs = sample_pairs({i: humans.loc[i, metric] for i in humans.index if i in by_id}, per_delta, seed)
        spec, tpl = recipe_spec(pair_template, judge, samples=1, score="parsed", criteria=[metric], max_tokens=96,
                                temperature=0.0, rater=with_stage(judge_rater("{model}", f"nle-{dataset}").label, "pairwise"), options=options)
        plans += plan_rate(_pair_items(by_id, pairs), [spec], out, template=tpl, stage=f"pairwise {metric}")
    if dynamic and not pairwise_only:
        later.append("dynamic prompting: its examples come from a retrieval model fitted on the human-scored half at run "
                     "time, so its calls are not planned here")
    return StudyPlan(tuple(plans), tuple(later))


def _dynamic(by_id, humans, template, pair_template, judge, store, rater, samples, per_delta, seed, retrieval,
             output, notes, options, progress) -> None:
    ids = sorted(i for i in humans.index if i in by_id)
    rng = random.Random(seed)
    shuffled = ids[:]
    rng.shuffle(shuffled)
    pool, test = shuffled[: len(ids) // 2], shuffled[len(ids) // 2:]
    if not pool or not test:
        notes.append("too few items with human scores for the 50:50 split of dynamic prompting")
        return
    retriever = Retriever(retrieval).fit([by_id[i].text for i in pool])
    if retriever.note:
        notes.append(retriever.note)
    nearest = retriever.nearest([by_id[i].text for i in test])
    examples = {}
    for t, k in zip(test, nearest):
        p = pool[k]
        examples[t] = template.render_example({**by_id[p].extra, "text": by_id[p].text,
                                               "informativeness": _fmt(humans.loc[p, "informativeness"]),
                                               "clarity": _fmt(humans.loc[p, "clarity"])})
    neighbours = pd.DataFrame({"test_item": test, "example_item": [pool[k] for k in nearest]})
    output.table(neighbours, "dynamic_examples", "dynamic prompting: the example chosen for each test item", show=False)
    test_items = [Item(i, by_id[i].text, "explanation", None, by_id[i].context, {**by_id[i].extra, "examples": examples[i]}) for i in test]
    drater = judge_run(test_items, template, judge, store, samples=samples, score="parsed", max_tokens=160,
                       rater=with_variant(rater, "dynamic"), options=options, progress=progress)
    ratings = store.ratings()
    vanilla = _item_means(ratings, rater).loc[lambda d: d.index.isin(test)]
    dyn = _item_means(ratings, drater)
    h = humans.loc[test]
    table = pd.concat([_scales(vanilla, h, "vanilla"), _scales(dyn, h, "dynamic")])
    output.table(table[table["granularity"] == "7-way"], "dynamic_scales", "vanilla vs dynamic prompting, 7-way (table 6), test half")
    rows = []
    for metric in METRICS:
        pairs = sample_pairs({i: humans.loc[i, metric] for i in test}, per_delta, seed)
        for label, exs in (("vanilla", None), ("dynamic", examples)):
            pitems = _pair_items(by_id, pairs, both_orders=False, examples=exs)
            prater = judge_run(pitems, pair_template, judge, store, samples=1, score="parsed", criteria=[metric], max_tokens=96,
                               temperature=0.0, rater=with_stage(rater, f"pairwise-test-{label}"), options=options, progress=progress)
            rows.append(f1_by_delta(pairs, _verdicts(store.ratings(rater=prater), prater, metric)).assign(metric=metric, prompting=label))
    output.table(pd.concat(rows), "dynamic_pairwise_f1", "vanilla vs dynamic prompting: pairwise F1 per Δ (figure 3), test half")


def _fmt(value: float) -> str:
    """A human score as shown in a few-shot example: ``4`` for an integer, else one decimal (``4.5``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
