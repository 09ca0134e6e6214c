"""A million judgments on one machine: ``judgelab rate`` beside the bare SDK loop, in one run, as whole processes.

The design is live_scale.py's (N items × the ``grammaticality`` criterion of ``chiang-lee-story`` × 1
sample, short texts, concurrency 64, ``--quiet``, the zero-latency stub ``judgelab.testing.openai_stub``),
at ``--judgments`` (default 1,000,000). Each part is measured on its own processes, from ``os.wait4``
(wall, CPU = user + system, peak RSS = ``ru_maxrss``); every model-calling side has a stub of its own,
so the stub's CPU and peak RSS are measured per side too.

Parts (``--parts``, all by default):

* ``rate``: ``judgelab rate`` writing its whole folder (store, ratings.csv, summary, run.json,
  report.html); the pace by thirds from the ledger's ``created`` times (seconds per 1,000 judgments
  over the first and the last third of the judgments, and last / first);
* ``bare``: ``bare_loop.py`` on the same prompts (the floor), with its pace by thirds, wall and CPU, from
  the times its calls finished (the control: a drift the floor shows too is not judgelab's);
* ``bare_workers``: the same loop with ``CONCURRENCY`` worker coroutines taking the next prompt instead of
  a coroutine per prompt gathered at once (``bare_loop.py --workers``): the stricter floor at 10⁶, where the
  gathered loop holds a million tasks; judged against the same 1.2×;
* ``report``: ``write_html_report`` of the rate folder again, as a process of its own (wall, peak RSS);
* ``browser``: report.html in headless Chromium at 1400×1000 (selenium with Debian's chromium and
  chromedriver, as tests/report/test_report_browser.py): navigation → the first section after the
  title visible (the first screen), and → the items browser ready;
* ``agree``: ``judgelab agree`` and ``judgelab audit`` on the run's ratings.csv with synthetic human
  ratings (3 raters × ``--human-items`` items, seeded);
* ``kill``: the same ``rate`` into a new folder, ``kill -9`` when the ledger holds ``--kill-at`` of the
  planned calls, then the same command again: every judgment once, and no request paid twice beyond
  those in flight at the kill (the stub logs each answer with its ledger key, so repeats are counted).

``--profile`` runs the judgelab side of ``rate`` under cProfile (``python -m cProfile``; no threads run
judgelab's work, so the main thread is all of it) and writes the top functions by cumulative and by
self time beside the JSON, with judgelab's own functions by self time in the JSON. A profiled run's
times are not the product's: its verdicts say so.

Writes ``--json`` (default ``benchmarks/million.json``) and prints the verdict of each target of the
issue's must-show, computed from the measurements: nothing here is a unit test.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from live_scale import ITEM_TEXT  # noqa: E402  (the items' text, shared with live_scale.py and throughput.prompts)
from throughput import start_stub  # noqa: E402

PARTS = ("rate", "bare", "bare_workers", "report", "browser", "agree", "kill")
GB_MB = 1536  # 1.5 GB in MiB (ru_maxrss is KiB on Linux)
TARGETS = {  # the issue's must-show: (what, limit, direction)
    "wall_ratio": ("judgelab rate / bare loop, wall", 1.2, "max"),
    "wall_ratio_workers": ("judgelab rate / bare loop of 64 workers, wall", 1.2, "max"),
    "judgelab_peak_rss_mb": ("peak RSS of judgelab rate, MiB", GB_MB, "max"),
    "pace_last_over_first": ("s per 1,000 judgments, last third / first third", 1.10, "max"),
    "first_screen_s": ("report.html first screen in Chromium, s", 1.0, "max_open"),
    "agree_s": ("agree wall, s", 60.0, "max_open"),
    "agree_peak_rss_mb": ("agree peak RSS, MiB", GB_MB, "max"),
    "audit_s": ("audit wall, s", 60.0, "max_open"),
    "audit_peak_rss_mb": ("audit peak RSS, MiB", GB_MB, "max"),
    "kill_every_judgment_once": ("after kill -9 and rerun: every judgment once", True, "true"),
    "kill_no_call_twice": ("no request answered twice beyond the calls in flight at the kill", True, "true"),
}


# ---------------------------------------------------------------- pure helpers (tests/test_million_bench.py)

def pace_by_thirds(times: list[float]) -> dict:
    """Seconds per 1,000 judgments over the first and the last third of the judgments (by count, in time
    order), and last / first. ``times``: one commit time per judgment (the ledger's ``created``)."""
    t = sorted(times)
    k = len(t) // 3
    return pace_of_points(len(t), *((t[0], t[k], t[-1 - k], t[-1]) if k >= 2 else (None,) * 4))


def pace_of_marks(n: int, finished_at: dict) -> dict:
    """:func:`pace_by_thirds` of a run that wrote only when its 1st, (k+1)th, (n-k)th and nth call finished,
    k = n // 3 (bare_loop.py's marks; keys as text or int): the same four points, so the same definition."""
    k, at = n // 3, {int(i): t for i, t in finished_at.items()}
    return pace_of_points(n, at.get(1), at.get(k + 1), at.get(n - k), at.get(n))


def pace_of_points(n: int, t0: float | None, tk: float | None, tnk: float | None, tn: float | None) -> dict:
    k = n // 3
    if k < 2 or None in (t0, tk, tnk, tn):
        return {"judgments": n, "s_per_1000_first_third": None, "s_per_1000_last_third": None, "last_over_first": None}
    first, last = (tk - t0) / k * 1000, (tn - tnk) / k * 1000  # type: ignore[operator]
    return {"judgments": n, "s_per_1000_first_third": round(first, 4), "s_per_1000_last_third": round(last, 4),
            "last_over_first": round(last / first, 3) if first > 0 else None}


def verdicts(measured: dict, profiled: bool = False) -> list[dict]:
    """One row per target of the must-show: the value measured, the limit and pass / fail / not measured."""
    rows = []
    for key, (what, limit, kind) in TARGETS.items():
        value = measured.get(key)
        if value is None:
            verdict = "not measured"
        elif profiled and key in ("wall_ratio", "wall_ratio_workers", "pace_last_over_first"):
            verdict = "not judged (profiled run)"
        elif kind == "true":
            verdict = "pass" if value is True else "fail"
        elif kind == "max_open":
            verdict = "pass" if value < limit else "fail"
        else:
            verdict = "pass" if value <= limit else "fail"
        rows.append({"target": key, "what": what, "value": value, "limit": limit, "verdict": verdict})
    return rows


def flatten(result: dict) -> dict:
    """The values the targets are judged on, from the result's parts."""
    rate, bare, kill = result.get("rate") or {}, result.get("bare") or {}, result.get("kill") or {}
    agree, audit = (result.get("agree") or {}).get("agree") or {}, (result.get("agree") or {}).get("audit") or {}
    out = {"judgelab_peak_rss_mb": rate.get("peak_rss_mb"),
           "pace_last_over_first": (rate.get("pace") or {}).get("last_over_first"),
           "first_screen_s": (result.get("browser") or {}).get("first_screen_s"),
           "agree_s": agree.get("wall_s"), "agree_peak_rss_mb": agree.get("peak_rss_mb"),
           "audit_s": audit.get("wall_s"), "audit_peak_rss_mb": audit.get("peak_rss_mb"),
           "kill_every_judgment_once": kill.get("every_judgment_once"),
           "kill_no_call_twice": kill.get("no_call_twice")}
    if rate.get("wall_s") and bare.get("wall_s"):
        out["wall_ratio"] = round(rate["wall_s"] / bare["wall_s"], 3)
    workers = result.get("bare_workers") or {}
    if rate.get("wall_s") and workers.get("wall_s"):
        out["wall_ratio_workers"] = round(rate["wall_s"] / workers["wall_s"], 3)
    return out


# ---------------------------------------------------------------- processes

def measure(cmd: list[str], log: Path, check: bool = True) -> dict:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MiB) of one whole process, start-up included."""
    with log.open("w") as fh:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    rc = os.waitstatus_to_exitcode(status)
    if check and rc != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({rc}): {log.read_text()[-1500:]}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "exit": rc}


class Stub:
    """The zero-latency stub as a process of its own, its CPU and peak RSS read when it stops."""

    def __init__(self, log: Path | None = None) -> None:
        self.log = log

    def __enter__(self) -> Stub:
        if self.log is None:
            self.proc, self.url = start_stub()
        else:  # one line per answer, with the request's ledger key (the header judgelab sends)
            self.proc = subprocess.Popen([sys.executable, "-m", "judgelab.testing.openai_stub", "--port", "0",
                                          "--log", str(self.log)], stdout=subprocess.PIPE, text=True)
            self.url = f"http://127.0.0.1:{int(self.proc.stdout.readline().split()[1])}/v1"  # type: ignore[union-attr]
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        _, _, usage = os.wait4(self.proc.pid, 0)
        self.proc.returncode = 0  # reaped here
        self.usage = {"cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def rate_cmd(items: Path, url: str, out: Path, concurrency: int, profile: Path | None = None) -> list[str]:
    head = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "judgelab.cli"] if profile else \
        [str(Path(sys.executable).with_name("judgelab"))]
    return head + ["rate", "--items", str(items), "--criteria", "grammaticality", "--samples", "1",
                   "--judge", f"openai:stub@{url}", "--concurrency", str(concurrency), "--quiet", "--out", str(out)]


def ledger_times(store: Path) -> list[float]:
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return [t for (t,) in db.execute("SELECT created FROM calls")]


def ledger_count(store: Path) -> int | None:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT count(*) FROM calls").fetchone()[0]
    except sqlite3.Error:
        return None  # not made yet, or busy: look again


def write_inputs(work: Path, n: int) -> tuple[Path, Path]:
    """items.jsonl for judgelab and the same prompts for the floor, written as streams (no list of N prompts)."""
    from judgelab.prompts import load_template

    template = load_template("chiang-lee-story")
    items, prompts = work / "items.jsonl", work / "prompts.json"
    with items.open("w", encoding="utf-8") as fi, prompts.open("w", encoding="utf-8") as fp:
        fp.write("[")
        for i in range(n):
            text = ITEM_TEXT.format(i=i)
            fi.write(json.dumps({"id": str(i), "text": text}) + "\n")
            fp.write(("," if i else "") + json.dumps(template.render("grammaticality", {"text": text})))
        fp.write("]")
    return items, prompts


# ---------------------------------------------------------------- parts

def part_rate(work: Path, items: Path, n: int, args: argparse.Namespace) -> dict:
    out, profile = work / "rate", (work / "rate.prof" if args.profile else None)
    with Stub() as stub:
        got = measure(rate_cmd(items, stub.url, out, args.concurrency, profile), work / "rate.log")
    got["stub"] = stub.usage
    run = json.loads((out / "run.json").read_text())["runs"][0]
    if run["statuses"] != {"ok": n}:
        raise RuntimeError(f"not every judgment ok: {run['statuses']}")
    got["run_wall_s"], got["calls_made"] = run.get("wall_s"), run.get("calls_made")
    got["pace"] = pace_by_thirds(ledger_times(out / "store.sqlite"))
    got["files_mb"] = {p.name: round(p.stat().st_size / 2**20, 2) for p in sorted(out.iterdir()) if p.is_file()}
    got["store_bytes_per_judgment"] = round((out / "store.sqlite").stat().st_size / n, 1)
    if profile:
        got["profile"] = profile_top(profile, Path(args.json).with_suffix(".profile.txt"))
    return got


def part_bare(work: Path, prompts: Path, n: int, args: argparse.Namespace, workers: bool = False) -> dict:
    name = "bare-workers" if workers else "bare"
    marks = work / f"{name}-marks.json"
    with Stub() as stub:
        got = measure([sys.executable, str(HERE / "bare_loop.py"), str(prompts), stub.url, str(args.concurrency),
                       str(marks), *(["--workers"] if workers else [])], work / f"{name}.log")
    got["stub"] = stub.usage
    at = json.loads(marks.read_text())
    got["pace"] = pace_of_marks(n, at["finished_at"])  # the control for rate's pace
    got["cpu_pace"] = pace_of_marks(n, at["cpu_at"])  # the same of its CPU seconds: wall drift without CPU drift is waiting
    return got


def part_report(work: Path) -> dict:
    code = "import sys; from pathlib import Path; from judgelab.output.folder import write_html_report; " \
           "write_html_report(Path(sys.argv[1]))"
    got = measure([sys.executable, "-c", code, str(work / "rate")], work / "report.log")
    got["report_html_mb"] = round((work / "rate" / "report.html").stat().st_size / 2**20, 2)
    return got


def part_browser(page: Path) -> dict:
    import shutil

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = os.environ.get("JUDGELAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with tempfile.TemporaryDirectory() as profile:
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={profile}", "--window-size=1400,1000"):
            opts.add_argument(arg)
        driver = webdriver.Chrome(service=Service(os.environ.get("JUDGELAB_CHROMEDRIVER") or shutil.which("chromedriver")
                                                  or "/usr/bin/chromedriver"), options=opts)
        try:
            driver.set_page_load_timeout(120)
            driver.get("about:blank")
            start = time.perf_counter()
            driver.get(page.resolve().as_uri())  # returns at the load event
            load = time.perf_counter() - start
            WebDriverWait(driver, 60, poll_frequency=0.01).until(
                lambda d: d.execute_script("const s = document.querySelector('h1 ~ section, main section');"
                                           "return !!s && s.getBoundingClientRect().top < innerHeight"
                                           " && s.getBoundingClientRect().height > 0"))
            first = time.perf_counter() - start
            WebDriverWait(driver, 120).until(
                lambda d: d.find_element("id", "browser").get_attribute("data-ready") in {"1", "error"})
            ready = time.perf_counter() - start
            heap = driver.execute_script("return performance.memory ? performance.memory.usedJSHeapSize : null")
        finally:
            driver.quit()
    return {"load_event_s": round(load, 3), "first_screen_s": round(first, 3), "items_browser_ready_s": round(ready, 3),
            "js_heap_mb": round(heap / 2**20) if heap else None, "window": "1400x1000"}


def part_agree(work: Path, human_items: int, seed: int = 31) -> dict:
    import csv

    rng = random.Random(seed)
    humans = work / "humans.csv"
    with humans.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "rater", "criterion", "score"])
        for i in range(human_items):
            for rater in ("h1", "h2", "h3"):
                w.writerow([str(i), rater, "grammaticality", rng.randint(1, 5)])
    judgelab = str(Path(sys.executable).with_name("judgelab"))
    ratings = str(work / "rate" / "ratings.csv")
    return {"human_ratings": 3 * human_items,
            **{cmd: measure([judgelab, cmd, ratings, "--human", str(humans), "--out", str(work / cmd)], work / f"{cmd}.log")
               for cmd in ("agree", "audit")}}


def part_kill(work: Path, items: Path, n: int, args: argparse.Namespace) -> dict:
    """kill -9 at ``--kill-at`` of the calls, then the same command: the stub logs every answer with its ledger
    key, so a request answered twice (paid twice) is counted, not inferred; at most the calls in flight at
    the kill (``--concurrency``) may be."""
    out, answers = work / "killed", work / "stub-answers.jsonl"
    store = out / "store.sqlite"
    with Stub(answers) as stub:
        cmd = rate_cmd(items, stub.url, out, args.concurrency)
        with (work / "killed.log").open("w") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
            while proc.poll() is None and (ledger_count(store) or 0) < args.kill_at * n:
                time.sleep(0.2)
            if proc.poll() is not None:
                raise RuntimeError(f"the run ended before {args.kill_at:.0%} of its calls: raise --judgments")
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        stored = ledger_count(store) or 0
        before = sum(1 for _ in answers.open())
        rerun = measure(cmd, work / "rerun.log")
    run = json.loads((out / "run.json").read_text())["runs"][0]
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        calls = db.execute("SELECT count(*) FROM calls").fetchone()[0]
    keys = [json.loads(line)["key"] for line in answers.open()]
    import csv

    with (out / "ratings.csv").open(newline="") as fh:
        ids = [row["item_id"] for row in csv.DictReader(fh)]
    once = len(ids) == n and len(set(ids)) == n and run["statuses"] == {"ok": n}
    twice = len(keys) - len(set(keys))
    return {"kill_at_calls_in_ledger": stored, "kill_at_share": round(stored / n, 3),
            "answered_before_kill": before, "in_flight_or_journaled_at_kill": before - stored, "rerun": rerun,
            "rerun_calls_made": run.get("calls_made"), "planned_minus_ledger_at_kill": n - stored,
            "recovered_from_journal": n - stored - (run.get("calls_made") or 0),
            "stub_answers_total": len(keys), "distinct_requests_answered": len(set(keys)), "answered_twice": twice,
            "ledger_calls_after": calls, "ratings_rows": len(ids), "distinct_items": len(set(ids)),
            "statuses": run["statuses"], "every_judgment_once": once,
            "no_call_twice": len(set(keys)) == n and calls == n and twice <= args.concurrency}


# ---------------------------------------------------------------- profile

def profile_top(prof: Path, text: Path, top: int = 40) -> dict:
    """The top functions by cumulative and by self time (text file), and judgelab's own by self time (JSON)."""
    import io
    import pstats
    import shutil

    buf = io.StringIO()
    stats = pstats.Stats(str(prof), stream=buf)
    for key in ("cumulative", "tottime"):
        buf.write(f"\n==== top {top} by {key} ====\n")
        stats.sort_stats(key).print_stats(top)
    text.write_text(buf.getvalue())
    shutil.copyfile(prof, text.with_suffix(".prof"))  # the raw profile, for snakeviz / pstats (the run's folder is temporary)
    raw = stats.stats  # type: ignore[attr-defined]  # {(file, line, name): (cc, nc, tottime, cumtime, callers)}
    total = sum(v[2] for v in raw.values())
    own = sorted(((v[2], v[3], f"{Path(f).name}:{line}:{name}", f) for (f, line, name), v in raw.items()
                  if "/judgelab/" in f), reverse=True)
    return {"total_self_s": round(total, 2), "judgelab_self_s": round(sum(o[0] for o in own), 2),
            "top_judgelab_self": [{"function": o[2], "file": o[3].split("/judgelab/", 1)[1], "self_s": round(o[0], 3),
                                   "cum_s": round(o[1], 3), "share_of_all_self": round(o[0] / total, 4)}
                                  for o in own[:15]],
            "text": str(text)}


