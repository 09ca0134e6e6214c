"""HANNA (Chhun et al.): the story-evaluation benchmark and its meta-evaluation tables.

The score files (``hanna_metric_scores.csv``, ``hanna_metric_scores_llm.csv``) hold one row
per system and, in every other cell, a list with one number per story-prompt (96), in the
same prompt order everywhere. Columns: the six human criteria (mean of three raters), the
automatic measures, the individual human raters ``Human k XX`` and their leave-one-out
companions ``Human Avg k XX`` (the mean of the *other two* raters, checked on the data),
and LLM ratings ``<LLM> <code> <Eval-Prompt>`` (mean of 3 tries) with ``AVG`` over criteria.

Conventions of the paper, followed here: the human-written stories are the references of
the reference-based measures, so correlations run over the ten generation systems (the
``Human`` row is left out); "story level" is the per-group level with story-prompts as
groups; Williams tests are one-sided (an increase in correlation) and BH-adjusted over all
tests of one table.
"""
from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.datasets.readers import read_csv, record_columns, records_frame
from judgelab.errors import JudgelabError
from judgelab.raters import human as human_rater, judge as judge_rater
from judgelab.stats import bh_adjust, correlate, icc, williams_test
from judgelab.stats.coefficient import TIES
from judgelab.stats.correlation import level_correlation, matrix_frame
from judgelab.status import Status

__all__ = ["CRITERIA", "CODES", "HannaScores", "load_scores", "correlation_table", "williams_table",
           "human_baseline", "human_icc", "to_ratings", "load_stories"]

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
CODES = {"RE": "Relevance", "CH": "Coherence", "EM": "Empathy", "SU": "Surprise", "EG": "Engagement", "CX": "Complexity"}
_CODE_OF = {v: k for k, v in CODES.items()}
_LLM_COL = re.compile(r"^(?P<llm>.+) (?P<code>RE|CH|EM|SU|EG|CX|AVG) (?P<prompt>\d+)$")
_HUMAN_COL = re.compile(r"^Human (?:Avg )?\d+ (RE|CH|EM|SU|EG|CX)$")
_FAMILY = re.compile(r"^(?P<llm>.+) (?:…|\.\.\.|\{\}|XX) (?P<prompt>\d+)$")
LEVEL_NAMES = {"system": "system", "story": "group", "overall": "overall"}


@dataclass
class HannaScores:
    """HANNA's score file (one row per system; cells are lists over the 96 story prompts)."""

    path: str
    systems: list[str]
    columns: list[str]  # every score column, in file order
    data: dict[str, np.ndarray]  # column -> systems × story-prompts

    def generated(self, column: str) -> np.ndarray:
        """The ten generation systems (the Human row left out)."""
        keep = [i for i, s in enumerate(self.systems) if s != "Human"]
        return self.data[column][keep]

    def measures(self) -> list[str]:
        """Automatic measures and LLM columns, in file order (criteria and human raters left out)."""
        return [c for c in self.columns if c not in CRITERIA and not _HUMAN_COL.match(c)]


def _parse_cell(value: object, where: str, finite: bool) -> list[float]:
    """One cell: a list of numbers (Python or JSON list syntax) or one number. ``finite``: NaN is
    refused too (human ratings); infinities always are."""
    text = str(value).strip()
    try:
        parsed = json.loads(text.replace("nan", "NaN")) if text.startswith("[") else ast.literal_eval(text)
    except RecursionError:
        raise JudgelabError(f"{where}: nested too deeply") from None
    except (ValueError, SyntaxError, TypeError, MemoryError):  # json.JSONDecodeError is a ValueError
        raise JudgelabError(f"{where}: not a list of numbers: {text[:60]!r}") from None
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        parsed = [parsed]
    if not isinstance(parsed, (list, tuple)):
        raise JudgelabError(f"{where}: not a list of numbers: {text[:60]!r}")
    out = []
    for v in parsed:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise JudgelabError(f"{where}: {v!r} is not a number")
        number = float(v)
        if math.isinf(number) or (finite and math.isnan(number)):
            raise JudgelabError(f"{where}: {v!r} is not a finite number")
        out.append(number)
    return out


