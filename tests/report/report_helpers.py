"""Shared pieces of the HTML report tests: real output folders made by the command line, and
an independent reader of the report's embedded data (it does not use judgelab's code)."""
from __future__ import annotations

import base64
import gzip
import json
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd

from conftest import run_cli

XSS = "<script>alert(1)</script>"
CRITERIA = ["grammaticality", "cohesiveness", "likability", "relevance"]


def _items(path: Path) -> Path:
    rows = []
    for i in range(8):
        text = f"Story number {i}. Once upon a time a fox met a crow. The end came {i} days later."
        if i == 0:  # the first prompt in sorted order: shown in "What ran" too
            text = f"Story number 0. {XSS} see https://example.com/x for more."
        rows.append({"id": f"s{i}" if i != 5 else "s<b>5</b>", "text": text, "context": f"Prompt {i}",
                     "system": "human" if i % 2 else "gpt2"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _script(path: Path) -> Path:
    script = {
        "rules": [
            {"contains": "Story number 0.", "reply": "I would rate it a 5."},
            {"contains": "Story number 1.", "replies": ["I am an AI and cannot rate stories.", "I would rate it a 2."]},
            {"contains": "Story number 2.", "reply": f"{XSS} I would rate it a 3."},
            {"contains": "Story number 3.", "reply": "hmm, hard to say"},
            {"contains": "How enjoyable", "reply": "Likability: I would rate it a 1."},
        ],
        "default": "I would rate it a 4.",
    }
    path.write_text(json.dumps(script))
    return path


def human_rows() -> list[dict]:
    rows = []
    for i in range(8):
        for rater in ("ann", "bob"):
            for k, criterion in enumerate(CRITERIA):
                score = 1 + (i * 3 + k * 2 + (rater == "bob")) % 5
                rows.append({"item_id": f"s{i}" if i != 5 else "s<b>5</b>", "rater": rater, "criterion": criterion,
                             "score": score, "system": "human" if i % 2 else "gpt2"})
    return rows


def write_humans(path: Path) -> Path:
    import csv

    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["item_id", "rater", "criterion", "score", "system"])
        w.writeheader()
        w.writerows(human_rows())
    return path


def _run(*args: str) -> None:
    r = run_cli(*args)
    assert r.returncode == 0, r.stderr + r.stdout


def rate_agree_folder(factory) -> Path:
    """`judgelab rate` + `judgelab agree --out` into one folder (made once per test session)."""
    base = factory.getbasetemp() / "report-rate-agree"
    out = base / "run"
    if (out / "correlations.csv").exists():
        return out
    base.mkdir(exist_ok=True)
    items, script, humans = _items(base / "items.jsonl"), _script(base / "script.json"), write_humans(base / "H.csv")
    _run("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--quiet",
         "--compare", "human,gpt2", "--out", str(out), "--max-failure-rate", "1")
    _run("agree", str(out / "ratings.csv"), "--human", str(humans), "--method", "kendall,pearson", "--out", str(out),
         "--format", "csv")
    return out


def dhp_folder(factory) -> Path:
    base = factory.getbasetemp() / "report-dhp"
    out = base / "run"
    if (out / "discernment.csv").exists():
        return out
    base.mkdir(exist_ok=True)
    script = base / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    _run("dhp", "--task", "summarization", "--judge", f"scripted-test-double:{script}", "--out", str(out),
         "--n-items", "4", "--samples", "2", "--quiet")
    return out


# -- reading a report without judgelab ----------------------------------------------------------
class Page(HTMLParser):
    """Every start tag with its attributes, script contents by id, and the visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.text: list[str] = []
        self._script: dict[str, str | None] | None = None
        self._buffer: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "script":
            self._script, self._buffer = a, []

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._buffer)))
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            self._buffer.append(data)
        else:
            self.text.append(data)

    def script(self, script_id: str) -> str:
        return next(body for attrs, body in self.scripts if attrs.get("id") == script_id)

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if a.get("id")}


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def read_part(path: Path) -> tuple[int, dict]:
    """A sidecar part ``window.judgelabItemPart(k, {...});`` read as (k, its object)."""
    m = re.fullmatch(r"window\.judgelabItemPart\((\d+), (.*)\);\n", path.read_text(encoding="utf-8"), re.DOTALL)
    assert m, path
    return int(m.group(1)), json.loads(m.group(2))


def _gunzip(data: str) -> dict:
    return json.loads(gzip.decompress(base64.b64decode(data)).decode("utf-8"))


def decode_units(page: Page, sidecar: Path | None = None) -> list[dict]:
    """The item browser's units in embedded order, with prompts and samples decoded; with ``sidecar`` (the
    folder of parts beside the page), the units of every part after the page's own."""
    index = json.loads(page.script("jl-index"))
    blob = json.loads(page.script("jl-details"))
    assert blob["encoding"] == "gzip+base64"
    payload = _gunzip(blob["data"])
    segments = [(payload["S"], payload["D"])]
    columns = {k: list(index[k]) for k in ("r", "c", "s", "i", "j", "h", "d", "o") if k in index}
    if sidecar is not None:
        files = sorted(sidecar.glob("part-*.js"))
        for k, path in enumerate(files, start=1):
            number, part = read_part(path)
            assert number == k and path.name == f"part-{k:04d}.js"
            for col in columns:
                columns[col] += part["index"][col]
            got = _gunzip(part["data"])
            segments.append((got["S"], got["D"]))
    rows = [(strings, d) for strings, details in segments for d in details]
    all_prompts = [[[(role, "\n".join(strings[k] for k in lines)) for role, lines in p] for p in d[0]] for strings, d in rows]
    units = []
    for u, (strings, (prompts, samples, humans, cue, rated)) in enumerate(rows):
        units.append({
            "rater": index["raters"][columns["r"][u]], "criterion": index["criteria"][columns["c"][u]],
            "system": index["systems"][columns["s"][u]], "item_id": columns["i"][u], "judge": columns["j"][u],
            "human": columns["h"][u], "diff": columns["d"][u], **({"place": columns["o"][u]} if "o" in columns else {}),
            "prompts": all_prompts[u],
            "samples": [{"sample": s[0], "status": s[1], "score": s[2], "raw": strings[s[6]] if s[6] is not None else None,
                         "prompt": s[7], "dist": s[9]} for s in samples],
            "humans": humans, "cue": cue, "rated": None if rated is None else {
                "text": text_ref(rated[0], strings, all_prompts, u), "context": text_ref(rated[1], strings, all_prompts, u),
                "parts": {name: text_ref(ref, strings, all_prompts, u) for name, ref in rated[2]}},
        })
    return units


