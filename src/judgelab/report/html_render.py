"""Rendering :class:`~judgelab.report.html_model.ReportData` into one self-contained HTML page.

Jinja2 in a sandboxed environment with autoescaping: every value from the data is
escaped, and ``://`` is written as ``:&#47;&#47;`` so that no URL appears literally in a
report (the page references nothing outside itself). Data for the script is embedded as
JSON in ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c``, ``\\u003e``, ``\\u0026`` and ``/`` as ``\\/`` (valid JSON, identical once parsed).
"""
from __future__ import annotations

import json
import math
from typing import Any

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from judgelab.report.html_assets import CSS
from judgelab.report.headline import METHOD_SYMBOL
from judgelab.report.html_audit import AUDIT_TEMPLATE
from judgelab.report.html_preference import PREFERENCE_TEMPLATE
from judgelab.report.html_script import SCRIPT
from judgelab.report.html_model import ReportData
from judgelab.report.svg import esc

__all__ = ["render", "json_for_script", "format_cell", "column_style", "table_styles"]


def json_for_script(value: Any) -> Markup:
    """JSON safe inside ``<script type="application/json">`` (no ``<``, ``>``, ``&`` or ``/`` as such)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e").replace("/", "\\/")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return Markup(text)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def column_style(values: list[Any], kind: str) -> str:
    """One rounding rule for a whole column: ``int`` (thousands separators); for ``num``, ``sci`` when
    every non-zero value is below 0.001 in size, ``thousands`` (one decimal) when one reaches 1,000,
    else ``fixed`` (three decimals); ``p`` columns write values below 0.001 as ``< 0.001``."""
    if kind != "num":
        return kind
    sizes = [abs(f) for f in (_number(v) for v in values) if f is not None and f != 0]
    if sizes and max(sizes) < 0.001:
        return "sci"
    if sizes and max(sizes) >= 1000:
        return "thousands"
    return "fixed"


def format_cell(value: Any, kind: str, style: str | None = None) -> tuple[str, str | None, str]:
    """(text, sort value or None for text sorting, CSS class) of one table cell; ``style`` is its
    column's rule (:func:`column_style`; by default the rule of this value alone)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2014", "", kind
    if kind in {"num", "int", "p"}:
        f = _number(value)
        if f is None:
            return str(value), "", kind
        f = f + 0.0 if f != 0 else 0.0  # no "-0.000"
        style = style or column_style([f], kind)
        if kind == "int" and f.is_integer():
            text = f"{int(f):,}"
        elif kind == "p":
            text = "< 0.001" if 0 <= f < 0.001 and f != 0 else f"{f:.3f}"
        elif style == "sci":
            text = f"{f:.2e}"
        elif style == "thousands":
            text = f"{f:,.1f}"
        else:
            text = f"{f:,.3f}"
        css = kind + (" sig" if kind == "p" and f < 0.05 else "")
        return text, repr(f), css
    return str(value), None, kind


def table_styles(table: Any) -> list[str]:
    """The rounding rule of each column of a report table."""
    return [column_style([row[k] for row in table.rows if k < len(row)], kind) for k, kind in enumerate(table.kinds)]


def _fixed(value: Any, digits: int = 2) -> str:
    f = _number(value)
    return "\u2014" if f is None else f"{f + 0.0:,.{digits}f}"


def _count(value: Any) -> str:
    f = _number(value)
    return "\u2014" if f is None else f"{int(f):,}"


