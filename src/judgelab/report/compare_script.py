"""The compare page's script (embedded; no external resources).

It reads the rows from ``<script type="application/json" id="cmp-rows">`` and shows them as cards, in the
recorded order (differences first), filtered by criterion, by kind of row and by a search over the item id, the
rated text and both answers (case-insensitive; every word must occur); the count of rows shown is said. Each
card has a link (``#item=<id>&system=…&criterion=…&sample=…``, each part encoded); opening the page with one,
or following it, shows that card (clearing filters that hide it), opens it and scrolls to it. The download
button saves the rows shown, all of them (not only the cards drawn), as CSV made in the page (a Blob): text
cells quoted as RFC 4180 says, and a text beginning with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
prefixed with ``'`` so that a spreadsheet shows it rather than runs it. Every text is set with ``textContent``.
"""
from __future__ import annotations

__all__ = ["COMPARE_SCRIPT", "CSV_CELL_JS"]

#: One CSV cell as a spreadsheet user expects it (numbers as they are; text guarded and quoted).
CSV_CELL_JS = r"""
  function csvCell(v) {
    if (v === null || v === undefined) { return ""; }
    if (typeof v === "number") { return isFinite(v) ? String(v) : ""; }
    var s = String(v);
    if (/^[=+\-@\t\r]/.test(s)) { s = "'" + s; }
    return /[",\r\n]/.test(s) || s !== s.trim() ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function csvText(columns, rows) {
    return [columns.map(csvCell).join(",")].concat(rows.map(function (r) { return r.map(csvCell).join(","); }))
      .join("\r\n") + "\r\n";
  }
  function download(name, text) {
    // a blob: address made here (the method named as a property: the page holds no CSS address function, which
    // the tests look for as an external resource)
    var href = URL["createObjectURL"](new Blob(["\ufeff" + text], { type: "text/csv;charset=utf-8" }));
    var a = document.createElement("a");
    a.href = href; a.download = name; a.style.display = "none";
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(function () { URL["revokeObjectURL"](href); }, 1000);
  }
"""