def load_scores(path: str | Path) -> HannaScores:
    """Read a HANNA score file (per-system lists), keeping the measure names exactly.

    Every value must be a number; human ratings (the criteria and ``Human k XX`` columns)
    must be finite, automatic measures may be NaN (undefined) but not infinite.
    """
    path = Path(path)
    records = read_csv(path)
    df = records_frame(records)
    if "Model" not in df.columns:
        raise JudgelabError(f"{path}: no 'Model' column; not a HANNA score file")
    missing = [c for c in CRITERIA if c not in df.columns]
    if missing:
        raise JudgelabError(f"{path}: missing human criteria columns {', '.join(missing)}")
    if df.empty:
        raise JudgelabError(f"{path}: no rows (one row per system expected)")
    columns = [c for c in df.columns if c != "Model" and c != "" and not c.startswith("Unnamed")]
    data: dict[str, np.ndarray] = {}
    length = None
    for col in columns:
        human = col in CRITERIA or _HUMAN_COL.match(col) is not None
        rows = [_parse_cell(v, f"{path}: {records.where(i)} (system {df['Model'][i]!r}), column {col!r}", human)
                for i, v in enumerate(df[col])]
        sizes = {len(r) for r in rows}
        if len(sizes) != 1 or (length is not None and sizes != {length}):
            raise JudgelabError(f"{path}: column {col!r} has lists of different lengths {sorted(sizes)}")
        length = sizes.pop()
        data[col] = np.array(rows, dtype=float)
    return HannaScores(str(path), [str(m) for m in df["Model"]], columns, data)


def _corr(x: np.ndarray, y: np.ndarray, level: str, method: str, ties: str = "exact"):
    """The one level dispatch (:func:`judgelab.stats.level_correlation`) on systems × story-prompts
    (rows in file order: a system's stories in prompt order, the order its ``paper`` means sum)."""
    level = LEVEL_NAMES.get(level, level)
    if level not in {"overall", "system", "group"}:
        raise JudgelabError(f"unknown level {level!r}: system, story or overall")
    return level_correlation(matrix_frame(x, y), level, method, ties=ties)


def _check_method(method: str, ties: str = "exact") -> None:
    if method not in {"kendall", "pearson", "spearman"}:
        raise JudgelabError(f"unknown method {method!r}: kendall, pearson or spearman")
    if ties not in TIES:
        raise JudgelabError(f"unknown ties {ties!r}: exact (default: means equal on paper are ties) or paper "
                            "(the authors' float ordering: reproduces the published tables)")


def correlation_table(scores: HannaScores, level: str = "system", method: str = "kendall",
                      ties: str = "exact") -> pd.DataFrame:
    """One row per measure (file order), one column per human criterion: corr(measure, criterion).

    Args:
        scores: a loaded score file; ``level``: system, story or overall; ``method``: kendall,
            pearson or spearman.
        ties: ``exact`` (default): system means equal on paper are ties. ``paper``: the plain float
            means ranked as the authors' code ranked them (numpy's ``np.mean`` over each system's 96
            story values in file order, the order of both modes, then scipy without rounding): it
            reproduces the published tables bit for bit (Kendall, Spearman; Pearson, which ties do
            not change, within 6e-16). The two differ only in the system-level Kendall and Spearman
            cells of a column where two systems' means are equal on paper and a few bits apart in
            floating point: Complexity (GPT and TD-VAE, both 718/288: 239⅓ rating points over 96
            stories) and nine LLM columns (docs/hanna.md, "Ties").

    Returns:
        ``measure`` and the six criteria (signed r; the published tables print |r|).
    """
    _check_method(method, ties)
    rows = []
    for measure in scores.measures():
        row: dict[str, object] = {"measure": measure}
        x = scores.generated(measure)
        for crit in CRITERIA:
            row[crit] = _corr(x, scores.generated(crit), level, method, ties).r
        rows.append(row)
    return pd.DataFrame(rows, columns=["measure", *CRITERIA])


