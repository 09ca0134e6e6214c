"""A recipe's report leads with the same first screen as agree's: per criterion the statistic, its interval, n
named and the verdict in words, with the published figure beside ours — all from the recipe's record
(results.json's ``published``), never recomputed by the page."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "recipes"))
from test_geval import write_summeval  # noqa: E402

from judgelab.published_results import PublishedComparison  # noqa: E402
from judgelab.recipes.geval import PUBLISHED, run_geval  # noqa: E402
from judgelab.report.headline import verdict_words  # noqa: E402
from judgelab.report.html import build_report, render_report  # noqa: E402


def _geval_folder(tmp_path: Path, docs: int = 8) -> Path:
    data = write_summeval(tmp_path / "summeval.jsonl", docs=docs)
    # the judge's score rises with the system (as the human means do), with one swap per document
    script = {"rules": [{"contains": f"Summary Q{s} ", "reply": str([1, 3, 2, 4, 5][s])} for s in range(5)],
              "default": "1"}
    (tmp_path / "script.json").write_text(json.dumps(script))
    out = tmp_path / "out"
    run_geval(data, out, [f"scripted-test-double:{tmp_path / 'script.json'}"], dataset="summeval", score="parsed",
              n_resamples=200, progress=False)
    return out


def test_the_geval_report_opens_on_the_verdict_with_the_published_figure_beside_ours(tmp_path):
    out = _geval_folder(tmp_path)
    data = build_report(out)
    assert data.sections()[0] == ("headline", "Judge vs humans")
    rows = {r.criterion: r for r in data.headline.rows}
    assert set(rows) == {"coherence", "consistency", "fluency", "relevance"}
    record = json.loads((out / "results.json").read_text())["steps"][-1]["results"]["published"]
    comp = PublishedComparison.from_record(record)
    mine = next(r for r in comp.rows if r.criterion == "coherence" and r.method == "spearman")
    row = rows["coherence"]
    assert (row.method, row.level, row.r, row.ci_low, row.ci_high, row.n) == \
        ("spearman", "summary", mine.r, mine.ci_low, mine.ci_high, 8)
    assert row.counted == "8 documents" and mine.published_r == PUBLISHED[("summeval", "summary", "coherence", "spearman")]
    assert row.published.startswith("G-EVAL-4 published 0.582")
    assert row.verdict == verdict_words(mine.r, mine.ci_low, mine.ci_high, 8, "documents", 8, "documents", row.caveat)
    assert row.also and row.also[0].startswith("Kendall τ = ") and "G-EVAL-4 published 0.457" in row.also[0]
    assert "the human scores are means of three raters" in row.baseline
    html = render_report(data)
    first = html.index('id="headline"')
    assert first < html.index('id="results"') and "G-EVAL-4 published 0.582" in html[first:html.index('id="results"')]


def test_the_page_shows_the_recorded_numbers(tmp_path):
    out = _geval_folder(tmp_path)
    path = out / "results.json"
    doc = json.loads(path.read_text())
    rows = doc["steps"][-1]["results"]["published"]["rows"]
    for r in rows:
        r.update(r=0.123, ci_low=-0.2, ci_high=0.4)
    path.write_text(json.dumps(doc))
    [row, *_] = build_report(out).headline.rows
    assert (row.r, row.interval) == (0.123, "95% CI [-0.20, 0.40]")
    assert row.verdict.startswith("Inconclusive: the interval includes 0 with 8 documents")
    assert row.published.endswith("above our 95% interval")  # 0.582 > 0.4
