"""The HTML report's stylesheet and script, embedded in every report (no external resources).

The script sorts tables (buttons in the column headers, ``aria-sort``) and runs the item
browser: it reads the columnar index from ``<script type="application/json" id="jl-index">``,
decompresses the details (gzip, base64) with ``DecompressionStream``, filters by criterion,
system and judge, sorts, and renders one page of 50 items at a time. Every text from the
data is set with ``textContent``, never parsed as HTML.
"""
from __future__ import annotations

__all__ = ["CSS", "SCRIPT"]

CSS = r"""
:root { --fg: #1b1b1b; --muted: #5a5a5a; --line: #d6d6d6; --bg: #ffffff; --soft: #f4f6f8; --accent: #0b5cad; --bad: #a4161a; }
* { box-sizing: border-box; }
html { font-size: 15px; }
body { margin: 0; color: var(--fg); background: var(--bg); font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; line-height: 1.45; }
header.top { background: var(--soft); border-bottom: 1px solid var(--line); padding: 0.8rem 1.2rem; }
header.top h1 { margin: 0 0 0.2rem; font-size: 1.45rem; }
header.top p { margin: 0.1rem 0; color: var(--muted); overflow-wrap: anywhere; }
nav.toc ul { list-style: none; padding: 0; margin: 0.5rem 0 0; display: flex; flex-wrap: wrap; gap: 0.3rem 0.9rem; }
nav.toc a { color: var(--accent); }
main { max-width: 1280px; margin: 0 auto; padding: 0.5rem 1.2rem 3rem; }
section { border-bottom: 1px solid var(--line); padding: 0.6rem 0 1.2rem; }
h2 { font-size: 1.3rem; margin: 1rem 0 0.5rem; }
h3 { font-size: 1.08rem; margin: 1rem 0 0.4rem; }
a:focus, button:focus, select:focus, summary:focus, [tabindex]:focus { outline: 3px solid #f5a623; outline-offset: 2px; }
.note { color: var(--muted); font-size: 0.92rem; max-width: 75rem; }
.problem { color: var(--bad); }
.tablewrap { overflow-x: auto; margin: 0.4rem 0 0.2rem; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9rem; }
caption { text-align: left; font-weight: 600; padding: 0.2rem 0 0.4rem; caption-side: top; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; vertical-align: top; text-align: left; overflow-wrap: break-word; }
td.raw { min-width: 18rem; }
td.num, td.int, td.p, th.num, th.int, th.p { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
thead th { background: var(--soft); }
thead th button { font: inherit; font-weight: 600; background: none; border: 0; padding: 0; cursor: pointer; color: inherit; text-align: inherit; }
thead th button::after { content: " \2195"; color: #999; font-weight: normal; }
thead th[aria-sort="ascending"] button::after { content: " \2191"; color: var(--fg); }
thead th[aria-sort="descending"] button::after { content: " \2193"; color: var(--fg); }
tbody th { font-weight: 600; background: #fafafa; }
td.sig { background: #dff0d8; }
figure { margin: 0.8rem 0; max-width: 100%; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 0.9rem; max-width: 60rem; }
svg.chart { max-width: 100%; height: auto; font-family: inherit; }
svg.chart text { fill: #222; }
img.folder-figure { max-width: 100%; height: auto; border: 1px solid var(--line); }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--soft); border: 1px solid var(--line); padding: 0.5rem; margin: 0.2rem 0; font-size: 0.86rem; max-height: 32rem; overflow-y: auto; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; }
dl.kv dt { font-weight: 600; }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
.msg .role { font-weight: 600; font-size: 0.85rem; color: var(--muted); }
.controls { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; margin: 0.5rem 0; }
.controls label { display: flex; flex-direction: column; font-size: 0.88rem; font-weight: 600; }
.controls select, .controls button { font: inherit; padding: 0.2rem 0.4rem; }
.pager { display: flex; gap: 0.4rem; align-items: center; flex-wrap: wrap; margin: 0.5rem 0; }
.pager button { font: inherit; padding: 0.2rem 0.6rem; }
ol.units { list-style: none; padding: 0; margin: 0; }
article.unit { border: 1px solid var(--line); border-radius: 6px; padding: 0.4rem 0.8rem 0.6rem; margin: 0.6rem 0; }
article.unit h3 { margin: 0.2rem 0; overflow-wrap: anywhere; }
.unit-meta, .unit-scores, .unit-humans { margin: 0.15rem 0; overflow-wrap: anywhere; }
.diff { font-weight: 700; }
table.dist { font-size: 0.82rem; margin-top: 0.3rem; }
table.dist caption { font-weight: 600; font-size: 0.82rem; }
table.dist th, table.dist td { border: 0; padding: 0.05rem 0.4rem; background: none; }
table.dist td.barcell { width: 10rem; }
table.dist .bar { background: #0072B2; height: 0.7rem; }
table.dist code { white-space: pre; }
ol.attempts { margin: 0.2rem 0; padding-left: 1.4rem; font-size: 0.86rem; }
.status-bad { color: var(--bad); font-weight: 600; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
details.files { color: var(--muted); font-size: 0.9rem; }
details.files p { margin: 0.2rem 0; }
.hl-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 0.8rem; }
article.hl-card { border: 1px solid var(--line); border-radius: 6px; padding: 0.3rem 0.8rem 0.5rem; }
article.hl-card h3 { margin: 0.2rem 0 0.3rem; }
.hl-judge { font-weight: normal; color: var(--muted); font-size: 0.9rem; overflow-wrap: anywhere; }
.hl-r, .hl-base, .hl-means { margin: 0.2rem 0; }
.hl-r strong { font-size: 1.15rem; }
.hl-none { color: var(--bad); }
article.hl-card figure { margin: 0.3rem 0; }
article.hl-card figcaption { font-size: 0.82rem; }
.unit-side { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 0.6rem; margin: 0.3rem 0; }
.side-label { font-weight: 600; font-size: 0.85rem; color: var(--muted); }
pre.side-raw { max-height: 8rem; }
#units.compact .tablewrap, #units.compact details.prompt, #units.compact .unit-meta { display: none; }
#units.compact article.unit { padding: 0.2rem 0.6rem; margin: 0.3rem 0; }
@media print { .controls, .pager { display: none; } }
"""

