"""The annotation app's HTML pages: a sandboxed Jinja2 environment with autoescaping, inline CSS and JS.

Every value from data (item text, instructions, questions, names, comments) goes through
Jinja2's autoescape, so ``<script>`` in an item is shown as those characters; the page's own
script never writes data into the page as HTML (it sets ``textContent`` only). No external
URL, font or CDN is referenced: the pages work offline, and the Content-Security-Policy the
app sends allows nothing but this inline CSS and JS (by nonce) and posting forms to itself.
"""
from __future__ import annotations

from functools import lru_cache

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

__all__ = ["render_page"]

_CSS = """
:root { color-scheme: light; --ink: #1d2433; --muted: #5b6475; --line: #d7dbe3; --accent: #2f5bd3; --soft: #eef2fc; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f7f8fa; }
header { background: #fff; border-bottom: 1px solid var(--line); padding: .6rem 1.2rem; display: flex; gap: 1rem; align-items: center; position: sticky; top: 0; }
header .title { font-weight: 600; }
header .progress-text { margin-left: auto; color: var(--muted); }
progress { width: 10rem; height: .7rem; }
main { max-width: 52rem; margin: 1.2rem auto; padding: 0 1.2rem 4rem; }
.help { color: var(--muted); font-size: .9rem; }
.prompt { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .9rem 1rem; margin: .8rem 0; font: inherit; }
.criterion { border: 2px solid var(--line); border-radius: 6px; background: #fff; padding: .7rem 1rem; margin: .8rem 0; }
.question { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 .4rem; font-weight: 600; }
.rating-row { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; padding: .3rem .4rem; border-radius: 5px; border: 2px solid transparent; }
.rating-row.focused { border-color: var(--accent); background: var(--soft); }
.rating-row .metric { min-width: 8rem; color: var(--muted); }
main.wide { max-width: 68rem; }
.prompt.long { column-width: 28rem; column-gap: 2.4rem; column-rule: 1px solid var(--line); }
.own { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 .5rem; color: var(--muted); font-size: .95rem; }
.points { display: flex; flex-wrap: wrap; gap: .4rem; }
.anchored { flex-wrap: nowrap; align-items: stretch; }
.anchored .points { flex: 1; display: grid; grid-auto-flow: column; grid-auto-columns: minmax(0, 1fr); }
.rating-row.anchored label { display: block; font-size: .85rem; line-height: 1.3; }
.anchored .point { font-size: 1rem; font-weight: 600; }
.anchor { display: block; overflow-wrap: anywhere; margin-top: .15rem; }
.rating-row label { display: inline-flex; align-items: center; justify-content: center; min-width: 2.4rem; padding: .25rem .5rem; border: 1px solid var(--line); border-radius: 5px; background: #fff; cursor: pointer; }
.rating-row input { margin: 0 .25rem 0 0; }
.rating-row label:has(input:checked) { background: var(--accent); color: #fff; border-color: var(--accent); }
.comment { display: block; margin: 1rem 0 .4rem; }
.comment input { width: 100%; padding: .4rem .5rem; font: inherit; border: 1px solid var(--line); border-radius: 5px; }
button { font: inherit; padding: .5rem 1rem; border-radius: 5px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
.status { min-height: 1.5rem; color: #a3261b; }
.note { background: var(--soft); border-radius: 5px; padding: .4rem .7rem; }
.error { background: #fdecea; border-radius: 5px; padding: .4rem .7rem; color: #a3261b; }
table { border-collapse: collapse; margin: .6rem 0 1.4rem; background: #fff; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.words { color: var(--muted); font-style: italic; }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 3px; padding: 0 .3rem; font-size: .85em; background: #fff; }
"""