def _symbol(method: str) -> str:
    return METHOD_SYMBOL.get(method, method)


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    if isinstance(value, str):
        return Markup(esc(value))
    return value


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="judgelab {{ d.judgelab_version }}">
<link rel="icon" href="data:,">
<title>{{ d.title }}</title>
<style>{{ css }}</style>
</head>
<body>
{%- macro table(t, sortable=True) %}
<div class="tablewrap" role="region" aria-label="{{ t.caption }}" tabindex="0">
<table id="t-{{ t.id }}"{% if sortable %} class="sortable"{% endif %}>
<caption>{{ t.caption }}</caption>
<thead><tr>{% for c in t.columns %}<th scope="col" class="{{ t.kinds[loop.index0] }}" aria-sort="none">{% if sortable %}<button type="button">{{ c }}</button>{% else %}{{ c }}{% endif %}</th>{% endfor %}</tr></thead>
<tbody>
{%- set styles = styles_of(t) %}
{%- for row in t.rows %}
<tr>{% for v in row %}{% set c = cell(v, t.kinds[loop.index0], styles[loop.index0]) %}{% if loop.first and t.row_header %}<th scope="row"{% if c[1] is not none %} data-v="{{ c[1] }}"{% endif %}>{{ c[0] }}</th>{% else %}<td class="{{ c[2] }}"{% if c[1] is not none %} data-v="{{ c[1] }}"{% endif %}>{{ c[0] }}</td>{% endif %}{% endfor %}</tr>
{%- endfor %}
</tbody>
</table>
</div>
{%- if t.note %}<p class="note">{{ t.note }}</p>{% endif %}
{%- endmacro %}
{%- macro runs(parts) %}{% for kind, text in parts %}{% if kind == "code" %}<code>{{ text }}</code>{% elif kind == "strong" %}<strong>{{ text }}</strong>{% else %}{{ text }}{% endif %}{% endfor %}{% endmacro %}
{%- macro figure(f) %}
<figure id="{{ f.id }}">
{{ f.svg | safe }}
<figcaption>{{ f.description }}</figcaption>
</figure>
{%- endmacro %}
<header class="top">
<h1>{{ d.title }}</h1>
<p>Folder: <code>{{ d.folder }}</code></p>
<p>Report written {{ d.generated }} by judgelab {{ d.judgelab_version }}.</p>
<details class="files"><summary>Files in the folder ({{ d.files | length }})</summary><p>{{ d.files | join(", ") }}</p></details>
<nav class="toc" aria-label="Sections"><ul>
{%- for anchor, heading in d.sections() %}<li><a href="#{{ anchor }}">{{ heading }}</a></li>{% endfor %}
</ul></nav>
</header>
<main>
{%- if d.problems %}
<section id="problems" aria-labelledby="h-problems"><h2 id="h-problems">Problems reading the folder</h2>
<ul>{% for p in d.problems %}<li class="problem">{{ p }}</li>{% endfor %}</ul></section>
{%- endif %}
{%- for note in d.notes %}<p class="note">{{ note }}</p>{% endfor %}

{%- if d.headline %}{% set h = d.headline %}
<section id="headline" aria-labelledby="h-headline">
<h2 id="h-headline">Judge vs humans</h2>
<div class="hl-words" role="note" aria-label="The verdict in words">
<p><strong>Can the judge be trusted yet?</strong></p>
<ul>{% for r in h.rows %}<li><strong>{{ r.criterion }}</strong>{% if h.rows | map(attribute="judge") | unique | list | length > 1 %} ({{ r.judge }}){% endif %}: {{ r.verdict }}</li>{% endfor %}</ul>
</div>
{%- for note in h.notes %}<p class="note">{{ note }}</p>{% endfor %}
<div class="hl-grid">
{%- for r in h.rows %}
<article class="hl-card" data-criterion="{{ r.criterion }}" data-judge="{{ r.judge }}">
<h3>{{ r.criterion }} <span class="hl-judge">{{ r.judge }}</span></h3>
<p class="hl-verdict"><strong>{{ r.verdict }}</strong></p>
<p class="hl-r">{% if r.r is not none %}<strong>{{ sym(r.method) }} = {{ num(r.r, 2) }}</strong> {% endif %}<span class="hl-ci{% if not r.interval.startswith('95% CI') %} hl-none{% endif %}">{{ r.interval }}</span>{% if r.n is not none %} · n = {{ r.counted or count(r.n) }}{% endif %}{% if r.resampled %} ({{ r.resampled }}){% endif %}</p>
{%- if r.caveat %}<p class="note hl-caveat">Caution: {{ r.caveat }}</p>{% endif %}
{%- if r.published %}<p class="hl-published">{{ sym(r.method) }}: {{ r.published }}</p>{% endif %}
{%- for line in r.also %}<p class="hl-also">{{ line }}</p>{% endfor %}
<p class="hl-base">Humans: {{ r.baseline }}</p>
{%- if r.scales %}<p class="hl-means hl-scales">{{ r.scales }}</p>
{%- elif r.judge_mean is not none %}<p class="hl-means">Mean score on the {{ r.items_named or count(r.items) ~ " items" }} both rated: judge <strong>{{ num(r.judge_mean, 2) }}</strong> · humans <strong>{{ num(r.human_mean, 2) }}</strong></p>{% endif %}
{%- if r.figure %}{{ figure(r.figure) }}{% endif %}
{%- if r.confusion %}{{ table(r.confusion, sortable=False) }}{% endif %}
</article>
{%- endfor %}
</div>
</section>
{%- endif %}
""" + PREFERENCE_TEMPLATE + r"""
{%- if d.results %}
<section id="results" aria-labelledby="h-results">
<h2 id="h-results">Results</h2>
{%- if d.results.note %}<p class="note">{{ d.results.note }}</p>{% endif %}
{{ table(d.results.summary) }}
{%- for f in d.results.figures %}{{ figure(f) }}{% endfor %}
{%- if d.results.welch %}{{ table(d.results.welch) }}{% endif %}
</section>
{%- endif %}

