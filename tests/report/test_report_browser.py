"""The HTML report in a real browser: headless Chromium through Selenium, opened from file://.

Skipped, with the reason, when selenium, chromium or chromedriver is missing
(Debian: ``apt install chromium chromium-driver``; ``pip install selenium``).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from conftest import SHARED_DATA
from judgelab.report.html import write_report
from report_helpers import (
    XSS,
    audit_study_folder,
    decode_units,
    dhp_folder,
    parse,
    rate_agree_folder,
    tour_audit_folder,
    write_humans,
)

CHROMIUM = os.environ.get("JUDGELAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = os.environ.get("JUDGELAB_CHROMEDRIVER") or shutil.which("chromedriver") or "/usr/bin/chromedriver"

try:
    import selenium  # noqa: F401

    _SELENIUM = True
except ImportError:  # pragma: no cover - depends on the environment
    _SELENIUM = False

pytestmark = [
    pytest.mark.skipif(not _SELENIUM, reason="browser tests need selenium (pip install selenium)"),
    pytest.mark.skipif(not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()),
                       reason=f"browser tests need chromium and chromedriver (not found: {CHROMIUM}, {CHROMEDRIVER}; "
                              "Debian: apt install chromium chromium-driver, or set JUDGELAB_CHROMIUM / JUDGELAB_CHROMEDRIVER)"),
]


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}", "--window-size=1366,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(60)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def rate_report(tmp_path_factory):
    folder = rate_agree_folder(tmp_path_factory)
    out = tmp_path_factory.mktemp("browser") / "report.html"
    humans = write_humans(out.parent / "H.csv")
    path = write_report(folder, out, human=[humans])
    return path, decode_units(parse(path.read_text(encoding="utf-8")))


def _open(driver, path: Path) -> None:
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get(path.resolve().as_uri())
    _wait_ready(driver)


def _wait_ready(driver) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(
        lambda d: d.find_element("id", "browser").get_attribute("data-ready") in {"1", "error"})
    assert driver.find_element("id", "browser").get_attribute("data-ready") == "1", \
        driver.find_element("id", "browser-message").text


def _no_console_errors(driver) -> None:
    entries = driver.get_log("browser")
    assert not [e for e in entries if e.get("level") in {"SEVERE", "ERROR"}], entries


def _no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018


def _articles(driver):
    return driver.find_elements("css selector", "#units article.unit")


def test_opens_without_console_errors_and_shows_the_largest_disagreement_first(driver, rate_report, tmp_path_factory):
    path, units = rate_report
    _open(driver, path)
    _no_console_errors(driver)
    _no_alert(driver)
    assert driver.title.startswith("judgelab report")
    shown = _articles(driver)
    ranked = [u for u in units if u["diff"] is not None]
    assert len(shown) == min(50, len(units))
    assert float(shown[0].get_attribute("data-absdiff")) == pytest.approx(max(abs(u["diff"]) for u in ranked))
    assert "judge \u2212 human" in shown[0].text
    # the first card shows the item's text first: before the judge's answer, the samples and the prompt
    first = shown[0]
    assert units[0]["rated"] is not None
    text = first.find_element("css selector", ".unit-text pre.item-text").get_attribute("textContent")
    assert text == units[0]["rated"]["text"]
    context = first.find_element("css selector", ".unit-context pre.item-text").get_attribute("textContent")
    assert context == units[0]["rated"]["context"]
    order = driver.execute_script(
        "var a = arguments[0]; return ['.unit-rated', '.unit-side', 'table.samples', 'details.prompt']"
        ".map(function (s) { var e = a.querySelector(s); return e ? Array.prototype.indexOf.call(a.querySelectorAll('*'), e) : -1; });",
        first)
    assert -1 not in order and order == sorted(order), order
    assert not first.find_element("css selector", "details.prompt").get_attribute("open")  # the prompt stays collapsed
    shot = tmp_path_factory.getbasetemp() / "report-screenshot.png"
    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1366, min(int(height), 12000))
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    driver.set_window_size(1366, 900)


def test_filter_by_criterion_and_system(driver, rate_report):
    from selenium.webdriver.support.ui import Select

    path, units = rate_report
    _open(driver, path)
    for criterion, system in (("relevance", "human"), ("likability", "gpt2"), ("grammaticality", "gpt2")):
        Select(driver.find_element("id", "f-criterion")).select_by_visible_text(criterion)
        Select(driver.find_element("id", "f-system")).select_by_visible_text(system)
        _wait_ready(driver)
        mine = [u for u in units if u["criterion"] == criterion and u["system"] == system]
        shown = _articles(driver)
        assert len(shown) == len(mine)
        assert {a.get_attribute("data-criterion") for a in shown} == {criterion}
        assert {a.get_attribute("data-system") for a in shown} == {system}
        best = max(abs(u["diff"]) for u in mine if u["diff"] is not None)
        assert float(shown[0].get_attribute("data-absdiff")) == pytest.approx(best)
        values = [float(a.get_attribute("data-absdiff")) for a in shown if a.get_attribute("data-absdiff")]
        assert values == sorted(values, reverse=True)
        assert f"of {len(mine)} (filtered from {len(units)})" in driver.find_element("id", "browser-status").text
    _no_console_errors(driver)


def test_item_shows_prompt_answers_and_humans_as_text(driver, rate_report):
    from selenium.webdriver.support.ui import Select

    path, units = rate_report
    _open(driver, path)
    Select(driver.find_element("id", "f-sort")).select_by_value("item")
    _wait_ready(driver)
    target = next(u for u in units if u["item_id"] == "s0" and u["criterion"] == "grammaticality")
    article = next(a for a in _articles(driver) if a.find_element("tag name", "h3").text.endswith("item s0")
                   and a.get_attribute("data-criterion") == "grammaticality")
    summary = article.find_element("css selector", "details.prompt summary")
    summary.click()
    prompt = article.find_element("css selector", "pre.prompt-text").get_attribute("textContent")
    assert prompt == target["prompts"][0][0][1]
    assert XSS in prompt
    raws = [e.get_attribute("textContent") for e in article.find_elements("css selector", "pre.raw-text")]
    assert raws == [s["raw"] for s in target["samples"]]
    assert "Human ratings: human:ann" in article.text
    rated = article.find_element("css selector", ".unit-text pre.item-text").get_attribute("textContent")
    assert rated == target["rated"]["text"] and XSS in rated  # the item's text, as text
    xss_answer = next(a for a in _articles(driver) if a.find_element("tag name", "h3").text.endswith("item s2"))
    assert XSS in xss_answer.find_element("css selector", "pre.raw-text").get_attribute("textContent")
    assert not driver.find_elements("css selector", "#units script")
    _no_alert(driver)
    _no_console_errors(driver)


def test_long_texts_are_clipped_with_a_toggle_and_an_old_store_says_where_the_text_is(driver, tmp_path_factory, tmp_path):
    import shutil
    import sqlite3

    folder = tmp_path / "run"
    shutil.copytree(rate_agree_folder(tmp_path_factory), folder)
    long_text = "A long first line. " * 80 + "\n" + "\n".join(f"line {k}" for k in range(30))
    context = "\n".join(f"context line {k}" for k in range(10))
    db = sqlite3.connect(folder / "store.sqlite")
    db.execute("UPDATE items SET text = ?, context = ? WHERE item_id = 's0'", (long_text, context))
    db.commit()
    db.close()
    report = write_report(folder, tmp_path / "long.html")
    _open(driver, report)
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "f-sort")).select_by_value("item")
    _wait_ready(driver)
    card = next(a for a in _articles(driver) if a.find_element("tag name", "h3").text.endswith("item s0"))
    for block, full, limit in ((".unit-text", long_text, 700), (".unit-context", context, 300)):
        box = card.find_element("css selector", block)
        pre = box.find_element("css selector", "pre.item-text")
        shown = pre.get_attribute("textContent")
        assert len(shown) < len(full) and shown.endswith("\u2026") and len(shown) <= limit + 2
        button = box.find_element("css selector", "button.show-all")
        assert button.get_attribute("aria-expanded") == "false" and f"{len(full):,} characters" in button.text
        button.click()
        assert pre.get_attribute("textContent") == full and button.get_attribute("aria-expanded") == "true"
        button.click()
        assert pre.get_attribute("textContent") == shown
    _no_console_errors(driver)
    db = sqlite3.connect(folder / "store.sqlite")  # a store written before texts were recorded
    db.execute("DROP TABLE items")
    db.commit()
    db.close()
    _open(driver, write_report(folder, tmp_path / "old.html"))
    first = _articles(driver)[0]
    assert not first.find_elements("css selector", ".unit-text")
    line = first.find_element("css selector", ".unit-rated p.rated-missing").text
    assert line.startswith("The rated text was not recorded in this store") and line.endswith("the prompt below holds it.")
    _no_console_errors(driver)


def test_texts_outside_the_bmp_read_back_from_the_prompt_in_the_browser(driver, tmp_path):
    from judgelab.datasets.items import Item
    from judgelab.models.backends.scripted import ScriptedTestJudge
    from judgelab.run import RunSpec, run_spec
    from judgelab.store import Store

    folder = tmp_path / "run"
    folder.mkdir()
    item = Item("e1", "Caf\u00e9 \U0001f600\U0001f680 story.\nLine two \u00e9.", context="Prompt \U0001f4da \u00e9")
    with Store(folder / "store.sqlite") as store:
        run_spec(RunSpec(template="chiang-lee-story", samples=1), [item], store,
                 backend=ScriptedTestJudge({"default": "I would rate it a 3."}))
    _open(driver, write_report(folder))
    cards = _articles(driver)
    assert len(cards) == 4
    for card in cards:  # the context is a reference into the relevance prompt, after the text's two emoji
        assert card.find_element("css selector", ".unit-text pre.item-text").get_attribute("textContent") == item.text
        assert card.find_element("css selector", ".unit-context pre.item-text").get_attribute("textContent") == item.context
    _no_console_errors(driver)


def test_keyboard_sorting_and_focus(driver, rate_report):
    from selenium.webdriver.common.keys import Keys

    path, _ = rate_report
    _open(driver, path)
    th = driver.find_element("css selector", "#t-summary thead th:nth-child(6)")
    button = th.find_element("tag name", "button")
    button.send_keys(Keys.ENTER)
    assert th.get_attribute("aria-sort") == "ascending"
    means = [c.get_attribute("data-v") for c in driver.find_elements("css selector", "#t-summary tbody td:nth-child(6)")]
    numbers = [float(v) for v in means if v]
    assert numbers == sorted(numbers)
    button.send_keys(Keys.ENTER)
    assert th.get_attribute("aria-sort") == "descending"
    criterion = driver.find_element("id", "f-criterion")
    driver.execute_script("arguments[0].focus()", criterion)
    driver.switch_to.active_element.send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("id") == "f-system"
    _no_console_errors(driver)


def test_pages_of_fifty(driver, tmp_path_factory):
    folder = dhp_folder(tmp_path_factory)
    path = write_report(folder, tmp_path_factory.mktemp("browser-dhp") / "dhp.html")
    units = decode_units(parse(path.read_text(encoding="utf-8")))
    assert len(units) > 100
    _open(driver, path)
    _no_console_errors(driver)
    assert len(_articles(driver)) == 50
    driver.find_element("id", "p-next").click()
    _wait_ready(driver)
    assert driver.find_element("id", "browser-status").text.startswith(f"Items 51\u2013100 of {len(units)}")
    assert driver.find_element("id", "page-label").text == f"Page 2 of {-(-len(units) // 50)}"
    driver.find_element("id", "p-last").click()
    _wait_ready(driver)
    assert len(_articles(driver)) == len(units) - 50 * (len(units) // 50) or len(_articles(driver)) == 50
    assert driver.find_element("id", "p-next").get_attribute("disabled") is not None
    _no_console_errors(driver)


def test_log_probability_distribution_in_the_page(driver, tmp_path):
    import json

    from conftest import judgelab_cmd

    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"t{i}", "text": f"Text {i}."}) + "\n" for i in range(2)))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "3", "default_probs": {"2": 0.25, "3": 0.5, "4": 0.25}}))
    out = tmp_path / "run"
    r = judgelab_cmd("rate", "--items", str(items), "--template", "plain-quality", "--judge", f"scripted-test-double:{script}",
                     "--score", "logprob", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    _open(driver, write_report(out))
    table = driver.find_element("css selector", "#units article.unit table.dist")
    cells = [c.text for c in table.find_elements("css selector", ":scope > tbody > tr:first-child > *")]
    assert cells[0] == '"3"' and cells[-1] == "0.500", cells
    _no_console_errors(driver)


def _summeval_script(path: Path) -> Path:
    """A scripted test double for the walk-through: it rates each SummEval summary near its experts'
    coherence mean (mapped to 1–3, so every criterion's scale takes it), one rule per summary."""
    import json

    import numpy as np

    rng = np.random.default_rng(0)
    rules = []
    with open(SHARED_DATA / "summeval" / "summeval_expert_means.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            score = int(np.clip(np.round(1 + 2 * (row["coherence"] - 1) / 4 + rng.normal(0, 0.4)), 1, 3))
            rules.append({"contains": row["summary"].strip()[:80], "reply": f"Rating: {score}"})
    path.write_text(json.dumps({"rules": rules, "default": "2"}), encoding="utf-8")
    return path


@pytest.mark.needs_shared_data("summeval/summeval_expert_means.jsonl")
def test_summeval_walk_through_shows_the_headline_and_the_expert_means(driver, tmp_path):
    """docs/agreement.md's SummEval flow as written (recipe geval, then `agree … --out agreement/`), with a
    scripted test double instead of the local model: agreement/report.html opens with the headline and its
    intervals on the first screen, and every item shows the expert mean beside the judge's answer."""
    import json

    from conftest import run_cli

    env = {"JUDGELAB_SHARED_DATA": str(SHARED_DATA)}
    script = _summeval_script(tmp_path / "script.json")
    r = run_cli("recipe", "geval", "--dataset", "summeval", "--n-items", "10", "--judge", f"scripted-test-double:{script}",
                "--score", "parsed", "--quiet", "--out", "runs/geval", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    r = run_cli("agree", "runs/geval/ratings.csv", "--human", str(SHARED_DATA / "summeval" / "summeval_expert_means.jsonl"),
                "--method", "spearman,kendall", "--out", "agreement/", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    report = tmp_path / "agreement" / "report.html"
    driver.set_window_size(1400, 900)
    try:
        _open(driver, report)
        _no_console_errors(driver)
        assert not driver.find_elements("id", "problems")
        headline = driver.find_element("id", "headline")
        assert headline.location["y"] < 400  # the first thing under the page header
        cards = driver.find_elements("css selector", "#headline article.hl-card")
        assert {c.get_attribute("data-criterion") for c in cards} == {"coherence", "consistency", "fluency", "relevance"}
        first = cards[0]
        assert first.location["y"] + 200 < 900 and "95% CI [" in first.text and "Spearman ρ = " in first.text
        assert "n = 160 summaries (10 articles resampled)" in first.text
        assert "Mean score on the 160 summaries both rated" in first.text
        assert "Caution: only 10 item_id values" in first.text  # fewer than 20 clusters: the caveat is said
        assert "the human ratings are means" in first.text  # no baseline from expert means, said in words
        assert first.find_elements("css selector", "svg")
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "report-first-screen.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        units = _articles(driver)
        assert len(units) == 50
        for art in units:
            assert "human mean " in art.text and "human:mean" in art.text and "Rating: " in art.text
        # every card shows the summary rated first, and its article (the context) clipped with its own toggle
        decoded = decode_units(parse(report.read_text(encoding="utf-8")))
        summaries = {json.loads(line)["summary"] for line in
                     (SHARED_DATA / "summeval" / "summeval_expert_means.jsonl").read_text(encoding="utf-8").splitlines()}
        assert all(u["rated"] is not None and u["rated"]["text"] in summaries for u in decoded)
        first = units[0]
        assert first.find_element("css selector", ".unit-text pre.item-text").get_attribute("textContent") == \
            decoded[0]["rated"]["text"]
        context = first.find_element("css selector", ".unit-context")
        assert len(context.find_element("css selector", "pre.item-text").get_attribute("textContent")) <= 302
        assert context.find_element("css selector", "button.show-all").get_attribute("aria-expanded") == "false"
    finally:
        driver.set_window_size(1366, 900)


def _clipped_labels(driver, selector: str) -> list[str]:
    """The texts of the SVG charts under ``selector`` that reach outside their chart's box (as drawn)."""
    return driver.execute_script("""
        const out = [];
        for (const svg of document.querySelectorAll(arguments[0] + ' svg.chart')) {
          const box = svg.getBoundingClientRect();  // as drawn, rotated labels included
          for (const t of svg.querySelectorAll('text')) {
            const b = t.getBoundingClientRect();
            if (b.left < box.left - 0.5 || b.top < box.top - 0.5 || b.right > box.right + 0.5 || b.bottom > box.bottom + 0.5)
              out.push(t.textContent);
          }
        }
        return out;""", selector)


@pytest.mark.needs_shared_data("summeval/summeval_expert_means.jsonl")
def test_a_judge_of_12_summaries_of_one_system_names_no_other_and_says_whether_to_trust_it(driver, tmp_path):
    """A judge that rated 12 summaries of M11, with the experts' means of all 16 systems as humans (the file as
    it is): at 1400×1000 the first screen says in words whether the judge can be trusted yet, n is named
    (summaries), the page names no other system anywhere, and no chart label is clipped."""
    import json
    import re

    from conftest import run_cli

    experts = SHARED_DATA / "summeval" / "summeval_expert_means.jsonl"
    rows = [json.loads(line) for line in experts.read_text(encoding="utf-8").splitlines()]
    mine = [r for r in rows if r["system"] == "M11"][:12]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps({"id": r["doc_id"], "text": r["summary"], "context": r["source"],
                                                              "system": r["system"]}) + "\n" for r in mine))
    script = _summeval_script(tmp_path / "script.json")
    for criterion in ("coherence", "fluency"):  # fluency on 1–3: another scale than the experts' 1–5
        r = run_cli("rate", "--items", "items.jsonl", "--template", "geval-summeval", "--criteria", criterion, "--judge",
                    f"scripted-test-double:{script}", "--score", "parsed", "--quiet", "--out", f"runs/{criterion}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    r = run_cli("agree", "runs/coherence/ratings.csv", "runs/fluency/ratings.csv", "--human", str(experts),
                "--method", "spearman", "--out", "agreement/", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = tmp_path / "agreement" / "report.html"
    driver.set_window_size(1400, 1000)
    try:
        _open(driver, report)
        _no_console_errors(driver)
        words = driver.find_element("css selector", "#headline .hl-words")
        assert words.location["y"] + words.size["height"] < 1000  # on the first screen
        assert words.text.startswith("Can the judge be trusted yet?")
        for criterion in ("coherence", "fluency"):
            line = next(li.text for li in words.find_elements("css selector", "li") if li.text.startswith(criterion))
            assert re.search(r"(Inconclusive|Too few|No verdict|agreement|disagreement)", line), line
            assert "12 summaries" in line
        cards = {c.get_attribute("data-criterion"): c for c in driver.find_elements("css selector", "#headline article.hl-card")}
        assert "n = 12 summaries (each resampled)" in cards["coherence"].text
        assert "Not comparable as means: the judge rated on 1–3" in cards["fluency"].text
        assert not cards["fluency"].find_elements("css selector", "svg line[stroke-dasharray]")  # no equality line
        page_text = driver.execute_script("return document.body.innerText")
        assert set(re.findall(r"\bM\d+\b", page_text)) == {"M11"}
        markup = re.sub(r"<script.*?</script>", "", report.read_text(encoding="utf-8"), flags=re.S)  # the data payloads
        assert set(re.findall(r"\bM\d+\b", markup)) <= {"M11"}
        options = [o.get_attribute("textContent") for o in driver.find_elements("css selector", "#f-system option")
                   if o.get_attribute("value")]
        assert options == ["M11"]
        assert "humans (mean of an unstated number of raters)" in page_text and "mean of 1 rater" not in page_text
        assert not _clipped_labels(driver, "main")
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "report-first-screen-one-system.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.set_window_size(1366, 900)


def test_audit_section_opens_without_console_errors(driver, tmp_path):
    """An `audit --out` folder's report (no item browser): the Audit section, its charts drawn, no script error."""
    page = audit_study_folder(tmp_path) / "report.html"
    driver.get_log("browser")
    driver.get(page.resolve().as_uri())
    section = driver.find_element("id", "audit")
    assert section.is_displayed() and "Calibration" in section.text and "Selective judging" in section.text
    svg = driver.find_element("css selector", "#fig-audit-reliability-0 svg")
    assert svg.size["width"] > 100 and svg.size["height"] > 100
    _no_alert(driver)
    _no_console_errors(driver)


def test_readme_audit_leads_with_its_summary(driver, tmp_path):
    """The README's audit at 1400×1000: the first screen holds the judges × criteria grid with the detected biases
    marked, no "No judgments in this folder"; the humans' lines are collapsed until asked for; lengths per 10 words."""
    import json

    folder = tour_audit_folder(tmp_path)
    doc = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    driver.set_window_size(1400, 1000)
    try:
        _open(driver, folder / "report.html")
        _no_console_errors(driver)
        assert "No judgments in this folder" not in driver.find_element("tag name", "body").text
        grid = driver.find_element("id", "t-audit-summary")
        assert grid.is_displayed() and grid.location["y"] + grid.size["height"] < 1000  # whole, on the first screen
        marked = grid.find_elements("css selector", "td.audit-detected span.audit-effect")
        judges = [e for e in doc["effects"] if not e["rater"].startswith("human:")]
        assert len(marked) == sum(e["detected"] for e in judges) > 0
        assert all(li.is_displayed() for li in marked)
        humans = driver.find_element("css selector", "details.audit-humans")
        line = next(e["line"] for e in doc["effects"] if e["rater"].startswith("human:"))
        assert humans.get_attribute("open") is None and line not in driver.find_element("id", "audit").text
        humans.find_element("tag name", "summary").click()
        assert humans.get_attribute("open") is not None and line in humans.text
        assert all(not d.get_attribute("open") for d in driver.find_elements("css selector", "details.audit-table"))
        lengths = driver.find_element("css selector", "#fig-audit-length svg")
        assert "points per 10 words" in lengths.get_attribute("textContent")
        legend = driver.find_element("css selector", "#fig-audit-leniency svg").get_attribute("textContent")
        assert "human (against the other humans)" in legend and "judge" in legend
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "audit-first-screen.png"
        driver.execute_script("window.scrollTo(0, 0)")
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.set_window_size(1366, 900)


@pytest.mark.needs_shared_data("summeval/summeval_expert_means.jsonl")
def test_the_geval_recipe_report_opens_on_the_verdict_with_the_published_figure(driver, tmp_path):
    """`judgelab recipe geval`'s own report at 1400×1000: its first screen is the per-criterion headline (statistic,
    interval, n named, the verdict in words) with G-EVAL-4's published figure beside ours."""
    from conftest import run_cli

    script = _summeval_script(tmp_path / "script.json")
    r = run_cli("recipe", "geval", "--dataset", "summeval", "--n-items", "10", "--judge", f"scripted-test-double:{script}",
                "--score", "parsed", "--quiet", "--out", "geval", cwd=tmp_path,
                env={"JUDGELAB_SHARED_DATA": str(SHARED_DATA)})
    assert r.returncode == 0, r.stderr
    driver.set_window_size(1400, 1000)
    try:
        _open(driver, tmp_path / "geval" / "report.html")
        _no_console_errors(driver)
        words = driver.find_element("css selector", "#headline .hl-words")
        assert words.location["y"] < 400 and "coherence" in words.text
        assert any(v in words.text for v in ("agreement: the interval", "Inconclusive", "No verdict"))
        first = driver.find_elements("css selector", "#headline article.hl-card")[0]
        assert first.get_attribute("data-criterion") == "coherence"
        import re

        assert "Spearman ρ = " in first.text and re.search(r"n = \d+ documents", first.text)  # of the 10 with a defined r
        published = first.find_element("css selector", ".hl-published")
        assert "G-EVAL-4 published 0.582" in published.text
        assert published.location["y"] + published.size["height"] < 1000  # on the first screen
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "geval-report-first-screen.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.set_window_size(1366, 900)


@pytest.mark.needs_shared_data("hanna/hanna_metric_scores_llm.csv")
def test_the_hanna_audit_leads_with_the_jury_verdict_and_its_chart(driver, tmp_path):
    """docs/audit.md's HANNA audit at 1400×1000: the jury's verdict lines and its chart (jury minus the best single
    judge) are in the summary within the first two screens, the full jury table behind a closed toggle there."""
    from conftest import run_cli

    out = tmp_path / "audit-hanna"
    r = run_cli("audit", "--hanna-scores", str(SHARED_DATA / "hanna" / "hanna_metric_scores_llm.csv"), "--judges",
                "*@eval-prompt-1", "--jury", "mean,weighted", "--selective", "--format", "csv", "--out", str(out))
    assert r.returncode == 0, r.stderr
    driver.set_window_size(1400, 1000)
    try:
        driver.get_log("browser")
        driver.get((out / "report.html").resolve().as_uri())  # no item browser: the scores file has no texts
        _no_console_errors(driver)

        def bottom(el) -> float:
            return driver.execute_script("const b = arguments[0].getBoundingClientRect(); return b.bottom + "
                                         "window.scrollY", el)

        lines = driver.find_elements("css selector", "ul.audit-verdict li")
        assert len(lines) == 12 and all(bottom(li) < 2000 for li in lines)
        chart = driver.find_element("css selector", "#audit-jury-summary #fig-audit-jury-difference svg")
        assert "Jury minus the best single judge" in chart.get_attribute("textContent")
        assert bottom(chart) < 2000, bottom(chart)  # the chart ends within the first two screens
        table = driver.find_element("css selector", "#audit-jury-summary details.audit-table")
        assert table.get_attribute("open") is None and "juries and single judges" in table.text.lower()
        table.find_element("tag name", "summary").click()
        assert table.find_element("id", "t-audit-jury").is_displayed()
        shot = Path(os.environ.get("JUDGELAB_SCREENSHOTS", str(tmp_path))) / "audit-hanna-jury.png"
        driver.execute_script("window.scrollTo(0, arguments[0])", bottom(lines[0]) - 300)
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    finally:
        driver.set_window_size(1366, 900)