def _families(scores: HannaScores) -> list[str]:
    """Measures as compared per criterion: automatic measures and AVG columns as they are,
    LLM criterion columns collapsed to '<LLM> … <prompt>' (criterion-matched)."""
    out: list[str] = []
    for col in scores.measures():
        m = _LLM_COL.match(col)
        name = f"{m['llm']} … {m['prompt']}" if m and m["code"] != "AVG" else col
        if name not in out:
            out.append(name)
    return out


def column_for(scores: HannaScores, measure: str, criterion: str) -> str:
    """The column of ``measure`` that rates ``criterion`` ('Beluga-13B … 1' → 'Beluga-13B RE 1')."""
    m = _FAMILY.match(measure)
    if m:
        col = f"{m['llm']} {_CODE_OF[criterion]} {m['prompt']}"
        if col not in scores.data:
            raise JudgelabError(f"no column {col!r} for measure {measure!r}")
        return col
    if measure not in scores.data or measure in CRITERIA:
        raise JudgelabError(f"unknown measure {measure!r}; e.g. {', '.join(_families(scores)[:3])} …")
    return measure


def williams_table(scores: HannaScores, measure: str, level: str = "overall", method: str = "kendall",
                   versus: list[str] | None = None, family: str = "row", ties: str = "exact") -> pd.DataFrame:
    """BH-adjusted one-sided Williams p-values: does ``measure`` correlate better with each
    criterion than each other measure? One row per other measure (all of the file, or
    ``versus``), one column per criterion.

    ``family`` is the set of tests one BH adjustment covers: ``row`` (default) the six
    criteria of one comparison, ``column`` all measures for one criterion, ``table`` every
    test of the table. The paper does not say; ``row`` reproduces its reported range for
    Beluga-13B vs ChatGPT (0.01 to 0.14) and does not change when other measures are added.
    ``ties``: as :func:`correlation_table` (system level).
    """
    if family not in {"row", "column", "table"}:
        raise JudgelabError(f"unknown BH family {family!r}: row, column or table")
    _check_method(method, ties)
    level = LEVEL_NAMES.get(level, level)
    if level not in {"overall", "system"}:
        raise JudgelabError("Williams tests are defined for one correlation per measure: level overall or system")
    base_cols = {c: column_for(scores, measure, c) for c in CRITERIA}
    others = [f for f in (versus or _families(scores)) if f != measure]
    for other in others:
        column_for(scores, other, CRITERIA[0])  # unknown names fail here, with the list of known ones
    raw = np.full((len(others), len(CRITERIA)), np.nan)
    for i, other in enumerate(others):
        for j, crit in enumerate(CRITERIA):
            try:
                other_col = column_for(scores, other, crit)
            except JudgelabError:
                continue
            h = scores.generated(crit)
            a = scores.generated(base_cols[crit])
            b = scores.generated(other_col)
            if level == "system":
                h, a, b = h.mean(1), a.mean(1), b.mean(1)
            h, a, b = h.ravel(), a.ravel(), b.ravel()
            r12 = correlate(h, a, method, ties=ties).r
            r13 = correlate(h, b, method, ties=ties).r
            r23 = correlate(a, b, method, ties=ties).r
            raw[i, j] = williams_test(r12, r13, r23, h.size, alternative="greater").pvalue
    if family == "table":
        adjusted = bh_adjust(raw.ravel()).reshape(raw.shape)
    elif family == "row":
        adjusted = np.vstack([bh_adjust(row) for row in raw]) if len(raw) else raw
    else:
        adjusted = np.column_stack([bh_adjust(col) for col in raw.T]) if len(raw) else raw
    table = pd.DataFrame(adjusted, columns=CRITERIA)
    table.insert(0, "measure", others)
    return table


def _rater_columns(scores: HannaScores, code: str) -> list[str]:
    cols = [f"Human {k} {code}" for k in (1, 2, 3)]
    if not all(c in scores.data for c in cols):
        raise JudgelabError(f"{scores.path}: no per-rater columns Human 1..3 {code}; this needs the file with individual raters")
    return cols


