"""A report of many items: the page holds the first ones, the rest go to parts beside it, and nothing is lost.

The caps are lowered here (the folder of ``report_helpers.rate_agree_folder`` has 32 units) so that the page
holds 5 units and the others go to parts of 4; read back without judgelab's code (``decode_units``), the
page and its parts hold exactly the units of the uncapped page, which hold the store's judgments."""
from __future__ import annotations

import json
import shutil

import pytest

from conftest import run_cli
from judgelab.errors import JudgelabError
from judgelab.report import html_parts
from judgelab.report.html import build_report, render_report, write_report
from report_helpers import decode_units, parse, rate_agree_folder, store_prompt_and_raw, write_humans


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("parts") / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), out)
    return out


@pytest.fixture
def small_caps(monkeypatch):
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    monkeypatch.setattr(html_parts, "PART_UNITS", 4)


def _browser(page) -> dict:
    return next(a for tag, a in page.tags if a.get("id") == "browser")


def test_a_folder_below_the_cap_is_one_page_as_before(folder, tmp_path):
    humans = write_humans(tmp_path / "H.csv")
    path = write_report(folder, tmp_path / "report.html", human=[humans])
    page = parse(path.read_text(encoding="utf-8"))
    assert not (tmp_path / "report-items").exists() and "data-parts" not in _browser(page)
    data = build_report(folder, human=[humans])
    assert data.items.units == data.items.embedded == 32 and data.items.parts == []
    assert len(decode_units(page)) == 32


def test_above_the_cap_page_and_parts_hold_every_unit_of_the_whole_page(folder, tmp_path, monkeypatch):
    humans = write_humans(tmp_path / "H.csv")
    whole = decode_units(parse(render_report(build_report(folder, human=[humans]))))
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    monkeypatch.setattr(html_parts, "PART_UNITS", 4)
    path = write_report(folder, tmp_path / "report.html", human=[humans])
    page = parse(path.read_text(encoding="utf-8"))
    sidecar = tmp_path / "report-items"
    assert sorted(p.name for p in sidecar.iterdir()) == [f"part-{k:04d}.js" for k in range(1, 8)]  # 27 units by 4
    b = _browser(page)
    assert (b["data-units"], b["data-embedded"], b["data-part-units"], b["data-parts"], b["data-part-dir"]) == \
        ("32", "5", "4", "7", "report-items")
    assert len(json.loads(page.script("jl-index"))["i"]) == 5
    text = " ".join(" ".join(page.text).split())
    assert "This page holds the first 5 items in the order above; the other 27 are in 7 files in the folder " \
           "report-items/ beside the page" in text
    assert len(decode_units(page)) == 5
    paged = decode_units(page, sidecar)
    assert [u["place"] for u in paged[:5]] == [0, 1, 2, 3, 4]  # the page: the first in the default order
    rest = [(u["rater"], u["system"], u["item_id"]) for u in paged[5:]]
    assert rest == sorted(rest)  # the parts: by rater, system and item, each in its place of the default order
    ranked = sorted(paged, key=lambda u: u.pop("place"))
    assert ranked == whole  # same units, same order, same texts, prompts, samples and humans
    # and they are the store's judgments, by label
    stored = {k: v for k, v in store_prompt_and_raw(folder / "store.sqlite").items() if not k[0].startswith("human:")}
    shown = {(u["rater"], u["criterion"], u["system"], u["item_id"], s["sample"]): s["raw"] for u in paged for s in u["samples"]}
    assert shown == {k: v["raw"] for k, v in stored.items()}


def test_a_reference_into_another_cards_prompt_stays_within_its_part(folder, small_caps):
    data = build_report(folder)
    details = [json.loads(__import__("gzip").decompress(__import__("base64").b64decode(blob)))["D"]
               for blob in [data.items.details_gzip_base64] +
               [json.loads(p[p.index(", ") + 2:-3])["data"] for p in data.items.parts]]
    u = 0
    crossing = 0
    for part, units in enumerate(details):
        for d in units:
            rated = d[4]
            for ref in [rated[0], rated[1], *(r for _, r in rated[2])] if rated else []:
                if isinstance(ref, list) and len(ref) == 5:
                    crossing += 1
                    assert html_parts.part_of(ref[0], 5, 4) == part == html_parts.part_of(u, 5, 4)
            u += 1
    assert u == 32 and crossing > 0, crossing


def test_a_later_report_of_few_items_removes_the_parts_and_a_foreign_folder_is_refused(folder, tmp_path, monkeypatch):
    target = tmp_path / "report.html"
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    write_report(folder, target)
    assert (tmp_path / "report-items" / "part-0001.js").is_file()
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 1000)
    write_report(folder, target)
    assert not (tmp_path / "report-items").exists()
    (tmp_path / "report-items").mkdir()
    (tmp_path / "report-items" / "notes.txt").write_text("mine")
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    with pytest.raises(JudgelabError, match="report-items exists and is not a folder of report parts"):
        write_report(folder, target)
    assert (tmp_path / "report-items" / "notes.txt").read_text() == "mine"