def text_ref(ref, strings: list[str], all_prompts: list, unit: int) -> str | None:
    """A text reference of the payload: a string index, [prompt, message, start, length] into the unit's
    own decoded prompts or [unit, prompt, message, start, length] into another's, counted in UTF-16 code
    units (as the page's JavaScript counts)."""
    if ref is None:
        return None
    if isinstance(ref, int):
        return strings[ref]
    if len(ref) == 5:
        unit, ref = ref[0], ref[1:]
    prompts = all_prompts[unit]
    p, m, start, length = ref
    units16 = prompts[p][m][1].encode("utf-16-le")
    return units16[2 * start:2 * (start + length)].decode("utf-16-le")


def store_prompt_and_raw(store: Path) -> dict[tuple, dict]:
    """(rater, criterion, system, item, sample) → {messages, raw} read straight from SQLite."""
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    calls = {k: json.loads(q) for k, q in db.execute("SELECT key, request FROM calls")}
    out = {}
    for rater, criterion, system, item, sample, raw, attempts in db.execute(
            "SELECT rater, criterion, system, item_id, sample, raw, attempts FROM judgments"):
        key = json.loads(attempts)[-1]["key"] if json.loads(attempts) else None
        msgs = [tuple(m) for m in calls[key]["messages"]] if key in calls else None
        out[(rater, criterion, system, item, sample)] = {"messages": msgs, "raw": raw}
    db.close()
    return out


URL = re.compile(r"https?://", re.IGNORECASE)


# -- an audit folder -----------------------------------------------------------------------------
JUDGE = f"lenient{XSS}"


