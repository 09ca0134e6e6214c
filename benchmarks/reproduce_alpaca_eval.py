"""AlpacaEval 2's leaderboard reproduced from AlpacaEval's own annotation files (docs/preference.md).

``python benchmarks/reproduce_alpaca_eval.py [REPO]``: REPO is a checkout of tatsu-lab/alpaca_eval or a bare git
directory of it (default: ``$JUDGELAB_ALPACA_EVAL_REPO``). For every model whose
``results/<model>/weighted_alpaca_eval_gpt4_turbo/annotations.json`` the copy holds, judgelab reads the file,
computes the win rates against gpt4_1106_preview and compares them with the published leaderboard CSV:
``win_rate`` and ``standard_error`` within 1e-6, the counts and ``discrete_win_rate`` equal. Prints
matched/compared, the files absent from the copy, and how far the length-controlled win rate is from the
published one (not compared for equality). Exit 0 when every compared model matches, 1 on any mismatch, 2 on
bad input.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", default=os.environ.get("JUDGELAB_ALPACA_EVAL_REPO"),
                        help="checkout or bare git directory of tatsu-lab/alpaca_eval (default: $JUDGELAB_ALPACA_EVAL_REPO)")
    parser.add_argument("--baseline", default="gpt4_1106_preview", help="the leaderboard's baseline")
    parser.add_argument("--annotator", default="weighted_alpaca_eval_gpt4_turbo", help="the annotator's folder name")
    args = parser.parse_args(argv)
    if not args.repo:
        print("error: give REPO (a copy of tatsu-lab/alpaca_eval) or set JUDGELAB_ALPACA_EVAL_REPO", file=sys.stderr)
        return 2
    from judgelab.errors import JudgelabError
    from judgelab.preference.alpaca_eval_reproduce import reproduce_alpaca_eval

    try:
        result = reproduce_alpaca_eval(args.repo, args.annotator, args.baseline)
    except JudgelabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for c in result.comparisons:
        if not c.matched:
            diffs = ", ".join(f"{k}: ours {c.ours[k]!r}, published {c.published[k]!r}" for k in c.mismatches)
            print(f"MISMATCH {c.model}: {diffs}")
    print(f"annotation files listed: {result.listed}; absent from this copy: {len(result.absent)}; "
          f"skipped: {len(result.skipped)} ({'; '.join(f'{m}: {why}' for m, why in result.skipped.items())})")
    print(f"matched {result.matched}/{len(result.comparisons)} models (win_rate, standard_error to 1e-6; n_wins, "
          f"n_wins_base, n_draws, n_total, discrete_win_rate equal)")
    diff = result.lc_differences()
    if diff:
        print(f"length-controlled win rate, ours − published over {len(diff)} models: mean {statistics.mean(diff):+.2f}, "
              f"mean |·| {statistics.mean(abs(d) for d in diff):.2f}, max |·| {max(abs(d) for d in diff):.2f} points "
              f"(ours has no instruction-difficulty term; not expected to be equal)")
    return 0 if result.comparisons and result.matched == len(result.comparisons) else 1


if __name__ == "__main__":
    sys.exit(main())
