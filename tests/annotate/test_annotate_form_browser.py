"""The rating form's layout in a real browser (headless Debian Chromium, 1,400 px wide), against `judgelab annotate`.

* geval-summeval: the article and the summary once, each criterion's definition and question under
  them, anchor labels on the scale points, each criterion on its own scale (fluency 1-3), none of the
  wording meant for the model; one item under 2,500 px tall. Before this layout the same item was
  9,532 px (all four criteria; 7,438 px with three), the article repeated once per criterion.
* chiang-lee-story: as before (the story once, four questions, 1,454 px for this item before the change).

Screenshots of both forms go to docs/images/ (form-geval-summeval.png, form-chiang-lee-story.png).
"""
from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest

from annotate_helpers import CHROMEDRIVER, CHROMIUM, Server, chromium
from conftest import SHARED_DATA
from form_items import ARTICLE, STORY, STORY_PROMPT, SUMMARY, story_item, summeval_like_item

pytestmark = pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
                                reason="needs Debian's chromium and chromedriver at /usr/bin/chromium and /usr/bin/chromedriver")
pytest.importorskip("selenium.webdriver", reason="needs selenium (pip install 'judgelab[test]')")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

WIDTH = 1400
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
#: The chiang-lee-story form of story_item() measured with the layout before anchors and shared text (commit fab667b).
CHIANG_LEE_HEIGHT_BEFORE = 1454


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), WIDTH, 900)
    yield driver
    driver.quit()


def open_form(tmp_path: Path, browser, template: str, item: dict, *extra: str) -> Server:
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(item) + "\n", encoding="utf-8")
    server = Server("--items", str(items), "--template", template, "--out", str(tmp_path / "out"), "--annotators", "ann",
                    "--port", "0", *extra)
    browser.get(server.links["ann"])
    assert browser.execute_script("return window.innerWidth") == WIDTH
    return server


def height(browser) -> int:
    return int(browser.execute_script("return document.documentElement.scrollHeight"))


def screenshot(browser, name: str) -> None:
    """The whole page (not only the window), as a PNG in docs/images/."""
    browser.execute_script("window.scrollTo(0, 0)")
    h = height(browser)
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": WIDTH, "height": h, "scale": 1}})
    IMAGES.mkdir(parents=True, exist_ok=True)
    (IMAGES / name).write_bytes(base64.b64decode(shot["data"]))


def times_shown(browser, text: str) -> int:
    return int(browser.execute_script("return document.body.innerText.split(arguments[0]).length - 1", text))


def test_geval_summeval_form_shows_the_article_once_and_fits(tmp_path, browser, record_property):
    server = open_form(tmp_path, browser, "geval-summeval", summeval_like_item())
    try:
        assert browser.execute_script("return window.scrollY") == 0  # opens on the article, not on the first question
        tall = height(browser)
        record_property("geval_summeval_form_px", tall)
        screenshot(browser, "form-geval-summeval.png")
        assert tall < 2500
        for paragraph in ARTICLE.split("\n"):
            assert times_shown(browser, paragraph) == 1
        assert times_shown(browser, SUMMARY) == 1
        page = browser.find_element(By.TAG_NAME, "body").text
        for wording in ("just give a score ONLY", "Evaluation Steps", "on one metric", "model_only"):
            assert wording not in page
        criteria = browser.find_elements(By.CSS_SELECTOR, "fieldset.criterion")
        assert [c.get_attribute("data-criterion") for c in criteria] == ["coherence", "consistency", "fluency", "relevance"]
        for criterion in criteria:  # the criterion's own definition above its question
            own = criterion.find_element(By.CSS_SELECTOR, ".own").text
            assert own.startswith("Evaluation Criterion: " + criterion.get_attribute("data-criterion").capitalize())
        points = [len(c.find_elements(By.CSS_SELECTOR, "input[type=radio]")) for c in criteria]
        assert points == [5, 5, 3, 5]  # fluency on G-Eval's 1-3 scale
        first = criteria[0].find_elements(By.CSS_SELECTOR, "label")
        assert first[0].find_element(By.CSS_SELECTOR, ".anchor").text.startswith("Very incoherent.")
        assert first[4].find_element(By.CSS_SELECTOR, ".anchor").text.startswith("Highly coherent.")
        # A digit outside fluency's scale is refused with its scale named; the keyboard rates the rest.
        ActionChains(browser).send_keys("4", "5").perform()
        ActionChains(browser).send_keys("5").perform()
        assert browser.find_element(By.ID, "status").text == "Use the points of the scale: 1–3."
        ActionChains(browser).send_keys("3", "2", Keys.ENTER).perform()
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
    finally:
        server.stop()
    db = sqlite3.connect(tmp_path / "out" / "store.sqlite")
    rows = dict(db.execute("SELECT criterion, score FROM judgments WHERE rater = 'human:ann'").fetchall())
    db.close()
    assert rows == {"coherence": 4.0, "consistency": 5.0, "fluency": 3.0, "relevance": 2.0}


def test_chiang_lee_story_form_is_as_before(tmp_path, browser, record_property):
    server = open_form(tmp_path, browser, "chiang-lee-story", story_item())
    try:
        tall = height(browser)
        record_property("chiang_lee_story_form_px", tall)
        screenshot(browser, "form-chiang-lee-story.png")
        assert abs(tall - CHIANG_LEE_HEIGHT_BEFORE) <= 30
        sample = browser.find_element(By.ID, "sample").text
        assert STORY in sample and sample.startswith("Please rate the story fragment")
        assert times_shown(browser, STORY) == 1 and times_shown(browser, "PROMPT: " + STORY_PROMPT) == 1
        criteria = browser.find_elements(By.CSS_SELECTOR, "fieldset.criterion")
        assert len(criteria) == 4
        assert browser.find_elements(By.CSS_SELECTOR, ".own, .anchor, .anchored, main.wide, .prompt.long") == []
        assert [len(c.find_elements(By.CSS_SELECTOR, "input[type=radio]")) for c in criteria] == [5, 5, 5, 5]
    finally:
        server.stop()


@pytest.mark.needs_shared_data("summeval/summeval_expert_means.jsonl")
def test_the_longest_summeval_article_fits(tmp_path, browser, record_property):
    rows = [json.loads(line) for line in (SHARED_DATA / "summeval" / "summeval_expert_means.jsonl").open(encoding="utf-8")]
    longest = max(rows, key=lambda r: (len(r["source"]), len(r["summary"])))
    server = open_form(tmp_path, browser, "geval-summeval",
                       {"id": longest["doc_id"], "text": longest["summary"], "context": longest["source"]})
    try:
        tall = height(browser)
        record_property("longest_summeval_form_px", tall)
        assert tall < 2500
        assert times_shown(browser, longest["source"].split("\n")[0][:200]) == 1
    finally:
        server.stop()
