"""Win rates against a baseline, as AlpacaEval computes them (``docs/preference.md``).

Every verdict that compares a system with the baseline, in either order, is turned to the system's side: its
preference for the system is :func:`judgelab.preference.verdicts.preference_of_first` of the verdict when the
system was shown first and one minus it when second (a tie 0.5, a soft preference as given). Per rater,
criterion and system, :func:`head_to_head` gives AlpacaEval's quantities of those preferences
(``alpaca_eval.metrics.helpers.BaseScoringRule.describe_head2head`` with its absolute and zero-one scoring
rules): ``win_rate`` = 100 × mean, ``standard_error`` = 100 × standard error of the mean (ddof 1), ``n_wins`` /
``n_wins_base`` / ``n_draws`` the preferences above / below / at 0.5, ``n_total`` the verdicts with a choice,
and ``discrete_win_rate`` = 100 × (n_wins + n_draws / 2) / n_total. A verdict without a choice (missing, out
of range, failed) is left out, as AlpacaEval drops a preference outside [1, 2]. Each verdict is one
observation: a pair judged in both orders counts twice.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.verdicts import Choice
from judgelab.preference.win_rates_results import WinRate
from judgelab.status import Status

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["toward_system", "head_to_head", "win_rates", "systems_of", "preference_values"]


def systems_of(verdicts: "pd.DataFrame") -> list[str]:
    """The systems the verdicts compare, sorted."""
    return sorted(set(verdicts["first"].astype(str)) | set(verdicts["second"].astype(str)))


def toward_system(verdicts: "pd.DataFrame", baseline: str) -> "pd.DataFrame":
    """The verdicts of each system against ``baseline`` with a choice, turned to the system's side.

    Columns: ``rater, criterion, item_id, sample, system, preference`` (for the system, in [0, 1]),
    ``system_first`` (bool), ``system_text``, ``baseline_text``.

    Raises:
        JudgelabError: ``baseline`` is none of the systems (naming them), or no verdict with a choice compares a
            system with it.

    Example:
        >>> import pandas as pd
        >>> from judgelab.preference.verdicts import normalise_verdicts
        >>> v = normalise_verdicts(pd.DataFrame({"rater": ["j", "j"], "item_id": [1, 1], "first": ["b", "x"],
        ...                                      "second": ["x", "b"], "choice": ["second", "tie"]}))
        >>> toward_system(v, "b")[["system", "preference", "system_first"]].values.tolist()
        [['x', 1.0, False], ['x', 0.5, True]]
    """
    import numpy as np
    import pandas as pd

    systems = systems_of(verdicts)
    if baseline not in systems:
        shown = ", ".join(systems[:20]) + (f" … ({len(systems)} systems)" if len(systems) > 20 else "")
        raise JudgelabError(f"baseline {baseline!r} is not a system of the verdicts; give --baseline one of: "
                            f"{shown or '(no verdicts)'}")
    first, second = verdicts["first"].astype(str), verdicts["second"].astype(str)
    judged = verdicts["choice"].notna() & (verdicts["status"] == Status.OK.value)
    v = verdicts[judged & ((first == baseline) | (second == baseline))]
    if v.empty:
        raise JudgelabError(f"no verdict with a choice compares a system with the baseline {baseline!r}; give a "
                            f"--baseline that was judged against the others")
    p = preference_values(v)
    system_first = (v["second"].astype(str) == baseline).to_numpy()
    return pd.DataFrame({
        "rater": v["rater"].to_numpy(), "criterion": v["criterion"].to_numpy(), "item_id": v["item_id"].to_numpy(),
        "sample": v["sample"].to_numpy(),
        "system": np.where(system_first, v["first"].to_numpy(), v["second"].to_numpy()),
        "preference": np.where(system_first, p, 1.0 - p), "system_first": system_first,
        "system_text": np.where(system_first, v["first_text"].to_numpy(), v["second_text"].to_numpy()),
        "baseline_text": np.where(system_first, v["second_text"].to_numpy(), v["first_text"].to_numpy())})


def preference_values(v: "pd.DataFrame") -> "np.ndarray":
    """Each verdict's preference for the first response (:func:`judgelab.preference.verdicts.preference_of_first`,
    for a whole table of verdicts with a choice)."""
    import numpy as np

    return np.where(v["p_first"].notna(), v["p_first"].to_numpy(dtype=float),
                    v["choice"].map({Choice.FIRST.value: 1.0, Choice.SECOND.value: 0.0, Choice.TIE.value: 0.5})
                    .to_numpy(dtype=float))


def head_to_head(preference: "np.ndarray | pd.Series") -> dict[str, Any]:
    """AlpacaEval's head-to-head quantities of preferences for a system (each in [0, 1]).

    Example:
        >>> d = head_to_head([1.0, 0.0, 0.5, 0.75])
        >>> d["win_rate"], d["n_wins"], d["n_wins_base"], d["n_draws"], d["n_total"], d["discrete_win_rate"]
        (56.25, 2, 1, 1, 4, 62.5)
    """
    import numpy as np

    p = np.asarray(preference, dtype=float)
    n = len(p)
    if n == 0:
        raise ValueError("no preferences")
    wins, losses, draws = int((p > 0.5).sum()), int((p < 0.5).sum()), int((p == 0.5).sum())
    sem = float(np.std(p, ddof=1) / math.sqrt(n)) * 100 if n > 1 else None
    return {"win_rate": float(np.mean(p)) * 100, "standard_error": sem, "n_wins": wins, "n_wins_base": losses,
            "n_draws": draws, "n_total": n, "discrete_win_rate": (wins + draws / 2) / n * 100}


def win_rates(verdicts: "pd.DataFrame", baseline: str, length_control: bool = True) -> tuple[WinRate, ...]:
    """Each system's win rates against ``baseline`` per rater and criterion (sorted by rater, criterion, then
    win rate, highest first), with the length-controlled win rate where the verdicts carry both responses' texts
    (:func:`judgelab.preference.length_control.length_controlled`).

    Raises:
        JudgelabError: as :func:`toward_system`.
    """
    from judgelab.preference.length_control import length_controlled

    side = toward_system(verdicts, baseline)
    out: list[WinRate] = []
    for (rater, criterion, system), g in side.groupby(["rater", "criterion", "system"], sort=True):
        d = head_to_head(g["preference"].to_numpy())
        lc, coef, note = (None, None, "length control not asked") if not length_control else \
            length_controlled(g["preference"].to_numpy(), g["system_text"].tolist(), g["baseline_text"].tolist())
        out.append(WinRate(str(rater), str(criterion), str(system), baseline, length_controlled_win_rate=lc,
                           length_coefficient=coef, note=note, **d))
    return tuple(sorted(out, key=lambda w: (w.rater, w.criterion, -w.win_rate, w.system)))
