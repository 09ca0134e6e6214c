"""The HTML report at scale: 100,000 judgments, measured once in one run.

1. Build a run folder the way ``judgelab rate`` does: the real runner (``judgelab.run``)
   asks the scripted test double (``judgelab.models.backends.scripted``) for 5,000 stories × the four
   ``chiang-lee-story`` criteria × 5 samples = 100,000 judgments (n = 5 samples per call:
   20,000 calls plus regenerated refusals, every request and response in ``store.sqlite``).
   Stories are seeded pseudo-English of about 250 words; the double answers with a rating
   sentence and a short explanation, refuses 3% of the time (then rates when asked again) and
   gives no rating 2% of the time. Three human raters per story and criterion (60,000 ratings)
   are written into the store as ``human:<name>`` rows, as the annotation app writes them.
   Then ``run.json``, ``ratings.csv`` and ``summary.csv`` are written as ``judgelab rate`` does.
2. Time ``write_report(folder)`` (target < 15 s) and record the file's size, its peak RSS and the item parts
   written beside it (``report-items/``: the cards beyond the page's first 2,000).
3. Open the report from file:// in headless Chromium (Selenium) three times: navigation
   start → first contentful paint (the first screen, its headline), → load event (target < 5 s), and → the
   item browser's first page shown
   (``performance.mark("judgelab-items-ready")``); then the time to re-render after a filter.

Run: ``python benchmarks/report_scale.py [--judgments 100000] [--keep DIR] [--skip-browser]``.
Writes ``benchmarks/report_scale.json``; the figures are copied into ``benchmarks/README.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CRITERIA = ["grammaticality", "cohesiveness", "likability", "relevance"]
SAMPLES = 5
SYSTEMS = ["human", "gpt2", "gpt3", "llama"]


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    weights = [12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.2, 2.0, 2.0, 1.9, 1.0, 1.5,
               2.0, 0.8, 0.15, 0.1, 0.15, 0.07]
    words = {"the", "a", "and", "of", "to", "in", "was", "he", "she", "it", "that", "his", "her", "with", "for"}
    while len(words) < size:
        words.add("".join(rng.choices(letters, weights, k=rng.choice([2, 3, 4, 4, 5, 5, 6, 6, 7, 8, 9, 10]))))
    return sorted(words)


def stories(n: int, seed: int = 0) -> list[dict]:
    """Seeded pseudo-English stories (Zipf-distributed words, sentences of 8–20 words), about 250 words each."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    zipf = [1 / (k + 1) for k in range(len(vocab))]
    out = []
    for i in range(n):
        words = []
        sentences = []
        while len(words) < rng.randint(200, 300):
            sentence = rng.choices(vocab, zipf, k=rng.randint(8, 20))
            sentences.append(" ".join(sentence).capitalize() + ".")
            words += sentence
        out.append({"id": f"story-{i:05d}", "text": " ".join(sentences),
                    "context": "Writing prompt: " + " ".join(rng.choices(vocab, zipf, k=12)) + ".",
                    "system": SYSTEMS[i % len(SYSTEMS)]})
    return out


def make_judge(seed: int = 1):
    """The scripted test double with a reply function: a rating with an explanation, refusals, failures."""
    from judgelab.models.backends.scripted import ScriptedTestJudge

    rng = random.Random(seed)
    reasons = ["The sentences flow naturally, though a few transitions are abrupt.",
               "Several sentences are hard to follow and the ending feels rushed.",
               "It is vivid and fits the prompt well.", "The plot wanders away from the prompt halfway through.",
               "Grammar is mostly fine; some word choices are odd."]

    def reply(prompt: str) -> str:
        u = rng.random()
        if u < 0.03:
            return "I am an AI language model and I do not have personal preferences, so I cannot rate this story."
        if u < 0.05:
            return "This story is an interesting piece of writing with both strengths and weaknesses."
        base = 1 + (len(prompt) * 7 + prompt.count("e")) % 5
        score = min(5, max(1, base + rng.choice([-1, 0, 0, 0, 1])))
        return f"I would rate it a {score}. {rng.choice(reasons)}"

    return ScriptedTestJudge(script=reply, max_n=SAMPLES)


def build_folder(folder: Path, n_judgments: int) -> dict:
    """A `judgelab rate`-shaped folder with ``n_judgments`` judge judgments and human ratings in the store."""
    from judgelab.datasets.items import Item
    from judgelab.output.manifest import write_manifest
    from judgelab.run import RunSpec, run_spec
    from judgelab.output import write_table
    from judgelab.store import Judgment, Store
    from judgelab.summary import summarize

    n_items = n_judgments // (len(CRITERIA) * SAMPLES)
    rows = stories(n_items)
    items = [Item(item_id=r["id"], text=r["text"], context=r["context"], system=r["system"]) for r in rows]
    folder.mkdir(parents=True, exist_ok=True)
    started = time.time()
    spec = RunSpec(template="chiang-lee-story", samples=SAMPLES, score="parsed")
    with Store(folder / "store.sqlite") as store:
        t0 = time.perf_counter()
        stats = run_spec(spec, items, store, backend=make_judge())
        run_s = time.perf_counter() - t0
        rng = random.Random(2)
        humans = [Judgment(item_id=i.item_id, system=i.system, group=None, criterion=c, rater=f"human:{name}", sample=0,
                           score=float(s), score_parsed=float(s), score_logprob=None, logprob_outside=None, status="ok",
                           raw=None)
                  for i in items for c in CRITERIA for name in ("ann", "bob", "cy")
                  for s in [rng.randint(1, 5)]]
        for k in range(0, len(humans), 5000):
            store.put(judgments=humans[k:k + 5000])
        ratings = store.ratings(rater=stats.rater)
        runs = store.runs()
    write_table(ratings, folder / "ratings.csv")
    write_table(summarize(ratings), folder / "summary.csv")
    statuses = {str(k): int(v) for k, v in ratings["status"].value_counts().sort_index().items()}
    write_manifest(folder, "rate", [{
        "rater": stats.rater, "settings": runs.get(stats.rater), "judgments": stats.total, "already_in_store": 0,
        "calls_made": stats.calls_made, "statuses": statuses, "prompt_tokens": stats.prompt_tokens,
        "completion_tokens": stats.completion_tokens, "wall_s": round(stats.wall_s, 3),
        "price_in": 0.15, "price_out": 0.60,
    }], extra={"items": len(items)}, started=started)
    return {"items": len(items), "judge_judgments": len(ratings), "human_ratings": len(humans), "calls": stats.calls_made,
            "statuses": statuses, "runner_s": round(run_s, 2),
            "store_bytes": (folder / "store.sqlite").stat().st_size}


