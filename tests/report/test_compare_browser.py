"""Two runs side by side in headless Chromium at 1400×1000: ``judgelab compare``'s page (differences first, search
over texts and answers, a link to each item, the download of the rows shown) and ``judgelab view`` of a folder
of runs (the list, a link to each run, two runs compared live). Screenshots: compare-page.png, runs-list.png.

Skipped, with the reason, when selenium, chromium or chromedriver is missing (as the other browser tests).
"""
from __future__ import annotations

import csv
import io
import os
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from report_helpers import RUNS_XSS as XSS, three_runs
from servers import ServerProcess
import test_report_browser

driver = test_report_browser.driver  # the browser fixture, and its skip conditions:
pytestmark = test_report_browser.pytestmark

SRC = str(Path(__file__).resolve().parents[2] / "src")
@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    base = tmp_path_factory.mktemp("compare")
    runs = three_runs(base)
    r = run_cli("compare", str(runs / "lenient"), str(runs / "strict"), "--out", str(base / "cmp"))
    assert r.returncode == 0, r.stderr
    return runs, base / "cmp" / "report.html"


def _ready(driver) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(lambda d: d.find_element("id", "c-list").get_attribute("data-ready") == "1")


def _cards(driver) -> list[dict]:
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#c-items article.cmp-item'), function (a) {"
        " return {item: a.getAttribute('data-item'), where: a.getAttribute('data-where'), text: a.textContent,"
        " open: a.querySelector('details').open, top: a.getBoundingClientRect().top}; });")


