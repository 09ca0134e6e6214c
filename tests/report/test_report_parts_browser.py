"""A report whose page holds only the first items, opened from file:// in headless Chromium: the status line says
so, and a later page, a filter, a search, a link to an item in a part and the download cover every item (the
parts load on demand). The caps are lowered so that the 32 units of the test folder make a page of 5 and 7 parts,
shown 2 to a page.

Skipped, with the reason, when selenium, chromium or chromedriver is missing (as the other browser tests).
"""
from __future__ import annotations

import csv
import io
import shutil

import pytest

import test_report_browser
from judgelab.report import html_parts
from judgelab.report import html
from judgelab.report.html import write_report
from report_helpers import decode_units, parse, rate_agree_folder, write_humans
from test_compare_browser import _capture_download
from test_report_find_browser import _shown, _type, _until_marked

driver = test_report_browser.driver  # the browser fixture, and its skip conditions:
pytestmark = test_report_browser.pytestmark


@pytest.fixture(scope="module")
def paged(tmp_path_factory):
    folder = rate_agree_folder(tmp_path_factory)
    out = tmp_path_factory.mktemp("paged") / "report.html"
    humans = write_humans(out.parent / "H.csv")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(html_parts, "EMBEDDED_UNITS", 5)
        mp.setattr(html_parts, "PART_UNITS", 4)
        mp.setattr(html, "PAGE_SIZE", 2)
        path = write_report(folder, out, human=[humans])
    units = decode_units(parse(path.read_text(encoding="utf-8")), out.parent / "report-items")
    return path, sorted(units, key=lambda u: u["place"])  # in the page's default order


def _status(driver) -> str:
    return driver.find_element("id", "browser-status").text


def test_the_page_loads_the_rest_of_the_items_when_a_view_needs_them(driver, paged):
    path, units = paged
    assert len(units) == 32
    driver.set_window_size(1400, 1000)
    test_report_browser._open(driver, path)
    keys = ["\u0001".join((u["item_id"], u["criterion"], u["system"], u["rater"])) for u in units]
    assert _status(driver) == "Items 1–2 of 32 (this page holds the first 5; the rest load on demand)"
    assert [s["key"] for s in _shown(driver)] == keys[:2]
    driver.find_element("id", "p-next").click()
    test_report_browser._wait_ready(driver)
    assert [s["key"] for s in _shown(driver)] == keys[2:4]
    assert driver.execute_script("return document.querySelectorAll('script[src]').length") == 0  # none loaded yet
    driver.find_element("id", "p-next").click()  # units 5 and 6: the first in a part
    test_report_browser._wait_ready(driver)
    assert [s["key"] for s in _shown(driver)] == keys[4:6] and _status(driver) == "Items 5–6 of 32"
    _type(driver, "hmm hard")  # answers of story 3, wherever their cards are
    expected = {(u["item_id"], u["criterion"]) for u in units
                if any("hmm hard" in (s["raw"] or "").replace(",", "") for s in u["samples"])}
    assert {(s["key"].split("\u0001")[0], s["criterion"]) for s in _shown(driver)} < expected
    assert _status(driver) == f"Items 1–2 of {len(expected)} (filtered from 32)"
    _type(driver, "")
    assert _status(driver) == "Items 1–2 of 32"  # every part loaded now
    rows = list(csv.reader(io.StringIO(_capture_download(driver, "f-download").lstrip("\ufeff"))))
    assert len(rows) == 33 and [r[0] for r in rows[1:]] == [u["item_id"] for u in units]
    test_report_browser._no_console_errors(driver)


def test_a_link_to_an_item_in_a_part_opens_it(driver, paged):
    path, units = paged
    last = units[-1]
    from urllib.parse import quote

    link = (f"#item={quote(last['item_id'], safe='')}&criterion={quote(last['criterion'])}"
            f"&system={quote(last['system'])}&judge={quote(last['rater'], safe='')}")
    driver.get("about:blank")
    driver.get(path.resolve().as_uri() + link)
    _until_marked(driver)
    target = [s for s in _shown(driver) if s["target"]]
    assert len(target) == 1 and target[0]["key"].startswith(last["item_id"] + "\u0001" + last["criterion"])
    test_report_browser._no_console_errors(driver)


def test_without_its_parts_folder_the_page_says_what_to_keep(driver, paged, tmp_path):
    path, _ = paged
    alone = tmp_path / "report.html"
    shutil.copy(path, alone)
    test_report_browser._open(driver, alone)
    driver.find_element("id", "p-next").click()  # still the page's own items
    test_report_browser._wait_ready(driver)
    driver.find_element("id", "p-next").click()  # items 5 and 6: the first part is needed
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: d.find_element("id", "browser").get_attribute("data-ready") == "error")
    assert "report-items/part-0001.js could not be loaded: keep the folder report-items/ beside this page" in \
        driver.find_element("id", "browser-message").text
