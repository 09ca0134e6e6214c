"""Throughput of judgelab, measured as ratios within one run.

1. API pipeline, as whole processes a user runs: ``judgelab rate`` for 1,000 judgments
   (start-up, runner, SQLite ledger, parsing, outputs) against a local zero-latency
   OpenAI-compatible stub at concurrency 64, next to a bare asyncio loop over the same SDK and
   transport as its own process (``bare_loop.py``, the floor), and inspect_ai's ``inspect eval``
   on the same prompts from its own virtual environment (``--inspect PATH``).
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


def timed_process(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Wall seconds of a whole process, start-up included, as a user pays it."""
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({result.returncode}): {result.stderr[-1500:]}")
    return elapsed


def judgelab_process(base_url: str, n: int, concurrency: int, workdir: Path, transport: str = "auto") -> tuple[float, dict]:
    """``judgelab rate`` for n judgments (one sample of one criterion per item) as a whole process."""
    items = workdir / "items.jsonl"
    with items.open("w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": str(i), "text": f"Story {i}: the lighthouse keeper counted the ships again."}) + "\n")
    out = workdir / f"out-{time.monotonic_ns()}"
    cmd = [str(Path(sys.executable).with_name("judgelab")), "rate", "--items", str(items), "--criteria", "grammaticality",
           "--samples", "1", "--judge", f"openai:stub@{base_url}", "--concurrency", str(concurrency),
           "--transport", transport, "--quiet", "--out", str(out)]
    elapsed = timed_process(cmd)
    manifest = json.loads((out / "run.json").read_text())
    return elapsed, manifest["runs"][0]


def bare_process(base_url: str, n: int, concurrency: int, workdir: Path) -> float:
    file = workdir / "prompts.json"
    file.write_text(json.dumps(prompts(n)))
    return timed_process([sys.executable, str(HERE / "bare_loop.py"), str(file), base_url, str(concurrency)])


def inspect_ai_process(base_url: str, n: int, concurrency: int, workdir: Path, inspect_bin: str | None) -> float | None:
    """inspect_ai's ``inspect eval`` on the same prompts (chat-completions path: ``responses_api=False``)."""
    inspect_bin = inspect_bin or shutil.which("inspect")
    if inspect_bin is None:
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
    cmd = [inspect_bin, "eval", task.name, "--model", "openai/stub", "--max-connections", str(concurrency),
           "--temperature", "1.0", "--top-p", "0.9", "--max-tokens", "128", "--display", "none",
           "-M", "responses_api=false", "--batch", "false"]
    return timed_process(cmd, env=env, cwd=workdir)


def inspect_version(inspect_bin: str | None) -> str | None:
    inspect_bin = inspect_bin or shutil.which("inspect")
    if inspect_bin is None:
        return None
    python = Path(inspect_bin).with_name("python")
    result = subprocess.run([str(python), "-c", "import inspect_ai, openai; print(inspect_ai.__version__, openai.__version__)"],
                            capture_output=True, text=True)
    return result.stdout.strip() or None


def api_benchmark(n: int, concurrency: int, skip_inspect: bool, inspect_bin: str | None, rounds: int) -> dict:
    from importlib.metadata import version

    proc, base_url = start_stub()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            bare_process(base_url, 100, concurrency, work)  # warm-up (page cache, stub)
            pairs = []
            manifest: dict = {}
            for _ in range(rounds):  # interleaved rounds; medians reported
                pipe, manifest = judgelab_process(base_url, n, concurrency, work)
                bare = bare_process(base_url, n, concurrency, work)
                pairs.append((pipe, bare))
            insp = None if skip_inspect else inspect_ai_process(base_url, n, concurrency, work, inspect_bin)
            pipe_httpx, manifest_httpx = judgelab_process(base_url, n, concurrency, work, transport="httpx")
        mid = len(pairs) // 2
        pipe_s = sorted(p for p, _ in pairs)[mid]
        bare_s = sorted(b for _, b in pairs)[mid]
        out = {
            "judgments": n, "concurrency": concurrency, "rounds": pairs,
            "judgelab_process_s": pipe_s, "bare_process_s": bare_s,
            "judgelab_over_bare_ratio": pipe_s / bare_s,
            "transport": manifest.get("transport"), "judgelab_httpx_process_s": pipe_httpx,
            "httpx_transport_recorded": manifest_httpx.get("transport"),
            "versions": {d: version(d) for d in ("openai", "aiohttp", "typer", "pandas", "llama-cpp-python")},
        }
        if insp is not None:
            out.update(inspect_ai_s=insp, inspect_ai_over_judgelab=insp / pipe_s, inspect_ai_versions=inspect_version(inspect_bin))
        return out
    finally:
        proc.terminate()


