"""The floor for the API benchmark: a bare asyncio loop over the official openai SDK, as a whole process.

It sends the same prompts ``judgelab rate`` sends (read from a JSON file) with the same sampling
parameters, the SDK's aiohttp transport and the same concurrency, and keeps nothing: no ledger,
no parsing, no output. ``python benchmarks/bare_loop.py PROMPTS.json BASE_URL CONCURRENCY``.
It imports only the SDK, so its start-up is the SDK's.
"""
from __future__ import annotations

import asyncio
import json
import sys

import openai


async def main(prompts: list[str], base_url: str, concurrency: int) -> None:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, http_client=openai.DefaultAioHttpClient())
    sem = asyncio.Semaphore(concurrency)

    async def one(prompt: str) -> str:
        async with sem:
            r = await client.chat.completions.create(model="stub", messages=[{"role": "user", "content": prompt}],
                                                     temperature=1.0, top_p=0.9, max_tokens=128, n=1)
            return r.choices[0].message.content or ""

    await asyncio.gather(*(one(p) for p in prompts))
    await client.close()


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        asyncio.run(main(json.load(fh), sys.argv[2], int(sys.argv[3])))