SCRIPT = r"""
(function () {
  "use strict";

  // ---- sortable tables ------------------------------------------------------
  function cellValue(cell, numeric) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent; }
    if (numeric) {
      if (v === "") { return null; }
      var f = parseFloat(v);
      return isNaN(f) ? null : f;
    }
    return v;
  }

  function sortTable(table, col, th) {
    var numeric = th.classList.contains("num") || th.classList.contains("int") || th.classList.contains("p");
    var asc = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.querySelectorAll("thead th"), function (h) { h.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var order = new Map();
    rows.forEach(function (r, i) { order.set(r, i); });
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[col], numeric), y = cellValue(b.cells[col], numeric);
      if (x === null && y === null) { return order.get(a) - order.get(b); }
      if (x === null) { return 1; }
      if (y === null) { return -1; }
      var c = numeric ? x - y : String(x).localeCompare(String(y));
      return (asc ? c : -c) || (order.get(a) - order.get(b));
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.querySelectorAll("thead th"), function (th, col) {
      var button = th.querySelector("button");
      if (button) { button.addEventListener("click", function () { sortTable(table, col, th); }); }
    });
  });

  // ---- item browser -----------------------------------------------------------
  var indexEl = document.getElementById("jl-index");
  var detailsEl = document.getElementById("jl-details");
  var root = document.getElementById("browser");
  if (!indexEl || !detailsEl || !root) { return; }
  var idx = JSON.parse(indexEl.textContent);
  var detailsB64 = JSON.parse(detailsEl.textContent).data;
  var n = idx.i.length;
  var pageSize = parseInt(root.getAttribute("data-page-size"), 10) || 50;
  var state = { criterion: "", system: "", rater: "", sort: root.getAttribute("data-sort"), page: 0 };
  var strings = null, details = null, loading = null, renderToken = 0, firstShown = false;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function fmt(x, digits) {
    return (x === null || x === undefined) ? "\u2014" : Number(x).toFixed(digits === undefined ? 2 : digits);
  }
  function thousands(x) { return Number(x).toLocaleString("en-US"); }
  function signed(x) { return (x === null || x === undefined) ? "\u2014" : (x > 0 ? "+" : "") + Number(x).toFixed(2); }
  function str(k) { return (k === null || k === undefined) ? "" : strings[k]; }

  function decode(b64) {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser has no DecompressionStream (use a current Chrome, Edge, Firefox or Safari)"));
    }
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var k = 0; k < bin.length; k++) { bytes[k] = bin.charCodeAt(k); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (t) { return JSON.parse(t); });
  }
  function load() {
    if (!loading) {
      loading = decode(detailsB64).then(function (obj) { strings = obj.S; details = obj.D; });
    }
    return loading;
  }

  function fill(select, names) {
    names.forEach(function (name, k) {
      var o = el("option", null, name);
      o.value = String(k);
      select.appendChild(o);
    });
  }
  var fCrit = document.getElementById("f-criterion"), fSys = document.getElementById("f-system");
  var fRater = document.getElementById("f-rater"), fSort = document.getElementById("f-sort");
  fill(fCrit, idx.criteria); fill(fSys, idx.systems); fill(fRater, idx.raters);
  fSort.value = state.sort;

  var sorters = {
    absdiff: null,  // the embedded order
    above: function (a, b) { return (idx.d[b] === null ? -Infinity : idx.d[b]) - (idx.d[a] === null ? -Infinity : idx.d[a]); },
    below: function (a, b) { return (idx.d[a] === null ? Infinity : idx.d[a]) - (idx.d[b] === null ? Infinity : idx.d[b]); },
    spread: function (a, b) { return (idx.sp[b] === null ? -1 : idx.sp[b]) - (idx.sp[a] === null ? -1 : idx.sp[a]); },
    high: function (a, b) { return (idx.j[b] === null ? -Infinity : idx.j[b]) - (idx.j[a] === null ? -Infinity : idx.j[a]); },
    low: function (a, b) { return (idx.j[a] === null ? Infinity : idx.j[a]) - (idx.j[b] === null ? Infinity : idx.j[b]); },
    item: function (a, b) { return idx.i[a] < idx.i[b] ? -1 : (idx.i[a] > idx.i[b] ? 1 : 0); }
  };

  function selection() {
    var c = state.criterion === "" ? -1 : +state.criterion;
    var s = state.system === "" ? -1 : +state.system;
    var r = state.rater === "" ? -1 : +state.rater;
    var out = [];
    for (var u = 0; u < n; u++) {
      if ((c < 0 || idx.c[u] === c) && (s < 0 || idx.s[u] === s) && (r < 0 || idx.r[u] === r)) { out.push(u); }
    }
    var by = sorters[state.sort];
    if (by) { out.sort(function (a, b) { return by(a, b) || (a - b); }); }
    return out;
  }

  function renderPrompt(d, k, samples) {
    var box = el("details", "prompt");
    var label = "Prompt sent";
    if (d[0].length > 1) { label += " to sample" + (samples.length > 1 ? "s " : " ") + samples.join(", "); }
    label += " (" + d[0][k].length + " message" + (d[0][k].length === 1 ? "" : "s") + ")";
    box.appendChild(el("summary", null, label));
    d[0][k].forEach(function (m) {
      var div = el("div", "msg");
      div.appendChild(el("span", "role", m[0]));
      div.appendChild(el("pre", "prompt-text", m[1].map(str).join("\n")));
      box.appendChild(div);
    });
    if (d[3] !== null) {
      var cue = el("p", "note", "followed by the score cue ");
      cue.appendChild(el("code", null, JSON.stringify(d[3])));
      cue.appendChild(document.createTextNode(" (the score is read from the next-token distribution)"));
      box.appendChild(cue);
    }
    return box;
  }

  function renderDist(dist) {
    var t = el("table", "dist");
    t.appendChild(el("caption", null, "Next-token probabilities where the score was read"));
    var body = el("tbody");
    dist.forEach(function (tp) {
      var tr = el("tr");
      var th = el("th", null);
      th.setAttribute("scope", "row");
      th.appendChild(el("code", null, JSON.stringify(tp[0])));
      var barCell = el("td", "barcell");
      barCell.setAttribute("aria-hidden", "true");
      var bar = el("div", "bar");
      bar.style.width = Math.max(0.5, tp[1] * 100).toFixed(1) + "%";
      barCell.appendChild(bar);
      tr.appendChild(th); tr.appendChild(barCell); tr.appendChild(el("td", "num", tp[1].toFixed(3)));
      body.appendChild(tr);
    });
    t.appendChild(body);
    return t;
  }

  function renderUnit(u, rank) {
    var d = details[u];
    var art = el("article", "unit");
    art.setAttribute("data-unit", String(u));
    art.setAttribute("data-absdiff", idx.d[u] === null ? "" : String(Math.abs(idx.d[u])));
    art.setAttribute("data-criterion", idx.criteria[idx.c[u]]);
    art.setAttribute("data-system", idx.systems[idx.s[u]]);
    art.setAttribute("aria-labelledby", "unit-h-" + u);
    var h = el("h3", null, "#" + rank + " \u00b7 item " + idx.i[u]);
    h.id = "unit-h-" + u;
    art.appendChild(h);
    art.appendChild(el("p", "unit-meta", "criterion " + idx.criteria[idx.c[u]] + " \u00b7 system " +
      idx.systems[idx.s[u]] + " \u00b7 judge " + idx.raters[idx.r[u]]));
    var sc = el("p", "unit-scores");
    sc.appendChild(document.createTextNode("judge mean " + fmt(idx.j[u]) + " (" + idx.ok[u] + " of " + idx.n[u] +
      " samples scored)"));
    if (idx.nh[u] > 0) {
      sc.appendChild(document.createTextNode(" \u00b7 human mean " + fmt(idx.h[u]) + " (" + idx.nh[u] + " rating" +
        (idx.nh[u] === 1 ? "" : "s") + ") \u00b7 "));
      sc.appendChild(el("span", "diff", "judge \u2212 human " + signed(idx.d[u])));
    } else {
      sc.appendChild(document.createTextNode(" \u00b7 no human rating \u00b7 sample spread " + fmt(idx.sp[u])));
    }
    art.appendChild(sc);
    // the judge's answer and the humans side by side (the full samples and the prompt below)
    var side = el("div", "unit-side");
    var answer = el("div", "side-judge");
    answer.appendChild(el("span", "side-label", "Judge's answer" + (d[1].length > 1 ? " (sample " + d[1][0][0] + " of " + d[1].length + ")" : "")));
    var first = d[1].length ? str(d[1][0][6]) : "";
    answer.appendChild(el("pre", "side-raw", first.length > 600 ? first.slice(0, 600) + " …" : first));
    side.appendChild(answer);
    var hum = el("div", "side-human");
    hum.appendChild(el("span", "side-label", "Humans"));
    if (d[2].length) {
      hum.appendChild(el("p", "unit-humans", "Human ratings: " +
        d[2].map(function (h) { return h[0] + " " + fmt(h[1]); }).join(", ") + " (mean " + fmt(idx.h[u]) + ")"));
    } else {
      hum.appendChild(el("p", "unit-humans", "no human rating of this item"));
    }
    side.appendChild(hum);
    art.appendChild(side);
    var wrap = el("div", "tablewrap");
    var t = el("table", "samples");
    t.appendChild(el("caption", null, "Samples of the judge"));
    var head = el("thead"), hr = el("tr");
    ["sample", "status", "score", "parsed", "log-prob score", "raw answer"].forEach(function (name) {
      var th = el("th", null, name); th.setAttribute("scope", "col"); hr.appendChild(th);
    });
    head.appendChild(hr); t.appendChild(head);
    var body = el("tbody");
    var promptUse = {};
    d[1].forEach(function (s) {
      var tr = el("tr");
      var th = el("th", null, s[0]); th.setAttribute("scope", "row"); tr.appendChild(th);
      tr.appendChild(el("td", s[1] === "ok" ? "" : "status-bad", s[1]));
      tr.appendChild(el("td", "num", fmt(s[2], 3)));
      tr.appendChild(el("td", "num", fmt(s[3], 3)));
      tr.appendChild(el("td", "num", s[4] === null ? "\u2014" : fmt(s[4], 3) + (s[5] === null ? "" : " (outside labels " + fmt(s[5], 3) + ")")));
      var raw = el("td", "raw");
      raw.appendChild(el("pre", "raw-text", str(s[6])));
      if (s[8]) {
        var ol = el("ol", "attempts");
        s[8].forEach(function (a, k) {
          var li = el("li", null, "attempt " + (k + 1) + " \u2014 " + a[1] + (a[2] ? " (" + a[2] + ")" : "") + ": " + str(a[0]));
          if (a[3] !== null) {
            var rs = el("details", null);
            rs.appendChild(el("summary", null, "reasoning"));
            rs.appendChild(el("pre", null, str(a[3])));
            li.appendChild(rs);
          }
          ol.appendChild(li);
        });
        raw.appendChild(ol);
      }
      if (s[9]) { raw.appendChild(renderDist(s[9])); }
      tr.appendChild(raw);
      body.appendChild(tr);
      if (s[7] !== null) { (promptUse[s[7]] = promptUse[s[7]] || []).push(s[0]); }
    });
    t.appendChild(body); wrap.appendChild(t); art.appendChild(wrap);
    d[0].forEach(function (p, k) { art.appendChild(renderPrompt(d, k, promptUse[k] || [])); });
    return art;
  }

  var list = document.getElementById("units"), status = document.getElementById("browser-status");
  var message = document.getElementById("browser-message");
  var pageLabel = document.getElementById("page-label");
  var buttons = { first: document.getElementById("p-first"), prev: document.getElementById("p-prev"),
                  next: document.getElementById("p-next"), last: document.getElementById("p-last") };

  function render() {
    var token = ++renderToken;
    var sel = selection();
    var pages = Math.max(1, Math.ceil(sel.length / pageSize));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    var start = state.page * pageSize, end = Math.min(sel.length, start + pageSize);
    status.textContent = sel.length ? ("Items " + thousands(start + 1) + "\u2013" + thousands(end) + " of " + thousands(sel.length) +
      (sel.length < n ? " (filtered from " + thousands(n) + ")" : "")) : "No items match the filters.";
    pageLabel.textContent = "Page " + thousands(state.page + 1) + " of " + thousands(pages);
    buttons.first.disabled = buttons.prev.disabled = state.page === 0;
    buttons.next.disabled = buttons.last.disabled = state.page >= pages - 1;
    root.setAttribute("data-ready", "0");
    load().then(function () {
      if (token !== renderToken) { return; }
      list.textContent = "";
      for (var k = start; k < end; k++) {
        var li = el("li");
        li.appendChild(renderUnit(sel[k], k + 1));
        list.appendChild(li);
      }
      message.textContent = "";
      root.setAttribute("data-ready", "1");
      if (!firstShown && window.performance && performance.mark) { performance.mark("judgelab-items-ready"); }
      firstShown = true;
    }, function (err) {
      message.textContent = "The item details could not be read: " + err.message;
      root.setAttribute("data-ready", "error");
    });
  }

  function onFilter(key, select) {
    select.addEventListener("change", function () { state[key] = select.value; state.page = 0; render(); });
  }
  onFilter("criterion", fCrit); onFilter("system", fSys); onFilter("rater", fRater); onFilter("sort", fSort);
  var fCompact = document.getElementById("f-compact");
  fCompact.addEventListener("change", function () { list.classList.toggle("compact", fCompact.checked); });
  buttons.first.addEventListener("click", function () { state.page = 0; render(); });
  buttons.prev.addEventListener("click", function () { state.page -= 1; render(); });
  buttons.next.addEventListener("click", function () { state.page += 1; render(); });
  buttons.last.addEventListener("click", function () { state.page = 1e9; render(); });
  render();
})();
"""