{%- if d.agreement %}{% set a = d.agreement %}
<section id="agreement" aria-labelledby="h-agreement">
<h2 id="h-agreement">Agreement with humans</h2>
<p class="note">Source: {{ a.source }}.</p>
{%- for note in a.notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- if a.correlations %}{{ table(a.correlations) }}{% endif %}
{%- for f in a.figures %}{{ figure(f) }}{% endfor %}
{%- if a.williams_matrices %}<h3>Williams tests</h3>{% for m in a.williams_matrices %}{{ table(m, sortable=False) }}{% endfor %}{% endif %}
{%- if a.williams %}{{ table(a.williams) }}{% endif %}
{%- if a.human_baseline %}<h3>Human baseline</h3>{{ table(a.human_baseline) }}{% endif %}
{%- if a.self_consistency %}<h3>Self-consistency</h3>{{ table(a.self_consistency) }}{% endif %}
</section>
{%- endif %}
""" + AUDIT_TEMPLATE + r"""
{%- if d.discernment %}{% set x = d.discernment %}
<section id="discernment" aria-labelledby="h-discernment">
<h2 id="h-discernment">Discernment</h2>
<p class="note">DHP (Wang et al.): each judge rated reference texts and perturbed copies separately; D = log₀.₀₅ p of the one-sided test that originals score higher, combined over metrics. D &gt; 1 means p &lt; 0.05.</p>
{%- if x.summary %}{{ table(x.summary) }}{% endif %}
{%- if x.figure %}{{ figure(x.figure) }}{% endif %}
{%- if x.perturbations %}{{ table(x.perturbations) }}{% endif %}
{%- if x.left_out %}{{ table(x.left_out) }}{% endif %}
</section>
{%- endif %}

{%- if d.failures %}{% set fl = d.failures %}
<section id="failures" aria-labelledby="h-failures">
<h2 id="h-failures">Failures</h2>
<p>{{ count(fl.failed) }} of {{ count(fl.total) }} judgments failed (no rating could be read).</p>
{{ table(fl.by_status) }}
{%- if fl.by_criterion %}{{ table(fl.by_criterion) }}{% endif %}
{%- if fl.examples %}
<h3>Example raw answers</h3>
{%- for e in fl.examples %}
<div class="failure-example">
<p><strong>{{ e.status }}</strong> — {{ e.rater }}, criterion {{ e.criterion }}, item {{ e.item_id }} ({{ e.system }}), sample {{ e.sample }}</p>
<pre>{{ e.raw }}</pre>
{%- if e.attempts %}<ol class="attempts">{% for st, text in e.attempts %}<li>attempt {{ loop.index }} — {{ st }}: {{ text }}</li>{% endfor %}</ol>{% endif %}
</div>
{%- endfor %}
{%- endif %}
</section>
{%- endif %}

