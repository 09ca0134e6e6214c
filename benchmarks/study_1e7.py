"""A simulation, not a run: what a 10⁷-judgment study costs in time, money and disk, on the existing engines.

Measured inputs (read from this folder's JSON files, each named in the output):

* judgelab's CPU seconds per judgment as a whole ``rate`` process (planning, outputs and report.html
  included), and the bare SDK loop's, from ``million.json`` when it measured both at least at the size of
  ``live_scale.json`` (10⁶ judgments), else from ``live_scale.json`` (100,000): the zero-latency stub, so
  the client's own cost, SDK included; one process is one asyncio loop on one core, so 1 / that is one
  client's ceiling;
* store bytes per judgment, from ``million.json`` (``rate.store_bytes_per_judgment``: ``store.sqlite``
  over the judgments of that run's short-text design) or ``--store-bytes``;
* how close a fleet of replicas comes to N × one replica, from ``fleet_scale.json`` (4 replicas);
* the client's seconds per request to export a batch file, import its answers and record the run
  from the ledger, from ``batch_file_scale.json`` (20,000 requests), taken as linear in the requests.

Stated assumptions (options; every one is printed and written beside the results): the study's
design and tokens per judgment, one replica's judgments per second, the GPU's price per hour, the
provider's prices per million tokens and its batch discount, bytes per token of stored text.

``python benchmarks/study_1e7.py [--judgments 10000000] [--replica-per-s 25] …`` prints a Markdown
table per execution path and writes ``study_1e7.json`` (``--json``).
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measured_inputs(store_bytes: float | None) -> dict:
    live = json.loads((HERE / "live_scale.json").read_text())
    fleet = json.loads((HERE / "fleet_scale.json").read_text())
    batch = json.loads((HERE / "batch_file_scale.json").read_text())
    million = json.loads((HERE / "million.json").read_text())
    n = live["judgments"]
    cpu = statistics.median(r["judgelab_cpu_s"] for r in live["rounds"]) / n
    bare = statistics.median(r["bare_cpu_s"] for r in live["rounds"]) / n
    cpu_source = f"live_scale.json ({n:,} judgments, {live['date']})"
    m_rate, m_bare = million.get("rate") or {}, million.get("bare") or {}
    if million["judgments"] >= n and m_rate.get("cpu_s") and m_bare.get("cpu_s"):  # the larger measurement
        n = million["judgments"]
        cpu, bare = m_rate["cpu_s"] / n, m_bare["cpu_s"] / n
        cpu_source = f"million.json ({n:,} judgments, {million['date']})"
    source = "--store-bytes"
    if store_bytes is None:
        store_bytes = million["rate"]["store_bytes_per_judgment"]
        source = f"million.json ({million['judgments']:,} judgments, {million['date']})"
    return {"client_cpu_s_per_judgment": cpu, "bare_cpu_s_per_judgment": bare,
            "client_cpu_source": cpu_source,
            "store_bytes_per_judgment_measured": store_bytes, "store_bytes_source": source,
            "measured_prompt_tokens": 75, "measured_answer_tokens": 9,  # the design of million.json / live_scale.json
            "fleet_efficiency": fleet["ratio"] / 4, "fleet_source": f"fleet_scale.json ({fleet['date']})",
            "export_s_per_request": batch["export_s"] / batch["requests"],
            "import_s_per_request": batch["import_s"] / batch["requests"],
            "record_from_ledger_s_per_request": batch["rate_from_ledger_s"] / batch["requests"],
            "batch_source": "batch_file_scale.json"}


def simulate(a: argparse.Namespace, m: dict) -> dict:
    j = a.judgments
    ceiling = 1 / m["client_cpu_s_per_judgment"]  # one client process: one core
    extra_tokens = (a.prompt_tokens - m["measured_prompt_tokens"]) + (a.answer_tokens - m["measured_answer_tokens"])
    store = j * (m["store_bytes_per_judgment_measured"] + a.bytes_per_token * max(0, extra_tokens))
    tokens_in, tokens_out = j * a.prompt_tokens, j * a.answer_tokens
    api = (tokens_in * a.price_in + tokens_out * a.price_out) / 1e6
    live = []
    for r in a.replicas:
        offered = r * a.replica_per_s * (m["fleet_efficiency"] if r > 1 else 1.0)
        rate = min(offered, ceiling)
        hours = j / rate / 3600
        live.append({"replicas": r, "judgments_per_s": round(rate, 1), "bound_by": "client" if offered > ceiling else "replicas",
                     "concurrency_per_replica": -(-round(rate * a.latency_s) // r),  # Little's law: rate x latency in flight
                     "hours": round(hours, 1), "gpu_hours": round(r * hours, 1), "gpu_cost_usd": round(r * hours * a.gpu_usd_per_hour)})
    client_batch_h = j * (m["export_s_per_request"] + m["import_s_per_request"] + m["record_from_ledger_s_per_request"]) / 3600
    offline = []
    for r in a.replicas:
        gpu_h = j / (r * a.replica_per_s) / 3600
        offline.append({"nodes_or_replicas": r, "gpu_wall_hours": round(gpu_h, 1), "client_hours": round(client_batch_h, 1),
                        "hours": round(gpu_h + client_batch_h, 1), "gpu_cost_usd": round(r * gpu_h * a.gpu_usd_per_hour)})
    return {
        "judgments": j, "tokens_in": tokens_in, "tokens_out": tokens_out,
        "store_gb": round(store / 1e9, 1),
        "client": {"ceiling_judgments_per_s": round(ceiling), "cpu_hours": round(j * m["client_cpu_s_per_judgment"] / 3600, 1),
                   "hours_at_ceiling": round(j / ceiling / 3600, 1)},
        "live_fleet": live,
        "offline_batch_files": {"files": -(-j // 50_000), "per_node": offline,
                                "client_export_import_record_hours": round(client_batch_h, 1)},
        "provider_batch_api": {"batches": -(-j // 50_000), "cost_usd": round(api * a.batch_discount),
                               "live_cost_usd": round(api), "client_record_hours": round(
                                   j * (m["import_s_per_request"] + m["record_from_ledger_s_per_request"]) / 3600, 1),
                               "wall": "the provider's: each batch within its 24-hour window, as many at once as its queue limit allows"},
    }


def table(rows: list[dict]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    lines += ["| " + " | ".join(f"{row[k]:,}" if isinstance(row[k], (int, float)) else str(row[k]) for k in keys) + " |"
              for row in rows]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judgments", type=int, default=10_000_000)
    p.add_argument("--design", default="2,000,000 texts x 5 criteria x 1 sample, one call per judgment")
    p.add_argument("--prompt-tokens", type=int, default=600, help="per judgment: template + a text of ~300 words")
    p.add_argument("--answer-tokens", type=int, default=60, help="per judgment: a short reason and the rating")
    p.add_argument("--replica-per-s", type=float, default=25.0,
                   help="judgments/s one replica (one GPU) serves at this design: an assumption; measure yours")
    p.add_argument("--latency-s", type=float, default=2.0, help="seconds one call takes at the replica, under load")
    p.add_argument("--replicas", type=int, nargs="+", default=[1, 4, 16, 36, 64])
    p.add_argument("--gpu-usd-per-hour", type=float, default=2.5)
    p.add_argument("--price-in", type=float, default=0.15, help="USD per 1M prompt tokens (live)")
    p.add_argument("--price-out", type=float, default=0.60, help="USD per 1M answer tokens (live)")
    p.add_argument("--batch-discount", type=float, default=0.5)
    p.add_argument("--bytes-per-token", type=float, default=4.0, help="stored bytes per extra prompt/answer token")
    p.add_argument("--store-bytes", type=float, default=None, help="store bytes per judgment (default: million.json)")
    p.add_argument("--json", default=str(HERE / "study_1e7.json"))
    a = p.parse_args()
    m = measured_inputs(a.store_bytes)
    result = {"assumptions": {k: v for k, v in vars(a).items() if k != "json"}, "measured": m, "simulated": simulate(a, m)}
    Path(a.json).write_text(json.dumps(result, indent=2) + "\n")
    s = result["simulated"]
    print(f"{a.judgments:,} judgments ({a.design}); {a.prompt_tokens} prompt + {a.answer_tokens} answer tokens each")
    print(f"store: {s['store_gb']} GB; one client: {s['client']['ceiling_judgments_per_s']:,} judgments/s at most, "
          f"{s['client']['cpu_hours']} CPU hours")
    print("\nlive fleet (--judge openai:MODEL@URL1,URL2,...):\n" + table(s["live_fleet"]))
    print("\noffline batch files (--export-batch, vllm run-batch per node, batch import):\n"
          + table(s["offline_batch_files"]["per_node"]))
    b = s["provider_batch_api"]
    print(f"\nprovider batch API (--execution batch): {b['batches']} batches, ${b['cost_usd']:,} "
          f"(live: ${b['live_cost_usd']:,}), client {b['client_record_hours']} h to record")


if __name__ == "__main__":
    main()
