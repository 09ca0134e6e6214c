"""The compare page: two runs item by item, as the ``compare`` step of a folder's record holds them.

:func:`compare_page_of` reads a folder written by ``judgelab compare`` (the step's results in ``results.json``
and its rows in ``compare.csv``, the file the step lists as table ``compare``); :func:`render_compare` turns a
record and its rows into one self-contained page (``judgelab view`` of a folder of runs renders the same page
from a comparison made in memory). It computes nothing: the summaries are the record's. The script is
:mod:`judgelab.report.compare_script`.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from judgelab.compare_results import ROW_COLUMNS, WHERE, CompareResult
from judgelab.errors import JudgelabError
from judgelab.report.compare_script import COMPARE_SCRIPT
from judgelab.report.html_assets import CSS
from judgelab.report.html_render import json_for_script
from judgelab.report.svg import esc

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from judgelab.report.folder import RunFolder

__all__ = ["render_compare", "compare_page_of", "is_compare_folder"]

_CSS = """
.cmp-controls { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; margin: 0.5rem 0; }
.cmp-controls label { display: flex; flex-direction: column; font-size: 0.9rem; }
#c-search { min-width: 22rem; padding: 0.3rem; }
ol#c-items { list-style: none; padding: 0; margin: 0; }
article.cmp-item { border: 1px solid var(--line); border-left: 5px solid var(--line); padding: 0.3rem 0.8rem;
  margin: 0.5rem 0; }
article.cmp-item.where-differ { border-left-color: #c2410c; }
article.cmp-item.where-failed { border-left-color: var(--bad); }
article.cmp-item.target { outline: 3px solid #f5a623; }
article.cmp-item h3 { margin: 0.3rem 0; font-size: 1rem; }
.cmp-side { flex: 1; min-width: 0; }
.unit-side { display: flex; gap: 1rem; }
pre.item-text, pre.side-raw { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); padding: 0.4rem;
  margin: 0.2rem 0; }
.side-label { font-weight: 600; font-size: 0.9rem; }
"""

_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<header class="top">
<h1>{{ title }}</h1>
<p>A: {{ doc.run_a }}{% if doc.rater_a %} (rater {{ doc.rater_a }}){% endif %}</p>
<p>B: {{ doc.run_b }}{% if doc.rater_b %} (rater {{ doc.rater_b }}){% endif %}</p>
<p>Rows matched by label (item, system, criterion, sample), never by position; B − A is run B's score minus run
A's. {{ generated }}</p>
</header>
<main>
<section id="summary" aria-labelledby="summary-h">
<h2 id="summary-h">Per criterion</h2>
<p id="counts">{{ total }} labels: {% for key, what in where.items() %}{{ counts.get(key, 0) }} {{ what }}{% if not loop.last %} · {% endif %}{% endfor %}</p>
<ul class="cmp-lines">
{%- for s in summaries %}
<li data-criterion="{{ s.criterion }}">{{ s.line() }}</li>
{%- endfor %}
</ul>
</section>
<section id="items" aria-labelledby="items-h">
<h2 id="items-h">Item by item, differences first</h2>
<div class="cmp-controls">
<label for="c-search">Search the item id, text and answers
<input id="c-search" type="search" placeholder="a word of the text or an answer" autocomplete="off"></label>
<label for="c-criterion">Criterion
<select id="c-criterion"><option value="">all criteria</option>{% for c in criteria %}<option value="{{ c }}">{{ c }}</option>{% endfor %}</select></label>
<label for="c-where">Rows
<select id="c-where"><option value="">all rows</option>{% for key, what in where.items() %}<option value="{{ key }}">{{ what }}</option>{% endfor %}</select></label>
<button type="button" id="c-download">Download the rows shown (CSV)</button>
</div>
<p id="c-count" role="status" aria-live="polite"></p>
<div id="c-list" data-ready="0"><ol id="c-items"></ol>
<button type="button" id="c-more" hidden>show all</button></div>
</section>
</main>
<script type="application/json" id="cmp-rows">{{ rows_json }}</script>
<script>{{ script }}</script>
</body>
</html>
"""


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    return Markup(esc(value)) if isinstance(value, str) else value


_env = SandboxedEnvironment(autoescape=True, finalize=_finalize)
_template = _env.from_string(_TEMPLATE)


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: The columns whose cells the page's data holds as an index into one list of strings.
_SHARED = ("text", "answer_a", "answer_b")


def render_compare(doc: dict[str, Any], rows: pd.DataFrame, title: str | None = None) -> str:
    """The page of a comparison: ``doc`` is the record's ``compare`` entry (:meth:`CompareResult.to_record`),
    ``rows`` its :data:`~judgelab.compare_results.ROW_COLUMNS` table in the recorded order."""
    missing = [c for c in ROW_COLUMNS if c not in rows.columns]
    if missing:
        raise JudgelabError(f"the comparison's rows lack the column {', '.join(missing)}")
    table = rows[ROW_COLUMNS].astype(object).where(rows[ROW_COLUMNS].notna(), None)
    for col in ("item_id", "system", "criterion", "sample", "where", "status_a", "status_b", "text", "answer_a",
                "answer_b"):
        table[col] = ["" if v is None else str(v) for v in table[col]]
    strings: dict[str, int] = {}  # each text once (a text is rated under every criterion and sample)
    for col in _SHARED:
        table[col] = [strings.setdefault(v, len(strings)) for v in table[col]]
    payload = {"columns": ROW_COLUMNS, "where": WHERE, "strings": list(strings), "shared": list(_SHARED),
               "rows": [[_cell(v) for v in r] for r in table.itertuples(index=False, name=None)]}
    summaries = CompareResult.summaries_from_record(doc)
    counts = doc.get("counts") or {}
    return _template.render(
        title=title or f"judgelab compare: {doc.get('run_a')} vs {doc.get('run_b')}", doc=doc, css=Markup(CSS + _CSS),
        script=Markup(COMPARE_SCRIPT), rows_json=json_for_script(payload), summaries=summaries, counts=counts,
        total=sum(int(v) for v in counts.values()), where=WHERE, criteria=[s.criterion for s in summaries],
        generated="Written " + time.strftime("%Y-%m-%d %H:%M:%S %Z") + ".")


def is_compare_folder(rf: RunFolder) -> bool:
    """Whether the folder's record holds a ``compare`` step (its page is the compare page)."""
    return rf.record.step("compare") is not None


def compare_page_of(folder: str | Path) -> str:
    """The compare page of a folder ``judgelab compare --out`` wrote (one line when it is not one)."""
    import pandas as pd

    from judgelab.report.folder import open_folder

    rf = open_folder(folder)
    step = rf.record.step("compare")
    name = step.file("compare") if step is not None else None
    if step is None or name is None or not rf.has(name):
        raise JudgelabError(f"{rf.path} holds no comparison (write one with judgelab compare RUN_A RUN_B --out DIR)")
    doc = step.results.get("compare") or {}
    rows = pd.read_csv(rf.file(name), dtype=str, keep_default_na=False)  # texts stay texts ("4" is an answer)
    for col in ("score_a", "score_b", "diff"):
        if col in rows.columns:
            rows[col] = pd.to_numeric(rows[col].replace("", None), errors="coerce")
    return render_compare(doc, rows, f"judgelab compare: {rf.path.resolve().name}")
