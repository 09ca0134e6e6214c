"""Coverage of judgelab's intervals by simulation: PPI++ (t and normal) and the cluster bootstrap.

Every interval is computed by judgelab's own functions (``judgelab.stats.ppi.ppi_mean``,
``ppi_mean_difference`` and ``judgelab.stats.bootstrap.cluster_bootstrap_ci``) on data drawn
here with known truth; the coverage is the share of simulated studies whose interval holds
the truth, with its Monte-Carlo standard error ``sqrt(c (1 - c) / reps)``.

PPI scenarios (human ratings on a 1–5 scale; ``N`` judge-only items; ``n`` human-rated items):

* ``uninformative``: the judge is ``3 + N(0, 1)``, unrelated to the ratings;
* ``informative``: the judge is ``y + 0.5 + N(0, 0.7²)`` (biased by 0.5, correlated about 0.85);
* ``informative_N20``: the same judge with only 20 judge-only items;
* ``skewed_uninformative`` / ``skewed_informative``: ratings piled at the top of the scale
  (probabilities 0.02, 0.03, 0.05, 0.30, 0.60; skewness -1.94, Cochran's rule asks n > 94);
* ``difference``: system A (informative judge, bias 0.5) minus system B (its own ratings,
  judge bias 0.2, noise 0.9), ``n`` human-rated items each.

Bootstrap scenarios (``k`` clusters × 8 rows; clusters resampled):

* ``mean``: row = cluster effect N(0, 1) + N(0, 1) noise; the mean of all rows (truth 0);
* ``skewed_mean``: cluster effect Exp(1) − 1, noise N(0, 0.5²) (truth 0);
* ``pearson``: x = u + e1, y = 0.6 u + 0.8 v + 0.6 e1 + 0.8 e2 (u, v per cluster; e1, e2 per row;
  all N(0, 1)): Pearson's r over all rows, truth 0.6;
* ``mean_rows_resampled``: the ``mean`` scenario with every row its own cluster (the mistake the
  cluster bootstrap avoids), percentile only.

Run: ``python benchmarks/interval_coverage.py [--part ppi|bootstrap|all] [--ppi-reps 4000]
[--boot-reps 2000] [--resamples 999] [--jobs 2]``. Writes ``benchmarks/interval_coverage.json``;
the figures are copied into ``docs/intervals.md``. At the defaults on 2 CPU cores the PPI part takes
about 1 minute and the bootstrap part about 11 minutes; the script says so when it starts and prints
a progress line (studies simulated, time left) every few seconds (``--progress-seconds``).
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import queue
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LEVELS = np.arange(1, 6, dtype=float)
PROBS = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
SKEWED = np.array([0.02, 0.03, 0.05, 0.30, 0.60])
PROBS_B = np.array([0.15, 0.25, 0.3, 0.2, 0.1])
#: seconds each part took at the default replications on 2 CPU cores (benchmarks/README.md)
MEASURED_SECONDS = {"ppi": 42, "bootstrap": 660}
#: a worker reports its progress after this many simulated studies
REPORT_EVERY = 25


def _mc(hits: np.ndarray) -> dict:
    c = float(np.mean(hits))
    return {"coverage": round(c, 4), "mc_se": round(math.sqrt(c * (1 - c) / hits.size), 4), "reps": int(hits.size)}


def _draw(rng, reps, n, N, probs, judge, bias=0.5, noise=0.7):
    y = rng.choice(LEVELS, size=(reps, n + N), p=probs)
    if judge == "uninformative":
        f = 3 + rng.normal(0, 1, y.shape)
    else:
        f = y + bias + rng.normal(0, noise, y.shape)
    return y[:, :n], f[:, :n], f[:, n:]


def _tick(progress, i: int) -> None:
    """Tell the main process that one more batch of studies is done (``progress``: a queue, or None)."""
    if progress is not None and (i + 1) % REPORT_EVERY == 0:
        progress.put(REPORT_EVERY)


def ppi_cell(scenario: str, n: int, reps: int, seed: int, progress=None) -> dict:
    """Coverage of the t and normal PPI++ intervals (and the t human-only one) in one scenario at one n."""
    from judgelab.stats.ppi import ppi_mean, ppi_mean_difference

    rng = np.random.default_rng(seed)
    out: dict = {"scenario": scenario, "n": n}
    N = 20 if scenario == "informative_N20" else 500
    if scenario == "difference":
        a = _draw(rng, reps, n, N, PROBS, "informative", 0.5, 0.7)
        b = _draw(rng, reps, n, N, PROBS_B, "informative", 0.2, 0.9)
        truth = float(LEVELS @ (PROBS - PROBS_B))
        for q in ("t", "normal"):
            hits, nan = np.zeros(reps, bool), 0
            for i in range(reps):
                d = ppi_mean_difference(a[0][i], a[1][i], a[2][i], b[0][i], b[1][i], b[2][i], quantile=q)
                _tick(progress, i)
                hits[i] = d.ci_low <= truth <= d.ci_high
                nan += math.isnan(d.ci_low)
            out[q] = {**_mc(hits), "no_interval": nan}
        return out
    probs = SKEWED if scenario.startswith("skewed") else PROBS
    judge = "uninformative" if scenario.endswith("uninformative") else "informative"
    y, f, fu = _draw(rng, reps, n, N, probs, judge)
    truth = float(LEVELS @ probs)
    for q in ("t", "normal"):
        hits, human, nan, noted = np.zeros(reps, bool), np.zeros(reps, bool), 0, np.zeros(reps, bool)
        for i in range(reps):
            r = ppi_mean(y[i], f[i], fu[i], quantile=q)
            _tick(progress, i)
            hits[i] = r.ci_low <= truth <= r.ci_high
            human[i] = r.human_only.ci_low <= truth <= r.human_only.ci_high
            nan += math.isnan(r.ci_low)
            noted[i] = "Cochran" in r.note
        out[q] = {**_mc(hits), "no_interval": nan, "cochran_note": int(noted.sum()), "human_only": _mc(human),
                  "coverage_with_cochran_note": round(float(hits[noted].mean()), 4) if noted.any() else None,
                  "coverage_without_cochran_note": round(float(hits[~noted].mean()), 4) if (~noted).any() else None}
    return out


def _clusters(rng, scenario: str, k: int, per: int = 8):
    if scenario == "pearson":
        u, v = np.repeat(rng.normal(size=k), per), np.repeat(rng.normal(size=k), per)
        e1, e2 = rng.normal(size=k * per), rng.normal(size=k * per)
        return u + e1, 0.6 * u + 0.8 * v + 0.6 * e1 + 0.8 * e2, 0.6
    if scenario == "skewed_mean":
        return np.repeat(rng.exponential(1.0, k) - 1, per) + rng.normal(0, 0.5, k * per), None, 0.0
    return np.repeat(rng.normal(size=k), per) + rng.normal(size=k * per), None, 0.0


def bootstrap_cell(scenario: str, k: int, reps: int, resamples: int, seed: int, progress=None) -> dict:
    """Coverage of each cluster-bootstrap method in one scenario with ``k`` clusters of 8 rows."""
    import pandas as pd

    from judgelab.stats.bootstrap import METHODS, cluster_bootstrap_ci

    rng = np.random.default_rng(seed)
    methods = ("percentile",) if scenario == "mean_rows_resampled" else METHODS
    hits = {m: np.zeros(reps, bool) for m in methods}
    width = {m: [] for m in methods}
    nan = {m: 0 for m in methods}
    per = 8
    for i in range(reps):
        x, y, truth = _clusters(rng, "mean" if scenario == "mean_rows_resampled" else scenario, k, per)
        ids = np.arange(k * per) if scenario == "mean_rows_resampled" else np.repeat(np.arange(k), per)
        frame = pd.DataFrame({"c": ids})
        if y is None:
            def stat(rows, _clusters, x=x):
                return float(x[rows].mean())
        else:
            def stat(rows, _clusters, x=x, y=y):
                return float(np.corrcoef(x[rows], y[rows])[0, 1])
        for m in methods:
            ci = cluster_bootstrap_ci(frame, stat, "c", resamples, 0.95, seed=i, method=m, rows=True, min_clusters=2)
            if math.isnan(ci.low):
                nan[m] += 1
                continue
            hits[m][i] = ci.low <= truth <= ci.high
            width[m].append(ci.high - ci.low)
        _tick(progress, i)
    return {"scenario": scenario, "k": k, "rows_per_cluster": per, "resamples": resamples,
            **{m: {**_mc(hits[m]), "no_interval": nan[m], "mean_width": round(float(np.mean(width[m])), 4)}
               for m in methods}}


def _collect(part: str, jobs: list[Future], studies: int, progress, every: float) -> list[dict]:
    """The cells' results in submission order, printing a progress line every ``every`` seconds meanwhile."""
    start = last = time.perf_counter()
    done = 0
    while not all(j.done() for j in jobs):
        try:
            done += progress.get(timeout=0.5)
        except queue.Empty:
            pass
        now = time.perf_counter()
        if now - last >= every:
            last = now
            share = min(done / studies, 1.0)
            left = f", about {_duration((now - start) * (1 - share) / share)} left" if share > 0 else ""
            cells = sum(j.done() for j in jobs)
            print(f"  {part}: {done:,} of {studies:,} simulated studies ({share:.0%}), {cells} of {len(jobs)} cells "
                  f"done, {_duration(now - start)} so far{left}", flush=True)
    results = [j.result() for j in jobs]
    print(f"  {part}: done in {_duration(time.perf_counter() - start)}", flush=True)
    return results


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["ppi", "bootstrap", "all"], default="all")
    parser.add_argument("--ppi-reps", type=int, default=4000)
    parser.add_argument("--boot-reps", type=int, default=2000)
    parser.add_argument("--boot-reps-other-k", type=int, default=1000, help="replications at k other than 30")
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "interval_coverage.json")
    parser.add_argument("--progress-seconds", type=float, default=5.0, help="seconds between two progress lines")
    args = parser.parse_args()

    ppi_scenarios = ["uninformative", "informative", "informative_N20", "skewed_uninformative",
                     "skewed_informative", "difference"]
    ppi_ns = (3, 5, 10, 20, 30, 50, 100)
    cells = [(s, k) for s in ("mean", "skewed_mean", "pearson") for k in (4, 5, 10, 20, 30)]
    cells.append(("mean_rows_resampled", 30))
    boot_reps = [args.boot_reps if k == 30 else args.boot_reps_other_k for _, k in cells]
    # each PPI study is simulated for the t and the normal interval
    ppi_studies = 2 * len(ppi_scenarios) * len(ppi_ns) * args.ppi_reps
    parts = ["ppi", "bootstrap"] if args.part == "all" else [args.part]
    scale = {"ppi": args.ppi_reps / 4000, "bootstrap": sum(boot_reps) / (2 * 2000 + 14 * 1000) * args.resamples / 999}
    guess = sum(MEASURED_SECONDS[p] * scale[p] for p in parts) * 2 / max(1, args.jobs)
    print(f"interval_coverage: simulating how often judgelab's intervals hold the truth ({' and '.join(parts)}; "
          f"{args.jobs} processes); about {_duration(guess)} on 2 CPU cores at these settings. "
          f"Results go to {args.out}.", flush=True)

    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    import numpy
    import scipy

    import judgelab

    results["machine"] = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
                          "judgelab": getattr(judgelab, "__version__", "dev"), "cpus": os.cpu_count()}
    with multiprocessing.Manager() as manager, ProcessPoolExecutor(args.jobs) as pool:
        progress = manager.Queue()
        if "ppi" in parts:
            start = time.perf_counter()
            jobs = [pool.submit(ppi_cell, s, n, args.ppi_reps, 1000 * j + n, progress)
                    for j, s in enumerate(ppi_scenarios) for n in ppi_ns]
            results["ppi"] = _collect("ppi", jobs, ppi_studies, progress, args.progress_seconds)
            results["ppi_seconds"] = round(time.perf_counter() - start, 1)
        if "bootstrap" in parts:
            start = time.perf_counter()
            jobs = [pool.submit(bootstrap_cell, s, k, reps, args.resamples, 7000 + 100 * i + k, progress)
                    for i, ((s, k), reps) in enumerate(zip(cells, boot_reps))]
            results["bootstrap"] = _collect("bootstrap", jobs, sum(boot_reps), progress, args.progress_seconds)
            results["bootstrap_seconds"] = round(time.perf_counter() - start, 1)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for row in results.get("ppi", []):
        print("ppi", row["scenario"], row["n"], {q: (row[q]["coverage"], row[q]["mc_se"]) for q in ("t", "normal")})
    for row in results.get("bootstrap", []):
        print("boot", row["scenario"], row["k"], {m: v["coverage"] for m, v in row.items() if isinstance(v, dict)})


if __name__ == "__main__":
    main()
