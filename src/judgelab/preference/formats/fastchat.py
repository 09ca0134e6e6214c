"""FastChat's MT-Bench judgment files (lm-sys/FastChat, ``fastchat/llm_judge``: ``data/<bench>/model_judgment/``).

**Pairwise** (``*_pair.jsonl``, written by ``gen_judgment.py --mode pairwise-*``): one line per question, turn and
pair of models: ``question_id, model_1, model_2, g1_winner, g2_winner, judge`` ([model, prompt name]), ``turn``,
``g1_judgment``, ``g2_judgment`` … Game 1 showed ``model_1`` as assistant A, game 2 ``model_2``; FastChat has
already mapped both winners to ``model_1``, ``model_2``, ``tie`` or ``error``. The mapping, per line:

==================  ==============================================================================================
``item_id``         ``question_id`` as text
``criterion``       ``turn-1`` or ``turn-2`` (MT-Bench reports each turn apart); ``preference`` without ``turn``
``rater``           ``<model>@<prompt name>`` from ``judge`` (:func:`judgelab.raters.judge`)
game 1              first ``model_1``, second ``model_2``; ``model_1`` → ``first``, ``model_2`` → ``second``
game 2              first ``model_2``, second ``model_1``; ``model_2`` → ``first``, ``model_1`` → ``second``
``tie``             ``tie``; ``error`` (FastChat's unparsable answer): no choice, status ``error``
``raw``             the game's ``g1_judgment`` / ``g2_judgment``
==================  ==============================================================================================

A pairwise line made from two single-answer scores (it has ``m1_score``; FastChat copies one winner into both
games) is one comparison, not two orders: it gives one verdict, game 1's.

**Single-answer grading** (``*_single.jsonl``: ``question_id, model, judge, score, turn``) scores one response
each: those are ratings, not verdicts. :func:`judgelab.ratings.read_ratings` recognises them by these fields and
:func:`single_rows` reads them into the ratings table (``score`` -1, FastChat's "no rating found", is status
``no_rating``), so ``judgelab agree``, ``audit`` and ``report`` take the file as a ratings file; given as verdicts,
it is refused in one line that says so.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.formats import VerdictFormat, load_file, register
from judgelab.raters import judge
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["single_ratings", "single_rows", "is_single", "rater_of"]

_PAIR = ("question_id", "model_1", "model_2", "g1_winner", "g2_winner", "judge")
#: The fields of a FastChat single-answer judgment (a file with them all is read as one).
SINGLE_FIELDS = _SINGLE = ("question_id", "model", "judge", "score")
_CHOICE = {("g1", "model_1"): "first", ("g1", "model_2"): "second", ("g2", "model_2"): "first",
           ("g2", "model_1"): "second"}


def rater_of(value: Any, where: str) -> str:
    """The rater label of FastChat's ``judge`` field ([model, prompt name])."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return judge(value[0], value[1]).label
    if isinstance(value, str) and value:
        return judge(value).label
    raise JudgelabError(f"{where}: judge is {value!r}; FastChat's judge field is [model, prompt name]")


def _criterion(line: dict[str, Any]) -> str:
    turn = line.get("turn")
    return "preference" if turn in (None, "") else f"turn-{turn}"


def _is(data: Any, fields: tuple[str, ...]) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and all(f in data[0] for f in fields)


def _accepts(data: Any, path: Path) -> bool:
    return _is(data, _PAIR) or _is(data, _SINGLE)


def _read(data: Any, path: Path) -> "pd.DataFrame":
    import pandas as pd

    if not _is(data, _PAIR):
        raise JudgelabError(f"{path}: FastChat single-answer judgments score one response each (ratings, not "
                            "pairwise verdicts); give them to judgelab agree, audit or report as a ratings "
                            "file, or give the *_pair.jsonl judgments")
    rows = []
    for i, line in enumerate(data):
        where = f"{path}: line {i + 1}"
        missing = [f for f in _PAIR if f not in line]
        if missing:
            raise JudgelabError(f"{where} has no field {missing[0]!r}; a FastChat pairwise judgment has {', '.join(_PAIR)}")
        base = {"item_id": str(line["question_id"]), "criterion": _criterion(line),
                "rater": rater_of(line["judge"], where), "sample": 0}
        games = ("g1",) if "m1_score" in line else ("g1", "g2")
        for game in games:
            first, second = (line["model_1"], line["model_2"]) if game == "g1" else (line["model_2"], line["model_1"])
            won = line[f"{game}_winner"]
            row = {**base, "first": first, "second": second, "raw": line.get(f"{game}_judgment")}
            if won == "tie":
                row["choice"] = "tie"
            elif (game, won) in _CHOICE:
                row["choice"] = _CHOICE[(game, won)]
            elif won == "error":
                row.update(choice=None, status=Status.ERROR.value)
            else:
                raise JudgelabError(f"{where} has {game}_winner {won!r}; FastChat's winners are model_1, model_2, "
                                    "tie or error")
            rows.append(row)
    return pd.DataFrame(rows)


def is_single(data: Any) -> bool:
    """Whether parsed rows are FastChat single-answer judgments (fields ``question_id, model, judge, score``)."""
    return _is(data, _SINGLE)


def single_rows(data: Any, path: Path) -> "pd.DataFrame":
    """FastChat single-answer judgment rows (parsed) as the ratings table: ``item_id`` = ``question_id``, ``system`` =
    ``model``, ``criterion`` = ``turn-N``, ``rater`` from ``judge``, ``score``, ``raw`` = ``judgment``; FastChat's
    ``-1`` (no ``[[rating]]`` found in the judge's answer; its ``show_result`` leaves those out) is status
    ``no_rating`` with no score."""
    import pandas as pd

    from judgelab.datasets.readers import parse_score
    from judgelab.table import RATING_COLUMNS, normalise

    if not is_single(data):
        raise JudgelabError(f"{path}: not a FastChat single-answer judgment file (fields {', '.join(_SINGLE)})")
    where = getattr(data, "where", lambda i: f"line {i + 1}")
    rows = []
    for i, line in enumerate(data):
        missing = [f for f in _SINGLE if f not in line]
        if missing:
            raise JudgelabError(f"{path}: {where(i)} has no field {missing[0]!r}; a FastChat single-answer judgment "
                                f"has {', '.join(_SINGLE)}")
        score = parse_score(line.get("score"), f"{path}: {where(i)}, field 'score'", missing_nan=True)
        failed = score is None or score == -1
        rows.append({"item_id": str(line["question_id"]), "system": str(line["model"]), "criterion": _criterion(line),
                     "rater": rater_of(line["judge"], f"{path}: {where(i)}"), "sample": 0,
                     "score": None if failed else score,
                     "status": Status.NO_RATING.value if failed else Status.OK.value, "raw": line.get("judgment")})
    return normalise(pd.DataFrame(rows), RATING_COLUMNS, where=str(path))


def single_ratings(path: str | Path) -> "pd.DataFrame":
    """A FastChat ``*_single.jsonl`` file as the ratings table (:func:`single_rows`)."""
    path = Path(path)
    return single_rows(load_file(path), path)


register(VerdictFormat("fastchat", _accepts, _read, "FastChat MT-Bench pairwise judgments (model_judgment/*_pair.jsonl)"))