# ---------------------------------------------------------------- main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of: {', '.join(PARTS)}")
    parser.add_argument("--profile", action="store_true", help="run judgelab's rate under cProfile")
    parser.add_argument("--human-items", type=int, default=10_000)
    parser.add_argument("--kill-at", type=float, default=0.6, help="kill -9 when the ledger holds this share")
    parser.add_argument("--json", default=str(HERE / "million.json"))
    parser.add_argument("--note", default="", help="recorded in the JSON (machine, load, scale)")
    parser.add_argument("--work", default=None, help="keep the inputs and output folders in this directory "
                        "(else a temporary one, removed at the end); a part reads what an earlier run left there")
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    if unknown := set(parts) - set(PARTS):
        parser.error(f"unknown part {sorted(unknown)}: choose from {', '.join(PARTS)}")
    n = args.judgments
    result: dict = {"judgments": n, "design": f"{n} items x 1 criterion (chiang-lee-story grammaticality) x 1 sample",
                    "item_text": ITEM_TEXT, "concurrency": args.concurrency, "parts": parts, "profiled": args.profile,
                    "note": args.note, "load_average_1min": {}}
    with (contextlib.nullcontext(args.work) if args.work else tempfile.TemporaryDirectory()) as tmp:
        work = Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        items, prompts = write_inputs(work, n)
        for part in PARTS:
            if part not in parts:
                continue
            result["load_average_1min"][part] = Path("/proc/loadavg").read_text().split(" ")[0]
            print(f"million: {part} …", flush=True)
            result[part] = {"rate": lambda: part_rate(work, items, n, args), "bare": lambda: part_bare(work, prompts, n, args),
                            "bare_workers": lambda: part_bare(work, prompts, n, args, workers=True),
                            "report": lambda: part_report(work), "browser": lambda: part_browser(work / "rate" / "report.html"),
                            "agree": lambda: part_agree(work, min(args.human_items, n)),
                            "kill": lambda: part_kill(work, items, n, args)}[part]()
            print(json.dumps(result[part])[:600], flush=True)
    from importlib.metadata import version

    result["targets"] = verdicts(flatten(result), profiled=args.profile)
    result["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    result["versions"] = {d: version(d) for d in ("openai", "aiohttp", "pandas", "numpy")}
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    for row in result["targets"]:
        print(f"{row['verdict']:>26}  {row['what']}: {row['value']} (limit {row['limit']})")
    for part, key in (("rate", "pace"), ("bare", "pace"), ("bare", "cpu_pace"), ("bare_workers", "pace")):  # the floor's pace is the control
        if pace := (result.get(part) or {}).get(key):
            print(f"{key.replace('_', ' ') + ' ' + part:>26}  s per 1,000 judgments, first third "
                  f"{pace['s_per_1000_first_third']}, last third {pace['s_per_1000_last_third']}: {pace['last_over_first']}x")


if __name__ == "__main__":
    main()
