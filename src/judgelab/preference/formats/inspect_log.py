"""inspect_ai eval logs (UKGovernmentBEIS/inspect_ai; ``.eval`` or ``.json``), read with inspect_ai's own reader.

A log's samples carry the scores of its scorers; a model-graded scorer (``model_graded_qa``, ``model_graded_fact``
and the like) is a judge, and each of its scores is one rating. :func:`inspect_ratings` reads them into the ratings
table with ``inspect_ai.log.read_eval_log`` (the optional extra ``pip install 'judgelab[inspect]'``; without it, one
line that names it). The mapping, per sample and scorer:

==================  ==============================================================================================
``item_id``         the sample's ``id`` as text
``system``          the evaluated model (``eval.model``)
``criterion``       the scorer's name (the key of ``sample.scores``)
``rater``           ``<grader>@<scorer>``: the grader is the ``model`` of the grading answer inspect_ai keeps in the
                    score's ``metadata.grading``, else the scorer's ``model`` option, else the evaluated model
                    (a model-graded scorer without a model grades with the task's model)
``sample``          ``epoch - 1``
``score``           a number as given; inspect_ai's grades C, P, I, N as 1, 0.5, 0, 0 (``value_to_float``'s
                    defaults); an unscored sample (no value) has status ``error`` and no score
``raw``             the score's ``explanation`` (the grader's answer)
==================  ==============================================================================================

A log is a file of ratings, not of pairwise verdicts: given to ``preference`` commands it is refused in one line
that says which function reads it.
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

__all__ = ["inspect_ratings", "GRADES", "INSTALL"]

#: inspect_ai's grades as numbers (``inspect_ai.scorer.value_to_float``'s defaults).
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
INSTALL = "pip install 'judgelab[inspect]'"


def _accepts(data: Any, path: Path) -> bool:
    if isinstance(data, Path):
        return data.suffix.lower() == ".eval"
    return isinstance(data, dict) and "eval" in data and "version" in data and isinstance(data.get("eval"), dict)


def _read(data: Any, path: Path) -> "pd.DataFrame":
    raise JudgelabError(f"{path}: an inspect_ai eval log holds scores (ratings), not pairwise verdicts; read it with "
                        "judgelab.preference.formats.inspect_log.inspect_ratings into a ratings file for judgelab agree")


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str) and value in GRADES:
        return GRADES[value]
    return None


def _grader(score: Any, scorer: str, options: dict[str, dict[str, Any]], default: str) -> str:
    grading = (getattr(score, "metadata", None) or {}).get("grading")
    if isinstance(grading, list) and grading:
        last = grading[-1]
        model = last.get("model") if isinstance(last, dict) else getattr(last, "model", None)
        if model:
            return str(model)
    model = options.get(scorer, {}).get("model")
    return str(model) if model else default


def inspect_ratings(path: str | Path) -> "pd.DataFrame":
    """The ratings of an inspect_ai eval log's scorers (see the module docstring).

    Raises:
        JudgelabError: inspect_ai is not installed (naming the extra), or the file is not a log it reads.
    """
    import pandas as pd

    from judgelab.table import RATING_COLUMNS, normalise

    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise JudgelabError(f"reading inspect_ai eval logs needs inspect_ai: {INSTALL}") from None
    path = Path(path)
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect_ai's reader raises many kinds; the file is what is wrong
        raise JudgelabError(f"{path}: inspect_ai cannot read it as an eval log ({type(exc).__name__}: "
                            f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    system = str(log.eval.model)
    options = {str(s.name): dict(s.options or {}) for s in (getattr(log.eval, "scorers", None) or [])}
    rows = []
    for sample in log.samples or []:
        for scorer, score in (sample.scores or {}).items():
            value = _score(score.value)
            rows.append({"item_id": str(sample.id), "system": system, "criterion": str(scorer),
                         "rater": judge(_grader(score, scorer, options, system), str(scorer)).label,
                         "sample": int(sample.epoch) - 1, "score": value,
                         "status": Status.OK.value if value is not None else Status.ERROR.value,
                         "raw": score.explanation})
    if not rows:
        raise JudgelabError(f"{path}: the eval log has no scored samples (run its scorers, or log the samples)")
    return normalise(pd.DataFrame(rows), RATING_COLUMNS, where=str(path))


register(VerdictFormat("inspect", _accepts, _read, "inspect_ai eval logs (scores: read as ratings)"))