COMPARE_SCRIPT = r"""
(function () {
  "use strict";
""" + CSV_CELL_JS + r"""
  var data = JSON.parse(document.getElementById("cmp-rows").textContent);
  var cols = data.columns, rows = data.rows, C = {};
  cols.forEach(function (c, k) { C[c] = k; });
  // texts and answers are kept once, in data.strings: each row gets its own
  rows.forEach(function (r) { data.shared.forEach(function (c) { r[C[c]] = data.strings[r[C[c]]]; }); });
  var LIMIT = 300;
  var search = document.getElementById("c-search"), fCrit = document.getElementById("c-criterion");
  var fWhere = document.getElementById("c-where"), count = document.getElementById("c-count");
  var list = document.getElementById("c-items"), more = document.getElementById("c-more");
  var haystack = rows.map(function (r) {
    return [r[C.item_id], r[C.text], r[C.answer_a], r[C.answer_b]].join("\n").toLowerCase();
  });
  var shown = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function num(x, signed) {
    if (x === null || x === undefined) { return "\u2014"; }
    var t = Number(x).toFixed(Number.isInteger(x) ? 0 : 2);
    return signed && x > 0 ? "+" + t : t;
  }
  function link(r) {
    return "#item=" + encodeURIComponent(r[C.item_id]) + "&system=" + encodeURIComponent(r[C.system]) +
      "&criterion=" + encodeURIComponent(r[C.criterion]) + "&sample=" + encodeURIComponent(r[C.sample]);
  }
  function selection() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var out = [];
    for (var k = 0; k < rows.length; k++) {
      var r = rows[k];
      if (fCrit.value && r[C.criterion] !== fCrit.value) { continue; }
      if (fWhere.value && r[C.where] !== fWhere.value) { continue; }
      if (words.length && !words.every(function (w) { return haystack[k].indexOf(w) >= 0; })) { continue; }
      out.push(k);
    }
    return out;
  }
  function side(label, score, status, answer) {
    var box = el("div", "cmp-side");
    box.appendChild(el("span", "side-label", label + ": " + (status === "" ? "not rated" :
      (status === "ok" ? "score " + num(score) : status))));
    box.appendChild(el("pre", "side-raw", answer));
    return box;
  }
  function card(k) {
    var r = rows[k];
    var art = el("article", "cmp-item where-" + r[C.where]);
    art.id = "row-" + k;
    art.setAttribute("data-row", String(k));
    art.setAttribute("data-item", r[C.item_id]);
    art.setAttribute("data-where", r[C.where]);
    var h = el("h3", null, "item " + r[C.item_id] + " \u00b7 " + r[C.criterion] + " \u00b7 system " + r[C.system] +
      " \u00b7 sample " + r[C.sample]);
    art.appendChild(h);
    var line = el("p", "cmp-scores", "A " + (r[C.status_a] === "" ? "\u2014" : num(r[C.score_a])) + " \u00b7 B " +
      (r[C.status_b] === "" ? "\u2014" : num(r[C.score_b])) + " \u00b7 B \u2212 A " + num(r[C.diff], true) + " \u00b7 " +
      data.where[r[C.where]] + " ");
    var a = el("a", "permalink", "link to this item");
    a.href = link(r);
    line.appendChild(a);
    art.appendChild(line);
    var box = el("details", "cmp-details");
    box.appendChild(el("summary", null, "text and both answers"));
    box.appendChild(el("pre", "item-text", r[C.text] || "(the rated text was not recorded)"));
    var both = el("div", "unit-side");
    both.appendChild(side("A", r[C.score_a], r[C.status_a], r[C.answer_a]));
    both.appendChild(side("B", r[C.score_b], r[C.status_b], r[C.answer_b]));
    box.appendChild(both);
    art.appendChild(box);
    return art;
  }
  function render(upTo) {
    shown = selection();
    var limit = Math.max(LIMIT, upTo || 0);
    list.textContent = "";
    shown.slice(0, limit).forEach(function (k) { var li = el("li"); li.appendChild(card(k)); list.appendChild(li); });
    count.textContent = shown.length === rows.length ? rows.length + " rows" :
      shown.length + " of " + rows.length + " rows match";
    more.hidden = shown.length <= limit;
    more.textContent = "show all " + shown.length + " rows";
    document.getElementById("c-list").setAttribute("data-ready", "1");
  }
  function open(hash) {
    var p = new URLSearchParams(hash.replace(/^#/, ""));
    if (!p.has("item")) { return; }
    var want = ["item", "system", "criterion", "sample"];
    var keys = [C.item_id, C.system, C.criterion, C.sample];
    var k = rows.findIndex(function (r) {
      return want.every(function (w, j) { return !p.has(w) || String(r[keys[j]]) === p.get(w); });
    });
    if (k < 0) { count.textContent = "No row of item " + p.get("item") + " in this comparison."; return; }
    if (selection().indexOf(k) < 0) { search.value = ""; fCrit.value = ""; fWhere.value = ""; }
    render(selection().indexOf(k) + 1);
    var art = document.getElementById("row-" + k);
    art.querySelector("details").open = true;
    art.classList.add("target");
    art.setAttribute("tabindex", "-1");
    art.scrollIntoView({ block: "start" });
    art.focus({ preventScroll: true });
  }
  search.addEventListener("input", function () { render(); });
  fCrit.addEventListener("change", function () { render(); });
  fWhere.addEventListener("change", function () { render(); });
  more.addEventListener("click", function () { render(shown.length); });
  function shownCsv() {
    return csvText(cols, shown.map(function (k) { return rows[k]; }));
  }
  document.getElementById("c-download").addEventListener("click", function () {
    download("compare-shown.csv", shownCsv());
  });
  window.addEventListener("hashchange", function () { open(location.hash); });
  render();
  open(location.hash);
})();
"""
