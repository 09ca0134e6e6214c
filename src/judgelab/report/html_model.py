"""The typed content of an HTML report (:class:`ReportData`): what :func:`build_report` reads
from a folder and :func:`render_report` turns into one HTML page.

Every section is optional (``None`` when the folder has no data for it). Tables hold raw
values (text, numbers, ``None``); formatting and escaping happen when rendering.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from judgelab.table import natural_key  # one definition; the report's modules import it from here

__all__ = ["Table", "Figure", "RunInfo", "PromptExample", "WhatRan", "Results", "Agreement", "Discernment",
           "FailureExample", "Failures", "CostTime", "ItemBrowser", "FolderFigure", "ReportData", "ColumnKind",
           "natural_key"]


#: How a column is shown and sorted: text; a number (3 decimals); an integer; a p-value.
ColumnKind = Literal["text", "num", "int", "p"]


@dataclass
class Table:
    """A table: ``columns`` with their ``kinds``; ``rows`` of raw values (None = empty)."""

    id: str
    caption: str
    columns: list[str]
    kinds: list[ColumnKind]
    rows: list[list[Any]]
    note: str = ""
    #: The first column names the row (rendered as ``<th scope="row">``).
    row_header: bool = True


@dataclass
class Figure:
    """An inline SVG chart drawn by :mod:`judgelab.report.svg` (its text already escaped)."""

    id: str
    title: str
    description: str
    svg: str


@dataclass
class FolderFigure:
    """A PNG figure found in the folder, embedded as a data URI."""

    name: str
    alt: str
    mime: str
    data_base64: str


@dataclass
class RunInfo:
    """One judge run: its settings (the run identity) and, where recorded, what it did and cost."""

    rater: str
    judge: str
    settings: dict[str, Any]
    judgments: int | None = None
    calls_made: int | None = None
    already_in_store: int | None = None
    statuses: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    wall_s: float | None = None
    cost_usd: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class PromptExample:
    """The exact messages of the first request stored for one rater and criterion."""

    rater: str
    criterion: str
    item_id: str
    system: str
    messages: list[tuple[str, str]]
    score_cue: str | None = None


@dataclass
class WhatRan:
    """The command, environment and runs of a folder (``run.json`` and the store's runs)."""

    command: str | None
    argv: str | None
    started: str | None
    finished: str | None
    wall_s: float | None
    python: str | None
    platform: str | None
    versions: dict[str, str | None]
    runs: list[RunInfo]
    settings_table: Table | None
    prompts: list[PromptExample]
    sources: list[str]


@dataclass
class Results:
    """Per rater, system and criterion: mean with 95% CI (numbers and error bars); Welch's tests."""

    summary: Table
    figures: list[Figure]
    welch: Table | None
    note: str


@dataclass
class Agreement:
    """Judge vs human correlations with CIs, the Williams tests and the human baseline."""

    correlations: Table | None
    figures: list[Figure]
    williams: Table | None
    williams_matrices: list[Table]
    human_baseline: Table | None
    self_consistency: Table | None
    source: str
    notes: list[str]


@dataclass
class Discernment:
    """DHP: discernment scores per judge, p and D per perturbation, left-out copies."""

    summary: Table | None
    perturbations: Table | None
    figure: Figure | None
    left_out: Table | None


@dataclass
class FailureExample:
    """One failed judgment with its raw answer (and every attempt)."""

    rater: str
    criterion: str
    system: str
    item_id: str
    sample: int
    status: str
    raw: str
    attempts: list[tuple[str, str]]


@dataclass
class Failures:
    """Counts by status and example raw answers of the failures."""

    total: int
    failed: int
    by_status: Table
    by_criterion: Table | None
    examples: list[FailureExample]


@dataclass
class CostTime:
    """Tokens, calls, time and (with prices) money per run."""

    table: Table
    cost_table: Table | None
    notes: list[str]


@dataclass
class ItemBrowser:
    """The item browser's data: a compact columnar index (JSON) and the details (prompts, samples, human
    ratings) as gzip-compressed, base64-encoded JSON of the first ``embedded`` of the ``units``; the others
    in ``parts`` (scripts written beside the page into ``sidecar``, :mod:`judgelab.report.html_parts`)."""

    units: int
    has_human: bool
    human_sources: list[str]
    prompts_available: bool
    index: dict[str, Any]
    details_gzip_base64: str
    page_size: int
    default_sort: str
    notes: list[str]
    embedded: int = 0
    part_units: int = 0
    parts: list[str] = field(default_factory=list)
    #: changes with the parts' contents (the live view asks for them again when it changes)
    version: str = ""
    #: the parts' folder, relative to the page (set when the page is written or served)
    sidecar: str = ""


@dataclass
class ReportData:
    """Everything one report shows; sections are ``None`` where the folder has no data for them."""

    folder: str
    title: str
    generated: str
    judgelab_version: str
    files: list[str]
    what_ran: WhatRan | None = None
    headline: Any = None  # judgelab.report.headline.Headline: the first screen
    preference: Any = None  # judgelab.report.html_preference.PreferenceSection: the pairwise steps' records
    results: Results | None = None
    agreement: Agreement | None = None
    audit: Any = None  # judgelab.report.html_audit.AuditSection: `judgelab audit --out`'s results
    discernment: Discernment | None = None
    failures: Failures | None = None
    items: ItemBrowser | None = None
    cost: CostTime | None = None
    #: The folder's README.md (a recipe's index and notes) read into blocks (report.readme), rendered escaped.
    readme: list[Any] | None = None
    other_tables: list[Table] = field(default_factory=list)
    folder_figures: list[FolderFigure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def sections(self) -> list[tuple[str, str]]:
        """(anchor, heading) of the sections present, in page order."""
        out = []
        for anchor, heading, present in (
            ("headline", "Judge vs humans", self.headline is not None),
            ("preference", "Preference judging", self.preference is not None),
            ("results", "Results", self.results is not None),
            ("agreement", "Agreement with humans", self.agreement is not None),
            ("audit", "Audit", self.audit is not None),
            ("discernment", "Discernment", self.discernment is not None),
            ("failures", "Failures", self.failures is not None),
            ("items", "Disagreements" if self.items is not None and self.items.has_human else "Items",
             self.items is not None),
            ("cost", "Cost and time", self.cost is not None),
            ("readme", "The folder's README", self.readme is not None),
            ("tables", "Other tables", bool(self.other_tables)),
            ("figures", "Figures", bool(self.folder_figures)),
            ("what-ran", "What ran", self.what_ran is not None),
        ):
            if present:
                out.append((anchor, heading))
        return out
