"""The rating form's layout in a real browser (headless Debian Chromium, 1,400 px wide), against `judgelab annotate`.

* geval-summeval: the article and the summary once, each criterion's definition and question under
  them, anchor labels on the scale points, each criterion on its own scale (fluency 1-3), none of the
  wording meant for the model; one item under 2,500 px tall. Before this layout the same item was
  9,532 px (all four criteria; 7,438 px with three), the article repeated once per criterion.
* chiang-lee-story: the story once, four questions (1,454 px for this item before the change; 1,529 px with the
  story set apart under its own heading and a legend for each question).
* at 1,400 × 1,000 (the window people rate in): an error appears in the window, inside the fieldset
  of its question, and that question holds the focus; every radio group, fieldset and the rated text's
  region has an accessible name (Chromium's own computation); Tab, the arrow keys and Space alone
  rate an item and submit it, the highlight always on the question that holds the focus; a form the
  server refuses names the question at the top of the first screen and links to it; with scripts
  off the form still works (the browser's check of the required points, then the server's).

Screenshots of both forms go to docs/images/ (form-geval-summeval.png, form-chiang-lee-story.png), and the
window with an error beside its question to form-error-on-screen.png.
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

WIDTH, HEIGHT = 1400, 1000
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
#: The chiang-lee-story form of story_item(): 1,454 px with the layout before anchors and shared text (commit fab667b);
#: 1,529 px since the story stands in its own region under a heading and each question has a legend.
CHIANG_LEE_HEIGHT = 1529


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = chromium(tmp_path_factory.mktemp("chromium-profile"), WIDTH, HEIGHT)
    frame = driver.execute_script("return window.outerHeight - window.innerHeight")  # the window's own bars
    driver.set_window_size(WIDTH, HEIGHT + frame)  # a page area of 1,400 × 1,000
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
        assert browser.find_element(By.ID, "e2").text == "Use the points of the scale: 1–3."
        ActionChains(browser).send_keys("3", "2", Keys.ENTER).perform()
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
    finally:
        server.stop()
    assert _saved_scores(tmp_path) == {"coherence": 4.0, "consistency": 5.0, "fluency": 3.0, "relevance": 2.0}


def test_chiang_lee_story_form_is_as_before(tmp_path, browser, record_property):
    server = open_form(tmp_path, browser, "chiang-lee-story", story_item())
    try:
        tall = height(browser)
        record_property("chiang_lee_story_form_px", tall)
        screenshot(browser, "form-chiang-lee-story.png")
        assert abs(tall - CHIANG_LEE_HEIGHT) <= 30
        assert browser.find_element(By.ID, "context-text").text.startswith("Please rate the story fragment")
        assert browser.find_element(By.ID, "rated-text").text == STORY  # set apart, under its own heading
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


# -- errors, names and the keyboard at 1,400 × 1,000 -------------------------------------------------
_RECT = "var r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight];"
_HEADER = "return document.querySelector('header').getBoundingClientRect().bottom"


def on_screen(browser, element) -> bool:
    """The whole element in the window, below the sticky header."""
    top, bottom, height = browser.execute_script(_RECT, element)
    return browser.execute_script(_HEADER) <= top < bottom <= height


def focused_row(browser) -> int:
    """The question that holds the keyboard focus (-1: none), after checking the highlight is on it alone."""
    state = browser.execute_script(
        "var rows = Array.prototype.slice.call(document.querySelectorAll('.rating-row'));"
        "return [rows.findIndex(function (r) { return r.contains(document.activeElement); }),"
        "        rows.map(function (r, i) { return r.classList.contains('focused') ? i : -1; }).filter(function (i) { return i >= 0; })];")
    holder, highlighted = state
    assert highlighted == ([holder] if holder >= 0 else []), f"focus on {holder}, highlight on {highlighted}"
    return holder


def test_an_error_appears_on_screen_beside_its_question(tmp_path, browser):
    server = open_form(tmp_path, browser, "geval-summeval", summeval_like_item())
    try:
        assert browser.execute_script("return window.innerHeight") == HEIGHT
        assert focused_row(browser) == 0 and browser.execute_script("return window.scrollY") == 0
        ActionChains(browser).send_keys("4", "5").perform()  # questions 1 and 2; the focus moves on to question 3
        assert focused_row(browser) == 2
        browser.execute_script("window.scrollTo(0, 0)")  # back at the top, re-reading the article
        ActionChains(browser).send_keys(Keys.ENTER).perform()
        error = browser.find_element(By.ID, "e2")
        assert error.text == "Please rate question 3 first."
        assert on_screen(browser, error) and on_screen(browser, browser.find_element(By.CSS_SELECTOR, "#answer2 .rating-row"))
        assert error.find_element(By.XPATH, "ancestor::fieldset").get_attribute("id") == "q3"
        assert focused_row(browser) == 2
        assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".field-error")] == ["", "", error.text, ""]
        (IMAGES / "form-error-on-screen.png").write_bytes(browser.get_screenshot_as_png())  # the window as the rater sees it
        ActionChains(browser).send_keys("5").perform()  # off fluency's 1-3 scale
        assert error.text == "Use the points of the scale: 1–3." and on_screen(browser, error) and focused_row(browser) == 2
        ActionChains(browser).send_keys("3").perform()
        assert error.text == "" and focused_row(browser) == 3
        ActionChains(browser).send_keys("2", Keys.ENTER).perform()
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
    finally:
        server.stop()


_NESTED = {"id": "e1", "text": "Because a man is a person.", "premise": "A man sleeps.", "hypothesis": "A person sleeps.",
           "relationship": "entailment"}


@pytest.mark.parametrize("template,item", [("geval-summeval", summeval_like_item()), ("chiang-lee-story", story_item()),
                                           ("nle-esnli", _NESTED)], ids=["geval-summeval", "chiang-lee-story", "nle-esnli"])
def test_every_radio_group_has_an_accessible_name(tmp_path, browser, template, item):
    """Chromium's computed role and name (WebDriver's computedrole and computedlabel), not the HTML's attributes."""
    server = open_form(tmp_path, browser, template, item)
    try:
        fieldsets = browser.find_elements(By.CSS_SELECTOR, "fieldset")
        assert fieldsets
        for n, fieldset in enumerate(fieldsets, 1):
            assert fieldset.aria_role == "group" and fieldset.accessible_name == f"Question {n} of {len(fieldsets)}"
            groups = fieldset.find_elements(By.CSS_SELECTOR, "[role=radiogroup]")
            assert groups
            for group in groups:
                assert group.aria_role == "radiogroup"
                name = group.accessible_name
                assert name.startswith(f"Question {n} of {len(fieldsets)} ") and len(name) > 20, name
                for radio in group.find_elements(By.CSS_SELECTOR, "input[type=radio]"):
                    assert radio.aria_role == "radio" and radio.accessible_name.startswith(radio.get_attribute("value"))
        radios = browser.find_elements(By.CSS_SELECTOR, "input[type=radio]")
        assert len(radios) == len(browser.find_elements(By.CSS_SELECTOR, "[role=radiogroup] input[type=radio]"))
        headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h1, h2")]
        assert headings[0] == "Item 1 of 1" and headings[-len(fieldsets):] == [f"Question {n} of {len(fieldsets)}" for n in
                                                                             range(1, len(fieldsets) + 1)]
        if template != "nle-esnli":  # there the explanation stands inside a line of the instruction: no region of its own
            region = browser.find_element(By.ID, "rated-text").find_element(By.XPATH, "ancestor::section")
            assert region.aria_role == "region" and region.accessible_name == "The text you rate"
            assert item["text"] == browser.find_element(By.ID, "rated-text").text
    finally:
        server.stop()