def audit_study(n_items: int = 60, seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Two judges with three samples (one lenient, its name an XSS probe), three humans, text lengths."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, n_items)
    judges, humans, lengths = [], [], []
    for i in range(n_items):
        item, system, group = str(i // 2), "A" if i % 2 else "B", f"g{i // 2}"
        length = 300 + 100 * rng.normal()
        lengths.append({"item_id": item, "system": system, "length": length})
        for h in range(3):
            humans.append({"item_id": item, "system": system, "group": group, "criterion": "quality",
                           "rater": f"p{h}", "score": float(np.clip(np.round(truth[i] + rng.normal(0, 0.6)), 1, 5))})
        for name, shift in ((JUDGE, 0.6), ("plain", 0.0)):
            for k in range(3):
                judges.append({"item_id": item, "system": system, "group": group, "criterion": "quality",
                               "rater": name, "sample": k, "status": "ok",
                               "score": float(np.clip(np.round(truth[i] + shift + rng.normal(0, 0.7)), 1, 5))})
    return pd.DataFrame(judges), pd.DataFrame(humans), pd.DataFrame(lengths)


def audit_study_folder(root: Path) -> Path:
    """`judgelab audit` with juries, selective judging and calibration on :func:`audit_study` into ``root/out``."""
    judges, humans, lengths = audit_study()
    judges.to_csv(root / "ratings.csv", index=False)
    humans.to_csv(root / "people.csv", index=False)
    lengths.to_csv(root / "lengths.csv", index=False)
    res = run_cli("audit", str(root / "ratings.csv"), "--human", str(root / "people.csv"), "--lengths",
                  str(root / "lengths.csv"), "--jury", "mean,weighted", "--selective", "--calibration",
                  "--n-resamples", "99", "--format", "csv", "--out", str(root / "out"))
    assert res.returncode == 0, res.stderr
    return root / "out"


TOUR_ITEMS = ["The sun rose over the quiet town.", "Rain fell all day on the harbour.", "She closed the book and smiled.",
              "town quiet the over rose sun The.", "harbour the on day all fell Rain.", "smiled and book the closed She."]


def tour_audit_folder(root: Path) -> Path:
    """The README's audit, as its tour runs it in ``root``: two scripted judges' ratings files, a wide human file,
    lengths and ``--per-words 10 --calibration``, into ``root/tour/audit``."""
    (root / "items.jsonl").write_text("".join(json.dumps({"id": str(k + 1), "system": "A" if k < 3 else "B", "text": t})
                                              + "\n" for k, t in enumerate(TOUR_ITEMS)), encoding="utf-8")
    (root / "judge.json").write_text(json.dumps({"rules": [{"contains": "quiet the over", "reply": "2"},
                                                           {"contains": "the on day", "reply": "1"},
                                                           {"contains": "book the closed", "reply": "2"}],
                                                 "default": "Rating: 4"}), encoding="utf-8")
    (root / "lenient.json").write_text(json.dumps({"rules": [{"contains": "quiet the", "replies": ["4", "2", "5"]},
                                                             {"contains": "the on", "reply": "3"},
                                                             {"contains": "the closed", "replies": ["3", "4"]}],
                                                   "default": "Rating: 5"}), encoding="utf-8")
    (root / "human.csv").write_text("item_id,system,rater,fluency,coherence\n1,A,ana,5,4\n2,A,ana,4,4\n3,A,ana,4,5\n"
                                    "4,B,ana,1,2\n5,B,ana,2,1\n6,B,ana,1,1\n1,A,ben,4,4\n2,A,ben,5,4\n3,A,ben,4,4\n"
                                    "4,B,ben,2,1\n5,B,ben,1,2\n6,B,ben,2,2\n", encoding="utf-8")
    (root / "lengths.csv").write_text("item_id,system,length\n1,A,7\n2,A,7\n3,A,6\n4,B,7\n5,B,7\n6,B,6\n",
                                      encoding="utf-8")
    for args in (("--judge", "scripted-test-double:judge.json", "--out", "tour/rate"),
                 ("--judge", "scripted-test-double:lenient.json", "--rater", "lenient", "--out", "tour/lenient")):
        res = run_cli("rate", "--items", "items.jsonl", "--template", "plain-quality", *args, cwd=root)
        assert res.returncode == 0, res.stderr
    res = run_cli("audit", "tour/rate/ratings.csv", "tour/lenient/ratings.csv", "--human", "human.csv", "--lengths",
                  "lengths.csv", "--per-words", "10", "--calibration", "--out", "tour/audit", cwd=root)
    assert res.returncode == 0, res.stderr
    return root / "tour" / "audit"


RUNS_XSS = "<script>window.__xss = 1</script>"
RUN_WORDS = ["otter", "heron", "badger", "lynx", "marten", "ibis", "walrus", "gecko", "puffin", "okapi"]


def three_runs(base: Path) -> Path:
    """A folder of three runs of scripted stand-in judges over the same ten stories."""
    runs = base / "runs"
    if (runs / "strict" / "ratings.csv").exists():
        return runs
    items = base / "items.jsonl"
    texts = [f"Story {k}: a tale of the {w}." + (f" {RUNS_XSS}" if k == 3 else "") for k, w in enumerate(RUN_WORDS)]
    items.write_text("".join(json.dumps({"id": f"s{k}", "text": t, "context": "Write a tale."}) + "\n"
                             for k, t in enumerate(texts)))
    scripts = {
        "lenient": {"default": "I would rate it a 4."},
        "strict": {"rules": [{"contains": "heron", "reply": "=SUM(A1) I would rate it a 1."},
                             {"contains": "walrus", "reply": "I would rate it a 2, \"flat\",\nshort."},
                             {"contains": "puffin", "reply": "no idea"}],
                   "default": "I would rate it a 4."},
        "third": {"default": "I would rate it a 3."},
    }
    for name, script in scripts.items():
        (base / f"{name}.json").write_text(json.dumps(script))
        r = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{base / name}.json",
                    "--criteria", "likability", "--samples", "1", "--out", str(runs / name), "--quiet",
                    "--max-failure-rate", "1")
        assert r.returncode == 0, r.stderr
    return runs
