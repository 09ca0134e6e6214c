"""The report's item browser in headless Chromium at 1400×1000: the search over item ids, texts and answers (with the
filters), a link to each card, and the download of the items shown (CSV made in the page).

Skipped, with the reason, when selenium, chromium or chromedriver is missing (as the other browser tests).
"""
from __future__ import annotations

import csv
import io
from urllib.parse import quote

import test_report_browser
from test_compare_browser import _capture_download

driver = test_report_browser.driver  # the browser fixture, and its skip conditions:
rate_report = test_report_browser.rate_report
pytestmark = test_report_browser.pytestmark


def _shown(driver) -> list[dict]:
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('#units article.unit'), function (a) {"
        " return {key: a.getAttribute('data-key'), criterion: a.getAttribute('data-criterion'),"
        " target: a.classList.contains('target'), top: a.getBoundingClientRect().top,"
        " prompt: a.querySelector('details.prompt').open,"
        " link: a.querySelector('a.permalink').getAttribute('href')}; });")


def _until_marked(driver) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(lambda d: any(s["target"] for s in _shown(d)))


def _type(driver, text: str) -> None:
    """Type ``text`` into the search box and wait for the cards it selects (the cards shown before are replaced)."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__before = document.querySelector('#units li');")
    from selenium.webdriver.common.keys import Keys

    box = driver.find_element("id", "f-search")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.DELETE, text)  # keys, so that the page hears them (clear() fires no input event)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return !window.__before || !window.__before.isConnected;"))
    test_report_browser._wait_ready(driver)


def test_search_finds_an_item_by_a_word_of_its_text_or_answer(driver, rate_report):
    path, units = rate_report
    driver.set_window_size(1400, 1000)
    test_report_browser._open(driver, path)
    _type(driver, "EXAMPLE.com")  # a word of item s0's text only
    shown = _shown(driver)
    assert {s["key"].split("\u0001")[0] for s in shown} == {"s0"} and len(shown) == 4
    assert driver.find_element("id", "browser-status").text.endswith(f"4 (filtered from {len(units)})")
    _type(driver, "hmm hard")  # the answer to story 3 (every criterion but likability, answered by its own rule)
    expected = {(u["item_id"], u["criterion"]) for u in units if any("hmm" in (s["raw"] or "") for s in u["samples"])}
    assert {(s["key"].split("\u0001")[0], s["criterion"]) for s in _shown(driver)} == expected and expected
    driver.find_element("id", "f-criterion").send_keys("relevance")  # with the filters
    test_report_browser._wait_ready(driver)
    assert [(s["key"].split("\u0001")[0], s["criterion"]) for s in _shown(driver)] == [("s3", "relevance")]
    _type(driver, "")
    test_report_browser._no_console_errors(driver)


def test_the_link_of_a_card_opens_it(driver, rate_report):
    path, units = rate_report
    driver.set_window_size(1400, 1000)
    test_report_browser._open(driver, path)
    link = next(s["link"] for s in _shown(driver) if s["key"].startswith("s<b>5</b>\u0001likability"))
    assert link.startswith("#item=" + quote("s<b>5</b>", safe="") + "&criterion=likability&")
    # which page the card is on depends on the order: open the page anew with the link, filtered to another item
    driver.get(path.resolve().as_uri() + link)
    driver.refresh()
    _until_marked(driver)
    target = [s for s in _shown(driver) if s["target"]]
    assert len(target) == 1 and target[0]["key"].startswith("s<b>5</b>\u0001likability")
    assert target[0]["prompt"] and -2 <= target[0]["top"] < 200
    _type(driver, "example.com")  # the card hidden by a search; following its link again shows it
    driver.execute_script("location.hash = ''; location.hash = arguments[0];", link)
    _until_marked(driver)
    assert any(s["target"] and s["key"].startswith("s<b>5</b>") for s in _shown(driver))
    assert driver.find_element("id", "f-search").get_attribute("value") == ""


def test_the_download_gives_the_items_shown(driver, rate_report):
    path, units = rate_report
    driver.set_window_size(1400, 1000)
    test_report_browser._open(driver, path)
    driver.find_element("id", "f-criterion").send_keys("likability")
    _type(driver, "story")
    shown = [s["key"].split("\u0001")[0] for s in _shown(driver)]
    rows = list(csv.reader(io.StringIO(_capture_download(driver, "f-download").lstrip("\ufeff"))))
    assert rows[0][:4] == ["item_id", "system", "criterion", "judge"] and rows[0][-2:] == ["text", "answer"]
    assert [r[0] for r in rows[1:]] == shown and len(shown) == 8 and {r[2] for r in rows[1:]} == {"likability"}
    by_id = {r[0]: r for r in rows[1:]}
    rated = {u["item_id"]: u for u in units if u["criterion"] == "likability"}
    assert by_id["s0"][-2] == rated["s0"]["rated"]["text"]  # the text as rated, <script> and all
    assert by_id["s0"][-1] == rated["s0"]["samples"][0]["raw"]
