"""The HTML report's script, embedded in every report (no external resources).

It sorts tables (buttons in the column headers, ``aria-sort``) and runs the item browser: it
reads the columnar index from ``<script type="application/json" id="jl-index">``, decompresses
the details (gzip, base64) with ``DecompressionStream``, filters by criterion, system and judge,
sorts, searches (:mod:`judgelab.report.html_script_find`: search, a link to each card, the download of the
items shown), and renders one page of 50 items at a time. Each card shows the rated text first (long
texts and contexts clipped, each with its own "show all" toggle), then the judge's answer beside
the human ratings, the samples and the prompt (collapsed). Every text from the data is set with
``textContent``, never parsed as HTML. ``window.judgelab`` holds the hooks ``judgelab view`` uses to update the
page in place (:mod:`judgelab.report.html_script_live`).
"""
from __future__ import annotations

from judgelab.report.html_script_find import ITEMS_FIND
from judgelab.report.html_script_live import ITEMS_LIVE
from judgelab.report.html_script_parts import PARTS_JS

__all__ = ["SCRIPT"]

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

  // the sort buttons of the tables in ``scope``; with ``previous`` (the content ``scope`` replaces, in the live
  // view), each table sorted as the table of the same id was
  function bindTables(scope, previous) {
    Array.prototype.forEach.call(scope.querySelectorAll("table.sortable"), function (table) {
      var before = previous && table.id ? Array.prototype.find.call(previous.querySelectorAll("table"),
        function (t) { return t.id === table.id; }) : null;
      Array.prototype.forEach.call(table.querySelectorAll("thead th"), function (th, col) {
        var button = th.querySelector("button");
        if (button) { button.addEventListener("click", function () { sortTable(table, col, th); }); }
        var was = before && before.querySelectorAll("thead th")[col];
        var sorted = was ? was.getAttribute("aria-sort") : "none";
        if (sorted === "ascending" || sorted === "descending") { sortTable(table, col, th); }
        if (sorted === "descending") { sortTable(table, col, th); }
      });
    });
  }
  bindTables(document, null);

  // the page's hooks for the live view (``judgelab view``): it swaps sections in place and hands the item
  // browser its new data, which keeps its filters, page and open cards
  var hooks = window.judgelab = window.judgelab || {};
  hooks.bindTables = bindTables;
  hooks.startItems = function () { if (!hooks.items) { hooks.items = itemBrowser(); } };
  hooks.startItems();

  // ---- item browser -----------------------------------------------------------
  function itemBrowser() {
  var indexEl = document.getElementById("jl-index");
  var detailsEl = document.getElementById("jl-details");
  var root = document.getElementById("browser");
  if (!indexEl || !detailsEl || !root) { return null; }
  var idx = JSON.parse(indexEl.textContent);
  var detailsB64 = JSON.parse(detailsEl.textContent).data;
  var n = idx.i.length;
  var pageSize = parseInt(root.getAttribute("data-page-size"), 10) || 50;
  var state = { criterion: "", system: "", rater: "", sort: root.getAttribute("data-sort"), page: 0 };
  var strings = null, details = null, loading = null, renderToken = 0, firstShown = false;
  var parts = partsOf(root), partStrings = [], loadingAll = null;

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

""" + PARTS_JS + r"""

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
      if ((c < 0 || idx.c[u] === c) && (s < 0 || idx.s[u] === s) && (r < 0 || idx.r[u] === r) && matches(u)) { out.push(u); }
    }
    var by = sorters[state.sort], place = idx.o ? function (a, b) { return idx.o[a] - idx.o[b]; } : null;
    if (by || place) { out.sort(function (a, b) { return (by && by(a, b)) || (place ? place(a, b) : a - b); }); }
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

  // a text reference: an index into the strings, [prompt, message, start, length] into the unit's own
  // prompts, or [unit, prompt, message, start, length] into another unit's (offsets in UTF-16 units)
  function textOf(d, ref) {
    if (ref === null || ref === undefined) { return null; }
    if (typeof ref === "number") { return strings[ref]; }
    if (ref.length === 5) { d = details[ref[0]]; ref = ref.slice(1); }
    var m = d[0][ref[0]][ref[1]];
    return m[1].map(str).join("\n").substr(ref[2], ref[3]);
  }
  // a long text clipped (at most maxChars characters and maxLines lines) with a toggle that shows all of it
  function clipped(cls, label, text, maxChars, maxLines) {
    var box = el("div", cls);
    box.appendChild(el("span", "side-label", label));
    var lines = text.split("\n");
    var cut = text.length > maxChars || lines.length > maxLines;
    var shortText = cut ? lines.slice(0, maxLines).join("\n").slice(0, maxChars) + " \u2026" : text;
    var pre = el("pre", "item-text", shortText);
    box.appendChild(pre);
    if (cut) {
      var b = el("button", "show-all", "show all (" + thousands(text.length) + " characters)");
      b.type = "button";
      b.setAttribute("aria-expanded", "false");
      b.addEventListener("click", function () {
        var open = b.getAttribute("aria-expanded") === "true";
        pre.textContent = open ? shortText : text;
        b.setAttribute("aria-expanded", open ? "false" : "true");
        b.textContent = open ? "show all (" + thousands(text.length) + " characters)" : "show less";
      });
      box.appendChild(b);
    }
    return box;
  }
  function renderRated(d) {
    var rated = d[4];
    var box = el("div", "unit-rated");
    if (!rated) {
      box.appendChild(el("p", "note rated-missing", d[0].length ?
        "The rated text was not recorded in this store (judged before judgelab recorded item texts); the prompt below holds it." :
        "The rated text was not recorded in this folder (no store.sqlite with the judged items)."));
      return box;
    }
    if (rated[2].length) {
      rated[2].forEach(function (p) { box.appendChild(clipped("unit-text", "Rated text: " + p[0], textOf(d, p[1]), 700, 12)); });
    } else {
      box.appendChild(clipped("unit-text", "Rated text", textOf(d, rated[0]), 700, 12));
    }
    if (rated[1] !== null) { box.appendChild(clipped("unit-context", "Context", textOf(d, rated[1]), 300, 3)); }
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
    var d = detail(u);
    var art = el("article", "unit");
    art.setAttribute("data-unit", String(u));
    art.setAttribute("data-key", unitKey(u));
    art.setAttribute("data-absdiff", idx.d[u] === null ? "" : String(Math.abs(idx.d[u])));
    art.setAttribute("data-criterion", idx.criteria[idx.c[u]]);
    art.setAttribute("data-system", idx.systems[idx.s[u]]);
    art.setAttribute("aria-labelledby", "unit-h-" + u);
    var h = el("h3", null, "#" + rank + " \u00b7 item " + idx.i[u]);
    h.id = "unit-h-" + u;
    art.appendChild(h);
    art.appendChild(el("p", "unit-meta", "criterion " + idx.criteria[idx.c[u]] + " \u00b7 system " +
      idx.systems[idx.s[u]] + " \u00b7 judge " + idx.raters[idx.r[u]]));
    art.lastChild.appendChild(linkTo(u));  // a link to this card (html_script_find)
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
    art.appendChild(renderRated(d));  // the rated text first
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

  function unitKey(u) {
    return [idx.i[u], idx.criteria[idx.c[u]], idx.systems[idx.s[u]], idx.raters[idx.r[u]]].join("\u0001");
  }

  // one page of cards; ``keep`` (the live view): each card's open sections and "show all" as they were, shown
  // at once (the details already decoded) rather than when ``load`` resolves
  function render(keep) {
    var token = ++renderToken;
    if (needsAll()) {
      root.setAttribute("data-ready", "0");
      loadAll().then(function () { if (token === renderToken) { render(keep); } }, failed);
      return;
    }
    var sel = selection(), count = complete() ? sel.length : parts.units;
    var pages = Math.max(1, Math.ceil(count / pageSize));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    var start = state.page * pageSize, end = Math.min(sel.length, start + pageSize);
    status.textContent = sel.length ? ("Items " + thousands(start + 1) + "\u2013" + thousands(end) + " of " + thousands(count) +
      (count < parts.units ? " (filtered from " + thousands(parts.units) + ")" : "") +
      (complete() ? "" : " (this page holds the first " + thousands(n) + "; the rest load on demand)")) :
      "No items match the filters.";
    pageLabel.textContent = "Page " + thousands(state.page + 1) + " of " + thousands(pages);
    buttons.first.disabled = buttons.prev.disabled = state.page === 0;
    buttons.next.disabled = buttons.last.disabled = state.page >= pages - 1;
    root.setAttribute("data-ready", "0");
    function paint() {
      if (token !== renderToken) { return; }
      list.textContent = "";
      for (var k = start; k < end; k++) {
        var li = el("li");
        var art = renderUnit(sel[k], k + 1);
        if (keep) { keepCard(art, keep[art.getAttribute("data-key")]); }
        li.appendChild(art);
        list.appendChild(li);
      }
      message.textContent = "";
      root.setAttribute("data-ready", "1");
      if (!firstShown && window.performance && performance.mark) { performance.mark("judgelab-items-ready"); }
      firstShown = true;
    }
    if (keep) { paint(); return; }
    load().then(paint, failed);
  }
  function failed(err) {
    message.textContent = "The item details could not be read: " + err.message;
    root.setAttribute("data-ready", "error");
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
""" + ITEMS_FIND + ITEMS_LIVE + r"""
  return { prepare: prepare };
  }
})();
"""
