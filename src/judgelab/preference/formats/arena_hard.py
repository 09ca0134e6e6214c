"""Arena-Hard's judgment files (lmarena/arena-hard-auto, ``data/<bench>/model_judgment/<judge>/<model>.jsonl``).

One line per question: ``uid`` (``question_id`` in older files), ``model``, ``baseline`` (older files name it only
in their config: such a file needs a ``baseline`` field added, else it is refused in one line), ``judge`` (the
judge model; older files name it only in the folder), ``category`` and ``games``, two games written by
``gen_judgment.py``: game 1 shows the baseline as assistant A and the model as B, game 2 the model as A and the
baseline as B. A game's ``score`` is the verdict label its regex found (``A>>B``, ``A>B``, ``A=B``, ``B>A``,
``B>>A``, and the mirrored ``A<B`` …), or null when none was found. The mapping, per game:

==================  ==============================================================================================
``item_id``         ``uid`` (or ``question_id``) as text
``criterion``       ``preference`` (the category is not carried: Arena-Hard's categories have their own baselines)
``rater``           ``judge`` (the folder above the file when the line has none), as a judge label
game 1              first the ``baseline``, second the ``model``; game 2 first the ``model``, second the ``baseline``
A better            ``first`` (``A>B``, ``A>>B``, ``B<A``, ``B<<A``); B better: ``second``; ``A=B``: ``tie``
strength            ``>>`` and ``>`` both give the same choice; the label stays in ``raw`` (Arena-Hard weighs a
                    strong verdict 3 times in its scores; judgelab's win rates count each verdict once)
no score            a game that is null or has no score: no choice, status ``missing``
==================  ==============================================================================================
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.formats import VerdictFormat, register
from judgelab.raters import judge
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LABELS"]

#: A game's score label → the choice (A is shown first).
LABELS = {"A>>B": "first", "A>B": "first", "B<A": "first", "B<<A": "first", "A=B": "tie", "B=A": "tie",
          "B>>A": "second", "B>A": "second", "A<B": "second", "A<<B": "second"}


def _accepts(data: Any, path: Path) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "games" in data[0] \
        and "model" in data[0] and ("uid" in data[0] or "question_id" in data[0])


def _read(data: Any, path: Path) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    for i, line in enumerate(data):
        where = f"{path}: line {i + 1}"
        games, model, baseline = line.get("games"), line.get("model"), line.get("baseline")
        item = line.get("uid", line.get("question_id"))
        if not isinstance(games, list) or len(games) != 2:
            raise JudgelabError(f"{where}: games is not a list of two games; Arena-Hard writes both orders of each pair")
        if not baseline:
            raise JudgelabError(f"{where} has no baseline; Arena-Hard files before 2025 name it only in their config "
                                "(baseline_model): add a field \"baseline\" with that model to each line")
        if not model or item is None:
            raise JudgelabError(f"{where} has no {'model' if not model else 'uid'}; an Arena-Hard judgment names the "
                                "question (uid or question_id) and the model")
        rater = judge(str(line.get("judge") or path.parent.name)).label
        for n, game in enumerate(games):
            first, second = (baseline, model) if n == 0 else (model, baseline)
            score = game.get("score") if isinstance(game, dict) else None
            row = {"item_id": str(item), "criterion": "preference", "rater": rater, "sample": 0, "first": first,
                   "second": second, "raw": score}
            if score is None:
                row.update(choice=None, status=Status.MISSING.value)
            elif score in LABELS:
                row["choice"] = LABELS[score]
            else:
                raise JudgelabError(f"{where}: game {n + 1} has score {score!r}; Arena-Hard's scores are "
                                    f"{', '.join(LABELS)}")
            rows.append(row)
    return pd.DataFrame(rows)


register(VerdictFormat("arena-hard", _accepts, _read, "Arena-Hard judgments (model_judgment/<judge>/<model>.jsonl)"))
