"""LLMBar's published evaluator statistics, reproduced by ``judgelab preference agree`` from LLMBar's own results.

``python benchmarks/reproduce_llmbar.py [REPO] [--out DIR] [--n-resamples N]``: REPO is a checkout of
princeton-nlp/LLMBar or a bare git directory of it (default: the environment variable JUDGELAB_LLMBAR_REPO).
Every ``result.json`` whose verdicts are all "1" or "2" is written into ONE verdicts file (``DIR/llmbar_verdicts.csv``:
rater = evaluator ``<LLM>@<strategy>``, criterion = data set, the gold label as ``human:gold``); ``preference agree``
reads that file and writes its folder in DIR; each result set's row is compared with its statistics.json
(``correct_average``, ``correct_both``, ``equal``, exactly, as counts). Prints the counts; exits 1 on any mismatch,
2 when REPO cannot be read.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from judgelab.errors import JudgelabError
    from judgelab.preference.llmbar_check import collect, compare
    from judgelab.preference_agree_run import run_preference_agree

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", default=os.environ.get("JUDGELAB_LLMBAR_REPO"))
    parser.add_argument("--out", type=Path, default=None, help="folder for the verdicts file and agree's outputs")
    parser.add_argument("--n-resamples", type=int, default=0, help="bootstrap resamples of agree's intervals")
    args = parser.parse_args(argv)
    if not args.repo:
        print("reproduce_llmbar: give LLMBar's repository (a checkout or bare git dir) or set JUDGELAB_LLMBAR_REPO",
              file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="llmbar-"))
    try:
        sets = collect(args.repo)
        out.mkdir(parents=True, exist_ok=True)
        verdicts = out / "llmbar_verdicts.csv"
        sets.verdicts.to_csv(verdicts, index=False)
        run = run_preference_agree([verdicts], n_resamples=args.n_resamples, out=out / "agree")
    except JudgelabError as exc:
        print(f"reproduce_llmbar: {exc}", file=sys.stderr)
        return 2
    mismatches = compare(run.result, sets.published)
    wrong = {(m.rater, m.criterion) for m in mismatches}
    print(f"LLMBar result sets: {sets.total}; all verdicts 1 or 2: {len(sets.published)}; left out: "
          f"{sets.not_all_decided} with another verdict, {len(sets.absent)} absent from the copy, "
          f"{sets.no_statistics} without statistics.json")
    print(f"matched {len(sets.published) - len(wrong)} of {len(sets.published)} compared "
          f"(correct_average, correct_both, equal; exact counts); verdicts file: {verdicts}")
    for m in mismatches[:20]:
        print(f"  mismatch: {m.rater} on {m.criterion}: {m.what}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
