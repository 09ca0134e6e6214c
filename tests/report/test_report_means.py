"""One mean per rater, system and criterion: summary.csv and report.html show the same number."""
from __future__ import annotations

import json
from html.parser import HTMLParser

import pandas as pd

from conftest import run_cli


class _Table(HTMLParser):
    """The header and the cells (their exact ``data-v`` value, else the text) of one table of a page."""

    def __init__(self, table_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.table_id, self.inside, self.header, self.rows = table_id, False, [], []
        self._cell: list[str] | None = None
        self._value: str | None = None
        self._head = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == self.table_id:
            self.inside = True
        elif self.inside and tag == "thead":
            self._head = True
        elif self.inside and tag == "tr" and not self._head:
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self._cell, self._value = [], a.get("data-v")

    def handle_endtag(self, tag):
        if tag == "table" and self.inside:
            self.inside = False
        elif self.inside and tag == "thead":
            self._head = False
        elif self.inside and tag in ("td", "th") and self._cell is not None:
            text = self._value if self._value else "".join(self._cell).strip()
            (self.header if self._head else self.rows[-1]).append(text)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_summary_csv_and_the_report_show_the_mean_of_item_means(tmp_path):
    # item a: three samples rated 5; item b: one valid sample 1 and two answers without a rating
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": i, "text": t, "context": "A prompt.", "system": "s"}) + "\n"
                             for i, t in {"a": "Alpha story.", "b": "Beta story."}.items()))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"contains": "Alpha story.", "reply": "Rating: 5"},
                                            {"contains": "Beta story.", "replies": ["Rating: 1", "hmm", "hmm"]}],
                                  "default": "Rating: 3"}))
    out = tmp_path / "out"
    r = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--criteria", "likability",
                "--samples", "3", "--out", str(out), "--quiet", "--max-failure-rate", "1")
    assert r.returncode == 0, r.stderr
    ratings = pd.read_csv(out / "ratings.csv")
    assert sorted(ratings.loc[ratings["status"] == "ok", "score"]) == [1, 5, 5, 5]  # the case under test
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 1 and summary.loc[0, "mean"] == 3.0  # not 4.0, the mean of the four ratings pooled

    page = _Table("t-summary")
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    assert "mean" in page.header and page.rows, page.header
    row = dict(zip(page.header, page.rows[0]))
    assert float(row["mean"]) == 3.0
    assert float(row["SD"]) == summary.loc[0, "sd"]  # the SD keeps its own definition: all successful ratings
