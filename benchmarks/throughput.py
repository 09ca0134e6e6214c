"""Throughput of judgelab, measured as ratios within one run.

1. API pipeline: judgments per second of the full rating pipeline (runner, SQLite ledger,
   parsing, export) against a local zero-latency OpenAI-compatible stub at concurrency 64,
   next to a bare asyncio loop making the same calls with the same SDK against the same stub
   (the floor this machine allows), and inspect_ai evaluating the same prompts (when installed).
2. Embedded judge: prompt tokens per second with and without shared-prefix reuse, and
   log-probability scoring against sampled generation.

Run: ``python benchmarks/throughput.py [--n 1000] [--skip-inspect] [--skip-local]``.
Writes ``benchmarks/results.json``; the figures are copied into ``benchmarks/README.md``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def start_stub() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "judgelab.testing.openai_stub", "--port", "0"], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    return proc, f"http://127.0.0.1:{port}/v1"


def prompts(n: int) -> list[str]:
    from judgelab.prompts import load_template

    t = load_template("chiang-lee-story")
    return [t.render("grammaticality", {"text": f"Story {i}: the lighthouse keeper counted the ships again."}) for i in range(n)]


async def bare_loop(base_url: str, texts: list[str], concurrency: int, transport: str = "aiohttp") -> float:
    """The floor: the same SDK, over the same HTTP transport, with nothing else around it."""
    import openai

    from judgelab.models.openai_backend import http_client

    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0,
                                http_client=http_client(transport, concurrency, 120.0))
    sem = asyncio.Semaphore(concurrency)

    async def one(p: str) -> str:
        async with sem:
            r = await client.chat.completions.create(model="stub", messages=[{"role": "user", "content": p}],
                                                     temperature=1.0, top_p=0.9, max_tokens=128, n=1)
            return r.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(one(p) for p in texts))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def judgelab_pipeline(base_url: str, n: int, concurrency: int, workdir: Path, transport: str = "aiohttp") -> float:
    from judgelab.datasets.items import Item
    from judgelab.models import make_judge
    from judgelab.run import RunSpec, run_sync
    from judgelab.store import Store, write_table

    items = [Item(str(i), f"Story {i}: the lighthouse keeper counted the ships again.") for i in range(n)]
    spec = RunSpec(template="chiang-lee-story", criteria=["grammaticality"], samples=1, concurrency=concurrency)
    judge = make_judge("openai", model="stub", base_url=base_url, concurrency=concurrency, transport=transport)
    start = time.perf_counter()
    with Store(workdir / "store.sqlite") as store:
        run_sync(judge, store, spec, items)
        write_table(store.ratings(), workdir / "ratings.csv")
    return time.perf_counter() - start


def inspect_ai_run(base_url: str, n: int, concurrency: int, workdir: Path) -> float | None:
    if shutil.which("inspect") is None:
        return None
    task = workdir / "bench_task.py"
    task.write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n"
        "from inspect_ai.solver import generate\n"
        "from inspect_ai.scorer import match\n"
        f"PROMPTS = {json.dumps(prompts(n))}\n"
        "@task\n"
        "def bench():\n"
        "    return Task(dataset=[Sample(input=p, target='3') for p in PROMPTS], solver=generate(), scorer=match())\n"
    )
    env = dict(os.environ, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="x", INSPECT_LOG_DIR=str(workdir / "logs"))
    cmd = ["inspect", "eval", task.name, "--model", "openai/stub", "--max-connections", str(concurrency),
           "--temperature", "1.0", "--top-p", "0.9", "--max-tokens", "128", "--display", "none", "-M", "responses_api=false", "--batch", "false"]
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=workdir)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        print("inspect_ai failed:", result.stderr[-2000:], file=sys.stderr)
        return None
    return elapsed


def api_benchmark(n: int, concurrency: int, skip_inspect: bool) -> dict:
    proc, base_url = start_stub()
    try:
        texts = prompts(n)
        asyncio.run(bare_loop(base_url, texts[:100], concurrency))  # warm-up
        rounds = []
        for _ in range(7):  # interleaved rounds; medians reported
            with tempfile.TemporaryDirectory() as tmp:
                pipe = judgelab_pipeline(base_url, n, concurrency, Path(tmp))
            bare = asyncio.run(bare_loop(base_url, texts, concurrency))
            rounds.append((pipe, bare))
        pipe_s = sorted(r[0] for r in rounds)[3]
        bare_s = sorted(r[1] for r in rounds)[3]
        with tempfile.TemporaryDirectory() as tmp:
            pipe_httpx = judgelab_pipeline(base_url, n, concurrency, Path(tmp), transport="httpx")
        bare_httpx = asyncio.run(bare_loop(base_url, texts, concurrency, transport="httpx"))
        out = {
            "judgments": n, "concurrency": concurrency,
            "judgelab_pipeline_s": pipe_s, "bare_loop_s": bare_s,
            "judgelab_per_s": n / pipe_s, "bare_per_s": n / bare_s,
            "pipeline_over_bare_ratio": pipe_s / bare_s, "rounds": rounds, "transport": "aiohttp",
            "httpx_transport": {"judgelab_pipeline_s": pipe_httpx, "bare_loop_s": bare_httpx,
                                "pipeline_over_bare_ratio": pipe_httpx / bare_httpx},
        }
        if not skip_inspect:
            with tempfile.TemporaryDirectory() as tmp:
                insp = inspect_ai_run(base_url, n, concurrency, Path(tmp))
            if insp is not None:
                out.update(inspect_ai_s=insp, inspect_ai_per_s=n / insp, speedup_vs_inspect_ai=insp / pipe_s)
        return out
    finally:
        proc.terminate()


def local_benchmark(n_items: int) -> dict:
    from judgelab.datasets.items import Item
    from judgelab.models.local import LocalBackend
    from judgelab.run import RunSpec, Runner
    from judgelab.store import Store
    from judgelab.workflow import demo_items

    items = [Item(i.item_id, i.text, context="A short piece of writing") for i in demo_items(n_items)]
    backend = LocalBackend()
    out: dict = {"items": len(items), "criteria": 4}

    def timed(spec: RunSpec, reuse: bool) -> tuple[float, int, int]:
        backend.reuse_prefix = reuse
        backend._llm.reset()
        backend.tokens_evaluated = backend.tokens_reused = 0
        with Store(":memory:") as store:
            runner = Runner(backend, store, spec)
            start = time.perf_counter()
            stats = asyncio.run(runner.run(items))
            return time.perf_counter() - start, stats.prompt_tokens, stats.recorded

    logprob = RunSpec(template="chiang-lee-story", score="logprob", samples=1)
    with_reuse = timed(logprob, True)
    without = timed(logprob, False)
    out.update(
        prompt_tokens=with_reuse[1],
        prefix_reuse_s=with_reuse[0], no_reuse_s=without[0],
        prompt_tokens_per_s_with_reuse=with_reuse[1] / with_reuse[0],
        prompt_tokens_per_s_without_reuse=without[1] / without[0],
        prefix_reuse_speedup=without[0] / with_reuse[0],
    )
    generate = RunSpec(template="chiang-lee-story", score="parsed", samples=1,
                       sampling={"temperature": 1.0, "top_p": 0.9, "max_tokens": 32, "seed": 0})
    gen = timed(generate, True)
    out.update(logprob_judgments_per_s=with_reuse[2] / with_reuse[0], generated_judgments_per_s=gen[2] / gen[0],
               logprob_over_generation_speedup=(with_reuse[2] / with_reuse[0]) / (gen[2] / gen[0]), generation_max_tokens=32)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--local-items", type=int, default=12)
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-api", action="store_true")
    args = parser.parse_args()
    path = HERE / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}  # sections not re-run are kept
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    if not args.skip_api:
        results["api"] = api_benchmark(args.n, args.concurrency, args.skip_inspect)
    if not args.skip_local:
        results["local"] = local_benchmark(args.local_items)
    path.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
