"""The typed results of ``judgelab preference win-rates`` as results.json records them (``docs/preference.md``).

:class:`WinRate`: one system against the baseline, per rater and criterion, with AlpacaEval's quantities
(:func:`judgelab.preference.win_rates.win_rates`) and the length-controlled win rate
(:mod:`judgelab.preference.length_control`). :class:`Standing`: one system of a rater's Bradley–Terry
leaderboard (:mod:`judgelab.preference.leaderboard`). :class:`PreferenceRates` holds both with the methods
they were computed by. Pages render these as recorded; this module imports nothing of the analysis.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["WinRate", "Standing", "PreferenceRates", "WIN_RATE_COLUMNS", "LEADERBOARD_COLUMNS"]

#: win_rates.csv's columns, in this order.
WIN_RATE_COLUMNS = ["rater", "criterion", "system", "baseline", "win_rate", "standard_error", "n_wins", "n_wins_base",
                    "n_draws", "n_total", "discrete_win_rate", "length_controlled_win_rate", "length_coefficient",
                    "note"]
#: leaderboard.csv's columns, in this order.
LEADERBOARD_COLUMNS = ["rater", "criterion", "rank", "system", "rating", "ci_low", "ci_high", "win_rate_vs_anchor",
                       "n_verdicts", "style_controlled", "note"]


@dataclass(frozen=True)
class WinRate:
    """One system against the baseline for one rater and criterion.

    Attributes:
        win_rate: 100 × the mean preference for the system (a tie 0.5, a soft preference as given).
        standard_error: 100 × the standard error of that mean (ddof 1; ``None`` below 2 verdicts).
        n_wins, n_wins_base, n_draws: verdicts with the system's preference above, below and at 0.5.
        n_total: verdicts counted (a verdict without a choice is left out).
        discrete_win_rate: 100 × (n_wins + n_draws / 2) / n_total.
        length_controlled_win_rate: the GLM's win rate at equal lengths (``None`` with ``note`` saying why).
        length_coefficient: the GLM's coefficient of tanh(standardised length difference, system − baseline).
    """

    rater: str
    criterion: str
    system: str
    baseline: str
    win_rate: float
    standard_error: float | None
    n_wins: int
    n_wins_base: int
    n_draws: int
    n_total: int
    discrete_win_rate: float
    length_controlled_win_rate: float | None = None
    length_coefficient: float | None = None
    note: str = ""


@dataclass(frozen=True)
class Standing:
    """One system of a rater's leaderboard: its Bradley–Terry rating on the Elo-like scale (the anchor at 1000,
    400 points = odds of 10 to 1) with its bootstrap interval."""

    rater: str
    criterion: str
    rank: int | None
    system: str
    rating: float | None
    ci_low: float | None
    ci_high: float | None
    win_rate_vs_anchor: float | None
    n_verdicts: int
    style_controlled: bool = False
    note: str = ""


@dataclass(frozen=True)
class PreferenceRates:
    """What ``preference win-rates`` computed: the win rates, the leaderboards and how."""

    baseline: str
    win_rates: tuple[WinRate, ...]
    leaderboard: tuple[Standing, ...] = ()
    #: style coefficients of a style-controlled leaderboard: {(rater, criterion) as "rater|criterion": {name: coef}}
    style_coefficients: dict[str, dict[str, float]] = field(default_factory=dict)
    methods: dict[str, str] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "win_rates": [_clean(asdict(w)) for w in self.win_rates],
                "leaderboard": [_clean(asdict(s)) for s in self.leaderboard],
                "style_coefficients": {k: _clean(v) for k, v in self.style_coefficients.items()},
                "methods": dict(self.methods)}

    @classmethod
    def from_record(cls, doc: dict[str, Any]) -> "PreferenceRates":
        """The results recorded in results.json (``KeyError``/``TypeError`` on a damaged record)."""
        return cls(str(doc["baseline"]), tuple(WinRate(**w) for w in doc.get("win_rates") or []),
                   tuple(Standing(**s) for s in doc.get("leaderboard") or []),
                   {str(k): dict(v) for k, v in (doc.get("style_coefficients") or {}).items()},
                   {str(k): str(v) for k, v in (doc.get("methods") or {}).items()})

    def win_rate_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([asdict(w) for w in self.win_rates], columns=WIN_RATE_COLUMNS)

    def leaderboard_frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame([asdict(s) for s in self.leaderboard], columns=LEADERBOARD_COLUMNS)


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """JSON-safe: a non-finite float is ``None``."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in d.items()}
