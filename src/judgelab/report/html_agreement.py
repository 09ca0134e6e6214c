"""The "Agreement with humans" section of the HTML report: agree's tables (read from an ``agree --out``
folder, or computed once by :func:`judgelab.agree.agreement`) as they are, the Williams matrices, and
a chart of the correlations in which an interval is drawn only where it is one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import pandas as pd

from judgelab.report.folder import RunFolder, read_table
from judgelab.report.html_build import _clean, _finite, df_table
from judgelab.report.html_model import Agreement, ColumnKind, Figure, Table
from judgelab.report.humans import HumanRatings
from judgelab.report.svg import Point, interval_chart

__all__ = ["AgreementTables", "agreement_tables", "agreement"]


def _tidy_for_agree(judge: pd.DataFrame, humans: HumanRatings) -> pd.DataFrame:
    hum = humans.table.copy()
    if hum["system"].isna().any():
        systems = judge.drop_duplicates("item_id").set_index("item_id")["system"]
        unique = judge.groupby("item_id")["system"].nunique()
        mapping = systems[unique[unique == 1].index]
        hum.loc[hum["system"].isna(), "system"] = hum.loc[hum["system"].isna(), "item_id"].map(mapping)
        hum = hum[hum["system"].notna()]
    cols = ["item_id", "system", "group", "criterion", "rater", "sample", "score", "status"]
    both = pd.concat([judge[cols], hum[cols]], ignore_index=True)
    both["group"] = both["group"].where(both["group"].notna(), None)
    return both.drop_duplicates(["rater", "criterion", "system", "item_id", "sample"])


@dataclass
class AgreementTables:
    """agree's tables for the report (from ``agree --out`` CSVs, or computed once by :func:`judgelab.agree.agreement`),
    why a table is empty, where they came from, and the tidy ratings behind them (None when not at hand)."""

    tables: dict[str, pd.DataFrame]
    skipped: dict[str, str]
    source: str
    tidy: pd.DataFrame | None
    #: why the numbers differ from the raw scores' (``agree --standardize z``), else ""
    standardized: str = ""


def agreement_tables(folder: RunFolder, judge: pd.DataFrame | None, humans: HumanRatings) -> AgreementTables | None:
    """From ``judgelab agree``'s CSVs in the folder; else agree's analysis of the folder's judge and human ratings."""
    from judgelab.report.folder import agree_steps

    have_both = judge is not None and not judge.empty and humans.table is not None and not humans.table.empty
    tidy = _tidy_for_agree(judge, humans) if have_both and judge is not None else None
    if folder.has("correlations.csv"):
        source = "the tables written by `judgelab agree --out` (correlations.csv, williams.csv, human_baseline.csv, self_consistency.csv)"
        tables = {name: read_table(folder.file(f"{name}.csv")) for name in
                  ("correlations", "williams", "human_baseline", "self_consistency") if folder.has(f"{name}.csv")}
        skipped: dict[str, str] = {}
        standardized = ""
        for step in agree_steps(folder.manifest):
            skipped.update({str(k): str(v) for k, v in (step.get("skipped") or {}).items()})
            if (step.get("settings") or {}).get("standardize") == "z":
                standardized = ("These agreement numbers are computed on each rater's standardised scores "
                                "(`judgelab agree --standardize z`); standardization.csv has every statistic on the raw "
                                "scores beside them.")
        return AgreementTables(tables, skipped, source, tidy, standardized)
    if tidy is None:
        return None
    from judgelab.agree import agreement as agree_all

    levels = ["overall", "group", "system"] if tidy["group"].notna().any() else ["overall", "system"]
    report = agree_all(tidy, ["kendall"], levels)
    source = ("computed by the report from the folder's judge and human ratings with `judgelab agree`'s defaults "
              f"(Kendall τ-b; levels {', '.join(levels)})")
    tables = {k: v for k, v in report.tables().items() if not (k == "williams" and v.empty)}
    return AgreementTables(tables, dict(report.skipped), source, tidy)


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