def human_baseline(scores: HannaScores, level: str = "overall", method: str = "kendall", leave_one_out: bool = False,
                   ties: str = "exact") -> pd.DataFrame:
    """Per criterion: each human rater vs the mean of the human ratings, averaged over the 3 raters.

    HANNA's baseline compares rater k with the mean of all three (an upper bound: the rater is
    part of the mean). ``leave_one_out`` compares with the mean of the other two instead (the
    file's ``Human Avg k`` columns). ``ties``: as :func:`correlation_table`.
    """
    _check_method(method, ties)
    rows = []
    for crit in CRITERIA:
        code = _CODE_OF[crit]
        cols = _rater_columns(scores, code)
        values = []
        for k, col in enumerate(cols, start=1):
            ref = scores.generated(f"Human Avg {k} {code}") if leave_one_out else scores.generated(crit)
            values.append(_corr(scores.generated(col), ref, level, method, ties).r)
        rows.append({"criterion": crit, "baseline": float(np.mean(values)), **{f"rater_{k}": v for k, v in enumerate(values, 1)}})
    return pd.DataFrame(rows)


def human_icc(scores: HannaScores, include_human_stories: bool = True) -> pd.DataFrame:
    """ICC(2,1) and ICC(2,k) with 95% CI of the three human raters, per criterion."""
    rows = []
    for crit in CRITERIA:
        cols = _rater_columns(scores, _CODE_OF[crit])
        get = (lambda c: scores.data[c]) if include_human_stories else scores.generated
        matrix = np.column_stack([get(c).ravel() for c in cols])
        res = icc(matrix)
        rows.append({"criterion": crit, "stories": matrix.shape[0],
                     "icc21": res.single.estimate, "icc2k": res.average.estimate,
                     "icc2k_low": res.average.ci_low, "icc2k_high": res.average.ci_high})
    return pd.DataFrame(rows)


def to_ratings(scores: HannaScores) -> pd.DataFrame:
    """The HANNA file as a tidy ratings table: human raters ``human:1..3`` and each LLM ×
    Eval-Prompt as a rater ``<LLM>@eval-prompt-<p>`` (its score is the file's mean of 3 tries).
    Items are (system, story-prompt index); the story-prompt is the group."""
    rows = []
    n_prompts = next(iter(scores.data.values())).shape[1]
    for col in scores.columns:
        hm = re.match(r"^Human (\d+) (RE|CH|EM|SU|EG|CX)$", col)
        lm = _LLM_COL.match(col)
        if hm:
            rater, criterion = human_rater(hm[1]).label, CODES[hm[2]]
        elif lm and lm["code"] != "AVG":
            rater, criterion = judge_rater(lm["llm"], f"eval-prompt-{lm['prompt']}").label, CODES[lm["code"]]
        else:
            continue
        values = scores.data[col]
        for s, system in enumerate(scores.systems):
            for n in range(n_prompts):
                rows.append((str(n), system, str(n), criterion, rater, 0, values[s, n], Status.OK.value))
    return pd.DataFrame(rows, columns=["item_id", "system", "group", "criterion", "rater", "sample", "score", "status"])


def load_stories(path: str | Path) -> pd.DataFrame:
    """``hanna_llm_stories.csv``: story-prompt, human story, generated story and model (text as written)."""
    path = Path(path)
    records = read_csv(path)
    need = ("Prompt", "Human", "Story", "Model")
    missing = [c for c in need if c not in record_columns(records)]
    if missing:
        raise JudgelabError(f"{path}: missing column {', '.join(missing)}")
    if not records:
        raise JudgelabError(f"{path}: no stories")
    for i, row in enumerate(records):
        empty = [c for c in need if not (row[c] or "").strip()]
        if empty:
            raise JudgelabError(f"{path}: {records.where(i)}: empty {empty[0]!r}")
    return records_frame(records)