{%- if d.items %}{% set it = d.items %}
<section id="items" aria-labelledby="h-items">
<h2 id="h-items">{{ "Disagreements" if it.has_human else "Items" }}</h2>
<p class="note">{% if it.has_human %}Each item and criterion judged, ranked by |judge − human|: judge = the mean of the judge's successful samples, human = the mean over human raters (each rater's ratings averaged first). Human ratings from: {{ it.human_sources | join("; ") }}.{% else %}Each item and criterion judged, with its prompt and every sample's answer.{% endif %} {{ count(it.units) }} items in all, {{ it.page_size }} per page.</p>
{%- if it.parts %}<p class="note" id="items-parts">This page holds the first {{ count(it.embedded) }} items in the order above; the other {{ count(it.units - it.embedded) }} are in {{ count(it.parts | length) }} files in the folder {{ it.sidecar }}/ beside the page (keep it with the page) and load on demand: a later page, a filter, another order, a search, a link to an item and the download load them first.</p>{% endif %}
{%- for note in it.notes %}<p class="note">{{ note }}</p>{% endfor %}
<div id="browser" data-page-size="{{ it.page_size }}" data-sort="{{ it.default_sort }}" data-ready="0"
{%- if it.parts %} data-units="{{ it.units }}" data-embedded="{{ it.embedded }}" data-part-units="{{ it.part_units }}" data-parts="{{ it.parts | length }}" data-part-dir="{{ it.sidecar }}" data-part-version="{{ it.version }}"{% endif %}>
<div class="controls" role="group" aria-label="Filter and sort the items">
<label for="f-criterion">criterion<select id="f-criterion" aria-controls="units"><option value="">all criteria</option></select></label>
<label for="f-system">system<select id="f-system" aria-controls="units"><option value="">all systems</option></select></label>
<label for="f-rater">judge<select id="f-rater" aria-controls="units"><option value="">all judges</option></select></label>
<label for="f-sort">order<select id="f-sort" aria-controls="units">
{%- if it.has_human %}<option value="absdiff">|judge − human|, largest first</option><option value="above">judge above human first</option><option value="below">judge below human first</option>{% endif %}
<option value="spread">sample spread, largest first</option><option value="high">judge mean, highest first</option><option value="low">judge mean, lowest first</option><option value="item">item id</option></select></label>
<label for="f-search">search<input type="search" id="f-search" aria-controls="units" placeholder="a word of the item id, text or answers" autocomplete="off"></label>
<button type="button" id="f-download">Download the items shown (CSV)</button>
<label for="f-compact" class="check"><input type="checkbox" id="f-compact" aria-controls="units"> compact list (answers and humans only)</label>
</div>
<p id="browser-status" role="status" aria-live="polite"></p>
<p id="browser-message" class="problem"></p>
<ol id="units" class="units"></ol>
<div class="pager" role="group" aria-label="Pages">
<button type="button" id="p-first">First</button><button type="button" id="p-prev">Previous</button>
<span id="page-label"></span>
<button type="button" id="p-next">Next</button><button type="button" id="p-last">Last</button>
</div>
<noscript><p class="problem">The item browser needs JavaScript.</p></noscript>
</div>
<script type="application/json" id="jl-index">{{ index_json }}</script>
<script type="application/json" id="jl-details">{{ details_json }}</script>
</section>
{%- endif %}

{%- if d.cost %}
<section id="cost" aria-labelledby="h-cost">
<h2 id="h-cost">Cost and time</h2>
{{ table(d.cost.table) }}
{%- for note in d.cost.notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- if d.cost.cost_table %}{{ table(d.cost.cost_table) }}{% endif %}
</section>
{%- endif %}

{%- if d.readme is not none %}
<section id="readme" aria-labelledby="h-readme">
<h2 id="h-readme">The folder's README</h2>
<div class="readme">
{%- for b in d.readme %}
{%- if b.kind == "heading" %}{% set h = [b.level + 2, 6] | min %}<h{{ h }}>{{ runs(b.text) }}</h{{ h }}>
{%- elif b.kind == "table" %}<table class="readme-table"><thead><tr>{% for c in b.header %}<th scope="col">{{ runs(c) }}</th>{% endfor %}</tr></thead><tbody>
{%- for r in b.rows %}<tr>{% for c in r %}<td>{{ runs(c) }}</td>{% endfor %}</tr>{% endfor %}</tbody></table>
{%- elif b.kind == "list" %}<ul>{% for i in b.items %}<li>{{ runs(i) }}</li>{% endfor %}</ul>
{%- else %}<p>{{ runs(b.text) }}</p>{% endif %}
{%- endfor %}
</div>
</section>
{%- endif %}

{%- if d.other_tables %}
<section id="tables" aria-labelledby="h-tables">
<h2 id="h-tables">Other tables</h2>
{%- for t in d.other_tables %}{{ table(t) }}{% endfor %}
</section>
{%- endif %}