# Keyboard: a digit rates the focused row and moves on to the next unrated one; Enter submits
# when every row is rated (otherwise it points at the first unrated one); arrows move the focus.
_JS = """
(function () {
  "use strict";
  var form = document.getElementById("rating-form");
  if (!form) { return; }
  var rows = Array.prototype.slice.call(form.querySelectorAll(".rating-row"));
  var status = document.getElementById("status");
  var comment = document.getElementById("comment");
  var focus = 0, sending = false;
  function rated(row) { return row.querySelector("input[type=radio]:checked") !== null; }
  function firstUnrated() { for (var i = 0; i < rows.length; i++) { if (!rated(rows[i])) { return i; } } return -1; }
  function say(text) { status.textContent = text; }
  function show(i, still) {  // still: highlight without scrolling (a new page opens at its top, on the text)
    focus = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (row, j) {
      row.classList.toggle("focused", j === focus);
      row.setAttribute("aria-current", j === focus ? "true" : "false");
    });
    if (!still) { rows[focus].scrollIntoView({block: "nearest"}); }
  }
  function advance(from) { var next = firstUnrated(); show(next >= 0 ? next : from); }
  function send() {
    if (sending) { return; }
    var missing = firstUnrated();
    if (missing >= 0) { show(missing); say("Please rate question " + (missing + 1) + " first."); return; }
    sending = true;
    say("");
    HTMLFormElement.prototype.submit.call(form);  // not form.submit: a control may shadow it by name
  }
  rows.forEach(function (row, i) {
    row.addEventListener("click", function () { show(i); });
    row.addEventListener("change", function () { say(""); advance(i); });
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); send(); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) { return; }
    if (event.key === "Enter") { event.preventDefault(); send(); return; }
    if (event.target === comment) { return; }
    if (/^[0-9]$/.test(event.key)) {
      event.preventDefault();
      var input = rows[focus].querySelector("input[type=radio][value='" + event.key + "']");
      if (input) { input.checked = true; say(""); advance(focus); }
      else { say("Use the points of the scale: " + rows[focus].getAttribute("data-scale") + "."); }
      return;
    }
    if (event.key === "ArrowDown" || event.key === "ArrowRight") { event.preventDefault(); show(focus + 1); }
    if (event.key === "ArrowUp" || event.key === "ArrowLeft") { event.preventDefault(); show(focus - 1); }
  });
  show(Math.max(0, firstUnrated()), true);
})();
"""