def open_in_chromium(report: Path, rounds: int = 3) -> dict:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import Select, WebDriverWait

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                f"--user-data-dir={profile}", "--window-size=1366,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)
    driver.set_page_load_timeout(120)
    out: dict = {"first_paint_s": [], "load_event_s": [], "items_ready_s": [], "filter_s": [], "console_errors": [],
                 "load_average_1min_before": round(os.getloadavg()[0], 2)}
    try:
        for _ in range(rounds):
            driver.get("about:blank")
            driver.get(report.resolve().as_uri())
            WebDriverWait(driver, 120).until(
                lambda d: d.find_element("id", "browser").get_attribute("data-ready") in {"1", "error"})
            nav = driver.execute_script("var n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd;")
            ready = driver.execute_script(
                "var m = performance.getEntriesByName('judgelab-items-ready'); return m.length ? m[0].startTime : null;")
            paint = driver.execute_script(  # the first screen (the headline) painted
                "var p = performance.getEntriesByName('first-contentful-paint'); return p.length ? p[0].startTime : null;")
            out["first_paint_s"].append(round(paint / 1000, 3) if paint is not None else None)
            out["load_event_s"].append(round(nav / 1000, 3))
            out["items_ready_s"].append(round(ready / 1000, 3) if ready is not None else None)
            t0 = time.perf_counter()
            Select(driver.find_element("id", "f-criterion")).select_by_visible_text("relevance")
            WebDriverWait(driver, 60).until(lambda d: d.find_element("id", "browser").get_attribute("data-ready") == "1")
            out["filter_s"].append(round(time.perf_counter() - t0, 3))
            out["console_errors"] += [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        out["heap_mb"] = round(driver.execute_script(
            "return performance.memory ? performance.memory.usedJSHeapSize : null;") / 1e6, 1)
        out["chromium"] = driver.capabilities.get("browserVersion")
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    for key in ("first_paint_s", "load_event_s", "items_ready_s", "filter_s"):
        values = [v for v in out[key] if v is not None]
        out[key.replace("_s", "_median_s")] = statistics.median(values) if values else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="build the folder here and keep it")
    parser.add_argument("--skip-browser", action="store_true")
    args = parser.parse_args()
    from judgelab.report.html import write_report

    base = args.keep or Path(tempfile.mkdtemp(prefix="judgelab-report-scale-"))
    folder = base / "run"
    results: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}}
    record = base / "folder.json"
    if not (folder / "store.sqlite").exists():
        import multiprocessing

        t0 = time.perf_counter()
        # built in a child process, so that this process's peak memory is the report's alone
        with multiprocessing.get_context("fork").Pool(1) as pool:
            results["folder"] = pool.apply(build_folder, (folder, args.judgments))
        results["folder"]["build_s"] = round(time.perf_counter() - t0, 1)
        record.write_text(json.dumps(results["folder"]))
    else:
        results["folder"] = {**json.loads(record.read_text()), "reused": True} if record.exists() else {"reused": True}
    load_before = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    path = write_report(folder)
    write_s, write_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    parts = sorted((path.parent / "report-items").glob("part-*.js"))
    results["report"] = {"write_s": round(write_s, 2), "write_cpu_s": round(write_cpu_s, 2),
                         "load_average_1min_before": round(load_before, 2), "bytes": path.stat().st_size,
                         "parts": len(parts), "parts_mb": round(sum(p.stat().st_size for p in parts) / 1e6, 2),
                         "mb": round(path.stat().st_size / 1e6, 2),
                         "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                         "target_write_s": 15}
    print(f"write_report: {write_s:.1f} s ({write_cpu_s:.1f} s CPU, load average {load_before:.1f} on "
          f"{os.cpu_count()} cores), {path.stat().st_size / 1e6:.1f} MB ({path})")
    if not args.skip_browser:
        results["browser"] = open_in_chromium(path)
        results["browser"]["target_load_s"] = 5
        b = results["browser"]
        print(f"chromium: first paint {b['first_paint_median_s']} s, load event {b['load_event_median_s']} s, first page of items {b['items_ready_median_s']} s, "
              f"filter {b['filter_median_s']} s (medians of {len(b['load_event_s'])})")
    (HERE / "report_scale.json").write_text(json.dumps(results, indent=2) + "\n")
    if args.keep is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
