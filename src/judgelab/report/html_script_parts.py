"""The item browser's details and parts, a piece of the report's script (:mod:`judgelab.report.html_script`
embeds it inside the browser's function, whose variables it uses).

The page's own details (``#jl-details``) are decoded once (gzip, base64, ``DecompressionStream``). A page whose
units do not all fit (:mod:`judgelab.report.html_parts`) names its parts on ``#browser`` (``data-units``,
``data-embedded``, ``data-part-units``, ``data-parts``, ``data-part-dir``); each part is a script loaded with
``<script src>`` (which a page opened from ``file://`` may load) that hands its units to
``window.judgelabItemPart``. Parts load in order and their units are appended, keeping their numbers; a part
has its own string table, which :func:`detail` selects, and its units come by rater and item: the index column
``o`` (each unit's place in the default order) orders them. Every view that needs units beyond the page's share
(a later page, a filter, another order, a search, an item link, the download) waits for :func:`loadAll`, whose
progress the status line shows ("Searching 1,000,000 items…").
"""
from __future__ import annotations

__all__ = ["PARTS_JS"]

PARTS_JS = r"""
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
      loading = decode(detailsB64).then(function (obj) { strings = obj.S; details = obj.D; partStrings = [obj.S]; });
    }
    return loading;
  }
  function partsOf(box) {
    var count = parseInt(box.getAttribute("data-parts"), 10) || 0;
    return { count: count, loaded: 0, units: count ? parseInt(box.getAttribute("data-units"), 10) : n,
             embedded: parseInt(box.getAttribute("data-embedded"), 10) || n,
             size: parseInt(box.getAttribute("data-part-units"), 10) || 1, dir: box.getAttribute("data-part-dir") || "",
             version: box.getAttribute("data-part-version") || "" };
  }
  function complete() { return parts.loaded >= parts.count; }
  function needsAll() {
    return !complete() && (state.criterion !== "" || state.system !== "" || state.rater !== "" || !!state.search ||
      state.sort !== root.getAttribute("data-sort") || (state.page + 1) * pageSize > n);
  }
  // the details of unit ``u``, with the string table of its part selected
  function detail(u) {
    strings = partStrings[u < parts.embedded ? 0 : 1 + Math.floor((u - parts.embedded) / parts.size)];
    return details[u];
  }
  var waiting = {};
  function loadPart(k) {
    var from = parts;
    return new Promise(function (resolve, reject) {
      waiting[k] = resolve;
      var tag = document.createElement("script");
      var name = from.dir + "/part-" + ("000" + k).slice(-4) + ".js";
      tag.src = name + (location.protocol === "file:" || !from.version ? "" : "?v=" + from.version);
      tag.onerror = function () {
        reject(new Error(name + " could not be loaded: " + (location.protocol === "file:" ?
          "keep the folder " + from.dir + "/ beside this page" : "the report changed; the page updates itself")));
      };
      document.head.appendChild(tag);
    }).then(function (part) {
      if (from !== parts) { return null; }  // the live view brought new data meanwhile
      return decode(part.data).then(function (obj) {
        if (from !== parts) { return; }
        Object.keys(part.index).forEach(function (col) {
          var add = part.index[col], to = idx[col];
          for (var a = 0; a < add.length; a++) { to.push(add[a]); }
        });
        for (var u = 0; u < obj.D.length; u++) { details.push(obj.D[u]); }
        partStrings[k] = obj.S;
        n = idx.i.length;
        parts.loaded = k;
      });
    });
  }
  window.judgelabItemPart = function (k, part) { var done = waiting[k]; delete waiting[k]; if (done) { done(part); } };
  // every part, in order; the status line says how far it got
  function loadAll() {
    if (!loadingAll) {
      var from = parts;
      loadingAll = load().then(function next() {
        if (from !== parts || complete()) { return null; }
        status.textContent = (state.search ? "Searching " : "Loading ") + thousands(parts.units) + " items\u2026 (" +
          thousands(n) + " loaded)";
        return loadPart(parts.loaded + 1).then(next);
      });
      loadingAll.catch(function () { loadingAll = null; });
    }
    return loadingAll;
  }
"""