_PAGES = {
    "base.html": """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
{% block head %}{% endblock %}
<title>{{ title }}</title>
<style nonce="{{ nonce }}">{{ css }}</style>
</head>
<body>
<header><span class="title">judgelab annotation</span>{% block header %}{% endblock %}</header>
<main{% block main_class %}{% endblock %}>
{% block main %}{% endblock %}
</main>
{% block script %}{% endblock %}
</body>
</html>
""",
    "item.html": """{% extends "base.html" %}
{% block header %}<span class="progress-text" id="progress">Item {{ position + 1 }} of {{ total }}</span>
<progress value="{{ done }}" max="{{ total }}"></progress>{% endblock %}
{% block main_class %}{% if form.shared_head and form.shared_head|length > long_text %} class="wide"{% endif %}{% endblock %}
{% block main %}
{% if note %}<p class="note" id="note">{{ note }}</p>{% endif %}
{% if error %}<p class="error" id="error">{{ error }}</p>{% endif %}
{% set scales = form.questions|map(attribute="labels")|unique|list %}
<p class="help">Read the text exactly as written and answer each question on {% if scales|length == 1 %}the scale {{ scales[0][0] }}–{{ scales[0][-1] }}{% else %}its scale{% endif %}.
Keyboard: a digit rates the highlighted question and moves on, <kbd>↑</kbd> <kbd>↓</kbd> change the highlighted question,
<kbd>Enter</kbd> saves and shows the next item.</p>
{% if form.shared_head %}<div class="prompt{% if form.shared_head|length > long_text %} long{% endif %}" id="sample">{{ form.shared_head }}</div>{% endif %}
<form method="post" action="{{ action }}" id="rating-form" autocomplete="off">
<input type="hidden" name="position" value="{{ position }}">
<input type="hidden" name="shown" value="{{ shown }}">
<input type="hidden" name="signature" value="{{ signature }}">
{% set counter = namespace(k=0) %}
{% for q in form.questions %}
<fieldset class="criterion" data-criterion="{{ q.criterion }}">
{% if q.own %}<div class="{{ 'own' if form.shared_head else 'prompt' }}">{{ q.own }}</div>{% endif %}
<div class="question">{{ q.question }}</div>
{% for output in q.outputs %}
<div class="rating-row{% if q.anchors %} anchored{% endif %}" role="radiogroup" data-index="{{ counter.k }}" data-scale="{{ q.labels[0] }}–{{ q.labels[-1] }}">
{% if q.outputs|length > 1 %}<span class="metric">{{ output }}</span>{% endif %}
<div class="points">{% for v in q.labels %}<label><input type="radio" name="r{{ counter.k }}" value="{{ v }}" required{% if chosen.get(counter.k) == v|string %} checked{% endif %}><span class="point">{{ v }}</span>{% if q.anchor(v) %}<span class="anchor">{{ q.anchor(v) }}</span>{% endif %}</label>{% endfor %}</div>
</div>
{% set counter.k = counter.k + 1 %}
{% endfor %}
</fieldset>
{% endfor %}
<label class="comment">Comment (optional)
<input type="text" name="comment" id="comment" maxlength="2000" value="{{ comment }}"></label>
<p class="status" id="status" role="status"></p>
<button type="submit" id="save">Save and next (Enter)</button>
</form>
{% endblock %}
{% block script %}<script nonce="{{ nonce }}">{{ js }}</script>{% endblock %}
""",
    "done.html": """{% extends "base.html" %}
{% block header %}<span class="progress-text" id="progress">{{ done }} of {{ total }} done</span>
<progress value="{{ done }}" max="{{ total }}"></progress>{% endblock %}
{% block main %}
{% if note %}<p class="note" id="note">{{ note }}</p>{% endif %}
<h1 id="done">All {{ total }} items rated — thank you.</h1>
<p>Your ratings are saved. You may close this page.</p>
{% endblock %}
""",
    "message.html": """{% extends "base.html" %}
{% block main %}<h1>{{ heading }}</h1><p id="message">{{ message }}</p>{% endblock %}
""",
    "index.html": """{% extends "base.html" %}
{% block main %}
<h1>Annotation</h1>
{% if tokens %}
<p>Please use the personal link you were given.</p>
{% elif names %}
<p>Choose your name:</p>
<ul>{% for name in names %}<li><a href="{{ url_for_name(name) }}">{{ name }}</a></li>{% endfor %}</ul>
{% else %}
<form method="get" action="/a"><label>Your name (letters, digits, _ . -)
<input type="text" name="name" maxlength="40" required></label> <button type="submit">Start</button></form>
{% endif %}
{% endblock %}
""",
    "overview.html": """{% extends "base.html" %}
{% macro estimate_cells(e) -%}
{% if e.shown %}<td class="num">{{ fmt(e.estimate) }}</td><td class="num">{% if e.has_interval %}[{{ fmt(e.ci_low) }}, {{ fmt(e.ci_high) }}]{% else %}none{% endif %}</td>
{%- else %}<td class="words">{{ e.in_words }}</td><td class="num">–</td>{% endif %}
{%- endmacro %}
{% block head %}<meta http-equiv="refresh" content="30">{% endblock %}
{% block header %}<span class="progress-text">{{ overview.human_ratings }} human ratings of {{ overview.total_items }} items</span>{% endblock %}
{% block main %}
<h1>Overview</h1>
{% if note %}<p class="note" id="note">{{ note }}</p>{% endif %}
<p class="help">Template {{ template }}; questions: {{ outputs|join(", ") }}; selection: {{ sample }}{% if not uniform %} (not a uniform random sample: PPI estimates do not apply){% endif %}. Refreshes every 30 s.</p>
{% if not overview.human_ratings %}<p id="nothing-yet">No ratings yet: progress, agreement and the judge's correlation with the people appear here as the annotators submit their first ratings.</p>{% endif %}
<h2>Progress</h2>
<table id="progress-table"><tr><th>annotator</th><th>done</th><th>of</th><th>last rating (UTC)</th></tr>
{% for a in overview.annotators %}<tr><td>{{ a.annotator }}</td><td class="num">{{ a.done }}</td><td class="num">{{ a.total }}</td><td>{{ a.last_submitted or "–" }}</td></tr>
{% else %}<tr><td colspan="4">nobody has rated yet</td></tr>{% endfor %}
</table>
<h2>Agreement between annotators</h2>
<table id="alpha-table"><tr><th>question</th><th>annotators</th><th>items rated twice or more</th><th>Krippendorff α (ordinal)</th><th>95% interval</th><th>note</th></tr>
{% for a in overview.agreement %}<tr><td>{{ a.criterion }}</td><td class="num">{{ a.annotators }}</td><td class="num">{{ a.items }}</td>{{ estimate_cells(a) }}<td>{{ a.note }}</td></tr>{% endfor %}
</table>
<h2>Judge and humans</h2>
{% if overview.judges %}
<table id="judge-table"><tr><th>judge</th><th>question</th><th>method</th><th>r</th><th>95% interval</th><th>p</th><th>texts</th><th>item ids</th><th>note</th></tr>
{% for j in overview.judges %}<tr><td>{{ j.rater }}</td><td>{{ j.criterion }}</td><td>{{ j.method }}</td>{{ estimate_cells(j) }}<td class="num">{{ fmt(j.p) if j.shown else "–" }}</td><td class="num">{{ j.n }}</td><td class="num">{{ j.items }}</td><td>{{ j.note }}</td></tr>{% endfor %}
</table>
<p class="help">Correlation of the judge's mean over its samples with the mean human rating, on the texts people have rated so far (overall level); the bootstrap resamples item ids, each with all its systems' texts.</p>
{% endif %}
<h2>Report</h2>
<form method="post" action="{{ report_action }}" id="report">
<p>{% if report.written %}<code>{{ report.path }}</code> was written {{ report.written }}{% if report.stale %}, before the latest ratings: it does not show them yet{% else %} and shows every rating{% endif %}.
{% else %}There is no <code>{{ report.path }}</code> yet.{% endif %}
It is written again when annotation stops (Ctrl-C). <button type="submit">Write the report now</button></p>
</form>
<p class="help" id="small-n">Estimates rest on the items counted beside them. On fewer than {{ min_items }} items no number is shown (it would say nothing); intervals are cluster-bootstrap intervals over the items (expanded percentile), and from fewer than {{ few_items }} items they often cover less than 95%, as the note says.</p>
{% if not overview.judges %}
<p id="no-judge">No judge ratings of these items and questions in this store yet (run <code>judgelab rate --out</code> into this folder first), or nobody has rated yet.</p>
{% endif %}
{% endblock %}
""",
}


