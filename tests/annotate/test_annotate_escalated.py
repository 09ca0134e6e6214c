"""``judgelab annotate --sample ids:escalated_ids.txt`` selects exactly the items ``judgelab escalate`` sent to
people, system by system (the file's ``system<TAB>item_id`` lines)."""
from __future__ import annotations

import pandas as pd
import pytest

from annotate_helpers import read_rows, write_items
from conftest import run_cli
from judgelab.annotate.selection import select_ids
from judgelab.annotate.setup import prepare
from judgelab.errors import JudgelabError


def test_annotate_selects_exactly_the_escalated_items(tmp_path):
    items = write_items(tmp_path / "items.jsonl", per_system=6)
    rows = read_rows(items)
    # confident (both samples alike) and right on it00-it02 of alpha-sys and it03-it05 of beta-sys; elsewhere the
    # samples spread over the scale (no confidence) and miss the humans
    confident = {("alpha-sys", f"it{k:02d}") for k in range(3)} | {("beta-sys", f"it{k:02d}") for k in range(3, 6)}
    judge, human = [], []
    for r in rows:
        key = (r["system"], r["id"])
        for sample, score in enumerate((4, 4) if key in confident else (1, 5)):
            judge.append({"item_id": r["id"], "system": r["system"], "criterion": "fluency", "rater": "judge",
                          "sample": sample, "score": score})
        human.append({"item_id": r["id"], "system": r["system"], "criterion": "fluency", "rater": "1",
                      "score": 4 if key in confident else 5.5})
    pd.DataFrame(judge).to_csv(tmp_path / "judge.csv", index=False)
    pd.DataFrame(human).to_csv(tmp_path / "human.csv", index=False)
    out = tmp_path / "esc"
    r = run_cli("escalate", str(tmp_path / "judge.csv"), "--human", str(tmp_path / "human.csv"), "--confidence",
                "samples", "--risk", "0.5", "--delta", "0.5", "--out", str(out))
    assert r.returncode == 0, r.stderr
    escalated = {(rw["system"], rw["id"]) for rw in rows} - confident
    session = prepare(items, "plain-quality", tmp_path / "ann", criteria=["fluency"],
                      sample=f"ids:{out / 'escalated_ids.txt'}")
    try:
        assert {(i.system, i.item_id) for i in session.items} == escalated
    finally:
        session.store.close()


def test_ids_lines_with_a_system():
    keys = [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")]
    assert select_ids(keys, ["b\t1"]).keys == (("b", "1"),)
    assert select_ids(keys, ["2", "b\t1"]).keys == (("a", "2"), ("b", "1"), ("b", "2"))
    with pytest.raises(JudgelabError, match="not among the items"):
        select_ids(keys, ["c\t1"])
