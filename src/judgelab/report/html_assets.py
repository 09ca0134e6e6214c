"""The HTML report's stylesheet, embedded in every report (no external resources); the script is
:mod:`judgelab.report.html_script`."""
from __future__ import annotations

__all__ = ["CSS"]

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
table.audit-grid td { min-width: 9rem; }
table.audit-grid ul { margin: 0; padding-left: 0; list-style: none; }
td.audit-detected { background: #fde2d7; font-weight: 600; }
td.audit-clear, td.audit-none { color: var(--muted); }
.audit-figures { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
.audit-figures figure { flex: 0 1 auto; }
details.audit-table, details.audit-humans, details.audit-undetected { margin: 0.4rem 0; }
details.audit-table > summary, details.audit-humans > summary, details.audit-undetected > summary { cursor: pointer; color: var(--accent); }
.hl-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(330px, 1fr)); gap: 0.8rem; }
article.hl-card { border: 1px solid var(--line); border-radius: 6px; padding: 0.3rem 0.8rem 0.5rem; }
article.hl-card h3 { margin: 0.2rem 0 0.3rem; }
.hl-judge { font-weight: normal; color: var(--muted); font-size: 0.9rem; overflow-wrap: anywhere; }
.hl-r, .hl-base, .hl-means { margin: 0.2rem 0; }
.hl-r strong { font-size: 1.15rem; }
.hl-none { color: var(--bad); }
.hl-words { border-left: 4px solid var(--line); padding: 0.1rem 0.8rem; margin: 0.4rem 0 0.6rem; }
.hl-words p, .hl-words ul { margin: 0.2rem 0; }
.hl-verdict { margin: 0.2rem 0; }
article.hl-card figure { margin: 0.3rem 0; }
article.hl-card figcaption { font-size: 0.82rem; }
.unit-side { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 0.6rem; margin: 0.3rem 0; }
.side-label { font-weight: 600; font-size: 0.85rem; color: var(--muted); }
pre.side-raw { max-height: 8rem; }
.unit-rated { margin: 0.3rem 0; }
.unit-text pre.item-text { max-height: none; background: #fffdf5; }
.unit-context pre.item-text { max-height: none; font-size: 0.82rem; }
button.show-all { font: inherit; font-size: 0.85rem; padding: 0.05rem 0.5rem; }
#units.compact .tablewrap, #units.compact details.prompt, #units.compact .unit-meta, #units.compact .unit-rated { display: none; }
#units.compact article.unit { padding: 0.2rem 0.6rem; margin: 0.3rem 0; }
@media print { .controls, .pager { display: none; } }
"""
