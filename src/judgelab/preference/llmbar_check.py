"""LLMBar's published evaluator statistics, reproduced from its own result files (``benchmarks/reproduce_llmbar.py``).

LLMBar (Zeng et al. 2024, "Evaluating Large Language Models at Evaluating Instruction Following") publishes, per
data set and evaluator (LLM × prompting strategy), a ``result.json`` with both orders of every verdict and a
``statistics.json`` computed from it by its ``LLMEvaluator/evaluate.py``. :func:`collect` reads every result set
whose verdicts are all "1" or "2" (one whose evaluator failed to answer somewhere is counted and left out: LLMBar
counts a failure as wrong, judgelab leaves it out, so the two would differ by design) into one verdicts table
with the gold label as ``human:gold``; :func:`compare` checks ``preference agree``'s rows against the published
``correct_average``, ``correct_both`` and ``equal`` — as counts, exactly.
"""
from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from judgelab.errors import JudgelabError
from judgelab.preference.agreement_results import PreferenceAgreement
from judgelab.preference.formats.llmbar import GOLD, evaluator_of, result_rows

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LLMBarSets", "Mismatch", "collect", "compare", "published_counts"]

_COUNT = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*=")


@dataclass(frozen=True)
class LLMBarSets:
    """The result sets read: the verdicts (one table), the published statistics per (rater, criterion), and what
    was left out (``not_all_decided``: a verdict other than "1"/"2"; ``absent``: a file the copy lacks, e.g. a large
    blob a mirror left out; ``no_statistics``: a result without its statistics.json)."""

    verdicts: "pd.DataFrame"
    published: dict[tuple[str, str], dict[str, Any]]
    total: int
    not_all_decided: int = 0
    absent: list[str] = field(default_factory=list)
    no_statistics: int = 0


@dataclass(frozen=True)
class Mismatch:
    rater: str
    criterion: str
    what: str


def _files(repo: Path) -> Iterator[tuple[str, bytes | None]]:
    """``(path, content)`` of every result.json and statistics.json under Dataset/ (None: absent from the copy)."""
    if (repo / "Dataset").is_dir():
        for p in sorted((repo / "Dataset").rglob("*.json")):
            if p.name in ("result.json", "statistics.json") and "evaluators" in p.parts:
                yield p.relative_to(repo).as_posix(), p.read_bytes()
        return
    git = ["git", f"--git-dir={repo}"]
    try:
        names = subprocess.run([*git, "ls-tree", "-r", "HEAD", "--name-only", "--", "Dataset"], check=True,
                               capture_output=True, text=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        raise JudgelabError(f"{repo}: neither a checkout of LLMBar (no Dataset/ folder) nor a git directory git can "
                            "read; give the path of a clone of princeton-nlp/LLMBar") from None
    names = [n for n in names if n.rsplit("/", 1)[-1] in ("result.json", "statistics.json") and "/evaluators/" in n]
    proc = subprocess.run([*git, "cat-file", "--batch"], input="".join(f"HEAD:{n}\n" for n in names).encode(),
                          capture_output=True, check=True)
    out, pos = proc.stdout, 0
    for name in names:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if header[-1] == b"missing":
            yield name, None
            continue
        size = int(header[2])
        yield name, out[pos:pos + size]
        pos += size + 1


def collect(repo: str | Path) -> LLMBarSets:
    """Every LLMBar result set of ``repo`` (a checkout or a bare git directory) whose verdicts are all "1" or "2"."""
    import pandas as pd

    contents: dict[str, bytes | None] = dict(_files(Path(repo)))
    rows: list[dict[str, Any]] = []
    published: dict[tuple[str, str], dict[str, Any]] = {}
    total, undecided, no_stats, absent = 0, 0, 0, []
    for name, blob in sorted(contents.items()):
        if not name.endswith("/result.json"):
            continue
        total += 1
        if blob is None:
            absent.append(name)
            continue
        data = json.loads(blob)
        decided = all(inst["results"][-1][f"swap = {s}"]["winner"] in ("1", "2") for inst in data for s in (False, True))
        if not decided:
            undecided += 1
            continue
        stats = contents.get(name[: -len("result.json")] + "statistics.json")
        if stats is None:
            no_stats += 1
            continue
        criterion, rater = evaluator_of(name)
        published[(rater, criterion)] = json.loads(stats)
        rows.extend(result_rows(data, name, texts=False))
    verdicts = pd.DataFrame(rows)
    gold = verdicts["rater"] == GOLD
    key = ["criterion", "item_id", "first", "second"]
    labels = verdicts[gold].drop_duplicates([*key, "choice"])
    conflict = labels[labels.duplicated(key, keep=False)]
    if len(conflict):
        c = conflict.iloc[0]
        raise JudgelabError(f"LLMBar's result sets of {c['criterion']} disagree on the gold label of instance "
                            f"{int(c['item_id']) + 1}: they are not one data set")
    verdicts = pd.concat([verdicts[~gold], labels], ignore_index=True)
    return LLMBarSets(verdicts, published, total, undecided, absent, no_stats)


def published_counts(stats: dict[str, Any]) -> dict[str, int]:
    """The counts of a statistics.json: ``n``, ``correct`` (correct_False + correct_True), ``both``, ``equal``."""
    def count(key: str) -> tuple[int, int]:
        m = _COUNT.match(str(stats[key]))
        if m is None:
            raise JudgelabError(f"statistics.json: {key} is {stats[key]!r}, not 'k / n = x%'")
        return int(m.group(1)), int(m.group(2))

    (cf, n), (ct, _), (both, _), (equal, _) = (count(k) for k in ("correct_False", "correct_True", "correct_both", "equal"))
    return {"n": n, "correct": cf + ct, "both": both, "equal": equal}


def _count(value: float, n: int) -> int | None:
    k = round(value * n)
    return k if abs(k - value * n) < 1e-6 else None


def compare(result: PreferenceAgreement, published: dict[tuple[str, str], dict[str, Any]]) -> list[Mismatch]:
    """The differences between ``preference agree``'s rows and LLMBar's statistics (empty: every one matches).

    Per result set: the pairs ``n``; the correct verdicts of both orders, ``accuracy × 2n``, against
    ``correct_False + correct_True`` and the published ``correct_average`` text (LLMBar's own formula applied to the
    count); ``both_correct × n`` against ``correct_both``; ``consistency × n`` against ``equal``."""
    rows = {(r.rater, r.criterion): r for r in result.rows if r.kind == "judge"}
    out = []
    for (rater, criterion), stats in sorted(published.items()):
        row = rows.get((rater, criterion))
        if row is None:
            out.append(Mismatch(rater, criterion, "no row in preference agree's result"))
            continue
        want = published_counts(stats)
        n = row.n
        got = {"n": n, "correct": _count(row.value("accuracy"), 2 * n), "both": _count(row.value("both_correct"), n),
               "equal": _count(row.value("consistency"), n)}
        for key in ("n", "correct", "both", "equal"):
            if got[key] != want[key]:
                out.append(Mismatch(rater, criterion, f"{key}: {got[key]} here, {want[key]} published"))
        if got["correct"] is not None and f"{got['correct'] / 2 / n * 100}%" != stats["correct_average"]:
            out.append(Mismatch(rater, criterion, f"correct_average: {got['correct'] / 2 / n * 100}% here, "
                                                  f"{stats['correct_average']} published"))
    return out
