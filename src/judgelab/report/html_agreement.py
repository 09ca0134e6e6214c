"""The "Agreement with humans" section of the HTML report: the tables of the folder's ``agree`` step (the
files its results.json lists) as they are, the Williams matrices, and a chart of the correlations in
which an interval is drawn only where it is one. A folder without an agree step has no such section:
the report computes no agreement (:data:`NO_AGREE_STEP` says which command adds one)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pandas as pd

from judgelab.report.folder import RunFolder, read_table
from judgelab.agree_results import AgreeRecord, MatchedMeans
from judgelab.report.html_build import _clean, _finite, df_table, table_file
from judgelab.report.html_model import Agreement, ColumnKind, Figure, Table
from judgelab.report.svg import Point, interval_chart

__all__ = ["AgreementTables", "agreement_tables", "agreement", "NO_AGREE_STEP"]


@dataclass
class AgreementTables:
    """The folder's ``agree`` step as recorded: its tables (read from the files results.json lists), why a table
    is empty, where they came from and the matched per-item means of each judge and criterion."""

    tables: dict[str, pd.DataFrame]
    skipped: dict[str, str]
    source: str
    matched: tuple[MatchedMeans, ...] = ()
    #: why the numbers differ from the raw scores' (``agree --standardize z``), else ""
    standardized: str = ""


#: The line shown where a folder has judge and human ratings but no agree step.
NO_AGREE_STEP = ("No agreement step in this folder: the report computes no agreement itself. Run `judgelab agree "
                 "RATINGS --human HUMANS --out {folder}` to add one.")


def agreement_tables(folder: RunFolder) -> AgreementTables | None:
    """The tables of the folder's ``agree`` step (``None`` when it has none)."""
    step = folder.record.step("agree")
    if step is None:
        return None
    record = AgreeRecord.from_record(step.results)
    tables = {}
    for name in ("correlations", "williams", "human_baseline", "self_consistency"):
        file = table_file(folder, name)
        if file is not None:
            tables[name] = read_table(file)
    if not tables:
        return None
    names = ", ".join(f.name for f in step.files if f.table in tables) or ", ".join(f"{n}.csv" for n in tables)
    standardized = ""
    if record.standardize == "z" or step.settings.get("standardize") == "z":
        standardized = ("These agreement numbers are computed on each rater's standardised scores "
                        "(`judgelab agree --standardize z`); standardization.csv has every statistic on the raw "
                        "scores beside them.")
    return AgreementTables(tables, dict(record.skipped), f"the tables written by `judgelab agree --out` ({names})",
                           record.matched, standardized)


