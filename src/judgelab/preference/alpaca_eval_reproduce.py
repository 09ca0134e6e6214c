"""AlpacaEval 2's leaderboard reproduced from AlpacaEval's own annotations (``docs/preference.md``).

For every model whose ``results/<model>/<annotator>/annotations.json`` is in a copy of tatsu-lab/alpaca_eval (a
checkout, or a bare git directory read with ``git``), the file is read with judgelab's reader
(:mod:`judgelab.preference.formats.alpaca_eval`), the win rates against the baseline are computed
(:func:`judgelab.preference.win_rates.win_rates`) and compared with the published row of
``src/alpaca_eval/leaderboards/data_AlpacaEval_2/<annotator>_leaderboard.csv``: ``win_rate`` and
``standard_error`` within 1e-6, ``n_wins, n_wins_base, n_draws, n_total`` equal and ``discrete_win_rate`` equal
(within 1e-9, the last bits of one float). The length-controlled win rate is reported beside the published
one, never compared for equality (:mod:`judgelab.preference.length_control` says why they differ). A file
listed in git whose content the copy lacks (a partial mirror) is counted as absent; the baseline's own file
compares the baseline with itself and is skipped. A file holds one system against the baseline; its name in the
file may differ from the folder's (``NullModel``'s file calls it ``example``): the folder names the row.
"""
from __future__ import annotations

import math
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["Comparison", "Reproduction", "reproduce_alpaca_eval", "EXACT", "TOLERANT", "ANNOTATOR", "BASELINE"]

ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
BASELINE = "gpt4_1106_preview"
EXACT = ("n_wins", "n_wins_base", "n_draws", "n_total")
TOLERANT = {"win_rate": 1e-6, "standard_error": 1e-6, "discrete_win_rate": 1e-9}
LEADERBOARD = "src/alpaca_eval/leaderboards/data_AlpacaEval_2/{annotator}_leaderboard.csv"


@dataclass(frozen=True)
class Comparison:
    """One model: ours and the published values of each quantity, and which differ."""

    model: str
    ours: dict[str, Any]
    published: dict[str, Any]
    mismatches: tuple[str, ...]

    @property
    def matched(self) -> bool:
        return not self.mismatches


@dataclass(frozen=True)
class Reproduction:
    """The counts of files (listed in git, absent from the copy, skipped) and each model's comparison."""

    listed: int
    absent: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    comparisons: tuple[Comparison, ...] = ()

    @property
    def matched(self) -> int:
        return sum(c.matched for c in self.comparisons)

    def lc_differences(self) -> list[float]:
        """Ours minus the published length-controlled win rate, per model where both exist."""
        return [c.ours["length_controlled_win_rate"] - c.published["length_controlled_winrate"]
                for c in self.comparisons if c.ours.get("length_controlled_win_rate") is not None
                and isinstance(c.published.get("length_controlled_winrate"), float)
                and math.isfinite(c.published["length_controlled_winrate"])]


class _Copy:
    """A checkout or a bare git directory of the repository."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.bare = not (repo / "results").is_dir()
        if self.bare and not (repo / "objects").is_dir() and not (repo / ".git").exists():
            raise JudgelabError(f"{repo}: neither a checkout of tatsu-lab/alpaca_eval (no results/ folder) nor a git "
                                f"directory; give the path of one")

    def _git(self, *args: str) -> bytes:
        done = subprocess.run(["git", "--git-dir", str(self.repo), *args], capture_output=True)
        if done.returncode:
            raise JudgelabError(f"{self.repo}: git {' '.join(args[:2])} failed: "
                                f"{done.stderr.decode(errors='replace').strip().splitlines()[-1:]}")
        return done.stdout

    def annotation_files(self, annotator: str) -> dict[str, str | None]:
        """{model: where its file is (a path, or a blob id), None when its content is absent from the copy}."""
        tail = f"/{annotator}/annotations.json"
        if not self.bare:
            return {p.parent.parent.name: str(p) for p in sorted((self.repo / "results").glob(f"*{tail}"))}
        out: dict[str, str | None] = {}
        for line in self._git("ls-tree", "-r", "HEAD", "results").decode().splitlines():
            meta, path = line.split("\t", 1)
            parts = path.split("/")
            if len(parts) == 4 and path.endswith(tail):
                sha = meta.split()[2]
                present = subprocess.run(["git", "--git-dir", str(self.repo), "cat-file", "-e", sha],
                                         capture_output=True).returncode == 0
                out[parts[1]] = sha if present else None
        return out

    def read(self, where: str) -> bytes:
        return Path(where).read_bytes() if not self.bare else self._git("cat-file", "blob", where)

    def text(self, path: str) -> bytes:
        return (self.repo / path).read_bytes() if not self.bare else self._git("show", f"HEAD:{path}")


def reproduce_alpaca_eval(repo: str | Path, annotator: str = ANNOTATOR, baseline: str = BASELINE,
                          models: list[str] | None = None) -> Reproduction:
    """Every stored annotation file of ``annotator`` read, its win rates computed and compared with the published
    leaderboard (``models``: only these).

    Raises:
        JudgelabError: ``repo`` is no copy of the repository, or its leaderboard CSV is missing.
    """
    import io

    import pandas as pd

    from judgelab.preference.formats import read_verdicts
    from judgelab.preference.win_rates import win_rates

    copy = _Copy(Path(repo))
    board = pd.read_csv(io.BytesIO(copy.text(LEADERBOARD.format(annotator=annotator))), index_col=0)
    files = copy.annotation_files(annotator)
    if models is not None:
        files = {m: w for m, w in files.items() if m in models}
    absent = tuple(sorted(m for m, w in files.items() if w is None))
    skipped: dict[str, str] = {}
    comparisons = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, where in sorted(files.items()):
            if where is None:
                continue
            if model == baseline:
                skipped[model] = "the baseline's own file compares it with itself"
                continue
            if model not in board.index:
                skipped[model] = "not on the published leaderboard"
                continue
            path = Path(tmp) / "annotations.json"
            path.write_bytes(copy.read(where))
            verdicts = read_verdicts(path)
            rates = win_rates(verdicts, baseline)
            if len(rates) != 1:  # one system against the baseline, named as its folder or otherwise (NullModel's)
                skipped[model] = f"its file compares {len(rates)} systems with {baseline!r}, not one"
                continue
            comparisons.append(_compare(model, rates[0].__dict__, board.loc[model].to_dict()))
    return Reproduction(len(files), absent, skipped, tuple(comparisons))


def _compare(model: str, ours: dict[str, Any], published: dict[str, Any]) -> Comparison:
    bad = [k for k in EXACT if int(ours[k]) != int(published[k])]
    for k, tol in TOLERANT.items():
        a, b = ours[k], float(published[k])
        if a is None or not abs(float(a) - b) <= tol:
            bad.append(k)
    return Comparison(model, dict(ours), {k: (float(v) if isinstance(v, (int, float)) else v) for k, v in published.items()},
                      tuple(bad))