def _capture_download(driver, button: str = "c-download") -> str:
    """Click the download button with URL.createObjectURL watched; the text of the Blob it was given."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script(
        "window.__csv = null; var make = URL.createObjectURL;"
        "URL.createObjectURL = function (blob) { blob.text().then(function (t) { window.__csv = t; });"
        " return make.call(URL, blob); };"
        "document.getElementById(arguments[0]).click();", button)
    return WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.__csv;"))


def test_two_runs_compared_item_by_item_in_one_page(driver, compared, tmp_path):
    _, page = compared
    driver.set_window_size(1400, 1000)
    driver.get_log("browser")
    driver.get(page.resolve().as_uri())
    _ready(driver)
    test_report_browser._no_console_errors(driver)
    assert driver.execute_script("return window.__xss === undefined")  # the text with a script tag is data
    cards = _cards(driver)
    assert [c["where"] for c in cards[:2]] == ["differ", "differ"] and cards[2]["where"] == "failed"
    assert [c["item"] for c in cards[:2]] == ["s1", "s6"]  # |1 − 4| before |2 − 4|
    assert "B − A -3" in cards[0]["text"] and cards[0]["top"] < 1000  # on the first screen
    assert "likability: 9 in both, 2 differ" in driver.find_element("id", "summary").text
    assert "Spearman ρ" in driver.find_element("id", "summary").text
    shown = [c for c in cards if c["item"] == "s3"]
    assert XSS in shown[0]["text"]  # set as text, shown as written
    shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "compare-page.png"
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000

    # search: a word of one text finds that item, with the count said
    search = driver.find_element("id", "c-search")
    search.send_keys("WALRUS")
    cards = _cards(driver)
    assert [c["item"] for c in cards] == ["s6"] and driver.find_element("id", "c-count").text == "1 of 10 rows match"
    search.clear()
    search.send_keys("Flat")  # a word of an answer
    assert [c["item"] for c in _cards(driver)] == ["s6"]
    search.clear()
    search.send_keys("heron =SUM")  # every word, one in the text, one in an answer
    assert [c["item"] for c in _cards(driver)] == ["s1"]
    search.clear()
    search.send_keys("heron otter")  # in no one row
    assert _cards(driver) == [] and driver.find_element("id", "c-count").text == "0 of 10 rows match"
    # the download gives the rows shown: the search with a filter on the kind of row
    search.clear()
    search.send_keys("tale")
    driver.find_element("id", "c-where").send_keys("both scored, the scores differ")
    assert [c["item"] for c in _cards(driver)] == ["s1", "s6"]
    rows = list(csv.reader(io.StringIO(_capture_download(driver).lstrip("\ufeff"))))
    assert rows[0][:8] == ["item_id", "system", "criterion", "sample", "where", "score_a", "score_b", "diff"]
    assert [r[0] for r in rows[1:]] == ["s1", "s6"] and rows[1][7] == "-3"
    answers_b = {r[0]: r[rows[0].index("answer_b")] for r in rows[1:]}
    assert answers_b["s1"] == "'=SUM(A1) I would rate it a 1."  # a formula is shown, not run
    assert answers_b["s6"] == "I would rate it a 2, \"flat\",\nshort."  # comma, quote and newline kept whole


def test_the_link_of_an_item_opens_that_card(driver, compared):
    _, page = compared
    driver.set_window_size(1400, 1000)
    driver.get(page.resolve().as_uri())
    _ready(driver)
    link = driver.execute_script("return Array.prototype.find.call(document.querySelectorAll('a.permalink'),"
                                 " function (a) { return a.closest('article').getAttribute('data-item') === 's8'; })"
                                 ".getAttribute('href');")
    assert link.startswith("#item=s8&")
    driver.get(page.resolve().as_uri() + "#item=s8")  # a new page, opened on the item's link
    driver.refresh()
    _ready(driver)
    card = next(c for c in _cards(driver) if c["item"] == "s8")
    assert card["open"] and -2 <= card["top"] < 200
    # a link to a card the filters hide clears them
    driver.find_element("id", "c-search").send_keys("otter")
    driver.execute_script("location.hash = arguments[0];", link.replace("s8", "s9"))
    card = next(c for c in _cards(driver) if c["item"] == "s9")
    assert card["open"] and driver.find_element("id", "c-search").get_attribute("value") == ""


def test_the_runs_list_links_each_run_and_compares_two(driver, compared, tmp_path):
    from selenium.webdriver.support.ui import WebDriverWait

    runs, _ = compared
    env = dict(os.environ, PYTHONPATH=SRC)
    view = ServerProcess([sys.executable, "-m", "judgelab.cli", "view", str(runs), "--port", "0"], tmp_path / "view",
                         ready_line=r"at http://127\.0\.0\.1:(\d+)/ ",
                         ready_url=lambda m: f"http://127.0.0.1:{m.group(1)}/", env=env, name="judgelab view")
    try:
        root = f"http://127.0.0.1:{view.ready_match.group(1)}/"
        driver.set_window_size(1400, 1000)
        driver.get(root)
        table = driver.find_element("id", "runs-table")
        rows = table.find_elements("css selector", "tbody tr")
        assert [r.get_attribute("data-run") for r in rows] == ["lenient", "strict", "third"]
        strict = rows[1].text
        assert "rate" in strict and "chiang-lee-story" in strict and "likability" in strict and " 10 " in strict + " "
        assert rows[1].find_elements("css selector", "td")[5].text == "1"  # the failed judgment
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "runs-list.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 5_000
        links = [a.get_attribute("href") for a in table.find_elements("css selector", "tbody th a")]
        assert links == [root + f"run/{n}/" for n in ("lenient", "strict", "third")]
        driver.get(links[2])
        test_report_browser._wait_ready(driver)
        assert "third" in driver.title
        driver.get(links[1] + "#item=s6&criterion=likability")  # a card's link in the live view
        target = WebDriverWait(driver, 30).until(lambda d: d.find_elements("css selector", "#units article.unit.target"))
        assert len(target) == 1 and target[0].get_attribute("data-key").startswith("s6\u0001likability")
        driver.get(root)
        driver.find_element("id", "pick-b").send_keys("strict")
        driver.find_element("id", "compare-go").click()
        _ready(driver)
        assert driver.current_url.startswith(root + "compare?a=lenient&b=strict")
        assert [c["item"] for c in _cards(driver)[:2]] == ["s1", "s6"]  # the page `judgelab compare` writes
    finally:
        view.stop()
