"""`judgelab human-estimate --quantile`: t intervals by default, ppi-python's normal ones on request (in-process)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from judgelab.cli import main


def _files(tmp_path, n_items=30, n_human=8):
    rng = np.random.default_rng(3)
    rows = []
    for system in ("A", "B"):
        for k in range(n_items):
            truth = float(rng.integers(1, 6))
            rows.append((f"{system}{k}", system, "q", "judge@t", float(np.clip(round(truth + rng.normal(0, 1)), 1, 5))))
            if k < n_human:
                rows.append((f"{system}{k}", system, "q", "human:ann", truth))
    df = pd.DataFrame(rows, columns=["item_id", "system", "criterion", "rater", "score"])
    judge, human = tmp_path / "judge.csv", tmp_path / "human.csv"
    df[df["rater"] == "judge@t"].to_csv(judge, index=False)
    df[df["rater"] != "judge@t"].to_csv(human, index=False)
    return str(judge), str(human)


def _run(capsys, *args):
    try:
        main(["human-estimate", *args])
        code = 0
    except SystemExit as stop:
        code = stop.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_t_by_default_normal_on_request(tmp_path, capsys):
    judge, human = _files(tmp_path)
    code, out, err = _run(capsys, judge, "--human", human, "--out", str(tmp_path / "t"),
                          "--target-half-width", "0.6")
    assert code in (0, None), err
    assert "95% t intervals" in out and "valid_from" in out
    code, out, err = _run(capsys, judge, "--human", human, "--out", str(tmp_path / "n"), "--quantile", "normal")
    assert code in (0, None), err
    assert "95% normal (ppi-python) intervals" in out and "fewer than the 50" in out
    t = json.loads((tmp_path / "t" / "estimates.json").read_text())
    n = json.loads((tmp_path / "n" / "estimates.json").read_text())
    assert t["quantile"] == "t" and n["quantile"] == "normal"
    assert t["means"][0]["result"]["df"] == 6.0 and n["means"][0]["result"]["df"] is None  # inf is not JSON
    wide = t["means"][0]["result"]["half_width"]
    assert wide > n["means"][0]["result"]["half_width"]
    plan = pd.read_csv(tmp_path / "t" / "plan.csv")
    assert {"valid_from", "n_for_width"} <= set(plan.columns) and (plan["n_needed"] >= plan["valid_from"]).all()


def test_bad_quantile_is_one_line(tmp_path, capsys):
    judge, human = _files(tmp_path)
    code, out, err = _run(capsys, judge, "--human", human, "--out", str(tmp_path / "x"), "--quantile", "z")
    lines = err.strip().splitlines()
    assert code == 2 and lines == ["judgelab: error: --quantile must be t or normal, got 'z'"]
    assert not (tmp_path / "x").exists()
