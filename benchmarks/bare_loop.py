"""The floor for the API benchmark: a bare asyncio loop over the official openai SDK, as a whole process.

It sends the same prompts ``judgelab rate`` sends (read from a JSON file) with the same sampling
parameters, the SDK's aiohttp transport and the same concurrency, and keeps nothing: no ledger,
no parsing, no output. ``python benchmarks/bare_loop.py PROMPTS.json BASE_URL CONCURRENCY [MARKS.json] [--workers]``.
It imports only the SDK, so its start-up is the SDK's.

Two shapes of the loop, both common: by default every call's coroutine is made and gathered at once
(a semaphore lets ``CONCURRENCY`` run); with ``--workers``, ``CONCURRENCY`` worker coroutines each take
the next prompt until none is left (no task per prompt, as ``judgelab rate``'s executor runs). At 10⁶
calls the first holds a million tasks; the second is the stricter floor.

The control for the pace of ``rate``: with ``MARKS.json`` it writes when (``time.time()``, as the ledger's
``created``) the 1st, the (k+1)th, the (n−k)th and the nth call finished, k = n // 3 — the four points
``million.pace_by_thirds`` reads from a run's ledger — so the floor's pace by thirds is computed the same
way — and the process's CPU seconds at each (``time.process_time()``: a drift of wall but not CPU is
waiting, on the stub or the machine). Its only per-call work beyond the call is one counter and one comparison.
"""
from __future__ import annotations

import asyncio
import json
import sys
import time

import openai


async def main(prompts: list[str], base_url: str, concurrency: int, workers: bool = False) -> dict[int, tuple[float, float]]:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=openai.DefaultAioHttpClient())
    sem = asyncio.Semaphore(concurrency)
    n, k = len(prompts), len(prompts) // 3
    marks: dict[int, tuple[float, float]] = {}
    wanted = {1, k + 1, n - k, n}
    finished = 0

    async def one(prompt: str) -> str:
        nonlocal finished
        async with sem:
            r = await client.chat.completions.create(model="stub", messages=[{"role": "user", "content": prompt}],
                                                     temperature=1.0, top_p=0.9, max_tokens=128, n=1)
            finished += 1
            if finished in wanted:
                marks[finished] = (time.time(), time.process_time())
            return r.choices[0].message.content or ""

    if workers:
        next_prompt = iter(prompts).__next__

        async def worker() -> None:
            while True:
                try:
                    prompt = next_prompt()
                except StopIteration:
                    return
                await one(prompt)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    else:
        await asyncio.gather(*(one(p) for p in prompts))
    await client.close()
    return marks


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--workers"]
    with open(args[0], encoding="utf-8") as fh:
        got = asyncio.run(main(json.load(fh), args[1], int(args[2]), workers="--workers" in sys.argv))
    if len(args) > 3:
        with open(args[3], "w", encoding="utf-8") as fh:
            json.dump({"finished_at": {str(i): t for i, (t, _) in sorted(got.items())},
                       "cpu_at": {str(i): c for i, (_, c) in sorted(got.items())}}, fh)
