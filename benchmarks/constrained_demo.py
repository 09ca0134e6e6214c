"""Free against constrained ratings of the embedded judge on the demo's texts (issue 22, point 5).

The demo (`judgelab demo`) rates the shipped summarization demo set and its rule-based perturbed
copies with the dhp-summarization rubric at temperature 0, max 16 tokens. This script asks the
same texts with generated answers (`--score parsed`) twice — free and with the llama.cpp grammar
(`constrain=True`) — into one store, counts the parse failures of each, and writes the ratings
table for `judgelab audit RATINGS` (it pairs each rater with its `+constrained` twin; `--compare
FIRST,SECOND` for others, e.g. the demo's own log-probability ratings with `--with-logprob`).

    PYTHONPATH=src python benchmarks/constrained_demo.py --n-items 4 --out /tmp/constrained-demo

Slow on purpose (llama.cpp on CPU): 4 references × 7 texts × 4 criteria = 112 calls per run.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-items", type=int, default=4)
    parser.add_argument("--out", type=Path, default=Path("constrained-demo"))
    parser.add_argument("--max-tokens", type=int, default=16, help="the demo's 16, or more room for a free answer")
    parser.add_argument("--template", default=None, help="another template for the same texts (default: the demo's)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--with-logprob", action="store_true",
                        help="also the demo's own ratings: log-probability scoring (the embedded judge's default)")
    args = parser.parse_args()

    import llama_cpp

    from judgelab.datasets.dhp_sources import demo_set, load_reference_items
    from judgelab.dhp.build import build_perturbed
    from judgelab.dhp.task import load_task
    from judgelab.models import Sampling
    from judgelab.prompts import load_template
    from judgelab.run import run_spec
    from judgelab.spec import RunSpec
    from judgelab.status import Status
    from judgelab.store import Store

    task = load_task("summarization")
    originals = load_reference_items(demo_set(task.name), limit=args.n_items)
    items, _ = build_perturbed(originals, task, 0, None, None)
    args.out.mkdir(parents=True, exist_ok=True)
    facts: dict = {"llama_cpp_python": llama_cpp.__version__, "n_references": len(originals), "n_texts": len(items),
                   "template": args.template or task.template.name, "max_tokens": args.max_tokens,
                   "temperature": args.temperature, "samples": args.samples, "runs": {}}
    with Store(args.out / "store.sqlite") as store:
        for constrain in (False, True):
            template = task.template if args.template is None else load_template(args.template)
            spec = RunSpec(judge="local", template=template.name, samples=args.samples, score="parsed",
                           constrain=constrain, sampling=Sampling(temperature=args.temperature,
                                                                  max_tokens=args.max_tokens,
                                                                  seed=0 if args.temperature > 0 else None))
            start = time.perf_counter()
            stats = run_spec(spec, items, store, template=template, progress=False)
            facts["runs"][stats.rater] = {"constrain": constrain, "statuses": stats.statuses,
                                          "wall_s": round(time.perf_counter() - start, 1)}
        if args.with_logprob:
            spec = RunSpec(judge="local", template=task.template.name, samples=1, score="logprob")
            start = time.perf_counter()
            stats = run_spec(spec, items, store, template=task.template, progress=False)
            facts["runs"][stats.rater] = {"constrain": False, "score": "logprob", "statuses": stats.statuses,
                                          "wall_s": round(time.perf_counter() - start, 1)}
        ratings = store.ratings()
    ratings.to_csv(args.out / "ratings.csv", index=False)
    for rater, grp in ratings.groupby("rater"):
        failed = int((grp["status"] != Status.OK).sum())
        facts["runs"][rater].update(judgments=len(grp), failures=failed)
    (args.out / "facts.json").write_text(json.dumps(facts, indent=2) + "\n")
    print(json.dumps(facts, indent=2))


if __name__ == "__main__":
    main()
