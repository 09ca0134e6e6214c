"""AlpacaEval 2's leaderboard reproduced (benchmarks/reproduce_alpaca_eval.py): on a small repository laid out as
tatsu-lab/alpaca_eval (our own annotations), and on the real one where JUDGELAB_ALPACA_EVAL_REPO names a copy."""
from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from alpaca_fixture import annotation, write
from judgelab.preference.alpaca_eval_reproduce import ANNOTATOR, LEADERBOARD, reproduce_alpaca_eval

ROOT = Path(__file__).resolve().parents[2]
HEADER = ",win_rate,standard_error,n_wins,n_wins_base,n_draws,n_total,discrete_win_rate,mode,avg_length," \
         "length_controlled_winrate,lc_standard_error\n"
# sys-a: preferences 2, 1, 1.5, 1.75 -> for the system 1, 0, 0.5, 0.75
ROW_A = f"sys-a,56.25,{float(100 * np.std([1, 0, 0.5, 0.75], ddof=1) / 2)!r},2,1,1,4,62.5,community,30,50.0,0.1\n"


def _script():
    spec = importlib.util.spec_from_file_location("reproduce_alpaca_eval", ROOT / "benchmarks" / "reproduce_alpaca_eval.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _repo(tmp_path: Path, row_a: str = ROW_A) -> Path:
    repo = tmp_path / "alpaca_eval"
    for model, prefs in {"sys-a": [2, 1, 1.5, 1.75], "base": [1.5] * 4}.items():
        folder = repo / "results" / model / ANNOTATOR
        folder.mkdir(parents=True)
        rows = [annotation(i, model, p) for i, p in enumerate(prefs)]
        for r in rows:
            r["annotator"] = ANNOTATOR
        write(folder / "annotations.json", rows)
    board = repo / LEADERBOARD.format(annotator=ANNOTATOR)
    board.parent.mkdir(parents=True)
    board.write_text(HEADER + row_a + "base,50.0,0.0,0,0,4,4,50.0,minimal,20,50.0,\n", encoding="utf-8")
    return repo


def test_a_checkout_matches_and_the_baselines_own_file_is_skipped(tmp_path, capsys):
    result = reproduce_alpaca_eval(_repo(tmp_path), baseline="base")
    assert (result.listed, result.matched, len(result.comparisons)) == (2, 1, 1)
    assert result.skipped == {"base": "the baseline's own file compares it with itself"}
    assert result.comparisons[0].ours["n_wins"] == 2


def test_the_script_exits_1_naming_each_mismatch_and_0_when_all_match(tmp_path, capsys):
    script = _script()
    options = ["--baseline", "base", "--annotator", ANNOTATOR]
    assert script.main([str(_repo(tmp_path / "good")), *options]) == 0
    assert "matched 1/1 models" in capsys.readouterr().out
    bad = ROW_A.replace(",2,1,1,4,", ",3,1,1,4,")
    assert script.main([str(_repo(tmp_path / "bad", bad)), *options]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH sys-a: n_wins: ours 2, published 3" in out and "matched 0/1 models" in out


def test_a_bare_git_directory_is_read_like_a_checkout(tmp_path):
    repo = _repo(tmp_path)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "fixture"], check=True)
    result = reproduce_alpaca_eval(repo / ".git", baseline="base")
    assert (result.listed, result.matched, result.absent) == (2, 1, ())


def test_no_repository_is_exit_2_naming_the_variable(capsys, monkeypatch):
    monkeypatch.delenv("JUDGELAB_ALPACA_EVAL_REPO", raising=False)
    assert _script().main([]) == 2
    assert "JUDGELAB_ALPACA_EVAL_REPO" in capsys.readouterr().err


def test_alpaca_eval_2_published_leaderboard_reproduced():
    repo = os.environ.get("JUDGELAB_ALPACA_EVAL_REPO")
    if not repo:
        pytest.skip("JUDGELAB_ALPACA_EVAL_REPO is not set (a checkout or bare git directory of tatsu-lab/alpaca_eval)")
    result = reproduce_alpaca_eval(repo)
    mismatched = [(c.model, c.mismatches) for c in result.comparisons if not c.matched]
    assert result.comparisons and not mismatched
