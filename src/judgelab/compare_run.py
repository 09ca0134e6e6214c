"""``judgelab compare`` as library functions: read two runs, compare them item by item, write the folder.

:func:`load_run` reads one run's judgments — the ratings file its record lists, else its store — and the texts
its store recorded; :func:`compare_folders` compares two runs (:func:`judgelab.compare.compare_runs`);
:func:`run_compare` writes ``compare.csv``, ``results.json`` (the ``compare`` step: the runs, the counts, the
summaries per criterion), README.md, run.json and the compare page as report.html. :func:`compare_page` makes
the same page in memory (``judgelab view`` of a folder of runs).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from judgelab.compare_results import WHERE, CompareResult
from judgelab.errors import JudgelabError
from judgelab.output.record import InputFile, input_file

if TYPE_CHECKING:
    import pandas as pd

    from judgelab.output import Display

__all__ = ["LoadedRun", "load_run", "compare_folders", "run_compare", "compare_page"]


@dataclass
class LoadedRun:
    """One side of a comparison: the folder, the rater chosen, its judgments, the texts and the file read."""

    folder: Path
    rater: str
    judgments: pd.DataFrame
    texts: dict[tuple[str, str], str]
    source: Path


def load_run(folder: str | Path, rater: str | None = None, side: str = "A") -> LoadedRun:
    """The judgments of one judge of the run in ``folder`` (``rater``: which one, when it holds several).

    Raises:
        JudgelabError: one line naming what to change — not a folder, not a run, no or several judges.
    """
    from judgelab.raters import is_human
    from judgelab.report.folder import StoreReader, open_folder, ratings_from_file

    rf = open_folder(folder)
    name = rf.record.file("ratings")
    if name is not None and rf.has(name):
        source, judgments = rf.file(name), ratings_from_file(rf.file(name))
    elif rf.has("store.sqlite"):
        source = rf.file("store.sqlite")
        with StoreReader(source) as reader:
            judgments = reader.judgments()
    else:
        raise JudgelabError(f"run {side}: {rf.path} is not a run (no ratings file or store.sqlite in it): give the "
                            "--out folder of judgelab rate, a recipe or a run file")
    judges = sorted(set(judgments["rater"]) - {r for r in set(judgments["rater"]) if is_human(r)})
    if rater is None and len(judges) != 1:
        raise JudgelabError(f"run {side}: {rf.path} has {'no judge' if not judges else 'the judges ' + ', '.join(judges)}"
                            + ("" if not judges else f": pick one with --rater-{side.lower()}"))
    chosen = rater if rater is not None else judges[0]
    if chosen not in judges:
        raise JudgelabError(f"run {side}: no judge {chosen!r} in {rf.path} (it has {', '.join(judges) or 'none'})")
    texts: dict[tuple[str, str], str] = {}
    if rf.has("store.sqlite"):
        with StoreReader(rf.file("store.sqlite")) as reader:
            for (r, system, item), text in reader.item_texts().items():
                if r == chosen or (system, item) not in texts:
                    texts[(system, item)] = text.text
    return LoadedRun(rf.path, chosen, judgments[judgments["rater"] == chosen].reset_index(drop=True), texts,
                     source)


def compare_folders(run_a: str | Path, run_b: str | Path, rater_a: str | None = None,
                    rater_b: str | None = None) -> tuple[CompareResult, list[InputFile]]:
    """Compare the runs in two folders label by label; returns the result and the files read."""
    from judgelab.compare import compare_runs

    a, b = load_run(run_a, rater_a, "A"), load_run(run_b, rater_b, "B")
    texts = {**b.texts, **a.texts}
    try:
        result = compare_runs(a.judgments, b.judgments, str(run_a), str(run_b), a.rater, b.rater, texts)
    except ValueError as exc:
        raise JudgelabError(str(exc)) from None
    return result, [input_file("ratings", a.source, {"rater": a.rater, "side": "A"}),
                    input_file("ratings", b.source, {"rater": b.rater, "side": "B"})]


def run_compare(run_a: str | Path, run_b: str | Path, out: str | Path, rater_a: str | None = None,
                rater_b: str | None = None, display: Display | None = None) -> CompareResult:
    """Compare two runs and write the folder ``out``: compare.csv, results.json, README.md, run.json and the page."""
    from judgelab.output import OutputFolder

    _check_out(Path(out))
    result, inputs = compare_folders(run_a, run_b, rater_a, rater_b)
    with OutputFolder(Path(out), f"compare {run_a} vs {run_b}", command="compare", display=display) as output:
        output.table(result.rows, "compare", "one row per label (item_id, system, criterion, sample) either run "
                     "rated: both scores and statuses, B − A, where (" + ", ".join(WHERE) + "), the rated text and "
                     "both answers; differences first", show=False)
        output.record("compare", settings={"run_a": str(run_a), "run_b": str(run_b), "rater_a": result.rater_a,
                                           "rater_b": result.rater_b}, inputs=inputs, results=result.to_record())
        output.finish([s.line() for s in result.summaries], runs=[])
    return result


def _check_out(out: Path) -> None:
    """Refuse an ``--out`` folder holding another command's outputs (a run's page would become the comparison)."""
    from judgelab.report.folder import open_folder

    if not ((out / "run.json").is_file() or (out / "results.json").is_file()):
        return
    kinds = sorted({step.kind for step in open_folder(out).record.steps} - {"compare"})
    if kinds:
        raise JudgelabError(f"--out {out} holds the outputs of {', '.join(kinds)}: give the comparison a folder of its own")


def compare_page(run_a: str | Path, run_b: str | Path, title: str | None = None) -> str:
    """The compare page of two runs, made in memory (nothing written)."""
    from judgelab.report.compare_page import render_compare

    result, _ = compare_folders(run_a, run_b)
    return render_compare(result.to_record()["compare"], result.rows, title)
