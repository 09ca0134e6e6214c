"""Issue 20's must-show: the report of an annotation store with n = 4 items prints no interval for the
degenerate estimates and shows the reason instead. The store is made in-process as a user makes it: the
judge rates through the run core (the scripted test double), two people rate through the annotation
session (`judgelab annotate`'s API), and the report is written as `annotate` writes it when it stops."""
from __future__ import annotations

import json
import re

from judgelab.annotate.report_link import refresh_report
from judgelab.annotate.setup import prepare
from judgelab.datasets.items import load_items
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.report.html import build_report
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store
from report_helpers import decode_units, parse

SCORES = {"p0": 1, "p1": 2, "p2": 4, "p3": 5}


def _annotation_folder(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": k, "text": f"Paragraph {k}. It has {v} sentences.", "system": "w"}) + "\n"
                             for k, v in SCORES.items()), encoding="utf-8")
    out = tmp_path / "annotation"
    out.mkdir()
    judge = ScriptedTestJudge({"rules": [{"contains": f"Paragraph {k}.", "reply": f"Rating: {v}"} for k, v in SCORES.items()]})
    with Store(out / "store.sqlite") as store:
        run_spec(RunSpec(template="plain-quality", samples=1), load_items(items), store, backend=judge)
    session = prepare(items, "plain-quality", out, annotators=["alice", "bob"])
    try:
        for who, shift in (("alice", 0), ("bob", 1)):
            for position in range(len(SCORES)):
                item = session.items[session.order(who)[position]]
                value = min(5, SCORES[item.item_id] + shift * (item.item_id == "p1"))
                shown = session.now()
                result = session.submit(who, position, shown, session.sign(who, position, shown),
                                        {k: str(value) for k in range(len(session.outputs))})
                assert result.status == "recorded"
    finally:
        session.store.close()
    return out


def test_n4_annotation_store_prints_no_interval_and_says_why(tmp_path):
    folder = _annotation_folder(tmp_path)
    path, line = refresh_report(folder)  # what `judgelab annotate` writes when it stops
    assert path is not None, line
    data = build_report(folder)
    assert not data.problems and data.headline is not None and data.headline.rows
    for row in data.headline.rows:  # every judge × criterion × level: n = 4 items, no interval
        assert row.r is not None and row.n == 4
        assert "[" not in row.interval and not row.interval.startswith("95% CI"), row.interval
        assert row.interval.startswith("no 95% interval") and "only 4 item_id value(s)" in row.interval, row.interval
    html = path.read_text(encoding="utf-8")
    page = parse(html)
    interval = re.compile(r"95% CI \[|\[\s*-?\d+\.\d+\s*,\s*-?\d+\.\d+\s*\]")
    for section, following in (("headline", "results"), ("agreement", None)):
        part = html[html.index(f'id="{section}"'):]
        part = part[:part.index(f'id="{following}"')] if following else part[:part.index("</section>")]
        words = " ".join(" ".join(parse(part).text).split())
        assert not interval.search(words) and not interval.search(part), section  # no interval, as text or tooltip
        assert words.count("only 4 item_id value(s)") >= len(data.headline.rows), section  # the reason instead
    agreement = data.agreement.correlations
    low, high, note = (agreement.columns.index(c) for c in ("95% CI low", "95% CI high", "note"))
    for row in agreement.rows:  # every correlation of the table: no bounds, the reason in its note
        assert row[low] in (None, "") and row[high] in (None, "") and row[note], row  # empty cells of agree's CSV
    chart = html[html.index('id="fig-corr-0"'):]
    assert "<circle" not in chart[:chart.index("</svg>")]  # no bare dot drawn for an estimate without interval
    units = decode_units(page)  # the cards: the people's mean beside the judge, and the paragraph rated
    assert len(units) == 8 and all(u["human"] is not None and u["rated"]["text"].startswith("Paragraph ") for u in units)