def agreement(at: AgreementTables | None) -> Agreement | None:
    """The "Agreement with humans" section: agree's tables as they are, and a chart of the correlations
    (an interval is drawn only where it is one; otherwise the reason is written on its row)."""
    from judgelab.report.headline import interval_words

    if at is None:
        return None
    notes: list[str] = [f"{name.replace('_', ' ').capitalize()}: no rows — {why}." for name, why in at.skipped.items()
                        if name != "williams"]
    if at.standardized:
        notes.insert(0, at.standardized)
    tables, source = at.tables, at.source
    corr = tables.get("correlations", pd.DataFrame())
    corr_table = None
    figures: list[Figure] = []
    if not corr.empty and {"r", "n", "method"} <= set(corr.columns):
        corr = corr.copy()
        ci_note = ("95% CI: cluster bootstrap as `judgelab agree` computes it (items resampled with all their "
                   "samples and systems; groups at the group level); a NaN's reason is in the note column.")
        corr_table = df_table(corr, "correlations", "Judge vs mean human rating: correlation per criterion, level and method",
                              rename={"r": "r", "ci_low": "95% CI low", "ci_high": "95% CI high", "n": "n",
                                      "failure_rate": "failure rate"},
                              kinds={"ci_low": "num", "ci_high": "num", "n": "int"},
                              note=ci_note)
        baseline = tables.get("human_baseline", pd.DataFrame())
        raters = sorted(corr["rater"].astype(str).unique()) if "rater" in corr else []
        for k, method in enumerate(sorted(corr["method"].astype(str).unique())):
            mine = corr[corr["method"] == method]
            points, markers = [], []
            for row in mine.itertuples(index=False):
                label = f"{row.criterion} · {row.level}" + (f" · {row.rater}" if len(raters) > 1 else "")
                words, caveat = interval_words(row.r, row.ci_low, row.ci_high, getattr(row, "note", ""),
                                               getattr(row, "n_clusters", None), str(row.level))
                drawn = words.startswith("95% CI")  # no bare dot where there is no interval: the reason instead
                points.append(Point(label, _clean(row.r) if drawn else None, _clean(row.ci_low) if drawn else None,
                                    _clean(row.ci_high) if drawn else None,
                                    raters.index(str(row.rater)) if str(row.rater) in raters else 0,
                                    caveat if drawn else (f"r = {float(row.r):.3f}; {words}" if _finite(row.r) else words)))
                if not baseline.empty and {"criterion", "level", "method", "vs_mean"} <= set(baseline.columns):
                    b = baseline[(baseline["criterion"] == row.criterion) & (baseline["level"] == row.level)
                                 & (baseline["method"] == method)]
                    # with two raters a human vs the mean of both is inflated: their pairwise correlation is the baseline
                    two = len(b) and "raters" in b and _finite(b["raters"].iloc[0]) and float(b["raters"].iloc[0]) < 3
                    key = "pairwise" if two and "pairwise" in b else "vs_mean"
                    if len(b) and _finite(b[key].iloc[0]):
                        markers.append(Point(label, float(b[key].iloc[0])))
            fig_id = f"fig-corr-{k}"
            title = f"{method} correlation of each judge with the mean human rating, with 95% CI"
            figures.append(Figure(fig_id, title,
                                  f"Dot plot of {method} correlations per criterion and level; lines are 95% CIs"
                                  + ("; hollow diamonds mark the human baseline (each human vs the mean of all humans; "
                                     "with two raters, the correlation between them)" if markers else "") + ".",
                                  interval_chart(points, fig_id, title, f"{method} correlations with 95% CI",
                                                 f"{method} correlation with the mean human rating", "criterion · level"
                                                 + (" · judge" if len(raters) > 1 else ""),
                                                 series_names=raters if len(raters) > 1 else (), domain=(-1.0, 1.0),
                                                 reference=0.0, extra_markers=markers,
                                                 extra_label="human baseline")))
    williams = tables.get("williams")
    williams_table = None
    matrices: list[Table] = []
    if williams is not None and not williams.empty:
        williams_table = df_table(williams, "williams", "Williams tests: does judge A correlate better with the humans than judge B?",
                                  note="One-sided Williams test of corr(A, humans) > corr(B, humans); p_bh is "
                                       "Benjamini–Hochberg adjusted over the pairs of one criterion.")
        for k, (criterion, grp) in enumerate(williams.groupby("criterion", sort=True)):
            judges = sorted(set(grp["judge_a"].astype(str)) | set(grp["judge_b"].astype(str)))
            cell = {(str(a), str(b)): _clean(p) for a, b, p in zip(grp["judge_a"], grp["judge_b"], grp["p_bh"])}
            matrices.append(Table(
                id=f"williams-matrix-{k}", caption=f"Williams matrix, {criterion}: BH-adjusted p that the row judge "
                                                   "correlates better with the humans than the column judge",
                columns=["judge A (row) \u2192 judge B (column)", *judges], kinds=cast(list[ColumnKind], ["text", *(["p"] * len(judges))]),
                rows=[[a, *[cell.get((a, b)) if a != b else None for b in judges]] for a in judges]))
    else:
        n_judges = corr["rater"].nunique() if not corr.empty and "rater" in corr else 0
        notes.append("No Williams tests: they compare two or more judges" + (f"; this folder has {n_judges}." if n_judges else "."))
    baseline = tables.get("human_baseline")
    sc = tables.get("self_consistency")
    return Agreement(
        correlations=corr_table, figures=figures, williams=williams_table, williams_matrices=matrices,
        human_baseline=df_table(baseline, "human-baseline", "Human baseline: each human vs the mean of all humans "
                                "(vs_mean, an upper bound) and mean pairwise correlation between humans")
        if baseline is not None and not baseline.empty else None,
        self_consistency=df_table(sc, "self-consistency", "Self-consistency: Krippendorff's α and ICC(2,k) with "
                                  "samples (judges) or raters (humans) as the raters")
        if sc is not None and not sc.empty else None,
        source=source, notes=notes)
