"""Summarise a py-spy profile in its raw format (``py-spy record --format raw``: one ``frame;frame;… count`` line per
stack): the share of samples by the package of the innermost frame, judgelab's functions by self samples, and
judgelab's call path by inclusive samples (a frame counted once per stack; line numbers dropped).

    python benchmarks/pyspy_summary.py PROFILE.raw [--top 25]
"""
from __future__ import annotations

import argparse
import collections
import re


def summary(path: str, top: int = 25) -> str:
    by_package: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            n = int(count)
            total += n
            frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
            leaf = frames[-1]
            package = re.search(r"\((\S+?)/", leaf) or re.search(r"\((\S+?)\.py", leaf)
            by_package[package.group(1) if package else "(other)"] += n
            if "(judgelab/" in leaf:
                own[leaf] += n
            for frame in set(frames):
                if "(judgelab/" in frame:
                    inclusive[frame] += n
    mine = sum(own.values())
    out = [f"samples: {total:,}; judgelab's own frames innermost: {mine:,} ({100 * mine / total:.1f}%)", "",
           "## share of samples by the package of the innermost frame"]
    out += [f"{100 * n / total:5.1f}%  {name}" for name, n in by_package.most_common(top)]
    out += ["", "## judgelab's functions by self samples (share of all; share of judgelab's own)"]
    out += [f"{100 * n / total:5.2f}%  {100 * n / mine:5.1f}%  {name}" for name, n in own.most_common(top)]
    out += ["", "## judgelab's call path, inclusive (share of all samples)"]
    out += [f"{100 * n / total:5.1f}%  {name}" for name, n in inclusive.most_common(2 * top)]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print(summary(args.profile, args.top), end="")


if __name__ == "__main__":
    main()
