"""Two runs compared item by item: rows matched by label, never by position (pure; no I/O).

:func:`compare_runs` takes the judgments of one rater of each run (tidy tables: ``item_id``, ``system``,
``criterion``, ``sample``, ``score``, ``status``, ``raw``) and matches them on
:data:`judgelab.compare_results.KEY_COLUMNS`. Each label gets one row: both scored (``differ`` or ``same``),
failed in one run or both (``failed``: a status other than ``ok`` or no score), or rated by one run only
(``only_a`` / ``only_b``). Rows are listed differences first, the largest ``|B − A|`` first, then the failed,
then the one-run rows, then the equal ones; ties in natural order of the labels. Per criterion: the labels both
scored, how many differ, the mean of B − A, exact agreement, Spearman's ρ and Kendall's τ-b.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from judgelab.compare_results import KEY_COLUMNS, ROW_COLUMNS, WHERE, CompareResult, CriterionSummary
from judgelab.table import natural_key

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_runs", "EQUAL_TOLERANCE"]

#: Scores closer than this are the same score (a mean of samples written to a file and read back).
EQUAL_TOLERANCE = 1e-9
_ORDER = {k: i for i, k in enumerate(WHERE)}


def _side(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """One run's rows keyed by label; a label twice is refused (it could not be matched)."""
    import numpy as np
    import pandas as pd

    missing = [c for c in [*KEY_COLUMNS, "score"] if c not in df.columns]
    if missing:
        raise ValueError(f"run {name}: no column {', '.join(missing)}")
    out = pd.DataFrame({c: df[c].astype(str) for c in KEY_COLUMNS})
    number = pd.to_numeric(df["sample"], errors="coerce").to_numpy()  # 1 and 1.0 are one sample, "1" as text
    whole = ~np.isnan(number) & (np.mod(np.nan_to_num(number), 1) == 0)
    out["sample"] = np.where(whole, np.nan_to_num(number).astype("int64").astype(str), out["sample"].to_numpy())
    out["score"] = pd.to_numeric(df["score"], errors="coerce")
    out["status"] = df["status"].astype(str) if "status" in df.columns else "ok"
    out["raw"] = df["raw"].where(df["raw"].notna(), "").astype(str) if "raw" in df.columns else ""
    twice = out.duplicated(KEY_COLUMNS, keep=False)
    if twice.any():
        first = out[twice].iloc[0]
        raise ValueError(f"run {name} rates item {first['item_id']!r} (system {first['system']!r}, criterion "
                         f"{first['criterion']!r}, sample {first['sample']}) more than once: give one rater of it")
    return out


def _where(merged: pd.DataFrame) -> list[str]:
    """Each row's kind (:data:`~judgelab.compare_results.WHERE`), for the whole table at once."""
    import numpy as np

    ok_a = (merged["status_a"] == "ok") & merged["score_a"].notna()
    ok_b = (merged["status_b"] == "ok") & merged["score_b"].notna()
    same = (merged["score_b"] - merged["score_a"]).abs() <= EQUAL_TOLERANCE
    return np.select([~merged["_a"], ~merged["_b"], ~(ok_a & ok_b), same], ["only_b", "only_a", "failed", "same"],
                     "differ").tolist()


def _summary(criterion: str, rows: pd.DataFrame) -> CriterionSummary:
    from scipy import stats

    both = rows[rows["where"].isin(["same", "differ"])]
    n = len(both)
    a, b = both["score_a"].astype(float).to_numpy(), both["score_b"].astype(float).to_numpy()
    rho = tau = None
    note = ""
    if n < 3:
        note = f"no correlation with {n} label{'s' if n != 1 else ''} in both runs (3 needed)"
    elif len(set(a)) < 2 or len(set(b)) < 2:
        note = "no correlation: " + ("run A" if len(set(a)) < 2 else "run B") + " gives one score to every label"
    else:
        rho, tau = float(stats.spearmanr(a, b).statistic), float(stats.kendalltau(a, b).statistic)
    failed = rows[rows["where"] == "failed"]
    return CriterionSummary(
        criterion=criterion, n_both=n, n_differ=int((both["where"] == "differ").sum()),
        mean_diff=float((b - a).mean()) if n else None, exact=float((both["where"] == "same").mean()) if n else None,
        spearman=rho, kendall=tau, only_a=int((rows["where"] == "only_a").sum()),
        only_b=int((rows["where"] == "only_b").sum()),
        failed_a=int(((failed["status_a"] != "ok") | failed["score_a"].isna()).sum()),
        failed_b=int(((failed["status_b"] != "ok") | failed["score_b"].isna()).sum()),
        note=note)


def compare_runs(a: pd.DataFrame, b: pd.DataFrame, run_a: str = "A", run_b: str = "B", rater_a: str = "",
                 rater_b: str = "", texts: Mapping[tuple[str, str], str] | None = None) -> CompareResult:
    """Compare the judgments ``a`` and ``b`` (one rater each) label by label.

    ``texts``: ``(system, item_id) →`` the rated text, shown and searched on the page (empty when unknown).

    Raises:
        ValueError: a run without the label or score columns, or rating one label twice.

    Example:
        >>> import pandas as pd
        >>> a = pd.DataFrame({"item_id": ["1", "2"], "system": "s", "criterion": "c", "sample": 0, "score": [3, 4]})
        >>> b = pd.DataFrame({"item_id": ["2", "1"], "system": "s", "criterion": "c", "sample": 0, "score": [4, 5]})
        >>> r = compare_runs(a, b)
        >>> r.rows[["item_id", "where", "diff"]].values.tolist()
        [['1', 'differ', 2.0], ['2', 'same', 0.0]]
    """
    import pandas as pd

    left, right = _side(a, run_a), _side(b, run_b)
    merged = left.assign(_a=True).merge(right.assign(_b=True), on=KEY_COLUMNS, how="outer", suffixes=("_a", "_b"))
    merged["_a"] = merged["_a"].eq(True)
    merged["_b"] = merged["_b"].eq(True)
    merged["where"] = _where(merged)
    merged["diff"] = merged["score_b"] - merged["score_a"]
    merged.loc[~merged["where"].isin(["same", "differ"]), "diff"] = float("nan")
    merged["answer_a"], merged["answer_b"] = merged["raw_a"].fillna(""), merged["raw_b"].fillna("")
    merged["status_a"], merged["status_b"] = merged["status_a"].fillna(""), merged["status_b"].fillna("")
    texts = texts or {}
    merged["text"] = [texts.get((s, i), "") for s, i in zip(merged["system"], merged["item_id"])]
    merged["_rank"] = merged["where"].map(_ORDER)
    merged["_abs"] = -merged["diff"].abs().fillna(0.0)
    ties = [f"_{c}" for c in KEY_COLUMNS]
    for col, tie in zip(KEY_COLUMNS, ties):  # each label's place in natural order (M2 before M10)
        merged[tie] = merged[col].map({v: k for k, v in enumerate(sorted(set(merged[col]), key=natural_key))})
    merged = merged.sort_values(["_rank", "_abs", *ties], kind="stable").reset_index(drop=True)
    rows = pd.DataFrame({c: merged[c] for c in ROW_COLUMNS})
    summaries = tuple(_summary(c, rows[rows["criterion"] == c]) for c in sorted(rows["criterion"].unique(), key=natural_key))
    return CompareResult(run_a, run_b, rater_a, rater_b, rows, summaries)
