"""What ``judgelab view`` adds to the report page: the status strip, a digest on every section, and the script
that updates the page in place.

The script asks ``state`` every few seconds (the data's version and the run's status, as
:func:`judgelab.report.live_status.run_status` says it) and shows the status in the strip as the server wrote
it. When the version changed it fetches the rebuilt page and, in one step, replaces only the sections whose
digest changed (open ``<details>`` kept by their summary, tables sorted as they were), inserts and removes
sections, hands the item browser its new data (:mod:`judgelab.report.html_script_live`: filters, page and open
cards kept) and puts the scroll back so that what was at the top of the window stays there. Nothing reloads.
Every text is set with ``textContent``; the page asks nothing of any other site.
"""
from __future__ import annotations

import hashlib
import re

__all__ = ["live_page", "STRIP", "LIVE_SCRIPT"]

STRIP = """<div id="live-strip" class="live-strip" data-state="none" data-version="%(version)s" data-every="%(every)d">
<strong id="live-state" class="live-state" role="status">live view</strong>
<span id="live-rater"></span><span id="live-done"></span><span id="live-failed"></span><span id="live-retries"></span>
<span id="live-rate"></span><span id="live-eta"></span><span id="live-checked" class="live-checked"></span>
</div>
<style>
.live-strip { position: sticky; top: 0; z-index: 20; display: flex; flex-wrap: wrap; gap: .2rem 1.1rem;
  padding: .35rem 1rem; background: #fff8db; border-bottom: 1px solid #c9b66b; font-size: .9rem; }
.live-strip span:empty { display: none; }
.live-strip[data-state="running"] .live-state { color: #05603a; }
.live-strip[data-state="stopped"] .live-state { color: #a30d0d; }
.live-checked { color: #555; }
</style>"""

