"""The notes above the item browser: how the cards are ranked, whose ratings are apart, what is not recorded."""
from __future__ import annotations

from judgelab.report.humans import HumanRatings

__all__ = ["items_notes"]


def _collected_note(humans: HumanRatings) -> str:
    names = ", ".join(sorted(humans.collected))
    if humans.pooled:
        return (f"Pooled as asked (--pool-humans): the ratings collected with `judgelab annotate` ({names}) are "
                "averaged into the human mean with the imported ones.")
    return (f"The ratings collected with `judgelab annotate` ({names}) are listed on each card apart from the "
            "imported human ratings and are not in the human mean, which is the imported humans' alone; "
            "`judgelab report --pool-humans` averages them in.")


def items_notes(humans: HumanRatings, has_human: bool, prompts_available: bool, units: int,
                texts_shown: int) -> list[str]:
    """The notes above the item browser."""
    notes = []
    if not has_human:
        notes.append("No human ratings were found, so items are ranked by the spread (max − min) of the judge's "
                     "own samples. Human ratings are read from human:<name> raters in store.sqlite or the ratings "
                     "file, from human_ratings.csv|.jsonl|.parquet in the folder, from the --human file of a "
                     "recorded `judgelab agree` command, or from `judgelab report --human FILE`.")
    if humans.collected:
        notes.append(_collected_note(humans))
    if not prompts_available:
        notes.append("The prompts sent are not available (no store.sqlite with the calls in this folder).")
    if units and texts_shown < units:
        notes.append(f"The rated text was not recorded for {units - texts_shown:,} of {units:,} items "
                     "(judged before judgelab recorded item texts in the store, or no store.sqlite in this folder)"
                     + ("; their prompts hold it." if prompts_available else "."))
    return notes
