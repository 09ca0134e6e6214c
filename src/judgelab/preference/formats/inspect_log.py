"""inspect_ai eval logs (UKGovernmentBEIS/inspect_ai; ``.eval`` or ``.json``), read with inspect_ai's own reader.

A log's samples carry the scores of its scorers; a model-graded scorer (``model_graded_qa``, ``model_graded_fact``
and the like) is a judge, and each of its scores is one rating. :func:`judgelab.ratings.read_ratings` recognises a
log by its fields (:func:`is_log`) and :func:`inspect_ratings` reads it into the ratings table with
``inspect_ai.log.read_eval_log`` (the optional extra ``pip install 'judgelab[inspect]'``; without it, one line that
names it), so ``agree``, ``audit`` and ``report`` take a log as a ratings file. The mapping, per sample, epoch and
scorer:

==================  ==============================================================================================
``item_id``         the sample's ``id`` as text
``system``          the evaluated model (``eval.model``)
``criterion``       the scorer's name (the key of ``sample.scores``)
``rater``           ``<grader>@<scorer>``: the grader is the ``model`` of the grading answer inspect_ai keeps in the
                    score's ``metadata.grading``, else the scorer's ``model`` option, else the evaluated model
                    (a model-graded scorer without a model grades with the task's model)
``sample``          ``epoch - 1``
``score``           the value as inspect_ai's ``value_to_float`` maps it with its defaults (:func:`to_float`): C, P,
                    I, N as 1, 0.5, 0, 0; yes/true 1, no/false 0; numbers and numeric text as numbers
``status``          ``ok`` with a score; ``no_rating`` for a score without a usable value (inspect_ai's unscored
                    NaN, e.g. a grader answer without a grade; text, a list or a dict, which inspect_ai would count
                    as 0); ``error`` for a sample that ended in an error before this scorer scored it; ``missing`` for
                    a sample this scorer did not score
``raw``             the score's ``explanation`` (the grader's answer), or the sample's error message
==================  ==============================================================================================

A log is a file of ratings, not of pairwise verdicts: given to ``preference`` commands it is refused in one line
that says which commands read it.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.formats import VerdictFormat, register
from judgelab.raters import judge
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["inspect_ratings", "is_log", "to_float", "GRADES", "INSTALL"]

#: inspect_ai's grades as numbers (``inspect_ai.scorer.value_to_float``'s defaults).
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
INSTALL = "pip install 'judgelab[inspect]'"


def is_log(data: Any, path: Path) -> bool:
    """Whether a file (as :func:`judgelab.preference.formats.load_file` parses it) is an inspect_ai eval log: a zip
    archive named ``.eval`` (the binary log; ``load_file`` gives its path), or a JSON object with ``version`` and an
    ``eval`` object."""
    if isinstance(data, Path):
        try:
            with data.open("rb") as f:
                return f.read(4) == b"PK\x03\x04"
        except OSError:
            return False
    return isinstance(data, dict) and "version" in data and isinstance(data.get("eval"), dict)


def _read(data: Any, path: Path) -> "pd.DataFrame":
    raise JudgelabError(f"{path}: an inspect_ai eval log holds scores (ratings), not pairwise verdicts; give it to "
                        "judgelab agree, audit or report as a ratings file")


def to_float(value: Any) -> float | None:
    """A score's value as a number, as inspect_ai's ``value_to_float`` maps it (C, P, I, N; yes/true, no/false; a
    number or a numeric string); ``None`` where it gives up (NaN, a list, a dict, other text), which inspect_ai
    would count as 0."""
    if isinstance(value, str) and value in GRADES:
        return GRADES[value]
    if isinstance(value, (bool, int, float)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("yes", "true", "no", "false"):
            return 1.0 if text in ("yes", "true") else 0.0
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _grader(score: Any, scorer: str, options: dict[str, dict[str, Any]], default: str) -> str:
    grading = (getattr(score, "metadata", None) or {}).get("grading") if score is not None else None
    if isinstance(grading, list) and grading:
        last = grading[-1]
        model = last.get("model") if isinstance(last, dict) else getattr(last, "model", None)
        if model:
            return str(model)
    model = options.get(scorer, {}).get("model")
    return str(model) if model else default


def _rating(sample: Any, scorer: str, score: Any, rater: str) -> dict[str, Any]:
    """One rating row: the score's value, or why there is none (the sample's error, no value, no score)."""
    value = to_float(score.value) if score is not None else None
    error = getattr(sample, "error", None)
    if value is not None:
        status = Status.OK
    elif score is not None:
        status = Status.NO_RATING
    else:
        status = Status.ERROR if error is not None else Status.MISSING
    raw = score.explanation if score is not None else (getattr(error, "message", None) or None)
    return {"item_id": str(sample.id), "criterion": scorer, "rater": rater, "sample": int(sample.epoch) - 1,
            "score": value, "status": status.value, "raw": raw}


def inspect_ratings(path: str | Path) -> "pd.DataFrame":
    """The ratings of an inspect_ai eval log's scorers (see the module docstring): one row per sample, epoch and
    scorer, a scorer that left a sample without a score included with its status.

    Raises:
        JudgelabError: inspect_ai is not installed (naming the extra), or the file is not a log it reads.
    """
    import pandas as pd

    from judgelab.table import RATING_COLUMNS, normalise

    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise JudgelabError(f"{path}: reading inspect_ai eval logs needs inspect_ai: {INSTALL}") from None
    path = Path(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai's reader raises many kinds; the file is what is wrong
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise JudgelabError(f"{path}: inspect_ai cannot read it as an eval log ({type(exc).__name__}: {first})") from None
    system = str(log.eval.model)
    options = {str(s.name): dict(s.options or {}) for s in (getattr(log.eval, "scorers", None) or [])}
    samples = log.samples or []
    names = list(dict.fromkeys([*options, *(str(k) for s in samples for k in (s.scores or {}))]))
    rows = []
    for sample in samples:
        scores = {str(k): v for k, v in (sample.scores or {}).items()}
        for scorer in names:
            rater = judge(_grader(scores.get(scorer), scorer, options, system), scorer).label
            rows.append({**_rating(sample, scorer, scores.get(scorer), rater), "system": system})
    if not rows:
        raise JudgelabError(f"{path}: the eval log has no scored samples (run its scorers, or log the samples)")
    return normalise(pd.DataFrame(rows), RATING_COLUMNS, where=str(path))


register(VerdictFormat("inspect", is_log, _read, "inspect_ai eval logs (scores: read as ratings)"))
