"""The item browser's search, item links and download, a piece of the report's script
(:mod:`judgelab.report.html_script` embeds it inside the browser's function, whose variables it uses).

Each loads the parts of a page that holds only the first items (:mod:`judgelab.report.html_script_parts`) first.

* **Search** (``#f-search``): the items whose id, rated text or judge's answers (every sample's) hold every word
  typed, case-insensitive, with the criterion, system and judge filters; the status line says how many match.
  The details are decoded first, so the search covers texts kept only inside the prompts.
* **A link to each card** (``#item=<id>&criterion=…&system=…&judge=…``, each part encoded): opening the page
  with one, or following it, shows the card's page (clearing filters that hide it), scrolls to the card,
  marks it and opens its prompt.
* **Download** (``#f-download``): the items shown — all that match, not only this page — as CSV made in the
  page (:data:`judgelab.report.compare_script.CSV_CELL_JS`: text cells quoted, formulas guarded).
"""
from __future__ import annotations

from judgelab.report.compare_script import CSV_CELL_JS

__all__ = ["ITEMS_FIND"]

ITEMS_FIND = CSV_CELL_JS + r"""
  // ---- search, a link to each card, download of the items shown -----------------
  function unitText(u) {
    var d = detail(u), rated = d[4], out = [idx.i[u]];
    if (rated) {
      if (rated[2].length) { rated[2].forEach(function (p) { out.push(textOf(d, p[1])); }); }
      else { out.push(textOf(d, rated[0])); }
    }
    d[1].forEach(function (s) { out.push(str(s[6])); });
    return out.join("\n");
  }
  function matches(u) {
    var words = (state.search || "").toLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length || !details) { return true; }
    if (state.hayOf !== details) { state.hay = []; state.hayOf = details; }
    var hay = state.hay[u] = state.hay[u] || unitText(u).toLowerCase();
    return words.every(function (w) { return hay.indexOf(w) >= 0; });
  }
  function linkTo(u) {
    var span = el("span", "unit-link", " \u00b7 "), a = el("a", "permalink", "link to this item");
    a.href = "#item=" + encodeURIComponent(idx.i[u]) + "&criterion=" + encodeURIComponent(idx.criteria[idx.c[u]]) +
      "&system=" + encodeURIComponent(idx.systems[idx.s[u]]) + "&judge=" + encodeURIComponent(idx.raters[idx.r[u]]);
    span.appendChild(a);
    return span;
  }
  function openLink(hash) {
    var p = new URLSearchParams(hash.replace(/^#/, ""));
    if (!p.has("item")) { return; }
    var cols = [["item", idx.i, null], ["criterion", idx.c, idx.criteria], ["system", idx.s, idx.systems],
                ["judge", idx.r, idx.raters]];
    var u = -1;
    for (var k = 0; k < n && u < 0; k++) {
      if (cols.every(function (c) { return !p.has(c[0]) || String(c[2] ? c[2][c[1][k]] : c[1][k]) === p.get(c[0]); })) { u = k; }
    }
    if (u < 0 && !complete()) { loadAll().then(function () { openLink(hash); }, failed); return; }
    if (u < 0) { message.textContent = "No item " + p.get("item") + " in this report."; return; }
    load().then(function () {
      var sel = selection();
      if (sel.indexOf(u) < 0) {
        state.criterion = state.system = state.rater = state.search = "";
        fCrit.value = fSys.value = fRater.value = fSearch.value = "";
        sel = selection();
      }
      state.page = Math.floor(sel.indexOf(u) / pageSize);
      render();
      return load();
    }).then(function () {
      var art = list.querySelector('article[data-unit="' + u + '"]');
      if (!art) { return; }
      art.classList.add("target");
      art.setAttribute("tabindex", "-1");
      var prompt = art.querySelector("details.prompt");
      if (prompt) { prompt.open = true; }
      art.scrollIntoView({ block: "start" });
      art.focus({ preventScroll: true });
    });
  }
  var fSearch = document.getElementById("f-search");
  fSearch.addEventListener("input", function () {
    state.search = fSearch.value; state.page = 0;
    load().then(function () { render(); });  // render loads every part first where the page lacks some
  });
  document.getElementById("f-download").addEventListener("click", function () {
    loadAll().then(function () {
      var head = ["item_id", "system", "criterion", "judge", "judge_mean", "samples_scored", "samples", "human_mean",
                  "human_ratings", "judge_minus_human", "text", "answer"];
      download("items-shown.csv", csvText(head, selection().map(function (u) {
        var d = detail(u), rated = d[4];
        return [idx.i[u], idx.systems[idx.s[u]], idx.criteria[idx.c[u]], idx.raters[idx.r[u]], idx.j[u], idx.ok[u], idx.n[u],
                idx.nh[u] ? idx.h[u] : null, idx.nh[u], idx.d[u], rated && !rated[2].length ? textOf(d, rated[0]) : "",
                d[1].length ? str(d[1][0][6]) : ""];
      })));
    });
  });
  window.addEventListener("hashchange", function () { openLink(location.hash); });
  openLink(location.hash);
"""
