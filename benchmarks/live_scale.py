"""A live run at scale: ``judgelab rate`` for 100,000 judgments against the zero-latency stub,
next to the bare SDK loop on the same prompts, as whole processes, interleaved in one run.

What is measured, per round (``--rounds``, judgelab then the floor):

* wall seconds and judgments per second of ``judgelab rate`` (``--items`` N items × the
  ``grammaticality`` criterion of ``chiang-lee-story`` × 1 sample, ``--concurrency`` 64, ``--quiet``;
  the full pipeline: plan, ledger, journal, parsing, store, ratings.csv, summary, run.json,
  report.html) and of ``bare_loop.py`` (the same prompts, SDK and transport; nothing kept);
* peak RSS and CPU seconds (user + system) of each process (``ru_maxrss``, ``ru_utime`` and
  ``ru_stime`` of that child, from ``os.wait4``): on a machine shared with other jobs the CPU
  ratio is steadier than the wall ratio, which also counts time the process waited for a core;
* how judgelab's pace changes along the run: judgments answered per 10-second window, read
  from the ledger's ``created`` times (each group commit stamps its calls);
* afterwards, in this process, on the run's folder: the seconds to read the ratings and write
  ``ratings.csv`` (``Store.ratings`` + ``write_table``, what ``rate`` does) and to write
  ``report.html`` (``write_html_report``, what ``rate`` does).

The stub (``judgelab.testing.openai_stub``) and both clients are separate processes on the
same machine. Run: ``python benchmarks/live_scale.py [--items 100000] [--rounds 1]``; writes
``benchmarks/live_scale.json`` (``--json`` elsewhere). Start-up, the stub, the prompts and the
floor come from ``throughput.py`` and ``bare_loop.py``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from throughput import prompts, start_stub  # noqa: E402  (the stub and the floor's prompts, shared)

ITEM_TEXT = "Story {i}: the lighthouse keeper counted the ships again."  # the text throughput.prompts renders
WINDOW_S = 10.0


def child(cmd: list[str], log: Path) -> tuple[float, int, float]:
    """(wall seconds, peak RSS in MB, CPU seconds: user + system) of one whole process, start-up included."""
    with log.open("w") as fh:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:2]} failed ({proc.returncode}): {log.read_text()[-1500:]}")
    return elapsed, round(usage.ru_maxrss / 1024), usage.ru_utime + usage.ru_stime  # ru_maxrss: KiB on Linux


def pace(store: Path) -> dict:
    """Judgments answered per 10-second window of the run, from the ledger's commit times."""
    with sqlite3.connect(store) as db:
        times = sorted(t for (t,) in db.execute("SELECT created FROM calls"))
    first = times[0]
    counts: list[int] = []
    for t in times:
        w = int((t - first) // WINDOW_S)
        counts.extend([0] * (w + 1 - len(counts)))
        counts[w] += 1
    full = counts[:-1] or counts  # the last window is partial
    third = max(1, len(full) // 3)
    early, late = sum(full[:third]) / third, sum(full[-third:]) / third
    return {"window_s": WINDOW_S, "per_window": counts,
            "s_per_1000_first_third": round(1000 * WINDOW_S / early, 2) if early else None,
            "s_per_1000_last_third": round(1000 * WINDOW_S / late, 2) if late else None,
            "last_over_first": round(early / late, 3) if late else None}


def outputs_timing(folder: Path) -> dict:
    """Seconds to write ratings.csv and report.html from the run's store, as ``rate`` writes them."""
    from judgelab.output.folder import write_html_report
    from judgelab.output.tables import write_table
    from judgelab.store import Store

    start = time.perf_counter()
    with Store(folder / "store.sqlite", read_only=True) as store:
        ratings = store.ratings()
    read = time.perf_counter() - start
    write_table(ratings, folder / "ratings-again.csv")
    ratings_s = time.perf_counter() - start
    start = time.perf_counter()
    write_html_report(folder)
    report_s = time.perf_counter() - start
    return {"ratings_rows": len(ratings), "ratings_read_s": round(read, 2), "ratings_csv_s": round(ratings_s, 2),
            "ratings_csv_mb": round((folder / "ratings-again.csv").stat().st_size / 2**20, 1),
            "report_html_s": round(report_s, 2), "report_html_mb": round((folder / "report.html").stat().st_size / 2**20, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", default=str(HERE / "live_scale.json"))
    parser.add_argument("--keep", default=None, help="keep the last judgelab folder here")
    args = parser.parse_args()
    n = args.items
    judgelab = str(Path(sys.executable).with_name("judgelab"))
    stub, base_url = start_stub()
    rounds: list[dict] = []
    loads: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            items = work / "items.jsonl"
            with items.open("w", encoding="utf-8") as fh:
                for i in range(n):
                    fh.write(json.dumps({"id": str(i), "text": ITEM_TEXT.format(i=i)}) + "\n")
            (work / "prompts.json").write_text(json.dumps(prompts(n)))
            bare_cmd = [sys.executable, str(HERE / "bare_loop.py"), str(work / "prompts.json"), base_url, str(args.concurrency)]
            (work / "warm.json").write_text(json.dumps(prompts(100)))
            child(bare_cmd[:2] + [str(work / "warm.json")] + bare_cmd[3:], work / "warm.log")  # warm-up: page cache, stub
            for r in range(args.rounds):
                out = work / f"out-{r}"
                loads.append(Path("/proc/loadavg").read_text().split(" ")[0])
                cmd = [judgelab, "rate", "--items", str(items), "--criteria", "grammaticality", "--samples", "1",
                       "--judge", f"openai:stub@{base_url}", "--concurrency", str(args.concurrency), "--quiet",
                       "--out", str(out)]
                jl_s, jl_rss, jl_cpu = child(cmd, work / f"judgelab-{r}.log")
                run = json.loads((out / "run.json").read_text())["runs"][0]
                if run["statuses"] != {"ok": n}:
                    raise RuntimeError(f"not every judgment ok: {run['statuses']}")
                loads.append(Path("/proc/loadavg").read_text().split(" ")[0])
                bare_s, bare_rss, bare_cpu = child(bare_cmd, work / f"bare-{r}.log")
                rounds.append({"judgelab_s": round(jl_s, 2), "judgelab_run_wall_s": run["wall_s"],
                               "judgelab_peak_rss_mb": jl_rss, "bare_s": round(bare_s, 2), "bare_peak_rss_mb": bare_rss,
                               "ratio": round(jl_s / bare_s, 3), "judgelab_cpu_s": round(jl_cpu, 1),
                               "bare_cpu_s": round(bare_cpu, 1), "cpu_ratio": round(jl_cpu / bare_cpu, 3),
                               "judgelab_per_s": round(n / jl_s, 1),
                               "bare_per_s": round(n / bare_s, 1), "pace": pace(out / "store.sqlite")})
                print(json.dumps({k: v for k, v in rounds[-1].items() if k != "pace"}), flush=True)
            last = work / f"out-{args.rounds - 1}"
            timing = outputs_timing(last)
            if args.keep:
                import shutil

                shutil.copytree(last, args.keep, dirs_exist_ok=True)
    finally:
        stub.terminate()
    from importlib.metadata import version

    jl = statistics.median(r["judgelab_s"] for r in rounds)
    bare = statistics.median(r["bare_s"] for r in rounds)
    result = {
        "judgments": n, "design": f"{n} items x 1 criterion (chiang-lee-story grammaticality) x 1 sample",
        "item_text": ITEM_TEXT, "concurrency": args.concurrency, "rounds": rounds,
        "judgelab_s_median": jl, "bare_s_median": bare,
        "ratio": round(statistics.median(r["ratio"] for r in rounds), 3),  # of the rounds' own ratios
        "cpu_ratio": round(statistics.median(r["cpu_ratio"] for r in rounds), 3),
        "judgelab_per_s": round(n / jl, 1), "judgelab_peak_rss_mb_max": max(r["judgelab_peak_rss_mb"] for r in rounds),
        "outputs": timing, "load_average_1min_before_each_process": loads,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "versions": {d: version(d) for d in ("openai", "aiohttp", "pandas", "numpy")},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}, indent=2))


if __name__ == "__main__":
    main()
