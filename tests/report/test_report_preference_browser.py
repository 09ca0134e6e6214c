"""The Preference judging section in a real browser (headless Chromium, as the other browser tests; skipped with the
reason when selenium, chromium or chromedriver is missing): a ``rate --pairs`` folder with ``preference agree`` and
``preference win-rates`` written into it, at 1400×1000."""
from __future__ import annotations

import os
from pathlib import Path

import test_report_browser
from preference_helpers import preference_folders
from test_report_browser import _clipped_labels, _no_console_errors, _open

driver = test_report_browser.driver  # the browser fixture, and its skip conditions:
pytestmark = test_report_browser.pytestmark


def test_first_screen_states_the_preference_verdict_and_the_leaderboard_is_whole(driver, tmp_path):
    run, _ = preference_folders(tmp_path)
    driver.set_window_size(1400, 1000)
    try:
        _open(driver, run / "report.html")
        _no_console_errors(driver)
        words = driver.find_element("css selector", "#preference .hl-words")
        assert words.location["y"] + words.size["height"] < 1000  # the verdict in words on the first screen
        assert "agrees with the humans' preference on" in words.text and "human rater" in words.text
        chart = driver.find_element("css selector", "#fig-pref-board-0 svg")
        title = chart.find_element("tag name", "title").get_attribute("textContent")
        assert title.startswith("Leaderboard: preference, judged by scripted-test-double@pairwise-comparison")
        assert chart.size["width"] > 100 and chart.size["height"] > 100
        assert not _clipped_labels(driver, "#preference")
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "report-preference.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        driver.execute_script("document.getElementById('fig-pref-board-0').scrollIntoView()")
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "report-preference-leaderboard.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.set_window_size(1366, 900)
