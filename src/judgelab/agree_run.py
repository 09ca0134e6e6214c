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

    def options(self) -> dict[str, Any]:
        return {"layout": self.layout, "item": self.item, "rater": self.rater, "criterion": self.criterion,
                "score": self.score, "system": self.system, "group": self.group, "criteria": list(self.criteria)}


@dataclass
class AgreeRun:
    """What :func:`run_agree` computed: the tables (``report``), the record kept beside them and the inputs."""

    report: AgreeReport
    record: AgreeRecord
    inputs: list[InputFile] = field(default_factory=list)
    out: Path | None = None
    #: criteria renamed on reading (``{old: new}``)
    mapping: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.report.to_dict()


def agree_record(df: pd.DataFrame, report: AgreeReport) -> AgreeRecord:
    """The record of an agreement over the tidy ratings ``df`` (raw scores): the humans' means and, per judge
    and criterion of the correlations table, the matched per-item means."""
    from judgelab.agree import matched_means
    from judgelab.ratings import is_human, item_means
    from judgelab.summary import human_summary, score_summary

    humans = df[df["rater"].map(is_human)]
    means = item_means(df)
    matched = []
    corr = report.correlations
    pairs = [] if corr.empty else list(corr[["rater", "criterion"]].drop_duplicates().itertuples(index=False))
    for rater, criterion in pairs:
        m = matched_means(df, str(rater), str(criterion), means).dropna(subset=["score_x", "score_y"])
        matched.append(MatchedMeans(str(rater), str(criterion), tuple(m["system"].astype(str)), tuple(m["item_id"].astype(str)),
                                    tuple(m["score_x"].astype(float)), tuple(m["score_y"].astype(float)),
                                    float(m["score_x"].mean()) if len(m) else None,
                                    float(m["score_y"].mean()) if len(m) else None))
    return AgreeRecord(dict(report.skipped), str(report.settings.get("standardize") or "none"), human_summary(humans),
                       tuple(matched), score_summary(df[~df["rater"].map(is_human)]))


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
    from judgelab.agree import agreement
    from judgelab.ratings import combine, import_human, read_ratings, rename_criteria

    hf = human if isinstance(human, HumanFile) or human is None else HumanFile(Path(human))
    import pandas as pd

    paths = [Path(p) for p in ratings if not isinstance(p, pd.DataFrame)]
    frames = [read_ratings(p if isinstance(p, pd.DataFrame) else Path(p)) for p in ratings]
    if hf is not None:
        frames.append(import_human(hf.path, hf.layout, hf.item, hf.rater, hf.criterion, hf.score, hf.system, hf.group,
                                   list(hf.criteria) or None))
    df = rename_criteria(combine(frames), dict(mapping or {}), "inputs")
    report = agreement(df, list(methods), list(levels), variant=kendall_variant, williams_level=williams_level,
                       n_resamples=n_resamples, seed=seed, ci_method=ci_method, standardize=standardize)
    inputs = [input_file("ratings", p) for p in paths] + list(sources)
    if hf is not None:
        inputs.append(input_file("human", hf.path, hf.options()))
    run = AgreeRun(report, agree_record(df, report), inputs, mapping=dict(mapping or {}))
    if out is not None:
        write_agree(run, out, display)
    return run


def write_agree(run: AgreeRun, out: str | Path, display: Display | None = None) -> Path:
    """Write ``run`` into the folder ``out`` (sets ``run.out``): the CSV tables, a section of README.md (kept beside
    a run's own index), run.json (a step of the run's), results.json (the agree step: settings, inputs, the record)
    and report.html, through the one writer of output folders. Returns the folder."""
    from judgelab.output import OutputFolder

    report, mapping = run.report, run.mapping
    with OutputFolder(Path(out), "Agreement (`judgelab agree`)", command="agree", step=True, display=display) as output:
        for name, table in report.tables().items():
            what = TABLE_DESCRIPTIONS[name]
            if name in report.skipped:
                what += f" — **no rows: {report.skipped[name]}**"
            output.table(table, name, what, show=False)  # a table without rows is its header line, never a 0-byte file
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
