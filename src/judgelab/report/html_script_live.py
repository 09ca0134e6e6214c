"""The item browser's part of the live view's in-place update, a piece of the report's script
(:mod:`judgelab.report.html_script` embeds it inside the browser's function, whose variables it uses).

``prepare(section)`` takes the items section of the rebuilt page (``judgelab view``), decodes its details and
gives back a function that shows them: the filters are kept by name (a criterion, system or judge keeps its
selection when the lists grow), the page number, the compact view, and on every card still shown its open
sections (the prompt, reasoning) and its "show all" toggles; the parts of the new data load again when needed.
The function draws the cards at once, so the live
view swaps every section in one step and puts the scroll back where it was before anything is painted.
"""
from __future__ import annotations

__all__ = ["ITEMS_LIVE"]

ITEMS_LIVE = r"""
  // ---- the live view: the browser's new data, its state kept --------------------
  var LISTS = { criterion: "criteria", system: "systems", rater: "raters" };
  var SELECTS = { criterion: fCrit, system: fSys, rater: fRater };

  function cardStates() {
    var out = {};
    Array.prototype.forEach.call(list.querySelectorAll("article.unit"), function (art) {
      var open = [], shown = [];
      Array.prototype.forEach.call(art.querySelectorAll("details"), function (d, k) { if (d.open) { open.push(k); } });
      Array.prototype.forEach.call(art.querySelectorAll("button.show-all"), function (b, k) {
        if (b.getAttribute("aria-expanded") === "true") { shown.push(k); }
      });
      out[art.getAttribute("data-key")] = { open: open, shown: shown };
    });
    return out;
  }

  function keepCard(art, was) {
    if (!was) { return; }
    var opened = art.querySelectorAll("details"), toggles = art.querySelectorAll("button.show-all");
    was.open.forEach(function (k) { if (opened[k]) { opened[k].open = true; } });
    was.shown.forEach(function (k) { if (toggles[k]) { toggles[k].click(); } });
  }

  function prepare(section) {
    var newIndex = section.querySelector("#jl-index"), newDetails = section.querySelector("#jl-details");
    if (!newIndex || !newDetails) { return Promise.resolve(null); }
    var next = JSON.parse(newIndex.textContent), b64 = JSON.parse(newDetails.textContent).data;
    return decode(b64).then(function (obj) {
      return function commit() {
        var names = {};
        Object.keys(LISTS).forEach(function (key) { names[key] = state[key] === "" ? null : idx[LISTS[key]][+state[key]]; });
        var keep = cardStates();
        idx = next; detailsB64 = b64; n = idx.i.length;
        strings = obj.S; details = obj.D; loading = Promise.resolve();
        partStrings = [obj.S]; loadingAll = null; parts = partsOf(section.querySelector("#browser") || section);
        indexEl.textContent = newIndex.textContent;
        detailsEl.textContent = newDetails.textContent;
        Object.keys(LISTS).forEach(function (key) {
          var select = SELECTS[key];
          while (select.options.length > 1) { select.remove(1); }
          fill(select, idx[LISTS[key]]);
          var at = names[key] === null ? -1 : idx[LISTS[key]].indexOf(names[key]);
          state[key] = at < 0 ? "" : String(at);
          select.value = state[key];
        });
        // the section's heading and notes as the rebuilt page has them
        var mine = root.parentNode;
        Array.prototype.slice.call(mine.children).forEach(function (c) {
          if (c !== root && c.tagName !== "SCRIPT") { mine.removeChild(c); }
        });
        Array.prototype.forEach.call(section.children, function (c) {
          if (c.id !== "browser" && c.tagName !== "SCRIPT") { mine.insertBefore(document.importNode(c, true), root); }
        });
        mine.setAttribute("data-live", section.getAttribute("data-live") || "");
        render(keep);
      };
    });
  }
"""
