"""``judgelab view`` in headless Chromium (1400×1000) while ``judgelab rate`` judges 300 items against the OpenAI
stub: the page updates in place — the card the reader opened, the filters and the place in the page stay as
they were across 10 updates — and its status strip shows the run's own counts, then "finished".

Skipped, with the reason, when selenium, chromium or chromedriver is missing (as the other browser tests).
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from conftest import write_items
from servers import ServerProcess, wait_until
import test_report_browser

driver = test_report_browser.driver  # the browser fixture, and its skip conditions:
pytestmark = test_report_browser.pytestmark

SRC = str(Path(__file__).resolve().parents[2] / "src")
UPDATES = 10


def _judged(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            return db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    except sqlite3.Error:
        return 0


def _strip(driver) -> dict[str, str]:
    return driver.execute_script(
        "var s = document.getElementById('live-strip'), out = {updates: s.getAttribute('data-updates') || '0',"
        " state: s.getAttribute('data-state')};"
        "['state', 'done', 'failed', 'retries', 'rate', 'eta'].forEach(function (f) {"
        "  out['text_' + f] = document.getElementById('live-' + f).textContent; });"
        "return out;")


def _place(driver, key: str) -> dict:
    """Where the card ``key`` is, whether its prompt is open, the filters, and the scroll."""
    return driver.execute_script(
        "var key = arguments[0], card = Array.prototype.find.call(document.querySelectorAll('article.unit'),"
        "  function (a) { return a.getAttribute('data-key') === key; });"
        "var sys = document.getElementById('f-system');"
        "return {found: !!card, top: card ? card.getBoundingClientRect().top : null,"
        " open: card ? card.querySelector('details.prompt').open : null,"
        " shown: card ? card.querySelector('button.show-all').getAttribute('aria-expanded') === 'true' : null,"
        " system: sys.options[sys.selectedIndex].text, sort: document.getElementById('f-sort').value,"
        " y: window.scrollY, kept: window.__keptPage === 1,"
        " cards: document.querySelectorAll('article.unit').length};", key)


def test_the_live_view_keeps_its_place_across_ten_updates_of_a_300_item_run(driver, tmp_path, stub_factory):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    stub = stub_factory(latency=0.4, rate_limited=0.05, server_errors=0.02, retry_after="0")
    items = write_items(tmp_path / "items.jsonl", 300)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows[12]["text"] = " ".join(f"Sentence {k} of a long story." for k in range(80))  # clipped, with "show all"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    folder = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=SRC)
    with open(tmp_path / "rate.err", "wb") as err:
        rate = subprocess.Popen([sys.executable, "-m", "judgelab.cli", "rate", "--items", str(items), "--judge",
                                 f"openai:m@{stub.base_url}", "--criteria", "likability", "--samples", "1",
                                 "--concurrency", "3", "--max-retries", "0", "--max-failure-rate", "1",
                                 "--out", str(folder), "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=err)
    view = None
    try:
        wait_until(lambda: _judged(folder / "store.sqlite") >= 60, "60 judgments", procs=[rate], limit_s=60)
        view = ServerProcess([sys.executable, "-m", "judgelab.cli", "view", str(folder), "--port", "0", "--every", "1"],
                             tmp_path / "view", ready_line=r"at http://127\.0\.0\.1:(\d+)/ ",
                             ready_url=lambda m: f"http://127.0.0.1:{m.group(1)}/state", env=env, name="judgelab view")
        driver.set_window_size(1400, 1000)
        driver.get_log("browser")
        driver.get(f"http://127.0.0.1:{view.ready_match.group(1)}/")
        wait = WebDriverWait(driver, 30)
        wait.until(lambda d: d.find_element(By.ID, "browser").get_attribute("data-ready") == "1")
        wait.until(lambda d: _strip(d)["state"] == "running")
        driver.execute_script("window.__keptPage = 1;")  # gone if the page reloads

        # the reader: a filter typed, an order chosen, scrolled down to a card and its prompt opened
        system = driver.find_element(By.ID, "f-system")
        system.send_keys("gpt2")
        driver.find_element(By.ID, "f-sort").send_keys("item")
        wait.until(lambda d: d.find_element(By.ID, "browser").get_attribute("data-ready") == "1")
        from selenium.common.exceptions import StaleElementReferenceException

        prefix = "s12\u0001likability\u0001gpt2"
        for attempt in range(5):  # a live update may re-render the card between finding and clicking it: find it again
            card = wait.until(lambda d: next((a for a in d.find_elements(By.CSS_SELECTOR, "article.unit")
                                              if a.get_attribute("data-key").startswith(prefix)), None))
            try:
                key = card.get_attribute("data-key")
                strip_bottom = driver.execute_script("return document.getElementById('live-strip').getBoundingClientRect().bottom")
                driver.execute_script("arguments[0].scrollIntoView({block: 'start'}); window.scrollBy(0, -arguments[1] - 1);",
                                      card, strip_bottom)
                if card.find_element(By.CSS_SELECTOR, "details.prompt").get_attribute("open") is None:
                    card.find_element(By.CSS_SELECTOR, "details.prompt summary").click()  # not again after a re-render
                card.find_element(By.CSS_SELECTOR, "button.show-all").click()
                break
            except StaleElementReferenceException:
                if attempt == 4:
                    raise
        start = _place(driver, key)
        assert start["open"] and start["shown"] and start["system"] == "gpt2" and start["sort"] == "item" and start["y"] > 1500, start

        strips, places = [], []
        for k in range(1, UPDATES + 1):
            wait.until(lambda d: int(_strip(d)["updates"]) >= k, f"update {k} of the page")
            strips.append(_strip(driver))
            places.append(_place(driver, key))
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "live-view.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000  # the page while the run goes on
        for place in places:
            assert place["kept"] and place["found"] and place["open"] and place["shown"], place  # no reload; the
            # card with its prompt open and its text shown whole
            assert (place["system"], place["sort"]) == ("gpt2", "item"), place  # the filters
            assert abs(place["top"] - start["top"]) <= 2, (start, place)  # the card where the reader left it
        running = [s for s in strips if s["state"] == "running"]
        assert len(running) >= UPDATES - 1, strips
        for s in running:
            assert re.fullmatch(r"\d+ of 300 judgments done \(\d+%\)", s["text_done"]), s
            assert re.fullmatch(r"\d+ failed", s["text_failed"]) and re.match(r"\d+ retries", s["text_retries"]), s
            assert re.fullmatch(r"ETA \d+:\d\d:\d\d", s["text_eta"]) and s["text_state"] == "running", s
        done = [int(s["text_done"].split()[0]) for s in running]
        assert done == sorted(done) and done[-1] > done[0], done  # the counts move with the run

        WebDriverWait(driver, 90).until(lambda d: _strip(d)["state"] == "finished", "the strip to say finished")
        assert rate.wait(timeout=60) == 0, (tmp_path / "rate.err").read_text()
        end = _strip(driver)
        assert end["text_state"] == "finished" and end["text_done"] == "300 of 300 judgments done (100%)"
        assert end["text_eta"] == "" and int(end["text_failed"].split()[0]) > 0, end  # the stub's 500s: failed
        assert int(end["text_retries"].split()[0]) > 0 and "rate limited" in end["text_retries"], end  # its 429s
        place = _place(driver, key)
        assert place["kept"] and place["open"] and place["shown"] and place["system"] == "gpt2", place
        severe = [e for e in driver.get_log("browser") if e.get("level") in {"SEVERE", "ERROR"}]
        assert not severe, severe
        print(f"\nscrollY across the updates: {[p['y'] for p in places]}; card top {start['top']:.0f} px "
              f"→ {[round(p['top']) for p in places]}")
    finally:
        if rate.poll() is None:
            rate.kill()
            rate.wait()
        if view is not None:
            view.stop()
