"""rate's outputs streamed from the store: the same files and numbers as the whole table gave, in bounded memory."""
import json

import pandas as pd
import pytest

from conftest import write_items
from judgelab.datasets.items import load_items
from judgelab.rate import failure_report, rate_items
from judgelab.rate_outputs import RateRows
from judgelab.spec import JudgeSpec, RunSpec
from judgelab.store import Store
from judgelab.store.judgments import Judgment
from judgelab.summary import compare_systems, score_summary, summarize

RATER, OTHER = "m@t", "other@t"


def _judgment(i: int, rater: str, criterion: str, sample: int) -> Judgment:
    """A varied row: failures with and without an answer, texts that need quoting, a group on some items,
    log-probability scores only on the later items (a column empty in the first chunks)."""
    status = ["ok", "ok", "ok", "unparseable", "refusal", "error", "ok"][(i + sample) % 7]
    score = None if status != "ok" else float((i * 3 + sample) % 5 + 1)
    raw = None if status == "error" and i % 2 else f'Rating: {score}, "quoted", ünïcode\nline {i}'
    return Judgment(f"i{i:02d}", "sysA" if i % 3 else "sysB", f"g{i % 2}" if i >= 12 else None, criterion, rater, sample,
                    score, score, (score or 0) / 2 if i >= 20 else None, None, status, raw)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "store.sqlite") as s:
        s.put(judgments=[_judgment(i, r, c, k) for i in reversed(range(30)) for r in (OTHER, RATER)
                         for c in ("fluency", "coherence") for k in range(2)])
        yield s


ASKED = [("sysA" if i % 3 else "sysB", f"i{i:02d}") for i in range(4, 27)]  # items 0-3 and 27-29 are not this run's


def _before(store: Store) -> pd.DataFrame:
    """The table rate wrote the ratings file from before it was streamed: the store's whole table, this
    rater's rows, the asked items' rows kept in the store's order."""
    whole = store.ratings()
    asked = pd.DataFrame(ASKED, columns=["system", "item_id"]).drop_duplicates()
    return whole[whole["rater"] == RATER].merge(asked, on=["system", "item_id"], how="inner", sort=False).reset_index(drop=True)


def _rows(store: Store, chunk_rows: int = 7) -> RateRows:
    return RateRows((RATER,), lambda: iter(ASKED), chunk_rows).open(store)


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_ratings_file_streamed_in_chunks_is_the_whole_tables_bytes(store, tmp_path, fmt):
    before = _before(store)
    expected = tmp_path / f"expected.{fmt}"
    if fmt == "csv":
        before.to_csv(expected, index=False)
    else:
        before.to_json(expected, orient="records", lines=True, force_ascii=False)
    rows = _rows(store)
    rows.write(store, tmp_path / f"ratings.{fmt}")
    assert len(before) == 92 and len(before) > 10 * rows.chunk_rows  # many chunks, some with an empty column
    assert (tmp_path / f"ratings.{fmt}").read_bytes() == expected.read_bytes()


def test_the_parquet_file_streamed_in_chunks_reads_back_as_the_whole_table(store, tmp_path):
    pytest.importorskip("pyarrow")
    _before(store).to_parquet(tmp_path / "expected.parquet", index=False)
    _rows(store).write(store, tmp_path / "ratings.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "ratings.parquet"), pd.read_parquet(tmp_path / "expected.parquet"))


def test_the_compact_table_gives_the_summary_welch_and_failures_of_the_whole_table(store):
    before = _before(store)
    rows = _rows(store, chunk_rows=5)
    table = rows.compact(store)
    assert "raw" not in table and table["rater"].dtype == "category" and table["status"].dtype == "category"
    assert table["item_id"].tolist() == before["item_id"].tolist()  # the same rows in the same order
    pd.testing.assert_frame_equal(summarize(table), summarize(before))
    assert score_summary(table).to_record() == score_summary(before).to_record()
    pd.testing.assert_frame_equal(compare_systems(table, "sysA", "sysB"), compare_systems(before, "sysA", "sysB"))
    assert rows.failures(store, table, [RATER])[RATER] == failure_report(before)
    many = rows.failures(store, table, [RATER], examples=20)[RATER]
    assert many == failure_report(before, examples=20) and ("error", "") in many.examples  # an error without an answer
    pd.testing.assert_frame_equal(rows.full(store), before)


def test_every_rater_and_item_without_a_filter(store):
    rows = RateRows(None, None, 11).open(store)
    pd.testing.assert_frame_equal(rows.full(store), store.ratings())
    assert len(rows.compact(store)) == len(store.ratings())
    every = [("sysA" if i % 3 else "sysB", f"i{i:02d}") for i in range(30)]
    rows = RateRows((RATER,), lambda: iter(every)).open(store)
    assert rows.items is None  # the items asked are all the rater's: no item is matched in the reads
    pd.testing.assert_frame_equal(rows.full(store), store.ratings(rater=RATER))
    assert RateRows((RATER,), lambda: iter(every[1:])).open(store).items is not None


def test_rate_holds_the_compact_table_and_reads_the_whole_one_when_asked(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"rules": [{"contains": "number 3", "reply": "no idea"}], "default": "Rating: 4"}))
    spec = RunSpec(samples=2, criteria=["likability", "cohesiveness"], judge=JudgeSpec(spec=f"scripted-test-double:{script}"))
    result = rate_items(load_items(write_items(tmp_path / "items.jsonl", 10)), [spec], tmp_path / "out",
                        compare=("gpt2", "human"), progress=False)
    whole = result.ratings  # read from the store now
    assert "raw" not in result.table and result.table["criterion"].dtype == "category"
    assert len(whole) == len(result.table) == 40 and "raw" in whole
    pd.testing.assert_frame_equal(pd.read_csv(result.files["ratings"]), pd.read_csv(tmp_path / "out" / "ratings.csv"))
    written = pd.read_csv(result.files["summary"])
    expected = summarize(whole)
    expected.to_csv(tmp_path / "expected_summary.csv", index=False)
    assert result.files["summary"].read_bytes() == (tmp_path / "expected_summary.csv").read_bytes(), written
    record = json.loads(result.files["record"].read_text())
    assert record["steps"][-1]["results"]["summary"] == json.loads(json.dumps(score_summary(whole).to_record()))
    pd.testing.assert_frame_equal(result.welch, compare_systems(whole, "gpt2", "human"))
    report = failure_report(whole)
    assert result.failures[result.raters[0]] == report and report.failed == 4  # item s3: 2 criteria × 2 samples
    manifest = json.loads(result.files["manifest"].read_text())
    assert manifest["runs"][0]["statuses"] == report.counts
