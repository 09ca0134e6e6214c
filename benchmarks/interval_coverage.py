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
the figures are copied into ``docs/intervals.md``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LEVELS = np.arange(1, 6, dtype=float)
PROBS = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
SKEWED = np.array([0.02, 0.03, 0.05, 0.30, 0.60])
PROBS_B = np.array([0.15, 0.25, 0.3, 0.2, 0.1])


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


def ppi_cell(scenario: str, n: int, reps: int, seed: int) -> dict:
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


def bootstrap_cell(scenario: str, k: int, reps: int, resamples: int, seed: int) -> dict:
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
    return {"scenario": scenario, "k": k, "rows_per_cluster": per, "resamples": resamples,
            **{m: {**_mc(hits[m]), "no_interval": nan[m], "mean_width": round(float(np.mean(width[m])), 4)}
               for m in methods}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["ppi", "bootstrap", "all"], default="all")
    parser.add_argument("--ppi-reps", type=int, default=4000)
    parser.add_argument("--boot-reps", type=int, default=2000)
    parser.add_argument("--boot-reps-other-k", type=int, default=1000, help="replications at k other than 30")
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "interval_coverage.json")
    args = parser.parse_args()

    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    import numpy
    import scipy

    import judgelab

    results["machine"] = {"python": platform.python_version(), "numpy": numpy.__version__, "scipy": scipy.__version__,
                          "judgelab": getattr(judgelab, "__version__", "dev"), "cpus": os.cpu_count()}
    with ProcessPoolExecutor(args.jobs) as pool:
        if args.part in ("ppi", "all"):
            start = time.perf_counter()
            scenarios = ["uninformative", "informative", "informative_N20", "skewed_uninformative",
                         "skewed_informative", "difference"]
            jobs = [pool.submit(ppi_cell, s, n, args.ppi_reps, 1000 * j + n)
                    for j, s in enumerate(scenarios) for n in (3, 5, 10, 20, 30, 50, 100)]
            results["ppi"] = [j.result() for j in jobs]
            results["ppi_seconds"] = round(time.perf_counter() - start, 1)
        if args.part in ("bootstrap", "all"):
            start = time.perf_counter()
            cells = [(s, k) for s in ("mean", "skewed_mean", "pearson") for k in (4, 5, 10, 20, 30)]
            cells.append(("mean_rows_resampled", 30))
            jobs = [pool.submit(bootstrap_cell, s, k, args.boot_reps if k == 30 else args.boot_reps_other_k,
                                args.resamples, 7000 + 100 * i + k) for i, (s, k) in enumerate(cells)]
            results["bootstrap"] = [j.result() for j in jobs]
            results["bootstrap_seconds"] = round(time.perf_counter() - start, 1)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for row in results.get("ppi", []):
        print("ppi", row["scenario"], row["n"], {q: (row[q]["coverage"], row[q]["mc_se"]) for q in ("t", "normal")})
    for row in results.get("bootstrap", []):
        print("boot", row["scenario"], row["k"], {m: v["coverage"] for m, v in row.items() if isinstance(v, dict)})


if __name__ == "__main__":
    main()
