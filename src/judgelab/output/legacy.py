"""The record of a folder written before judgelab wrote ``results.json``, built from its old files.

This is the one place that knows the file names and ``run.json`` fields of older folders, and the
one reader of a recorded command line (``agree``'s ``--human`` options in a run.json that predates
``human_options``). It computes no statistic: a rate folder's summary rows are ``summary.csv`` as
written, without an interval (the line says how to record one: run ``judgelab rate`` again with the
same options; the store answers it without a call). The record is built in memory when a page reads
such a folder; nothing is written into it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError
from judgelab.output.accounting import RATINGS_FILES as _RATINGS
from judgelab.output.accounting import folder_call_costs
from judgelab.output.record import FolderRecord, InputFile, NewerRecord, OutputFile, Step, read_record

__all__ = ["folder_record", "rebuilt_record", "NO_INTERVAL", "OLDER_FOLDER"]

NO_INTERVAL = ("not recorded in this folder (written before judgelab recorded results.json): run `judgelab rate` again "
               "with the same options to record it (the store answers without a call)")
#: What a page says of a folder read through a rebuilt record.
OLDER_FOLDER = ("Parts of this folder were written before judgelab recorded results.json and are read from their "
                "files: what those files do not hold (a mean's interval, the humans' means, the judge-vs-human "
                "pictures) is not shown. Run `judgelab rate` (answered from the store, no calls) or `judgelab agree … "
                "--out` again to record it.")


def folder_record(folder: str | Path) -> tuple[FolderRecord, list[str]]:
    """The folder's record — its ``results.json``, else the one rebuilt from an older folder's files
    (:func:`rebuilt_record`) — and the problems met reading it.

    Raises:
        NewerRecord: a record of a newer schema (one line naming both versions).
    """
    import json

    path = Path(folder)
    problems: list[str] = []
    try:
        found = read_record(path)
    except NewerRecord:
        raise
    except JudgelabError as exc:
        found, problems = None, [f"{exc}; the folder is read as an older one"]
    if found is not None:
        return found, problems
    try:
        manifest = json.loads((path / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    files = sorted(p.name for p in path.iterdir() if p.is_file())
    return rebuilt_record(path, files, manifest if isinstance(manifest, dict) else None), problems


def rebuilt_record(path: Path, files: list[str], manifest: dict[str, Any] | None) -> FolderRecord:
    """The record of an older folder: a step listing every file by the table it holds (a CSV: its stem;
    ``ratings.*``; ``audit.json``), a ``rate`` step from ``summary.csv``, and an ``agree`` step per agree
    recorded in ``run.json`` (its inputs and ``--human`` options)."""
    listed = [OutputFile(name, "", _role(name)) for name in files if _role(name)]
    costs = folder_call_costs(path)
    steps = [Step("files", "", files=listed, results={} if costs is None else {"call_costs": costs}, source="rebuilt")]
    if "summary.csv" in files:
        steps.append(Step("rate", "", results={"summary": _summary(path / "summary.csv")}, source="rebuilt"))
    for rec in _agree_records(manifest):
        steps.append(_agree_step(rec, path))
    return FolderRecord(steps, "", "")


def _role(name: str) -> str | None:
    if name in _RATINGS:
        return "ratings"
    if name == "audit.json":
        return "audit"
    return name[:-4] if name.endswith(".csv") else None


def _summary(file: Path) -> dict[str, Any]:
    """summary.csv's rows in the shape of :class:`judgelab.summary_results.ScoreSummary` (no interval)."""
    import pandas as pd

    from judgelab.summary_results import ScoreRow, ScoreSummary

    df = pd.read_csv(file)

    def num(row: Any, col: str) -> float | None:
        v = getattr(row, col, None)
        return None if v is None or pd.isna(v) else float(v)

    rows = []
    for r in df.itertuples(index=False):
        items = int(num(r, "items") or 0)
        failed = num(r, "failed")
        rows.append(ScoreRow(str(r.rater), str(r.system), str(r.criterion), items, items,
                             int(num(r, "samples") or 0) or None, num(r, "mean"), None, None, NO_INTERVAL,
                             num(r, "sd"), num(r, "alpha"), num(r, "exact_agreement"),
                             None if failed is None else int(failed), num(r, "failure_rate")))
    return ScoreSummary(tuple(rows)).to_record()


def _agree_records(manifest: dict[str, Any] | None) -> list[dict[str, Any]]:
    m = manifest or {}
    found = [m] if m.get("command") == "agree" else []
    return found + [s for s in m.get("steps") or [] if isinstance(s, dict) and s.get("command") == "agree"]


def _agree_step(rec: dict[str, Any], folder: Path) -> Step:
    inputs = []
    absolute = rec.get("input_files") or []
    for k, given in enumerate(rec.get("inputs") or []):
        inputs.append(InputFile("ratings", str(given), str(absolute[k] if k < len(absolute) else given)))
    given = rec.get("human")
    if not given and isinstance(rec.get("argv"), list):
        argv = [str(a) for a in rec["argv"]]
        given = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--human"), None)
    if given:
        options = rec.get("human_options") or _argv_options(rec.get("argv"))
        inputs.append(InputFile("human", str(given), str(rec.get("human_file") or given), None, options))
    settings = {**(rec.get("settings") or {}), "map": rec.get("map") or {}}
    return Step("agree", str(rec.get("finished") or ""), settings, inputs,
                results={"skipped": {str(k): str(v) for k, v in (rec.get("skipped") or {}).items()}}, source="rebuilt")


def _argv_options(argv: Any) -> dict[str, Any]:
    """``agree``'s --human options read back from a recorded command line (a run.json without ``human_options``)."""
    args = [str(a) for a in argv] if isinstance(argv, list) else []

    def value(name: str) -> str | None:
        for i, arg in enumerate(args):
            if arg == name and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
        return None

    # --<what>-field, or --<what>-col as agree spelled them before
    fields = {"item": "id", "rater": "rater", "criterion": "criterion", "score": "score", "system": "system", "group": "group"}
    out: dict[str, Any] = {k: value(f"--{name}-field") or value(f"--{k}-col") for k, name in fields.items()}
    out["layout"] = value("--human-layout")
    criteria = value("--criteria-fields") or value("--criteria-cols")
    out["criteria"] = [c.strip() for c in (criteria or "").split(",") if c.strip()]
    return out
