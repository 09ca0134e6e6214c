"""Fleet throughput: one judge served by 4 stub replicas vs by 1, each answering after a fixed latency.

The same plan (``--items`` N stories × the four ``chiang-lee-story`` criteria × 1 sample) is run
in-process through :func:`judgelab.run.run_spec` against one replica and against a fleet of four
(``openai:stub@URL1,…,URL4``), ``--concurrency`` calls in flight per replica, alternating the two
for ``--rounds`` rounds (medians). The stubs are separate processes
(``judgelab.testing.openai_stub --latency``). The ratio is judgments per second of the fleet
over those of one replica; the goal is ≥ 3.5 at 50 ms latency.

Run: ``python benchmarks/fleet_scale.py [--items 200] [--latency 0.05] [--concurrency 8] [--rounds 3]``.
Writes ``benchmarks/fleet_scale.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_stub(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.testing.openai_stub", "--port", "0", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def one_run(urls: list[str], n_items: int, concurrency: int) -> tuple[float, int]:
    from judgelab.datasets.items import Item
    from judgelab.run import RunSpec, run_spec
    from judgelab.spec import JudgeOptions, JudgeSpec
    from judgelab.store import Store

    items = [Item(str(i), f"Story {i}: the lighthouse keeper counted the ships again.", context="a prompt")
             for i in range(n_items)]
    spec = RunSpec(judge=JudgeSpec(spec="openai:stub@" + ",".join(urls), options=JudgeOptions(concurrency=concurrency)),
                   samples=1)
    store = Store(":memory:")
    start = time.perf_counter()
    stats = run_spec(spec, items, store)
    elapsed = time.perf_counter() - start
    if stats.statuses != {"ok": stats.recorded}:
        raise RuntimeError(f"not every judgment ok: {stats.statuses}")
    return elapsed, stats.recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load_before = Path("/proc/loadavg").read_text().split()[:3]  # other jobs on the machine, for the record
    stubs = [start_stub(args.latency) for _ in range(4)]
    urls = [u for _, u in stubs]
    try:
        one_run(urls[:1], 5, args.concurrency)  # warm-up (imports)
        singles, fleets, n = [], [], 0
        for _ in range(args.rounds):
            t, n = one_run(urls[:1], args.items, args.concurrency)
            singles.append(t)
            t, n = one_run(urls, args.items, args.concurrency)
            fleets.append(t)
    finally:
        for proc, _ in stubs:
            proc.terminate()
    import openai

    single, fleet = statistics.median(singles), statistics.median(fleets)
    result = {
        "judgments": n, "latency_s": args.latency, "concurrency_per_replica": args.concurrency, "rounds": args.rounds,
        "one_replica_s": [round(t, 3) for t in singles], "four_replicas_s": [round(t, 3) for t in fleets],
        "one_replica_per_s": round(n / single, 1), "four_replicas_per_s": round(n / fleet, 1),
        "ratio": round(single / fleet, 2), "bound_per_replica_per_s": round(args.concurrency / args.latency, 1),
        "python": platform.python_version(), "openai": openai.__version__, "cpus": __import__("os").cpu_count(),
        "load_average_before": load_before, "load_average_after": Path("/proc/loadavg").read_text().split()[:3],
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    (HERE / "fleet_scale.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
