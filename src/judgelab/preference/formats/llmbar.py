"""LLMBar's evaluator results (princeton-nlp/LLMBar, ``Dataset/<set>/…/evaluators/<LLM>/<strategy>/result.json``).

A ``result.json`` is a list of instances ``{input, output_1, output_2, label, results}``; ``label`` (1 or 2) is
the gold preference, and ``results[-1]`` holds the evaluator's two verdicts, ``"swap = False"`` (``output_1``
shown first) and ``"swap = True"`` (``output_2`` shown first), each with ``winner`` ("1" or "2", already
mapped back to the instance's outputs by LLMBar's ``evaluate.py``) and ``completion`` ([text, finish reason]).
LLMBar's statistics read exactly these: ``correct_False``/``correct_True`` compare each order's winner with the
label, ``correct_both`` both, ``equal`` the two winners.

The mapping, one instance at ``i`` (0-based, the order of LLMBar's ``dataset.json``):

=====================  ========================================================================================
``item_id``            ``i`` as text
``criterion``          the data set: the folders between ``Dataset/`` and ``evaluators/`` (``LLMBar/Natural``);
                       outside that layout, the folder holding ``evaluators/``, else ``preference``
``rater``              the evaluator: ``<LLM>@<strategy>`` (:func:`judgelab.raters.judge`), from the two folders
                       under ``evaluators/``; the gold label is the human rater ``human:gold``
systems                ``output_1`` and ``output_2`` (LLMBar's pairs have no system names)
``swap = False``       first ``output_1``, second ``output_2``; winner "1" → ``first``, "2" → ``second``
``swap = True``        first ``output_2``, second ``output_1``; winner "1" → ``second``, "2" → ``first``
other winners          no choice, status ``missing``, the winner as ``raw`` (LLMBar counts them as wrong)
gold                   first ``output_1``, second ``output_2``, label 1 → ``first``, 2 → ``second``
texts                  ``instruction`` = ``input``; the responses as shown; ``raw`` = the completion's text
=====================  ========================================================================================
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.preference.formats import VerdictFormat, register
from judgelab.raters import human, judge
from judgelab.status import Status

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GOLD", "SYSTEMS", "evaluator_of", "result_rows"]

#: The rater of LLMBar's gold labels.
GOLD = human("gold").label
#: The two "systems" of every LLMBar pair.
SYSTEMS = ("output_1", "output_2")
_FIELDS = ("input", "output_1", "output_2", "label", "results")


def evaluator_of(path: str | Path) -> tuple[str, str]:
    """``(criterion, rater)`` of a ``result.json`` from its folders (see the module docstring).

    Example:
        >>> evaluator_of("Dataset/LLMBar/Natural/evaluators/GPT-4/CoT/result.json")
        ('LLMBar/Natural', 'GPT-4@CoT')
    """
    parts = Path(path).parts
    if len(parts) >= 4 and parts[-4] == "evaluators":
        rater = judge(parts[-3], parts[-2]).label
        above = parts[:-4]
        if "Dataset" in above:
            start = len(above) - above[::-1].index("Dataset")
            return "/".join(above[start:]) or "preference", rater
        return (above[-1] if above else "preference"), rater
    return "preference", judge(Path(path).parent.name or "llmbar").label


def _accepts(data: Any, path: Path) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and all(f in data[0] for f in _FIELDS)


def result_rows(data: list[dict[str, Any]], path: str | Path, texts: bool = True) -> list[dict[str, Any]]:
    """The verdict rows of one ``result.json`` (both orders of the evaluator, then the gold label per instance).

    ``texts=False`` leaves out the instruction, the responses and the completions (a compact file)."""
    criterion, rater = evaluator_of(path)
    rows: list[dict[str, Any]] = []
    for i, inst in enumerate(data):
        label = str(inst.get("label"))
        try:
            last = inst["results"][-1]
            shown = [(False, last["swap = False"]), (True, last["swap = True"])]
        except (KeyError, IndexError, TypeError):
            raise JudgelabError(f"{path}: instance {i + 1} has no results[-1] with 'swap = False' and 'swap = True'; "
                                "an LLMBar result.json holds both orders of each verdict") from None
        if label not in ("1", "2"):
            raise JudgelabError(f"{path}: instance {i + 1} has label {inst.get('label')!r}; LLMBar's label is 1 or 2")
        base = {"item_id": str(i), "criterion": criterion}
        text = {"instruction": inst.get("input"), "first_text": inst.get("output_1"),
                "second_text": inst.get("output_2")} if texts else {}
        for swap, verdict in shown:
            first, second = (SYSTEMS[1], SYSTEMS[0]) if swap else SYSTEMS
            won = verdict.get("winner") if isinstance(verdict, dict) else None
            completion = verdict.get("completion") if isinstance(verdict, dict) else None
            row = {**base, "rater": rater, "first": first, "second": second, "sample": 0}
            if won in ("1", "2"):
                row["choice"] = "first" if SYSTEMS[int(won) - 1] == first else "second"
                row["raw"] = completion[0] if texts and isinstance(completion, list) and completion else None
            else:
                row.update(choice=None, status=Status.MISSING.value, raw=None if won is None else str(won))
            if texts:
                row.update(instruction=text["instruction"],
                           first_text=text["second_text"] if swap else text["first_text"],
                           second_text=text["first_text"] if swap else text["second_text"])
            rows.append(row)
        rows.append({**base, **text, "rater": GOLD, "first": SYSTEMS[0], "second": SYSTEMS[1], "sample": 0,
                     "choice": "first" if label == "1" else "second"})
    return rows


def _read(data: Any, path: Path) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame(result_rows(list(data), path))


register(VerdictFormat("llmbar", _accepts, _read, "LLMBar's evaluator result.json (both orders and the gold label)"))