{%- if d.folder_figures %}
<section id="figures" aria-labelledby="h-figures">
<h2 id="h-figures">Figures</h2>
{%- for f in d.folder_figures %}
<figure><img class="folder-figure" src="data:{{ f.mime }};base64,{{ f.data_base64 }}" alt="{{ f.alt }}"><figcaption>{{ f.name }}</figcaption></figure>
{%- endfor %}
</section>
{%- endif %}
{%- if d.what_ran %}{% set w = d.what_ran %}
<section id="what-ran" aria-labelledby="h-what-ran">
<h2 id="h-what-ran">What ran</h2>
<dl class="kv">
{%- if w.command %}<dt>command</dt><dd>judgelab {{ w.command }}</dd>{% endif %}
{%- if w.argv %}<dt>command line</dt><dd><code>{{ w.argv }}</code></dd>{% endif %}
{%- if w.started %}<dt>started</dt><dd>{{ w.started }}</dd>{% endif %}
{%- if w.finished %}<dt>finished</dt><dd>{{ w.finished }}</dd>{% endif %}
{%- if w.wall_s is not none %}<dt>wall time</dt><dd>{{ w.wall_s }} s</dd>{% endif %}
{%- if w.python %}<dt>Python</dt><dd>{{ w.python }}</dd>{% endif %}
{%- if w.platform %}<dt>platform</dt><dd>{{ w.platform }}</dd>{% endif %}
<dt>read from</dt><dd>{{ w.sources | join("; ") }}</dd>
</dl>
{%- for r in w.runs %}
<h3>Run {{ r.rater }}</h3>
<dl class="kv"><dt>judge</dt><dd>{{ r.judge or "unknown" }}</dd>
{%- if r.settings.template %}<dt>template</dt><dd>{{ r.settings.template }}</dd>{% endif %}
{%- if r.settings.template_sha256 %}<dt>template SHA-256</dt><dd><code>{{ r.settings.template_sha256 }}</code></dd>{% endif %}
{%- if r.settings.sampling %}<dt>sampling</dt><dd>{% for k, v in r.settings.sampling.items() %}{{ k }} {{ "none" if v is none else v }}{% if not loop.last %}, {% endif %}{% endfor %}</dd>{% endif %}
{%- if r.prompt_tokens is not none %}<dt>tokens</dt><dd>{{ count(r.prompt_tokens) }} prompt, {{ count(r.completion_tokens) }} completion</dd>{% endif %}
{%- if r.cost_usd is not none %}<dt>cost</dt><dd>{{ "%.4f" | format(r.cost_usd) }} USD</dd>{% endif %}
</dl>
{%- endfor %}
{%- if w.settings_table %}{{ table(w.settings_table, sortable=False) }}{% endif %}
{%- if w.versions %}
<details><summary>Versions of judgelab and its dependencies</summary>
<dl class="kv">{% for k, v in w.versions.items() %}<dt>{{ k }}</dt><dd>{{ v or "not installed" }}</dd>{% endfor %}</dl>
</details>
{%- endif %}
{%- if w.prompts %}
<h3>The exact prompts</h3>
<p class="note">The messages of the first request stored for each rater and criterion, exactly as sent (rendered for the item named).</p>
{%- for p in w.prompts %}
<details class="prompt-example"{% if loop.first %} open{% endif %}>
<summary>{{ p.criterion }} — {{ p.rater }} (item {{ p.item_id }}, system {{ p.system }})</summary>
{%- for role, content in p.messages %}<div class="msg"><span class="role">{{ role }}</span><pre>{{ content }}</pre></div>{% endfor %}
{%- if p.score_cue is not none %}<p class="note">followed by the score cue <code>{{ p.score_cue }}</code></p>{% endif %}
</details>
{%- endfor %}
{%- endif %}
</section>
{%- endif %}
</main>
<script>{{ script }}</script>
</body>
</html>
"""

_env = SandboxedEnvironment(autoescape=True, finalize=_finalize, trim_blocks=False, lstrip_blocks=False)
_template = _env.from_string(_TEMPLATE)


def render(data: ReportData) -> str:
    """The report page."""
    index_json = details_json = Markup("")
    if data.items is not None:
        index_json = json_for_script(data.items.index)
        details_json = json_for_script({"encoding": "gzip+base64", "data": data.items.details_gzip_base64})
    return _template.render(d=data, css=Markup(CSS), script=Markup(SCRIPT), cell=format_cell, styles_of=table_styles, num=_fixed, count=_count,
                            sym=_symbol,
                            index_json=index_json, details_json=details_json)
