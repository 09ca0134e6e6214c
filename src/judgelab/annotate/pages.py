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

from judgelab.annotate.form import scale_hint

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
.criterion { border: 2px solid var(--line); border-radius: 6px; background: #fff; padding: .1rem 1rem .7rem; margin: .8rem 0; }
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
.note { background: var(--soft); border-radius: 5px; padding: .4rem .7rem; }
.error { background: #fdecea; border-radius: 5px; padding: .4rem .7rem; color: #a3261b; }
table { border-collapse: collapse; margin: .6rem 0 1.4rem; background: #fff; }
th, td { border: 1px solid var(--line); padding: .3rem .6rem; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.words { color: var(--muted); font-style: italic; }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 3px; padding: 0 .3rem; font-size: .85em; background: #fff; }
header h1 { font-size: 1rem; font-weight: 400; margin: 0 0 0 auto; }
h2.part { font-size: .95rem; line-height: 1.3; margin: .7rem 0 -.5rem; color: var(--muted); }
.rated .prompt { border-left: 5px solid var(--accent); background: #fbfcff; }
.rated .after { margin-top: -.4rem; color: var(--muted); }
legend { padding: 0 .3rem; }
legend h2 { font-size: .9rem; line-height: 1.25; margin: 0; color: var(--muted); font-weight: 600; }
.answer, .criterion, #error { scroll-margin-top: 4rem; scroll-margin-bottom: 1rem; }
.field-error { margin: .3rem .4rem 0; padding: .3rem .6rem; border-radius: 5px; background: #fdecea; color: #a3261b; font-weight: 600; }
.field-error:empty { display: none; }
.rating-row[aria-invalid="true"] { border-color: #a3261b; }
.error p { margin: 0; }
.error ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.error a { color: #a3261b; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
"""

# Keyboard: Tab (or ↑ ↓) moves between questions, ← → choose a point of the question that has the
# focus, Space picks it; a digit rates the focused question and moves the focus on to the next
# unrated one; Enter submits when every question is rated, otherwise it says so next to the first
# unrated one. The highlighted question is always the one holding the keyboard focus: `sync` reads
# document.activeElement, whenever the focus moves, and nothing else draws the highlight.
_JS = """
(function () {
  "use strict";
  var form = document.getElementById("rating-form");
  if (!form) { return; }
  form.noValidate = true;  // this script says what is missing, next to the question (without it: the browser's check)
  var rows = Array.prototype.slice.call(form.querySelectorAll(".rating-row"));
  var comment = document.getElementById("comment");
  var current = -1, sending = false, byKey = false;
  function radios(row) { return row.querySelectorAll("input[type=radio]"); }
  function rated(row) { return row.querySelector("input[type=radio]:checked") !== null; }
  function firstUnrated() { for (var i = 0; i < rows.length; i++) { if (!rated(rows[i])) { return i; } } return -1; }
  function rowOf(node) { for (var i = 0; i < rows.length; i++) { if (rows[i].contains(node)) { return i; } } return -1; }
  function errorOf(row) { return document.getElementById(row.getAttribute("aria-describedby")); }
  function sync() {  // the one place the highlight is drawn: the question that holds the focus, if any
    current = rowOf(document.activeElement);
    rows.forEach(function (row, j) { row.classList.toggle("focused", j === current); });
  }
  function go(i, still) {  // focus question i (its chosen point, else its first); the highlight follows the focus
    var row = rows[Math.max(0, Math.min(rows.length - 1, i))];
    (row.querySelector("input[type=radio]:checked") || radios(row)[0]).focus({preventScroll: true});
    sync();
    if (!still) { row.parentNode.scrollIntoView({block: "nearest"}); }
  }
  function clear(row) { errorOf(row).textContent = ""; row.removeAttribute("aria-invalid"); }
  function fail(i, text) {  // the message next to the question, the question focused and on screen
    var row = rows[i];
    go(i, true);
    errorOf(row).textContent = text;
    row.setAttribute("aria-invalid", "true");
    row.parentNode.scrollIntoView({block: "nearest"});
  }
  function advance(from) { var next = firstUnrated(); go(next >= 0 ? next : from); }
  function send() {
    if (sending) { return; }
    var missing = firstUnrated();
    if (missing >= 0) { fail(missing, "Please rate " + rows[missing].getAttribute("data-name") + " first."); return; }
    sending = true;
    HTMLFormElement.prototype.submit.call(form);  // not form.submit: a control may shadow it by name
  }
  document.addEventListener("focusin", sync);
  document.addEventListener("focusout", function () { setTimeout(sync, 0); });  // focus left for no element
  document.addEventListener("pointerdown", function () { byKey = false; });
  rows.forEach(function (row, i) {
    row.addEventListener("click", function (event) { if (!event.target.closest("label")) { go(i, true); } });
    row.addEventListener("change", function () { clear(row); if (!byKey) { advance(i); } });
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); send(); });
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) { return; }
    byKey = true;  // a point chosen with ← → or Space keeps the focus on its question
    if (event.target.tagName === "A") { return; }  // Enter follows a link of the error summary
    if (event.key === "Enter") { event.preventDefault(); send(); return; }
    if (event.target === comment) { return; }
    var at = current >= 0 ? current : Math.max(0, firstUnrated());
    if (/^[0-9]$/.test(event.key)) {
      event.preventDefault();
      var input = rows[at].querySelector("input[type=radio][value='" + event.key + "']");
      if (input) { input.checked = true; clear(rows[at]); advance(at); }
      else { fail(at, rows[at].getAttribute("data-hint")); }
      return;
    }
    var onPoint = event.target.type === "radio", step = current >= 0 ? 1 : 0;  // on a point ← → are the browser's
    if (event.key === "ArrowDown" || (event.key === "ArrowRight" && !onPoint)) { event.preventDefault(); go(at + step); }
    if (event.key === "ArrowUp" || (event.key === "ArrowLeft" && !onPoint)) { event.preventDefault(); go(at - step); }
  });
  var summary = document.getElementById("error");
  if (summary) {  // a refused form: its summary, at the top, has the focus; a link in it focuses its question
    summary.addEventListener("click", function (event) {
      var link = event.target.closest("a[href^='#answer']");
      if (link) { event.preventDefault(); go(Number(link.getAttribute("href").slice(7))); }
    });
    summary.focus({preventScroll: true});
  } else {
    go(Math.max(0, firstUnrated()), true);  // the page opens at its top, on the text
  }
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
{% block header %}<h1 class="progress-text" id="progress">Item {{ position + 1 }} of {{ total }}</h1>
<progress value="{{ done }}" max="{{ total }}" aria-label="items rated"></progress>{% endblock %}
{% block main_class %}{% if form.shared_head and form.shared_head|length > long_text %} class="wide"{% endif %}{% endblock %}
{% block main %}
{% if note %}<p class="note" id="note">{{ note }}</p>{% endif %}
{% if error %}<div class="error" id="error" role="alert" tabindex="-1"><p>Not saved: {{ error }}.</p>
{% if field_errors %}<ul>{% for k, text in field_errors|dictsort %}{% set name = form.row_names[k] %}<li><a href="#answer{{ k }}">{{ name[:1]|upper }}{{ name[1:] }}</a>: {{ text }}</li>{% endfor %}</ul>{% endif %}</div>{% endif %}
{% set scales = form.questions|map(attribute="labels")|unique|list %}
<p class="help">Read the text exactly as written and answer each question on {% if scales|length == 1 %}the scale {{ scales[0][0] }}–{{ scales[0][-1] }}{% else %}its scale{% endif %}.
Keyboard: a digit rates the highlighted question and moves on; <kbd>Tab</kbd> or <kbd>↑</kbd> <kbd>↓</kbd> go to another question,
<kbd>←</kbd> <kbd>→</kbd> choose a point and <kbd>Space</kbd> picks it; <kbd>Enter</kbd> saves and shows the next item.</p>
{% set long = form.shared_head and form.shared_head|length > long_text %}
{% set parts = form.parts %}
{% if parts %}<div id="sample">
{% if parts[0] %}<section aria-labelledby="context-title"><h2 class="part" id="context-title">Task and context</h2>
<div class="prompt{% if long %} long{% endif %}" id="context-text">{{ parts[0] }}</div></section>{% endif %}
<section class="rated" aria-labelledby="rated-title"><h2 class="part" id="rated-title">The text you rate</h2>
<div class="prompt" id="rated-text">{{ parts[1] }}</div>{% if parts[2] %}
<div class="after" id="after-text">{{ parts[2] }}</div>{% endif %}</section>
</div>
{% elif form.shared_head %}<section id="sample" aria-labelledby="sample-title"><h2 class="part" id="sample-title">Task and text</h2>
<div class="prompt{% if long %} long{% endif %}">{{ form.shared_head }}</div></section>{% endif %}
<form method="post" action="{{ action }}" id="rating-form" autocomplete="off">
<input type="hidden" name="position" value="{{ position }}">
<input type="hidden" name="shown" value="{{ shown }}">
<input type="hidden" name="signature" value="{{ signature }}">
{% set counter = namespace(k=0) %}
{% for q in form.questions %}{% set n = loop.index %}
<fieldset class="criterion" id="q{{ n }}" data-criterion="{{ q.criterion }}">
<legend><h2 id="q{{ n }}-title">Question {{ n }} of {{ form.questions|length }}</h2></legend>
{% if q.own %}<div class="{{ 'own' if form.shared_head else 'prompt' }}">{{ q.own }}</div>{% endif %}
<div class="question" id="q{{ n }}-text">{{ q.question }}</div>
{% for output in q.outputs %}{% set k = counter.k %}
<div class="answer" id="answer{{ k }}">
<div class="rating-row{% if q.anchors %} anchored{% endif %}" role="radiogroup" aria-labelledby="q{{ n }}-title q{{ n }}-text{% if q.outputs|length > 1 %} m{{ k }}{% endif %}" aria-describedby="e{{ k }}"{% if k in field_errors %} aria-invalid="true"{% endif %} data-index="{{ k }}" data-name="{{ form.row_names[k] }}" data-hint="{{ scale_hint(q.labels) }}">
{% if q.outputs|length > 1 %}<span class="metric" id="m{{ k }}">{{ output }}</span>{% endif %}
<div class="points">{% for v in q.labels %}<label><input type="radio" name="r{{ k }}" value="{{ v }}" required{% if chosen.get(k) == v|string %} checked{% endif %}><span class="point">{{ v }}</span>{% if q.anchor(v) %}<span class="anchor">{{ q.anchor(v) }}</span>{% endif %}</label>{% endfor %}</div>
</div>
<p class="field-error" id="e{{ k }}" role="alert">{{ field_errors.get(k, "") }}</p>
</div>
{% set counter.k = counter.k + 1 %}
{% endfor %}
</fieldset>
{% endfor %}
<label class="comment">Comment (optional)
<input type="text" name="comment" id="comment" maxlength="2000" value="{{ comment }}"></label>
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
    env.globals["scale_hint"] = scale_hint
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
