"""AlpacaEval's ``annotations.json``: one object per instruction with the two outputs and the annotator's
preference (``docs/preference.md``).

Fields: ``instruction``, ``output_1``/``generator_1`` (shown first; AlpacaEval's baseline),
``output_2``/``generator_2``, ``preference`` and optionally ``annotator``, ``raw_completion``, ``index``,
``dataset``, ``time_per_example``, ``price_per_example``. ``preference`` is in [1, 2]: 1 means output_1 is
better, 2 output_2, 1.5 a draw, and values between are a weighted annotator's soft preference. As AlpacaEval's
scoring rules read it (``alpaca_eval/metrics/helpers.py``): 0 is an older spelling of a draw (1.5); a value
outside [1, 2] is no preference; a missing one (null, NaN) is none either. So a verdict's
``p_first = 2 − preference`` (exact in floating point for every value in [1, 2]), its choice follows from
``p_first``, an empty preference is a ``missing`` verdict and one outside [1, 2] an ``out_of_range`` verdict:
both are kept as rows and left out of every statistic, as AlpacaEval leaves them out.

The rater is the annotator's configuration name (``weighted_alpaca_eval_gpt4_turbo``; ``alpaca_eval`` when the
file names none); the item is the ``index`` field when present, else the instruction.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.formats import VerdictFormat, register
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIELDS", "p_first_of", "DEFAULT_RATER"]

#: The fields every annotation has.
FIELDS = ("instruction", "output_1", "generator_1", "output_2", "generator_2", "preference")
#: The rater of a file whose annotations name no annotator.
DEFAULT_RATER = "alpaca_eval"


def p_first_of(preference: Any) -> tuple[float, str]:
    """(p_first, status) of one AlpacaEval preference.

    Example:
        >>> p_first_of(1.0), p_first_of(2), p_first_of(1.75), p_first_of(0), p_first_of(None), p_first_of(3)
        ((1.0, 'ok'), (0.0, 'ok'), (0.25, 'ok'), (0.5, 'ok'), (nan, 'missing'), (nan, 'out_of_range'))
    """
    if preference is None or isinstance(preference, bool):
        return math.nan, Status.MISSING.value
    try:
        value = float(preference)
    except (TypeError, ValueError):
        return math.nan, Status.OUT_OF_RANGE.value
    if math.isnan(value):
        return math.nan, Status.MISSING.value
    if value == 0.0:  # AlpacaEval's older encoding of a draw
        value = 1.5
    if not 1.0 <= value <= 2.0:
        return math.nan, Status.OUT_OF_RANGE.value
    return 2.0 - value, Status.OK.value


def _accepts(data: Any, path: Path) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and all(f in data[0] for f in FIELDS)


def _read(data: Any, path: Path) -> "pd.DataFrame":
    import pandas as pd

    rows = []
    for i, a in enumerate(data):
        lacking = [f for f in FIELDS if f not in a]
        if lacking:
            raise JudgelabError(f"{path}: annotation {i + 1} has no field {', '.join(map(repr, lacking))}; an AlpacaEval "
                                f"annotation has {', '.join(FIELDS)}")
        p, status = p_first_of(a["preference"])
        raw = a.get("raw_completion")
        rows.append({
            "item_id": str(a["index"]) if a.get("index") is not None else str(a["instruction"]),
            "rater": str(a.get("annotator") or DEFAULT_RATER), "first": str(a["generator_1"]),
            "second": str(a["generator_2"]), "p_first": p, "status": status,
            "choice": None,
            "raw": None if raw is None else raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False),
            "instruction": a["instruction"], "first_text": a["output_1"], "second_text": a["output_2"]})
    return pd.DataFrame(rows)


register(VerdictFormat("alpaca_eval", _accepts, _read, "AlpacaEval's annotations.json (preference in [1, 2])"))
