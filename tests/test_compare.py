"""Two runs compared item by item (judgelab.compare), in-process: rows matched by label, never by position."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import run_cli
from judgelab.compare import compare_runs
from judgelab.compare_results import ROW_COLUMNS


def _run(scores: dict[tuple[str, str], float], criterion_of=None, status=None) -> pd.DataFrame:
    rows = []
    for (item, criterion), score in scores.items():
        bad = status is not None and (item, criterion) in status
        rows.append({"item_id": item, "system": "s", "criterion": criterion, "sample": 0,
                     "score": None if bad else score, "status": status[(item, criterion)] if bad else "ok",
                     "raw": f"answer {score} for {item}", "rater": "j"})
    return pd.DataFrame(rows)


A = {(f"i{k}", c): float(1 + (k * (3 if c == "x" else 2)) % 5) for k in range(12) for c in ("x", "y")}
B = {key: (v if int(key[0][1:]) % 3 else 6 - v) for key, v in A.items()}


def test_shuffled_rows_give_the_same_result():
    a, b = _run(A), _run(B)
    first = compare_runs(a, b)
    second = compare_runs(a.sample(frac=1, random_state=1), b.sample(frac=1, random_state=2).iloc[::-1])
    pd.testing.assert_frame_equal(first.rows, second.rows)
    assert first.summaries == second.summaries
    assert list(first.rows.columns) == ROW_COLUMNS


def test_differences_first_largest_first_and_the_statistics_of_the_matched_pairs():
    r = compare_runs(_run(A), _run(B))
    diffs = r.rows["diff"].tolist()
    differ = r.rows[r.rows["where"] == "differ"]
    assert len(differ) > 0 and list(r.rows["where"][: len(differ)]) == ["differ"] * len(differ)
    assert differ["diff"].abs().tolist() == sorted(differ["diff"].abs().tolist(), reverse=True)
    assert set(r.rows["where"][len(differ):]) == {"same"} and all(d == 0 for d in diffs[len(differ):])
    for s in r.summaries:
        a = np.array([A[(f"i{k}", s.criterion)] for k in range(12)])
        b = np.array([B[(f"i{k}", s.criterion)] for k in range(12)])
        assert s.n_both == 12 and s.n_differ == int((a != b).sum())
        assert s.mean_diff == pytest.approx((b - a).mean()) and s.exact == pytest.approx((a == b).mean())
        assert s.spearman == pytest.approx(stats.spearmanr(a, b).statistic)
        assert s.kendall == pytest.approx(stats.kendalltau(a, b).statistic)
        assert "(n = 12)" in s.line()


def test_an_item_in_one_run_only_and_a_criterion_only_one_run_rated():
    a = _run({**A, ("extra", "x"): 3.0})
    b = _run({**{k: v for k, v in B.items() if k != ("i4", "y")}, ("i1", "z"): 2.0})
    r = compare_runs(a, b)
    only_a = r.rows[r.rows["where"] == "only_a"]
    only_b = r.rows[r.rows["where"] == "only_b"]
    assert sorted(zip(only_a["item_id"], only_a["criterion"])) == [("extra", "x"), ("i4", "y")]
    assert list(zip(only_b["item_id"], only_b["criterion"])) == [("i1", "z")]
    assert only_a["score_b"].isna().all() and only_a["diff"].isna().all() and (only_a["status_b"] == "").all()
    by = {s.criterion: s for s in r.summaries}
    assert (by["x"].only_a, by["y"].only_a, by["z"].only_b, by["z"].n_both) == (1, 1, 1, 0)
    assert by["z"].spearman is None and "no correlation with 0 labels" in by["z"].note
    assert r.counts()["only_a"] == 2 and r.counts()["only_b"] == 1


def test_a_failed_judgment_is_counted_and_shown_never_compared():
    r = compare_runs(_run(A), _run(B, status={("i2", "x"): "no_rating"}))
    failed = r.rows[r.rows["where"] == "failed"]
    assert list(zip(failed["item_id"], failed["criterion"], failed["status_b"])) == [("i2", "x", "no_rating")]
    assert failed["diff"].isna().all()
    by = {s.criterion: s for s in r.summaries}
    assert (by["x"].failed_a, by["x"].failed_b, by["x"].n_both) == (0, 1, 11)
    assert "failed in B 1" in by["x"].line()


def test_a_sample_read_as_a_number_or_as_text_is_one_label():
    a = _run(A)
    b = _run(B).assign(sample=lambda d: ["0.0"] * len(d))  # a ratings file read back as text
    r = compare_runs(a, b)
    assert r.counts()["only_a"] == r.counts()["only_b"] == 0 and set(r.rows["sample"]) == {"0"}


def test_a_label_rated_twice_is_refused():
    a = _run(A)
    with pytest.raises(ValueError, match="rates item 'i0'.*more than once"):
        compare_runs(pd.concat([a, a.iloc[:1]]), _run(B))


def _folder(tmp_path: Path, name: str, script: dict, items: Path) -> Path:
    (tmp_path / f"{name}.json").write_text(json.dumps(script))
    r = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{tmp_path / name}.json",
                "--criteria", "likability", "--samples", "1", "--out", str(tmp_path / name), "--quiet")
    assert r.returncode == 0, r.stderr
    return tmp_path / name


def test_compare_command_writes_the_folder_and_refuses_what_is_not_a_run(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"t{k}", "text": f"Tale {k} <script>alert(1)</script>",
                                         "context": "c"}) + "\n" for k in range(4)))
    a = _folder(tmp_path, "a", {"default": "I would rate it a 4."}, items)
    b = _folder(tmp_path, "b", {"rules": [{"contains": "Tale 2", "reply": "I would rate it a 1."}],
                                "default": "I would rate it a 4."}, items)
    r = run_cli("compare", str(a), str(b), "--out", str(tmp_path / "cmp"))
    assert r.returncode == 0, r.stderr
    assert "1 differ" in r.stdout and "likability: 4 in both, 1 differ" in r.stdout
    rows = pd.read_csv(tmp_path / "cmp" / "compare.csv", dtype=str, keep_default_na=False)
    assert rows.iloc[0][["item_id", "where", "diff"]].tolist() == ["t2", "differ", "-3.0"]
    assert rows.iloc[0]["text"] == "Tale 2 <script>alert(1)</script>"
    record = json.loads((tmp_path / "cmp" / "results.json").read_text())
    step = next(s for s in record["steps"] if s["kind"] == "compare")
    assert step["results"]["compare"]["counts"]["differ"] == 1
    page = (tmp_path / "cmp" / "report.html").read_text()
    assert 'id="c-search"' in page and "<script>alert" not in page  # the text is data, escaped in the JSON
    assert "://" not in page and "url(" not in page.lower()  # nothing outside the page
    for bad, says in (((str(items), str(b)), "is not a folder"), ((str(tmp_path), str(b)), "not a judgelab output"),
                      ((str(tmp_path / "cmp"), str(b)), "is not a run")):
        r = run_cli("compare", *bad, "--out", str(tmp_path / "x"))
        assert r.returncode == 2 and says in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    before = (a / "report.html").read_bytes()
    r = run_cli("compare", str(a), str(b), "--out", str(a))  # into a run's folder: its page would be replaced
    assert r.returncode == 2 and "holds the outputs of rate" in r.stderr and (a / "report.html").read_bytes() == before
    assert run_cli("compare", str(b), str(a), "--out", str(tmp_path / "cmp")).returncode == 0  # its own folder again