def local_benchmark(n_items: int) -> dict:
    from judgelab.datasets.items import Item
    from judgelab.models.backends.local import LocalBackend
    from judgelab.run import RunSpec, Runner
    from judgelab.store import Store
    from judgelab.rate import demo_items

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


def cpu_paths_benchmark(n_items: int) -> dict:
    """Prompt evaluation speed of the embedded judge on both llama.cpp CPU paths, and how far their
    scores differ: raw ``eval`` of the same prompts from an empty cache, 64-token blocks as the judge uses."""
    import numpy as np
    import llama_cpp

    from judgelab.models.backends.local_model import BLOCK, choose_cpu_path, default_model_path, open_llama
    from judgelab.parse import expected_score
    from judgelab.prompts import load_template
    from judgelab.rate import demo_items

    template = load_template("chiang-lee-story")
    texts = [template.render("grammaticality", {"text": i.text}) + "\n" + template.logprob_cue + " " for i in demo_items(n_items)]
    path = default_model_path()
    chosen = choose_cpu_path(path)
    out: dict = {"chosen": chosen.name, "reason": chosen.reason, "paths": {}}
    expectations = {}
    for repack in (True, False):
        if repack and not chosen.repack:
            out["paths"]["repack"] = "not run: the probe found this path unsafe here"
            continue
        llm, _ = open_llama(path, repack=repack, n_ctx=2048, n_batch=BLOCK, n_threads=os.cpu_count() or 1)
        labels = {str(k): [t for t in {*llm.tokenize(str(k).encode(), add_bos=False, special=False)[:1]}] for k in range(1, 6)}
        tokens = [llm.tokenize(t.encode(), add_bos=True, special=False) for t in texts]
        start = time.perf_counter()
        scores = []
        for toks in tokens:
            llm.reset()
            llm.eval(toks)
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1), shape=(llm.n_vocab(),)).astype(float)
            logp = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
            scores.append(expected_score({k: float(logp[v[0]]) for k, v in labels.items()}, (1, 5))[0])
        elapsed = time.perf_counter() - start
        n_tokens = sum(len(t) for t in tokens)
        out["paths"]["repack" if repack else "no-repack"] = {"prompt_tokens": n_tokens, "seconds": elapsed,
                                                            "prompt_tokens_per_s": n_tokens / elapsed}
        expectations[repack] = np.array(scores, dtype=float)
        del llm
    if len(expectations) == 2:
        out["max_abs_expected_score_difference"] = float(np.max(np.abs(expectations[True] - expectations[False])))
        out["repack_over_plain_speed"] = (out["paths"]["repack"]["prompt_tokens_per_s"]
                                          / out["paths"]["no-repack"]["prompt_tokens_per_s"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--local-items", type=int, default=12)
    parser.add_argument("--skip-inspect", action="store_true")
    parser.add_argument("--skip-local", action="store_true")
    parser.add_argument("--skip-api", action="store_true")
    parser.add_argument("--inspect", default=None, help="the `inspect` executable of a separate virtual environment")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    path = HERE / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}  # sections not re-run are kept
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    if not args.skip_api:
        results["api"] = api_benchmark(args.n, args.concurrency, args.skip_inspect, args.inspect, args.rounds)
    if not args.skip_local:
        results["local"] = local_benchmark(args.local_items)
        results["cpu_paths"] = cpu_paths_benchmark(args.local_items)
    path.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
