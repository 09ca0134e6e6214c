"""``judgelab agree`` as one library function: read the ratings files (and a human file in any layout),
compute the agreement tables, and — with ``out`` — write them into a folder with its record.

:func:`run_agree` returns :class:`AgreeRun`: agree's :class:`judgelab.agree.AgreeReport` (the tables),
the :class:`judgelab.agree_results.AgreeRecord` results.json keeps beside them (the humans' means, the
matched per-item means the report's first screen draws), and the inputs it read (paths and digests,
the human file with the options it was read with). The command line only parses options and calls it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from judgelab.agree_results import AgreeRecord, MatchedMeans
from judgelab.output.record import InputFile, input_file

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.agree import AgreeReport
    from judgelab.output import Display

__all__ = ["run_agree", "write_agree", "AgreeRun", "HumanFile", "agree_record", "TABLE_DESCRIPTIONS"]

TABLE_DESCRIPTIONS = {
    "correlations": "judge vs mean human rating per criterion, level and method: r, p, n, ci_low, ci_high, note",
    "human_baseline": "each human rater vs the human mean (vs_mean) and between human raters (pairwise), with CIs",
    "self_consistency": "Krippendorff's alpha (ordinal) and ICC(2,k) with 95% CI of samples or human raters",
    "williams": "one-sided Williams tests between pairs of judges, BH-adjusted per criterion",
    "standardization": "--standardize: every statistic on the raw scores beside the same statistic on each rater's "
                       "standardised scores, and the change (the other tables are the standardised ones)",
    "rater_scales": "--standardize: each rater's mean and SD per criterion, the map of its standardisation",
    "human_means": "the humans' mean per system and criterion over the texts a judge was compared on, with its 95% "
                   "t-interval over items (the report's Results rows and the first screen's human mean)",
}


@dataclass(frozen=True)
class HumanFile:
    """A human-ratings file and how to read it (``agree --human`` and its column options; see
    :func:`judgelab.ratings.import_human`)."""

    path: Path
    layout: str = "auto"
    item: str | None = None
    rater: str | None = None
    criterion: str = "criterion"
    score: str = "score"
    system: str = "system"
    group: str = "group"
    criteria: tuple[str, ...] = ()
    #: how many raters each mean of a file of means pools (``--raters-per-mean``; None: unstated)
    raters_per_mean: int | None = None

    def options(self) -> dict[str, Any]:
        return {"layout": self.layout, "item": self.item, "rater": self.rater, "criterion": self.criterion,
                "score": self.score, "system": self.system, "group": self.group, "criteria": list(self.criteria),
                **({"raters_per_mean": self.raters_per_mean} if self.raters_per_mean else {})}


@dataclass
class AgreeRun:
    """What :func:`run_agree` computed: the tables (``report``), the record kept beside them and the inputs."""

    report: AgreeReport
    record: AgreeRecord
    inputs: list[InputFile] = field(default_factory=list)
    out: Path | None = None
    #: criteria renamed on reading (``{old: new}``)
    mapping: dict[str, str] = field(default_factory=dict)
    #: when the agreement began (``time.time()``): run.json's wall time counts the analysis, not only the writing
    started: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()


def agree_record(df: pd.DataFrame, report: AgreeReport, raters_per_mean: int | None = None) -> AgreeRecord:
    """The record of an agreement over the tidy ratings ``df`` (raw scores): per judge and criterion of the
    correlations table the matched per-item means (with what they count and the judge's scale), and the humans'
    means over the texts compared — the (system, item, criterion) some judge's pair holds, so that a human row
    never stands for texts no judge rated and its mean is the pairs' own."""
    from judgelab.agree import matched_means
    from judgelab.ratings import item_means
    from judgelab.raters import human_mask
    from judgelab.summary import human_summary, score_summary

    humans = df[human_mask(df["rater"])]
    means = item_means(df)
    matched = []
    corr = report.correlations
    pairs = [] if corr.empty else list(corr[["rater", "criterion"]].drop_duplicates().itertuples(index=False))
    for rater, criterion in pairs:
        m = matched_means(df, str(rater), str(criterion), means).dropna(subset=["score_x", "score_y"])
        several = bool(len(m)) and bool((m.groupby("item_id")["system"].nunique() > 1).any())
        text_unit, cluster_unit, scale = _template_facts(str(rater), str(criterion), several)
        human = m["score_y"].astype(float)
        same = scale is None or bool(((human >= scale[0] - 1e-9) & (human <= scale[1] + 1e-9)).all())
        matched.append(MatchedMeans(str(rater), str(criterion), tuple(m["system"].astype(str)), tuple(m["item_id"].astype(str)),
                                    tuple(m["score_x"].astype(float)), tuple(human),
                                    float(m["score_x"].mean()) if len(m) else None,
                                    float(human.mean()) if len(m) else None, text_unit, cluster_unit, scale, same))
    if matched:
        humans = _compared(humans, matched)
    return AgreeRecord(dict(report.skipped), str(report.settings.get("standardize") or "none"), human_summary(humans, raters_per_mean),
                       tuple(matched), score_summary(df[~human_mask(df["rater"])]))


def _compared(humans: pd.DataFrame, matched: list[MatchedMeans]) -> pd.DataFrame:
    """The human rows of the texts some judge was compared on: (criterion, system, item) of a matched pair, or
    (criterion, item) for a human row without a system (matched on item and criterion alone)."""
    with_system = {(m.criterion, s, i) for m in matched for s, i in zip(m.systems, m.items)}
    without = {(c, i) for c, _, i in with_system}
    keep = [(c, s, i) in with_system if isinstance(s, str) and s else (c, i) in without
            for c, s, i in zip(humans["criterion"].astype(str), humans["system"], humans["item_id"].astype(str))]
    return humans[keep]


def _template_facts(rater: str, criterion: str, several_systems: bool) -> tuple[str, str, tuple[float, float] | None]:
    """(what a rated text is, what the bootstrap resamples, the criterion's scale) from the judge's template's
    ``fields`` and scales; ("", "", None) where the label names no template that loads. The resampled unit is the
    item — the text itself when each item has one system, else the context the systems' texts share."""
    from judgelab.errors import JudgelabError
    from judgelab.prompts import load_template
    from judgelab.raters import parse_label

    name = parse_label(rater).template
    if not name:
        return "", "", None
    try:
        t = load_template(name)
    except (JudgelabError, OSError, ValueError):
        return "", "", None
    text = unit_noun(t.fields.get("text", ""))
    cluster = unit_noun(t.fields.get("context", "")) if several_systems else text
    own = t.criteria.get(criterion)
    if t.answer != "rating":
        scale = None
    elif own is not None:
        scale = own.scale or t.scale
    else:  # a metric or a renamed criterion: the template's scale when every criterion has it
        scale = t.scale if all(c.scale in (None, t.scale) for c in t.criteria.values()) else None
    return text, cluster, (float(scale[0]), float(scale[1])) if scale is not None else None


def unit_noun(description: str) -> str:
    """The noun a template's field description names: "the summary to rate" → ``summary``, "the source article" →
    ``article``, "the writing prompt the story was based on" → ``prompt`` ("" when none)."""
    words = str(description).lower().split()
    while words and words[0] in {"the", "a", "an"}:
        words = words[1:]
    text = " ".join(words)
    for cut in (" to ", " (", ",", ";", ":", " the ", " that ", " which ", " for ", " it "):
        text = text.split(cut)[0]
    nouns = [w for w in text.split() if w.replace("-", "").isalpha()]
    return nouns[-1] if nouns else ""


def _check_raters_per_mean(hf: HumanFile, humans: pd.DataFrame) -> None:
    """``--raters-per-mean`` is a count of a file of means (``human:mean`` rows); one line otherwise."""
    from judgelab.errors import JudgelabError
    from judgelab.raters import is_human, is_individual_human

    if hf.raters_per_mean is None:
        return
    if hf.raters_per_mean < 1:
        raise JudgelabError(f"--raters-per-mean must be 1 or more (got {hf.raters_per_mean})")
    if not any(is_human(r) and not is_individual_human(r) for r in set(humans["rater"].astype(str))):
        raise JudgelabError(f"--raters-per-mean counts the raters behind each mean of a file of means; {hf.path} names "
                            "its raters (leave the option out)")


def run_agree(ratings: Sequence[str | Path | pd.DataFrame] = (), human: HumanFile | str | Path | None = None,
              mapping: dict[str, str] | None = None, methods: Sequence[str] = ("kendall",),
              levels: Sequence[str] = ("overall", "group", "system"), williams_level: str = "overall",
              kendall_variant: str = "b", n_resamples: int = 999, seed: int = 0, ci_method: str = "percentile",
              standardize: str = "none", out: str | Path | None = None, display: Display | None = None,
              sources: Sequence[InputFile] = ()) -> AgreeRun:
    """Judge-vs-human agreement of ratings files: ``judgelab agree`` without the printing.

    Args:
        ratings: ratings files (judge runs and/or tidy human ratings; :func:`judgelab.ratings.read_ratings`) or
            DataFrames of the same columns (``Store.ratings()``).
        human: a human-ratings file in any layout (a path: read with the defaults; :class:`HumanFile`: with options).
        mapping: criteria renamed (``{old: new}``), applied to every input.
        methods, levels, williams_level, kendall_variant, n_resamples, seed, ci_method, standardize: as
            :func:`judgelab.agree.agreement`.
        out: write the tables, README.md, run.json and results.json into this folder (a step of the folder's
            record when another command made it); ``None``: write nothing.
        display: where the folder's notes go (``None``: nowhere).
        sources: what the DataFrames were read from, for the record (e.g. ``input_file("store", path)``).

    Returns:
        :class:`AgreeRun`.

    Raises:
        JudgelabError: unreadable input, no human ratings, unknown criterion or option (one line).

    Example:
        >>> run = run_agree(["run/ratings.csv"], "humans.csv", out="run")  # doctest: +SKIP
        >>> run.report.correlations[["rater", "criterion", "r"]]            # doctest: +SKIP
    """
    import time

    from judgelab.agree import agreement
    from judgelab.ratings import combine, import_human, read_ratings, rename_criteria

    started = time.time()

    hf = human if isinstance(human, HumanFile) or human is None else HumanFile(Path(human))
    import pandas as pd

    paths = [Path(p) for p in ratings if not isinstance(p, pd.DataFrame)]
    frames = [read_ratings(p if isinstance(p, pd.DataFrame) else Path(p)) for p in ratings]
    if hf is not None:
        frames.append(import_human(hf.path, hf.layout, hf.item, hf.rater, hf.criterion, hf.score, hf.system, hf.group,
                                   list(hf.criteria) or None))
        _check_raters_per_mean(hf, frames[-1])
    df = rename_criteria(combine(frames), dict(mapping or {}), "inputs")
    report = agreement(df, list(methods), list(levels), variant=kendall_variant, williams_level=williams_level,
                       n_resamples=n_resamples, seed=seed, ci_method=ci_method, standardize=standardize)
    inputs = [input_file("ratings", p) for p in paths] + list(sources)
    if hf is not None:
        inputs.append(input_file("human", hf.path, hf.options()))
    run = AgreeRun(report, agree_record(df, report, hf.raters_per_mean if hf is not None else None), inputs, mapping=dict(mapping or {}), started=started)
    if out is not None:
        write_agree(run, out, display)
    return run


def write_agree(run: AgreeRun, out: str | Path, display: Display | None = None) -> Path:
    """Write ``run`` into the folder ``out`` (sets ``run.out``): the CSV tables, a section of README.md (kept beside
    a run's own index), run.json (a step of the run's), results.json (the agree step: settings, inputs, the record)
    and report.html, through the one writer of output folders. Returns the folder."""
    from judgelab.output import OutputFolder

    report, mapping = run.report, run.mapping
    with OutputFolder(Path(out), "Agreement (`judgelab agree`)", command="agree", step=True, display=display,
                      started=run.started) as output:
        for name, table in report.tables().items():
            what = TABLE_DESCRIPTIONS[name]
            if name in report.skipped:
                what += f" — **no rows: {report.skipped[name]}**"
            output.table(table, name, what, show=False)  # a table without rows is its header line, never a 0-byte file
        rows = run.record.human_summary.rows
        if rows:  # the record's rows, as they are: the page and this file show one number
            import pandas as pd

            output.table(pd.DataFrame([{"rater": r.rater, "system": r.system, "criterion": r.criterion, "items": r.n,
                                        "mean": r.mean, "ci_low": r.ci_low, "ci_high": r.ci_high,
                                        "note": r.interval_note} for r in rows]),
                         "human_means", TABLE_DESCRIPTIONS["human_means"], show=False)
        s = report.settings
        notes = [f"CIs: {s['confidence_level']:.0%} {s['ci_method']} cluster bootstrap, {s['n_resamples']} resamples, seed "
                 f"{s['seed']}; clusters: items at the overall and system levels (systems fixed), groups at the "
                 "per-group level.", "Every NaN has its reason in the table's `note` column."]
        if mapping:
            notes.append("Criteria renamed: " + ", ".join(f"`{a}` → `{b}`" for a, b in mapping.items()) + ".")
        output.record("agree", settings={**report.settings, "map": mapping}, inputs=run.inputs,
                      results=run.record.to_record())
        human = next((i for i in run.inputs if i.role == "human"), None)
        ratings = [i for i in run.inputs if i.role == "ratings"]
        run.out = output.finish(notes, extra={"inputs": [i.path for i in ratings], "human": human.path if human else None,
                                           "input_files": [i.absolute for i in ratings],
                                           "human_file": human.absolute if human else None,
                                           "human_options": human.options if human else None,
                                           "map": mapping, "settings": report.settings, "skipped": report.skipped})
    return run.out