LIVE_SCRIPT = r"""<script>
(function () {
  "use strict";
  var strip = document.getElementById("live-strip");
  var seen = strip.getAttribute("data-version"), every = parseInt(strip.getAttribute("data-every"), 10) || 2000;
  var FIELDS = ["state", "rater", "done", "failed", "retries", "rate", "eta"];

  function show(s) {
    var run = s.run, text = run ? run.text : { state: "no run has recorded its progress in this folder's store" };
    strip.setAttribute("data-state", run ? run.state : "none");
    FIELDS.forEach(function (f) { document.getElementById("live-" + f).textContent = text[f] || ""; });
    document.getElementById("live-checked").textContent = s.checked;
  }

  // what is at the top of the window (a card, else a section) and where, to put it back after the swap
  function anchor() {
    var top = strip.getBoundingClientRect().bottom;
    var found = null;
    [document.querySelectorAll("article.unit[data-key]"), document.querySelectorAll("main > [id], header.top")]
      .some(function (nodes) {
        return Array.prototype.some.call(nodes, function (e) {
          var r = e.getBoundingClientRect();
          if (r.bottom > top && r.top < window.innerHeight) { found = { el: e, top: r.top }; return true; }
          return false;
        });
      });
    return { found: found, key: found && found.el.getAttribute("data-key"), id: found && found.el.id, y: window.scrollY };
  }
  function restore(a) {
    var el = null;
    if (a.key) {
      el = Array.prototype.find.call(document.querySelectorAll("article.unit[data-key]"),
        function (e) { return e.getAttribute("data-key") === a.key; }) || null;
    } else if (a.id) {
      el = document.getElementById(a.id);
    } else if (a.found && a.found.el.isConnected) {
      el = a.found.el;
    }
    if (el) { window.scrollBy(0, el.getBoundingClientRect().top - a.found.top); } else { window.scrollTo(0, a.y); }
  }

  function detailsKeys(scope) {
    var seenText = {};
    return Array.prototype.map.call(scope.querySelectorAll("details"), function (d) {
      var s = d.querySelector("summary"), t = s ? s.textContent : "";
      seenText[t] = (seenText[t] || 0) + 1;
      return [t + "\u0001" + seenText[t], d];
    });
  }
  function replace(old, fresh) {
    var node = document.importNode(fresh, true), open = {};
    detailsKeys(old).forEach(function (p) { open[p[0]] = p[1].open; });
    detailsKeys(node).forEach(function (p) { if (p[0] in open) { p[1].open = open[p[0]]; } });
    if (window.judgelab && window.judgelab.bindTables) { window.judgelab.bindTables(node, old); }
    old.parentNode.replaceChild(node, old);
    return node;
  }

  function swapChildren(here, there) {
    var byId = {}, loose = [];
    Array.prototype.forEach.call(here.children, function (c) { if (c.id) { byId[c.id] = c; } else { loose.push(c); } });
    var prev = null;
    Array.prototype.slice.call(there.children).forEach(function (fresh) {
      var node = null;
      if (fresh.id && byId[fresh.id]) {
        node = byId[fresh.id];
        delete byId[fresh.id];
        if (fresh.id !== "items" && node.getAttribute("data-live") !== fresh.getAttribute("data-live")) {
          node = replace(node, fresh);
        }
      } else if (!fresh.id) {
        for (var k = 0; k < loose.length; k++) {
          if (loose[k] && loose[k].outerHTML === fresh.outerHTML) { node = loose[k]; loose[k] = null; break; }
        }
      }
      if (!node) {
        node = document.importNode(fresh, true);
        if (window.judgelab && window.judgelab.bindTables) { window.judgelab.bindTables(node, null); }
      }
      var want = prev ? prev.nextElementSibling : here.firstElementChild;
      if (node !== want) { here.insertBefore(node, want); }
      prev = node;
    });
    Object.keys(byId).forEach(function (id) { here.removeChild(byId[id]); });
    loose.forEach(function (c) { if (c) { here.removeChild(c); } });
  }

  function update() {
    return fetch("./", { cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var hooks = window.judgelab || {};
      var oldItems = document.getElementById("items"), newItems = doc.getElementById("items");
      var changed = oldItems && newItems && hooks.items && oldItems.getAttribute("data-live") !== newItems.getAttribute("data-live");
      return (changed ? hooks.items.prepare(newItems) : Promise.resolve(null)).then(function (commitItems) {
        var a = anchor();
        var header = document.querySelector("header.top"), newHeader = doc.querySelector("header.top");
        if (header && newHeader && header.getAttribute("data-live") !== newHeader.getAttribute("data-live")) {
          replace(header, newHeader);
        }
        swapChildren(document.querySelector("main"), doc.querySelector("main"));
        if (commitItems) { commitItems(); }
        if (!oldItems && newItems && hooks.startItems) { hooks.startItems(); }
        document.title = doc.title;
        restore(a);
        var newStrip = doc.getElementById("live-strip");
        seen = newStrip ? newStrip.getAttribute("data-version") : seen;
        strip.setAttribute("data-updates", String((parseInt(strip.getAttribute("data-updates"), 10) || 0) + 1));
      });
    });
  }

  function poll() {
    fetch("state", { cache: "no-store" }).then(function (r) {
      if (!r.ok) { throw new Error("HTTP " + r.status); }
      return r.json();
    }).then(function (s) {
      show(s);
      if (s.version !== seen) { return update(); }
    }).catch(function (err) {
      document.getElementById("live-checked").textContent = "not updated: " + err.message + "; trying again";
    }).then(function () { setTimeout(poll, every); });
  }
  poll();
})();
</script>"""

_SECTION = re.compile(r'<section id="[^"]*"')


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def live_page(html: str, version: str, every_ms: int) -> str:
    """The report page as ``view`` serves it: the strip first in the body, the live script last, and on the
    header and every section of ``<main>`` a ``data-live`` digest of its markup (what the script compares)."""
    main_end = html.rfind("</main>")
    starts = [m.start() for m in _SECTION.finditer(html, 0, main_end if main_end >= 0 else len(html))]
    out, last = [], 0
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else main_end
        cut = start + len("<section")
        out += [html[last:cut], f' data-live="{_digest(html[start:end])}"']
        last = cut
    html = "".join(out) + html[last:]
    head_start, head_end = html.find('<header class="top">'), html.find("</header>")
    if 0 <= head_start < head_end:
        cut = head_start + len("<header")
        html = html[:cut] + f' data-live="{_digest(html[head_start:head_end])}"' + html[cut:]
    body = html.find("<body>")
    strip = STRIP % {"version": version, "every": every_ms}
    if body >= 0:
        html = html[:body + len("<body>")] + "\n" + strip + html[body + len("<body>"):]
    end = html.rfind("</body>")
    return html[:end] + LIVE_SCRIPT + html[end:] if end >= 0 else html + LIVE_SCRIPT