def test_tab_arrows_and_space_alone_rate_and_submit(tmp_path, browser):
    server = open_form(tmp_path, browser, "plain-quality", {"id": "k1", "text": "A paragraph rated with the keyboard alone."})

    def press(*keys: str) -> None:
        ActionChains(browser).send_keys(*keys).perform()

    def chosen() -> dict[str, str]:
        return {r.get_attribute("name"): r.get_attribute("value")
                for r in browser.find_elements(By.CSS_SELECTOR, "input[type=radio]") if r.is_selected()}

    try:
        assert focused_row(browser) == 0 and chosen() == {}
        press(Keys.SPACE, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT)  # the first point, then two points on
        assert chosen() == {"r0": "3"} and focused_row(browser) == 0  # choosing does not move the focus away
        press(Keys.TAB)
        assert focused_row(browser) == 1
        ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        assert focused_row(browser) == 0 and browser.switch_to.active_element.get_attribute("value") == "3"
        press(Keys.ARROW_DOWN)  # ↓ goes to the next question and changes no rating
        assert focused_row(browser) == 1 and chosen() == {"r0": "3"}
        press(Keys.SPACE, Keys.ARROW_RIGHT)
        assert chosen() == {"r0": "3", "r1": "2"} and focused_row(browser) == 1
        press(Keys.TAB)
        assert browser.switch_to.active_element.get_attribute("id") == "comment" and focused_row(browser) == -1
        press("ok", Keys.TAB)
        assert browser.switch_to.active_element.get_attribute("id") == "save"
        press(Keys.SPACE)
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
    finally:
        server.stop()
    db = sqlite3.connect(tmp_path / "out" / "store.sqlite")
    rows = db.execute("SELECT criterion, score, raw FROM judgments WHERE rater = 'human:ann' ORDER BY criterion").fetchall()
    db.close()
    assert rows == [("coherence", 2.0, "ok"), ("fluency", 3.0, "ok")]


