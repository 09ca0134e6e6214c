"""The end of ``judgelab rate`` at scale: its tables written from a store of N judgments, before and after streaming.

``make``: a store of ``--judgments`` judgments written with the store's API (one rater, one criterion,
one sample, two systems, short answers, the attempts and settings a real run records) — no model call.
``end``: in a process of its own, what ``rate_items`` does after its runs, in one of two ways:

* ``whole``: the way before (the store's whole table read, filtered to the rater and the items by a
  merge, the ratings file written from it, the summary, intervals and failure counts computed on it);
* ``stream``: ``judgelab.rate_outputs.RateRows`` (the ratings file streamed in chunks, the rest from
  the compact table, failed answers read with a LIMIT).

Each ``end`` prints one JSON line: seconds and peak RSS (``ru_maxrss``) after the items are built (the
baseline: imports and the ``Item`` list, which a run holds anyway) and at the end, so ``added_mb`` is
what the end of a run adds. Run: ``python benchmarks/rate_end.py make DIR --judgments 300000`` then
``python benchmarks/rate_end.py end DIR stream`` (and ``whole``), each under ``/usr/bin/time -v`` if wanted.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

RATER = "openai:stub@chiang-lee-story"


def _items(n: int) -> list:
    from judgelab.datasets.items import Item

    return [Item(item_id=f"s{i}", text=f"Story {i}. It has a beginning and an end.", system="human" if i % 2 else "gpt2")
            for i in range(n)]


def make(folder: Path, n: int) -> None:
    from judgelab.store import Store
    from judgelab.store.judgments import Judgment

    folder.mkdir(parents=True, exist_ok=True)
    meta = {"judge": "openai:stub", "template": "chiang-lee-story", "samples": 1, "temperature": 1.0, "parser": 3}
    with Store(folder / "store.sqlite") as store:
        for start in range(0, n, 20_000):
            rows = []
            for i in range(start, min(n, start + 20_000)):
                status = "ok" if i % 97 else "unparseable"
                score = float(i % 5 + 1) if status == "ok" else None
                rows.append(Judgment(f"s{i}", "human" if i % 2 else "gpt2", None, "grammaticality", RATER, 0, score, score,
                                     None, None, status, f"Rating: {score}" if score else "I cannot tell.",
                                     attempts=[{"key": f"{i:064x}", "status": status}], prompt_tokens=60,
                                     completion_tokens=3, latency_s=0.001, meta=meta, prompt_key=f"{i:064x}"))
            store.put(judgments=rows)


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def end(folder: Path, way: str) -> dict:
    import pandas as pd

    from judgelab.output import write_table
    from judgelab.rate import failure_report
    from judgelab.rate_outputs import RateRows
    from judgelab.store import Store
    from judgelab.summary import score_summary, summarize

    with Store(folder / "store.sqlite", read_only=True) as store:
        n = store._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]
    items = _items(n)
    base_mb, started, cpu0 = _rss_mb(), time.perf_counter(), time.process_time()
    out = folder / way
    out.mkdir(exist_ok=True)
    with Store(folder / "store.sqlite", read_only=True) as store:
        if way == "whole":
            whole = store.ratings()
            asked = pd.DataFrame({"system": [i.system for i in items], "item_id": [i.item_id for i in items]}).drop_duplicates()
            table = whole[whole["rater"].isin([RATER])].merge(asked, on=["system", "item_id"], how="inner", sort=False)
            table = table.reset_index(drop=True)
            counts = failure_report(table[table["rater"] == RATER]).counts
            write_table(table, out / "ratings.csv")
        else:
            rows = RateRows((RATER,), lambda: ((i.system, i.item_id) for i in items)).open(store)
            table = rows.compact(store)
            counts = rows.failures(store, table, [RATER])[RATER].counts
            rows.write(store, out / "ratings.csv")
        summary = summarize(table)
        summary.to_csv(out / "summary.csv", index=False)
        (out / "results.json").write_text(json.dumps(score_summary(table, summary).to_record()))
    return {"way": way, "judgments": n, "statuses": counts, "seconds": round(time.perf_counter() - started, 2),
            "cpu_s": round(time.process_time() - cpu0, 2), "baseline_mb": round(base_mb), "peak_mb": round(_rss_mb()),
            "added_mb": round(_rss_mb() - base_mb), "table_mb": round(table.memory_usage(deep=True).sum() / 2**20, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["make", "end"])
    parser.add_argument("folder", type=Path)
    parser.add_argument("way", nargs="?", choices=["whole", "stream"], default="stream")
    parser.add_argument("--judgments", type=int, default=300_000)
    args = parser.parse_args(argv)
    if args.what == "make":
        make(args.folder, args.judgments)
    else:
        print(json.dumps(end(args.folder, args.way)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
