"""docs/python-api.md's notebook flow (DataFrames → ratings → human ratings → agreement table) runs as written.

The code block under "## From DataFrames to an agreement table" is executed in an empty folder. The
page's judge is ``judge="local"`` (the embedded model); the test puts the scripted test double in
its place, so it runs in a second without a model file: its script answers each of the page's texts
with the rounded mean of the page's own human scores for it, so the judge agrees with the humans and
the table it yields is checked for that. Everything else runs as the page shows it.
"""
from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pandas as pd

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"
HEADING = "From DataFrames to an agreement table"


def notebook_code() -> str:
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(HEADING)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/python-api.md has no '## {HEADING}' section"
    block = re.search(r"^```python\n(.*?)^```", match.group(1), re.S | re.M)
    assert block, "the section has no ```python block"
    return block.group(1)


def page_data(code: str) -> dict:
    """The page's imports and its ``texts`` and ``humans`` DataFrames (the statements that make them)."""
    tree = ast.parse(code)
    wanted = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)) or
              (isinstance(node, ast.Assign) and {t.id for t in node.targets if isinstance(t, ast.Name)} & {"texts", "humans"})]
    namespace: dict = {}
    exec(compile(ast.Module(body=wanted, type_ignores=[]), "python-api.md", "exec"), namespace)
    return namespace


def test_the_notebook_flow_runs_as_written(tmp_path, monkeypatch):
    code = notebook_code()
    assert len([line for line in code.splitlines() if line.strip()]) <= 14  # "about ten lines"
    assert code.count('judge="local"') == 1
    data = page_data(code)
    texts, humans = data["texts"], data["humans"]
    assert isinstance(texts, pd.DataFrame) and isinstance(humans, pd.DataFrame) and "status" not in humans
    means = humans.groupby("item_id")["score"].mean()
    rules = [{"contains": text, "reply": str(round(means[item]))} for item, text in zip(texts["id"], texts["text"])]
    (tmp_path / "judge.json").write_text(json.dumps({"rules": rules, "default": "3"}))
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code.replace('judge="local"', 'judge="scripted-test-double:judge.json"'), "python-api.md", "exec"),
         namespace)
    result, report = namespace["result"], namespace["report"]
    samples = namespace["spec"].effective_samples  # the double's 3 answers a text; the local judge's 1 (log-probabilities)
    assert len(result.ratings) == len(texts) * samples and (result.ratings["status"] == "ok").all()
    assert (tmp_path / "notebook-run" / "store.sqlite").is_file()
    table = report.correlations
    assert isinstance(table, pd.DataFrame) and list(table["level"]) == ["overall"]
    row = table.iloc[0]
    assert row["rater"] == result.raters[0] and row["n"] == len(texts)
    assert not math.isnan(row["r"]) and row["r"] > 0.8 and row["ci_low"] <= row["r"] <= row["ci_high"]
    assert report.human_baseline.shape[0] == 1  # two individual human raters: the human baseline is computed