def test_the_command_says_one_line_when_the_parts_folder_is_not_its_own(folder, tmp_path, monkeypatch):
    (tmp_path / "out-items").mkdir()
    (tmp_path / "out-items" / "keep.csv").write_text("a\n")
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    r = run_cli("report", str(folder), "--out", str(tmp_path / "out.html"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "out-items exists" in r.stderr, r.stderr


def test_the_live_view_serves_the_same_parts(folder, tmp_path, small_caps):
    from starlette.testclient import TestClient

    from judgelab.report.live import LiveReport, make_app

    written = write_report(folder, tmp_path / "report.html")
    live = LiveReport(folder)
    client = TestClient(make_app(live), base_url="http://127.0.0.1")
    page = parse(client.get("/").text)
    assert _browser(page)["data-part-dir"] == "report-items"
    for path in sorted((written.parent / "report-items").iterdir()):
        got = client.get(f"/report-items/{path.name}")
        assert got.status_code == 200 and got.text == path.read_text(encoding="utf-8")
        assert got.headers["content-type"].startswith("text/javascript")
    assert client.get("/report-items/part-0099.js").status_code == 404
    version = _browser(page)["data-part-version"]
    assert version and client.get(f"/report-items/part-0001.js?v={version}").status_code == 200
    # a page built from other data (another version) is not handed these units
    assert client.get("/report-items/part-0001.js?v=0000000000000000").status_code == 404


def test_the_store_is_read_in_chunks_of_the_size_asked(folder, monkeypatch):
    """The judgments are read ``chunk`` rows at a time, and the table is the same as read at once."""
    from judgelab.report.folder import StoreReader
    from judgelab.store import Store

    asked = []
    chunks = Store.judgment_chunks

    def spy(self, columns, size):
        for rows in chunks(self, columns, size):
            asked.append(len(rows))
            yield rows

    with StoreReader(folder / "store.sqlite") as reader:
        whole = reader.judgments(chunk=0)
        monkeypatch.setattr(Store, "judgment_chunks", spy)
        chunked = reader.judgments(chunk=7)
    assert max(asked) == 7 and sum(asked) == len(whole) > 7 and len(asked) == -(-len(whole) // 7)
    assert chunked.equals(whole)


def test_the_cards_read_the_calls_a_block_of_units_at_a_time(folder, monkeypatch):
    """The item cards ask the store for the calls of at most ``CALL_BLOCK_UNITS`` units at once (never all of them),
    and show exactly what they show with every call read at once."""
    from judgelab.report import html_items
    from judgelab.report.folder import StoreReader
    from judgelab.report.html_calls import CallCache

    with StoreReader(folder / "store.sqlite") as reader:
        judge = reader.judgments()
        judge = judge[~judge["rater"].str.startswith("human:")].reset_index(drop=True)
        keys = {k for row in judge["keys"] for k in row}
        at_once = html_items.build_items(judge, _no_humans(), CallCache(reader.calls(keys)))
        asked: list[int] = []
        seen: set[str] = set()

        def fetch(wanted):
            asked.append(len(wanted))
            seen.update(wanted)
            return reader.calls(wanted)

        monkeypatch.setattr(html_items, "CALL_BLOCK_UNITS", 3)  # 3 units: one call each (samples of one call)
        blocks = html_items.build_items(judge, _no_humans(), CallCache(fetch=fetch, keys=keys))
    per_unit = judge.groupby(["rater", "criterion", "system", "item_id"])["keys"].apply(
        lambda ks: len({k for row in ks for k in row}))
    assert asked and max(asked) <= 3 * per_unit.max() < len(keys)
    assert seen == keys and len(asked) >= len(per_unit) // 3  # every call read, block by block
    assert blocks.index == at_once.index and blocks.details_gzip_base64 == at_once.details_gzip_base64


def _no_humans():
    from judgelab.report.humans import HumanRatings

    import pandas as pd

    return HumanRatings(table=pd.DataFrame(), sources=[])


def test_the_command_names_the_parts_folder_to_keep_beside_the_page(folder, tmp_path, monkeypatch):
    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", 5)
    r = run_cli("report", str(folder), "--out", str(tmp_path / "out.html"))
    assert r.returncode == 0, r.stderr
    assert f"the rest of its item cards in {tmp_path / 'out-items'}/" in r.stdout and "keep them beside the page" in r.stdout


@pytest.mark.parametrize("caps", [(5, 4), (3, 7), (11, 2)])
def test_the_streamed_build_of_a_large_store_equals_the_one_pass_build(folder, tmp_path, monkeypatch, caps):
    """Above the page's share a store's cards are built in two passes, a chunk at a time (html_items_stream): the
    page and its parts are byte for byte those of the one-pass build of the whole table (with and without the
    human ratings that rank the cards), and every section around them reads the same."""
    from judgelab.report import html_items_stream
    from judgelab.report.folder import StoreReader
    from judgelab.report.store_reads import StoreRows

    monkeypatch.setattr(html_parts, "EMBEDDED_UNITS", caps[0])
    monkeypatch.setattr(html_parts, "PART_UNITS", caps[1])
    streamed_calls = []
    real = html_items_stream.build_items_streamed
    monkeypatch.setattr("judgelab.report.html.build_items_streamed",
                        lambda *a, **k: streamed_calls.append(1) or real(*a, **k), raising=False)
    for human in ([], [write_humans(tmp_path / "H.csv")]):
        with monkeypatch.context() as m:  # the whole table is never read: a unit, a chunk, a few rows at a time
            m.setattr(StoreReader, "judgments", lambda self, chunk=None: pytest.fail("the whole table was read"))
            m.setattr(StoreReader, "item_texts", lambda self: pytest.fail("every item text was read"))
            new = build_report(folder, human=human)
        with monkeypatch.context() as m:
            m.setattr(StoreRows, "count", lambda self: 0)  # the whole table read at once, as before
            old = build_report(folder, human=human)
        new.generated = old.generated
        assert new.items.parts and new.items.parts == old.items.parts and new.items.version == old.items.version
        assert render_report(new) == render_report(old)
    assert len(streamed_calls) == 2
