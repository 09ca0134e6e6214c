"""``judgelab scales``: agreement by scale granularity from two rating files (NLE quality study, §4.2).

Reads the judge's ratings and the human ratings (each either a tidy ratings file, samples averaged,
or a table with an ``id`` column and one column per metric), matches them by item id, and computes
:func:`judgelab.stats.scales.scale_table` on the metrics both have. Figures (judge vs human
against y = x) are drawn by :func:`write_figures`. Nothing here prints.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.errors import JudgelabError
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.output import Display

__all__ = ["ScalesResult", "read_metric_table", "parse_edges", "scales_study", "write_figures"]

_TIDY = {"item_id", "criterion", "rater", "score"}


@dataclass(frozen=True)
class ScalesResult:
    """The result of :func:`scales_study`.

    Attributes:
        table: binary/ternary/7-way weighted F1, RMSE and majority baseline; Pearson and Spearman rows
            (r, p, n) — :data:`judgelab.stats.scales.SCALE_COLUMNS`.
        metrics: the metrics both files have, in the judge file's order.
        judge, human: items × metrics (means), matched by item id by ``scale_table``.
    """

    table: "pd.DataFrame"
    metrics: list[str]
    judge: "pd.DataFrame"
    human: "pd.DataFrame"


def read_metric_table(path: Path, wanted: list[str] | None = None) -> "pd.DataFrame":
    """Items × metrics from a tidy ratings file (``ok`` rows, samples averaged) or from a table with an
    ``id`` column and one column per metric (``wanted``: only these metric columns)."""
    import pandas as pd

    from judgelab.datasets.readers import parse_score, read_records, record_columns
    from judgelab.ratings import read_ratings

    records = None if path.suffix.lower() == ".parquet" else read_records(path)
    columns = [] if records is None else record_columns(records)
    if records is None or _TIDY <= set(columns):
        df = read_ratings(path)
        df = df[df["status"] == Status.OK]
        return df.groupby(["item_id", "criterion"])["score"].mean().unstack()
    if "id" not in columns:
        raise JudgelabError(f"{path}: neither a tidy ratings file ({', '.join(sorted(_TIDY))}) nor a table with an id column")
    metrics = [c for c in columns if c != "id" and (wanted is None or c in wanted)]
    table = pd.DataFrame({m: [parse_score(row.get(m), f"{path}: {records.where(i)}, column {m!r}")
                              for i, row in enumerate(records)] for m in metrics},
                         index=[str(row.get("id")) for row in records], dtype=float)
    return table.groupby(level=0).mean()


def parse_edges(binary: str, ternary: str) -> dict[str, list[float] | None]:
    """``--binary-edges`` and ``--ternary-edges`` (numbers separated by commas) as ``scale_table``'s edges."""
    try:
        return {"binary": [float(x) for x in binary.split(",")], "ternary": [float(x) for x in ternary.split(",")],
                "7-way": None}
    except ValueError:
        raise JudgelabError("bin edges are numbers separated by commas, e.g. --ternary-edges 3,5") from None


def scales_study(judge_path: Path, human_path: Path, edges: dict[str, list[float] | None], out: Path | None = None,
                 display: Display | None = None) -> ScalesResult:
    """Agreement of the judge's ratings with the human ones at each granularity of ``edges``; with ``out``,
    ``scales.csv``, README.md, run.json and results.json (the inputs and edges) are written into that folder.

    Raises:
        JudgelabError: unreadable files, or no metric in common.
    """
    from judgelab.stats.scales import scale_table

    judge = read_metric_table(judge_path)
    human = read_metric_table(human_path, wanted=[str(c) for c in judge.columns])
    common = [c for c in judge.columns if c in human.columns]
    if not common:
        raise JudgelabError(f"no metric in common: judge has {', '.join(map(str, judge.columns))}; "
                            f"humans have {', '.join(map(str, human.columns))}")
    result = ScalesResult(scale_table(human, judge, edges, common), common, judge, human)
    if out is not None:
        from judgelab.output import write_tables
        from judgelab.output.record import input_file

        write_tables(out, "scales", "Agreement by scale granularity",
                     [(result.table, "scales", "binary/ternary/7-way weighted F1, RMSE and majority baseline; Pearson "
                       "and Spearman rows: r, p, n")], [f"judge ratings: {judge_path}", f"human ratings: {human_path}"],
                     settings={"edges": edges}, inputs=[input_file("ratings", judge_path), input_file("human", human_path)],
                     display=display)
    return result


def write_figures(result: ScalesResult, folder: Path) -> list[Path]:
    """One scatter plot per metric (judge vs human, against y = x) into ``folder``; returns the paths."""
    import pandas as pd

    from judgelab.paths import output_folder, safe_filename
    from judgelab.report.figures import scatter_identity

    output_folder(folder, "figure folder")
    paths = []
    for metric in result.metrics:
        joined = pd.concat([result.human[metric].rename("h"), result.judge[metric].rename("j")], axis=1,
                           join="inner").dropna()
        path = folder / f"scatter_{safe_filename(str(metric))}.png"
        scatter_identity(joined["j"], joined["h"], path, f"{metric}: judge vs human", "judge", "human")
        paths.append(path)
    return paths
