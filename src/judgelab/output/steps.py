"""The output folders of analyses that are plain functions: each writer takes the analysis's typed
result (or table) and writes its folder, README.md, run.json and results.json through the one writer
(:class:`judgelab.output.OutputFolder`). Analyses return results and write nothing; the command (or
you, from Python) calls the writer when a folder is wanted, so the analysis layer never imports the
output layer.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pandas as pd

from judgelab.output.folder import OutputFolder, write_tables
from judgelab.output.record import input_file

__all__ = ["write_estimates", "write_contamination", "write_hanna_table"]


_DESCRIPTIONS = {"estimates": "PPI++ means per criterion and system, with the classical human-only mean",
                 "differences": "PPI++ differences between systems", "alt_test": "the Alternative Annotator Test",
                 "plan": "human ratings needed for the target half-width"}


def write_estimates(result, out, notes: Sequence[str] = (), settings: dict | None = None, inputs=(),
                    display=None):
    """The folder of ``judgelab human-estimate``: estimates, differences, Alt-Test and plan tables,
    estimates.json, README.md, run.json and results.json (a step beside a run's own outputs). Returns it."""
    with OutputFolder(Path(out), "Human + judge estimates (`judgelab human-estimate`)", command="human-estimate",
                      step=True, display=display) as output:
        tables = result.tables()
        for name in ("estimates", "differences", "alt_test", "plan"):
            if name in tables:
                output.table(tables[name], name, _DESCRIPTIONS[name], show=False)
        output.file("estimates.json", "all of it as one JSON document", table="estimates_document").write_text(
            json.dumps(result.to_dict(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        output.record("human-estimate", settings=settings, inputs=list(inputs), results={"judge": result.judge})
        return output.finish(list(notes))


def write_contamination(result, out, label_field: str | None = None, display=None) -> Path:
    """The folder of ``judgelab contamination --out`` (its record: the settings and the ROC AUC)."""
    output = OutputFolder(Path(out), result.title, command="contamination", display=display)
    output.table(result.table, "min_k_prob", f"per text: tokens, Min-{int(result.k * 100)}% Prob, mean log-probability"
                 + (", member label" if label_field else ""), show=False)
    if result.roc_auc is not None:
        output.table(pd.DataFrame([{"roc_auc": result.roc_auc, "texts": len(result.table), "k": result.k}]), "roc_auc",
                     "ROC AUC of Min-K% Prob, members vs non-members", show=False)
    output.record("contamination", settings={"k": result.k, "label_field": label_field, "model": result.model_id},
                  results={"texts": len(result.table), "roc_auc": result.roc_auc})
    return output.finish()


def write_hanna_table(out: Path, command: str, table: pd.DataFrame, name: str, description: str, scores: Path,
                      ties: str | None = None, display=None) -> Path:
    """The ``--out`` folder of a ``judgelab hanna`` table: the table as ``name.csv``, README.md, run.json and
    results.json (the scores file read, with its digest, and the ties rule), through the one writer."""
    notes = [f"scores: {scores}"]
    if ties is not None:
        notes.append(f"ties: {ties}" + (" (the authors' float ordering, as the published tables)" if ties == "paper"
                                        else " (system means equal on paper are ties)"))
    return write_tables(out, command, f"HANNA: {description}", [(table, name, description)], notes,
                        settings={"ties": ties} if ties is not None else {}, inputs=[input_file("scores", scores)],
                        display=display)