def _fmt(value: object) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "–"
        return f"{value:.3f}"
    return str(value)


@lru_cache(maxsize=1)
def _env() -> SandboxedEnvironment:
    env = SandboxedEnvironment(loader=jinja2.DictLoader(_PAGES), autoescape=True, undefined=jinja2.StrictUndefined,
                               trim_blocks=False, lstrip_blocks=False)
    env.globals["fmt"] = _fmt
    from judgelab.stats.bootstrap import FEW_CLUSTERS, MIN_CLUSTERS

    env.globals.update(min_items=MIN_CLUSTERS, few_items=FEW_CLUSTERS)
    return env


#: Shared text longer than this (characters; SummEval articles are 2,200 on average) is set in columns
#: on a wide screen, in a wider page: a long article then takes half the height.
LONG_TEXT = 1500


def render_page(name: str, nonce: str, **context: object) -> str:
    """Render one page; every value is autoescaped. ``nonce`` authorises the page's inline CSS and JS."""
    # The stylesheet and the script are this module's constants (no data in them): marked safe so
    # that autoescaping does not turn their quotes into entities, which CSS and JS do not decode.
    return _env().get_template(name).render(nonce=nonce, css=Markup(_CSS), js=Markup(_JS), long_text=LONG_TEXT, **context)
