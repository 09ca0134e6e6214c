"""A real browser (Selenium + headless Debian Chromium) against the real server (`judgelab annotate` in a
subprocess): two annotators rate with the keyboard, the server is killed with SIGKILL and restarted, one
annotator resumes and finishes; every rating is in the store once, and `judgelab agree` and
`judgelab human-estimate` use them. An item holding <script>alert(1)</script> is shown as text.

Skipped, with the reason, when /usr/bin/chromium, /usr/bin/chromedriver or selenium is missing.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from annotate_helpers import CHROMEDRIVER, CHROMIUM, Server, chromium, free_port, judgelab, read_rows, write_items
pytestmark = pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                reason="needs Debian's chromium and chromedriver at /usr/bin/chromium and /usr/bin/chromedriver")
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (pip install 'judgelab[test]')")
from selenium.common.exceptions import NoAlertPresentException, TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CRITERIA = ("fluency", "coherence")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), 1200, 900)  # a fresh profile, removed with pytest's files
    yield driver
    driver.quit()


def keys(driver, *sequence: str) -> None:
    ActionChains(driver).send_keys(*sequence).perform()


def no_alert(driver) -> bool:
    try:
        driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def rate_open_item(driver, values: tuple[int, int], comment: str = "") -> float:
    """Rate the item on screen with the keyboard (digits, optional comment, Enter); seconds until the next page."""
    rows = driver.find_elements(By.CSS_SELECTOR, ".rating-row")
    assert "focused" in rows[0].get_attribute("class")
    keys(driver, str(values[0]))
    assert "focused" in rows[1].get_attribute("class")  # a digit moves on to the next question
    keys(driver, str(values[1]))
    if comment:
        driver.find_element(By.ID, "comment").click()
        keys(driver, comment)
    before = page_id(driver)
    start = time.perf_counter()
    keys(driver, Keys.ENTER)
    wait_for_next_page(driver, before)
    return time.perf_counter() - start


_PAGE_ID = ("var s = document.querySelector('input[name=signature]');"
            "return document.readyState === 'complete' ? (s ? s.value : document.getElementById('done') ? 'done' : null) : null;")


def page_id(driver) -> str:
    """The signature of the form on screen (unique per page served), or 'done'."""
    return driver.execute_script(_PAGE_ID)


def wait_for_next_page(driver, old: str) -> None:
    # Polls the page's identity; errors while the page is being replaced (stale or detached nodes) are retried.
    WebDriverWait(driver, 15, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script(_PAGE_ID) not in (None, old))


def shown_item(driver, items: list[dict]) -> dict:
    text = driver.find_element(By.ID, "sample").text
    return next(r for r in items if r["text"] in text)


def human_rows(store: Path) -> list[tuple]:
    db = sqlite3.connect(f"{store.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return db.execute("SELECT rater, criterion, system, item_id, sample, score, status, raw FROM judgments "
                          "WHERE rater LIKE 'human:%'").fetchall()
    finally:
        db.close()


def expected_value(annotator: str, item: dict, criterion: str) -> int:
    k = int(item["id"][-2:]) + (1 if item["system"] == "beta-sys" else 0)
    return 1 + (k + (annotator == "bob") + (criterion == "coherence")) % 5


def test_two_annotators_kill_9_resume(tmp_path, browser, record_property):
    t0 = time.perf_counter()
    timings: dict[str, float] = {}
    items_path = write_items(tmp_path / "items.jsonl", per_system=4)
    items = read_rows(items_path)
    out = tmp_path / "loop"
    # The judge first, into the same folder (a test double: two samples, scores keyed on the text).
    script = {"rules": [{"contains": r["text"], "replies": [str(1 + int(r["id"][-2:]) % 5), str(2 + int(r["id"][-2:]) % 4)]}
                        for r in items], "default": "3"}
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    rated = judgelab("rate", "--items", str(items_path), "--template", "plain-quality", "--judge", "scripted-test-double:" + str(tmp_path / "script.json"),
                     "--samples", "2", "--score", "parsed", "--quiet",
                     "--out", str(out))
    assert rated.returncode == 0, rated.stderr
    timings["judge_rate_s"] = time.perf_counter() - t0

    port = free_port()
    command = ("--items", str(items_path), "--template", "plain-quality", "--out", str(out), "--annotators", "alice,bob",
               "--sample", "random:6", "--stratify-by-system", "--seed", "5", "--port", str(port))
    started = time.perf_counter()
    server = Server(*command)
    timings["server_start_s"] = time.perf_counter() - started
    store = out / "store.sqlite"
    typed: dict[tuple[str, str, str, str], tuple[float, str | None]] = {}
    latencies: list[float] = []
    try:
        alice_url, bob_url = server.links["alice"], server.links["bob"]
        assert alice_url == f"http://127.0.0.1:{port}/a/alice"
        browser.get(alice_url)
        alice_tab = browser.current_window_handle
        browser.switch_to.new_window("tab")
        browser.get(bob_url)
        bob_tab = browser.current_window_handle

        # Enter with a question unanswered does not submit.
        browser.switch_to.window(alice_tab)
        keys(browser, "3")
        keys(browser, Keys.ENTER)
        assert browser.find_element(By.ID, "e1").text == "Please rate question 2 first."  # beside question 2
        assert "Item 1 of 6" in browser.find_element(By.ID, "progress").text
        browser.refresh()

        def rate(tab: str, name: str, comment: str = "") -> None:
            browser.switch_to.window(tab)
            item = shown_item(browser, items)
            values = tuple(expected_value(name, item, c) for c in CRITERIA)
            page = browser.page_source
            assert "alpha-sys" not in page and "beta-sys" not in page and item["id"] not in page  # blind
            latencies.append(rate_open_item(browser, values, comment))
            for c, v in zip(CRITERIA, values):
                typed[(f"human:{name}", c, item["system"], item["id"])] = (float(v), comment or None)

        # Both annotate at once, interleaved; alice finishes, bob does half.
        for k in range(6):
            rate(alice_tab, "alice", comment="reads well" if k == 0 else "")
            if k < 3:
                rate(bob_tab, "bob")
        browser.switch_to.window(alice_tab)
        assert "All 6 items rated" in browser.find_element(By.ID, "done").text
        browser.switch_to.window(bob_tab)
        assert "Item 4 of 6" in browser.find_element(By.ID, "progress").text

        server.kill9()  # at once: no grace, no shutdown
        before_restart = human_rows(store)
        assert len(before_restart) == len(typed) == 18  # every rating the browser saw saved survived SIGKILL

        started = time.perf_counter()
        server = Server(*command)  # the same command
        timings["server_restart_s"] = time.perf_counter() - started
        # Bob's open page (item 4, served before the kill) is still accepted: forms are signed with a persisted secret.
        browser.switch_to.window(bob_tab)
        rate(bob_tab, "bob")
        assert "Item 5 of 6" in browser.find_element(By.ID, "progress").text
        browser.get(bob_url)  # returning to the link continues where he left
        assert "Item 5 of 6" in browser.find_element(By.ID, "progress").text
        for _ in range(2):
            rate(bob_tab, "bob")
        assert "All 6 items rated" in browser.find_element(By.ID, "done").text
        browser.get(alice_url)
        assert "All 6 items rated" in browser.find_element(By.ID, "done").text

        browser.get(server.links["overview"])
        progress = browser.find_element(By.ID, "progress-table").text
        assert "alice 6 6" in progress and "bob 6 6" in progress
        assert "scripted-test-double@plain-quality" in browser.find_element(By.ID, "judge-table").text
        assert no_alert(browser)
    finally:
        server.stop()
    assert server.stderr() == ""

    rows = human_rows(store)
    assert len(rows) == 24 == len(typed)
    assert len({r[:5] for r in rows}) == 24  # each (rater, criterion, system, item, sample) exactly once
    for rater, criterion, system, item_id, sample, score, status, raw in rows:
        assert (sample, status) == (0, "ok")
        assert typed[(rater, criterion, system, item_id)] == (score, raw)
    plan = json.loads((out / "annotation.json").read_text())
    assert {(r["system"], r["item_id"]) for r in plan["items"]} == {(k[2], k[3]) for k in typed}

    # The same rows feed the statistics: judgelab agree (via the exported table) and judgelab human-estimate.
    assert judgelab("export", str(store), "--to", str(tmp_path / "ratings.csv")).returncode == 0
    agree = judgelab("agree", str(tmp_path / "ratings.csv"), "--level", "overall", "--method", "kendall", "--format", "json")
    assert agree.returncode == 0, agree.stderr
    tables = json.loads(agree.stdout)["tables"]
    correlations = {r["criterion"]: r for r in tables["correlations"]}
    assert set(correlations) == set(CRITERIA)
    assert all(r["rater"] == "scripted-test-double@plain-quality" and r["n"] == 6 for r in correlations.values())
    assert {r["raters"] for r in tables["human_baseline"]} == {2}
    estimate = judgelab("human-estimate", "--store", str(store), "--out", str(tmp_path / "est"), "--target-half-width", "0.5")
    assert estimate.returncode == 0, estimate.stderr
    result = json.loads((tmp_path / "est" / "estimates.json").read_text())
    assert {(m["system"], m["criterion"], m["n_human"], m["n_judge"], m["n_annotators"]) for m in result["means"]} == {
        (s, c, 3, 4, 2) for s in ("alpha-sys", "beta-sys") for c in CRITERIA}
    # 3 human-rated items and 1 judge-only item per system: below the t interval's stated minimum (2 judge-only
    # items), so no interval and the reason; ppi-python's normal interval is defined there
    assert all(m["result"] is None and "needs at least 3 human-rated items and 2 items rated by the judge only"
               in m["note"] for m in result["means"])
    assert all("at least 3 annotators" in a["reason"] for a in result["alt_test"])
    estimate = judgelab("human-estimate", "--store", str(store), "--out", str(tmp_path / "est-normal"), "--quantile", "normal")
    assert estimate.returncode == 0, estimate.stderr
    result = json.loads((tmp_path / "est-normal" / "estimates.json").read_text())
    assert all(m["result"]["ci_low"] <= m["result"]["estimate"] <= m["result"]["ci_high"] for m in result["means"])

    timings["submit_median_s"] = sorted(latencies)[len(latencies) // 2]
    timings["submit_max_s"] = max(latencies)
    timings["submissions"] = len(latencies)
    timings["total_s"] = time.perf_counter() - t0
    for key, value in timings.items():
        record_property(key, round(value, 3))
    print("browser timings:", json.dumps({k: round(v, 3) for k, v in timings.items()}))


def test_script_in_an_item_is_shown_as_text(tmp_path, browser):
    evil = "<script>alert(1)</script> <img src=x onerror=alert(2)> & done"
    items_path = tmp_path / "items.jsonl"
    items_path.write_text(json.dumps({"id": "x", "text": evil}) + "\n", encoding="utf-8")
    server = Server("--items", str(items_path), "--template", "plain-quality", "--out", str(tmp_path / "o"),
                    "--annotators", "eve", "--port", "0")
    try:
        browser.get(server.links["eve"])
        sample = browser.find_element(By.ID, "sample")
        assert evil in sample.text  # the DOM text holds the characters themselves
        rated = browser.find_element(By.ID, "rated-text")
        assert browser.execute_script("return arguments[0].textContent", rated) == evil
        assert sample.find_elements(By.CSS_SELECTOR, "script, img") == []
        assert len(browser.find_elements(By.TAG_NAME, "script")) == 1  # the page's own script only
        with pytest.raises(TimeoutException):
            WebDriverWait(browser, 1).until(EC.alert_is_present())
        rate_open_item(browser, (2, 2))  # the page still works; nothing ran
        assert no_alert(browser) and "All 1 items rated" in browser.find_element(By.ID, "done").text
    finally:
        server.stop()