def test_a_refused_form_names_its_question_on_the_first_screen(tmp_path, browser):
    """What the server says when it refuses a form (here a value the page never offered: a stale or edited
    form) stands at the top of the first screen, with a link that takes the focus to the question."""
    server = open_form(tmp_path, browser, "geval-summeval", summeval_like_item())
    try:
        browser.execute_script(
            "var pick = function (k, v) { var r = document.querySelector('input[name=r' + k + '][value=\"' + v + '\"]');"
            "  r.checked = true; return r; };"
            "pick(0, 4); pick(1, 5); pick(2, 3).value = '7'; pick(3, 2);"
            "HTMLFormElement.prototype.submit.call(document.getElementById('rating-form'));")
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "error"))
        summary = browser.find_element(By.ID, "error")
        assert browser.execute_script("return window.scrollY") == 0 and on_screen(browser, summary)
        assert browser.switch_to.active_element == summary and focused_row(browser) == -1
        assert "rating 7 is outside the scale 1–3" in summary.text
        beside = browser.find_element(By.ID, "e2")
        assert beside.text == "Use the points of the scale: 1–3."
        assert beside.find_element(By.XPATH, "ancestor::fieldset").get_attribute("id") == "q3"
        summary.find_element(By.CSS_SELECTOR, "a[href='#answer2']").click()
        assert focused_row(browser) == 2 and on_screen(browser, beside)
        ActionChains(browser).send_keys("2", Keys.ENTER).perform()  # the other answers were kept
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
    finally:
        server.stop()
    assert _saved_scores(tmp_path) == {"coherence": 4.0, "consistency": 5.0, "fluency": 2.0, "relevance": 2.0}


def test_the_form_works_without_its_script(tmp_path, browser):
    """Scripts off: the browser's own check of the required points, then the server's check and its messages."""
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        server = open_form(tmp_path, browser, "plain-quality", {"id": "n1", "text": "A paragraph rated without the script."})
        try:
            assert browser.find_elements(By.CSS_SELECTOR, ".rating-row.focused") == []  # the script did not run
            browser.find_element(By.CSS_SELECTOR, "input[name=r0][value='4']").find_element(By.XPATH, "..").click()
            browser.find_element(By.ID, "save").click()  # question 2 unrated: the browser's check keeps the page
            assert browser.find_element(By.CSS_SELECTOR, "input[name=r1]").get_attribute("validationMessage")
            assert browser.find_elements(By.ID, "done") == [] and browser.find_elements(By.ID, "error") == []
            browser.execute_script("document.querySelector('input[name=r1][value=\"2\"]').value = '9';"
                                   "document.querySelector('input[name=r1][value=\"9\"]').checked = true;")
            browser.find_element(By.ID, "save").click()  # a value the page never offered: the server refuses it
            WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "error"))
            assert on_screen(browser, browser.find_element(By.ID, "error"))
            assert browser.find_element(By.ID, "e1").text == "Use the points of the scale: 1–5."
            browser.find_element(By.CSS_SELECTOR, "input[name=r1][value='2']").find_element(By.XPATH, "..").click()
            browser.find_element(By.ID, "save").click()
            WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "done"))
        finally:
            server.stop()
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert _saved_scores(tmp_path) == {"fluency": 4.0, "coherence": 2.0}


def _saved_scores(tmp_path) -> dict[str, float]:
    """criterion → score of what rater ``ann`` saved in the folder's store."""
    db = sqlite3.connect(tmp_path / "out" / "store.sqlite")
    try:
        return dict(db.execute("SELECT criterion, score FROM judgments WHERE rater = 'human:ann'").fetchall())
    finally:
        db.close()
