"""The annotation app over HTTP (starlette's TestClient): the judge's exact text, blindness, escaping,
one row per rating written before the answer, first answer wins, resume, tokens, the overview."""
from __future__ import annotations

import html
import json
import os
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx", reason="starlette's TestClient needs httpx (in judgelab[test])")
from starlette.testclient import TestClient  # noqa: E402

from annotate_helpers import put_judge, read_rows, write_items  # noqa: E402
from judgelab.annotate.app import create_app  # noqa: E402
from judgelab.annotate.selection import annotator_order  # noqa: E402
from judgelab.annotate.setup import links, prepare  # noqa: E402
from judgelab.errors import JudgelabError  # noqa: E402
from judgelab.prompts import load_template  # noqa: E402
from judgelab.store import Store  # noqa: E402


@pytest.fixture
def opened():
    sessions = []

    def open_(items, out, **kw):
        kw.setdefault("annotators", ["alice", "bob"])
        session = prepare(items, kw.pop("template", "plain-quality"), out, **kw)
        sessions.append(session)
        client = TestClient(create_app(session), base_url="http://127.0.0.1:8765")
        return session, client

    yield open_
    for s in sessions:
        s.store.close()


def _hidden(page: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', page).group(1)


def _texts(page: str, css_class: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(rf'<div class="{css_class}"[^>]*>(.*?)</div>', page, re.S)]


def _by_id(page: str, element_id: str) -> str | None:
    found = re.search(rf'<div [^>]*id="{element_id}"[^>]*>(.*?)</div>', page, re.S)
    return html.unescape(found.group(1)) if found else None


def _shared(page: str) -> str:
    """The text every question shares as the page shows it: the context, the rated text set apart, what follows it."""
    parts = [_by_id(page, i) for i in ("context-text", "rated-text", "after-text")]
    return "\n".join(p for p in parts if p is not None)


def _submit(client, path: str, page: str, ratings: dict[int, int], comment: str = "", **override):
    data = {"position": _hidden(page, "position"), "shown": _hidden(page, "shown"), "signature": _hidden(page, "signature"),
            **{f"r{k}": str(v) for k, v in ratings.items()}, "comment": comment, **override}
    return client.post(path, data=data, follow_redirects=False)


def _human_rows(out: Path) -> list[tuple]:
    db = sqlite3.connect(out / "store.sqlite")
    try:
        return db.execute("SELECT rater, criterion, system, item_id, sample, score, status, raw FROM judgments "
                          "WHERE rater LIKE 'human:%' ORDER BY rater, system, item_id, criterion").fetchall()
    finally:
        db.close()


def test_the_form_shows_exactly_the_text_the_judge_gets(tmp_path, opened):
    """Chiang & Lee §2.2: same instructions, sample and question; the split for display loses nothing."""
    rows = [{"id": f"s{k}", "text": f"Story {k}.\nIt goes on.", "context": f"Prompt {k}", "system": "w"} for k in range(3)]
    items = tmp_path / "stories.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    template = load_template("chiang-lee-story")
    for variant in (None, "persona", "explain"):
        session, client = opened(items, tmp_path / f"out-{variant}", template="chiang-lee-story", variant=variant)
        page = client.get("/a/alice").text
        shared, questions = _shared(page), _texts(page, "question")
        assert len(questions) == 4  # the instruction and story once, four questions
        item = session.items[annotator_order(3, "alice", 0)[0]]
        assert _by_id(page, "rated-text") == item.text  # the story set apart from the instruction
        for criterion, question in zip(template.criteria, questions):
            assert shared + "\n" + question == template.render(criterion, item.fields(), variant)
        session.store.close()


def test_multi_metric_criterion_gives_one_row_per_metric(tmp_path, opened):
    items = tmp_path / "nle.jsonl"
    items.write_text(json.dumps({"id": "e1", "text": "Because a man is a person.", "premise": "A man sleeps.",
                                 "hypothesis": "A person sleeps.", "relationship": "entailment"}) + "\n", encoding="utf-8")
    session, client = opened(items, tmp_path / "out", template="nle-esnli")
    page = client.get("/a/alice").text
    assert len(re.findall(r'class="rating-row"', page)) == 2 and "informativeness" in page and "clarity" in page
    assert 'value="7"' in page and 'value="8"' not in page  # the template's 1-7 scale
    assert _submit(client, "/a/alice", page, {0: 6, 1: 3}).status_code == 303
    assert [(r[1], r[5]) for r in _human_rows(tmp_path / "out")] == [("clarity", 3.0), ("informativeness", 6.0)]


def test_blind_and_escaped(tmp_path, opened):
    evil = "<script>alert(1)</script> & \"quotes\" <b>bold</b>"
    items = write_items(tmp_path / "items.jsonl", per_system=1, extra=[{"id": "x1", "system": "beta-sys", "text": evil}])
    (tmp_path / "out").mkdir()
    put_judge(tmp_path / "out" / "store.sqlite", read_rows(items), lambda r, c, s: 4.0)
    session, client = opened(items, tmp_path / "out", annotators=["alice"])
    seen = []
    for _ in range(3):
        response = client.get("/a/alice")
        page = response.text
        seen.append(page)
        nonce = re.search(r"script-src 'nonce-([^']+)'", response.headers["content-security-policy"]).group(1)
        visible = page.replace(nonce, "")  # the random nonce may spell anything, e.g. "x1"
        for secret in ("alpha-sys", "beta-sys", "it00", "x1", "judge@plain-quality"):
            assert secret not in visible
        assert len(re.findall(r"<script", page)) == 1  # only the page's own script, with its nonce
        assert f'<script nonce="{nonce}">' in page
        _submit(client, "/a/alice", page, {0: 3, 1: 3})
    shown = next(p for p in seen if "alert(1)" in p)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;quotes&#34; &lt;b&gt;bold&lt;/b&gt;" in shown
    assert _by_id(shown, "rated-text") == evil


def test_ratings_are_rows_of_the_tidy_table_written_once(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=3)
    session, client = opened(items, tmp_path / "out")
    page = client.get("/a/alice").text
    assert "Item 1 of 6" in page
    response = _submit(client, "/a/alice", page, {0: 4, 1: 2}, comment="  clear,\n but short  ")
    assert response.status_code == 303 and response.headers["location"] == "/a/alice?note=saved"
    rows = _human_rows(tmp_path / "out")
    first = session.items[annotator_order(6, "alice", 0)[0]]
    assert rows == [("human:alice", "coherence", first.system, first.item_id, 0, 2.0, "ok", "clear, but short"),
                    ("human:alice", "fluency", first.system, first.item_id, 0, 4.0, "ok", "clear, but short")]
    # The same form again, with other values: the first answer wins, nothing is added.
    again = _submit(client, "/a/alice", page, {0: 1, 1: 1})
    assert again.headers["location"] == "/a/alice?note=already"
    assert _human_rows(tmp_path / "out") == rows
    nxt = client.get(again.headers["location"]).text
    assert "Item 2 of 6" in nxt and "first answer is kept" in nxt
    ratings = session.store.ratings()
    human = ratings[ratings["rater"] == "human:alice"]
    assert list(human.columns)[:7] == ["item_id", "system", "group", "criterion", "rater", "sample", "score"]
    assert (human["group"] == first.group).all()


@pytest.mark.parametrize("ratings,override,needle", [
    ({0: 4}, {}, "missing: 2"),
    ({0: 4, 1: 9}, {}, "outside the scale"),
    ({0: 4, 1: "x"}, {}, "not a point of the scale"),
    ({0: 4, 1: 4}, {"signature": "0" * 64}, "not served to you"),
    ({0: 4, 1: 4}, {"position": "99"}, "current selection"),
])
def test_bad_submissions_are_refused_and_write_nothing(tmp_path, opened, ratings, override, needle):
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    session, client = opened(items, tmp_path / "out")
    page = client.get("/a/alice").text
    response = _submit(client, "/a/alice", page, ratings, **override)
    assert response.status_code == 400 and needle in html.unescape(response.text)
    assert _human_rows(tmp_path / "out") == []


def test_a_form_for_bob_is_not_accepted_for_alice(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    _, client = opened(items, tmp_path / "out")
    bobs = client.get("/a/bob").text
    assert _submit(client, "/a/alice", bobs, {0: 3, 1: 3}).status_code == 400


def test_each_annotator_has_an_order_and_resumes_where_they_left(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=4)
    session, client = opened(items, tmp_path / "out", sample="random:6", seed=3)
    texts = {}
    for name in ("alice", "bob"):
        texts[name] = []
        for _ in range(2):
            page = client.get(f"/a/{name}").text
            texts[name].append(_shared(page))
            _submit(client, f"/a/{name}", page, {0: 5, 1: 4})
    for name in ("alice", "bob"):  # each sees the selection in their own seeded order
        expected = [session.items[i].text for i in annotator_order(6, name, 3)[:2]]
        assert [t.rsplit("\n", 1)[1] for t in texts[name]] == expected
    assert session.order("alice") != session.order("bob")
    keys = session.plan.keys
    session.store.close()
    session2, client2 = opened(items, tmp_path / "out", sample="random:6", seed=3)  # a restart
    assert session2.plan.keys == keys
    page = client2.get("/a/alice").text
    assert "Item 3 of 6" in page
    expected = session2.items[annotator_order(6, "alice", 3)[2]]
    assert expected.text in _shared(page)
    assert session2.progress("alice") == (2, 6) and session2.progress("bob") == (2, 6)


def test_finishing_shows_the_done_page(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=1)
    _, client = opened(items, tmp_path / "out")
    for _ in range(2):
        _submit(client, "/a/alice", client.get("/a/alice").text, {0: 2, 1: 2})
    page = client.get("/a/alice").text
    assert 'id="done"' in page and "All 2 items rated" in page
    assert len(_human_rows(tmp_path / "out")) == 4


def test_names_links_and_their_limits(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=1)
    _, client = opened(items, tmp_path / "out")
    assert client.get("/a/carol").status_code == 404  # not in --annotators
    assert client.get("/a/..%2F..%2Fetc").status_code == 404
    index = client.get("/").text
    assert 'href="/a/alice"' in index and 'href="/a/bob"' in index
    # A request addressed to another host name is refused (DNS rebinding).
    assert client.get("/a/alice", headers={"host": "evil.example:8765"}).status_code == 421


def test_open_names_without_a_list(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=1)
    _, client = opened(items, tmp_path / "out", annotators=[])
    assert client.get("/a/zoe").status_code == 200
    assert client.get("/a?name=zoe", follow_redirects=False).headers["location"] == "/a/zoe"
    assert client.get("/a/%3Cscript%3E").status_code == 404


def test_tokens(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    out = tmp_path / "out"
    session, client = opened(items, out, tokens=True)
    paths = dict(links(session))
    alice = paths["alice"]
    assert alice.startswith("/t/") and len(alice) > 30
    assert client.get("/a/alice").status_code == 404  # names cannot be guessed
    assert client.get("/t/" + "x" * 32).status_code == 404
    page = client.get(alice).text
    assert "Item 1 of 4" in page
    assert _submit(client, alice, page, {0: 3, 1: 4}).status_code == 303
    assert "alice" not in client.get("/").text and "bob" not in client.get("/").text
    assert client.get("/overview").status_code == 404
    assert client.get("/overview?token=wrong").status_code == 404
    overview = client.get(paths["overview"])
    assert overview.status_code == 200 and "alice" in overview.text
    assert (os.stat(out / "annotators.json").st_mode & 0o777) == 0o600
    session.store.close()
    session2, _ = opened(items, out, tokens=True)  # restart: the same links
    assert dict(links(session2)) == paths


def test_other_settings_in_the_same_folder_are_refused(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=4)
    session, _ = opened(items, tmp_path / "out", sample="random:4", seed=1)
    session.store.close()
    with pytest.raises(JudgelabError, match=r"other settings \(sample 'random:4' → 'random:5'"):
        prepare(items, "plain-quality", tmp_path / "out", sample="random:5", seed=1)
    with pytest.raises(JudgelabError, match="criteria"):
        prepare(items, "plain-quality", tmp_path / "out", criteria=["fluency"], sample="random:4", seed=1)


def test_comparison_templates_are_refused(tmp_path):
    items = write_items(tmp_path / "items.jsonl", per_system=1)
    with pytest.raises(JudgelabError, match="comparisons"):
        prepare(items, "nle-esnli-pairwise", tmp_path / "out")


def test_disagreement_selection_is_kept_while_people_rate(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=4)
    rows = read_rows(items)
    (tmp_path / "out").mkdir()
    put_judge(tmp_path / "out" / "store.sqlite", rows, lambda r, c, s: 1.0 + s * int(r["id"][-1]))
    session, client = opened(items, tmp_path / "out", sample="disagreement:3")
    # Samples 1 and 1 + k: the judge disagrees most with itself on it03 (both systems), then it02.
    assert set(session.plan.keys[:2]) == {("alpha-sys", "it03"), ("beta-sys", "it03")}
    assert session.plan.keys[2][1] == "it02" and not session.plan.uniform
    keys = session.plan.keys
    for _ in range(2):
        _submit(client, "/a/alice", client.get("/a/alice").text, {0: 5, 1: 5})
    session.store.close()
    session2, _ = opened(items, tmp_path / "out", sample="disagreement:3")
    assert session2.plan.keys == keys


def test_overview_alpha_and_judge_correlation(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=4)
    rows = read_rows(items)
    (tmp_path / "out").mkdir()
    put_judge(tmp_path / "out" / "store.sqlite", rows, lambda r, c, s: float(1 + int(r["id"][-1])))
    session, client = opened(items, tmp_path / "out")
    given = {}
    for name, shift in (("alice", 0), ("bob", 1)):
        for _ in range(5):
            page = client.get(f"/a/{name}").text
            text = _shared(page)
            item = next(i for i in session.items if i.text in text)
            value = min(5, 1 + int(item.item_id[-1]) + (shift if item.system == "beta-sys" else 0))
            given[(name, item.system, item.item_id)] = value
            _submit(client, f"/a/{name}", page, {0: value, 1: value})
    view = session.overview()
    assert [(a.annotator, a.done, a.total) for a in view.annotators] == [("alice", 5, 8), ("bob", 5, 8)]
    from judgelab.stats import krippendorff_alpha

    common = sorted({(s, i) for (_, s, i) in given})
    matrix = np.array([[given.get((n, s, i), np.nan) for s, i in common] for n in ("alice", "bob")], dtype=float)
    fluency = next(a for a in view.agreement if a.criterion == "fluency")
    assert fluency.alpha == pytest.approx(krippendorff_alpha(matrix, "ordinal"))
    assert fluency.items_rated_twice == int((~np.isnan(matrix)).all(axis=0).sum())
    judge = {(j.criterion, j.method): j for j in view.judges}
    assert judge[("fluency", "kendall")].n == len(common) and judge[("fluency", "kendall")].rater == "judge@plain-quality"
    page = client.get("/overview").text
    assert "Krippendorff" in page and "judge@plain-quality" in page
    assert fluency.items < 5 and not fluency.shown  # 5 of 8 items each: too few in common for a number
    assert f"too few items ({fluency.items}; at least 5 needed)" in page and f">{fluency.alpha:.3f}<" not in page


def test_the_store_is_held_while_the_session_runs(tmp_path, opened):
    import subprocess
    import sys

    from annotate_helpers import env

    items = write_items(tmp_path / "items.jsonl", per_system=1)
    opened(items, tmp_path / "out")
    store = str(tmp_path / "out" / "store.sqlite")
    code = f"from judgelab.store import Store\ntry:\n    Store({store!r})\nexcept Exception as e:\n    print(e)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert "is in use by judgelab process" in result.stdout
    with Store(store, read_only=True) as reader:  # readers (export, human-estimate) are never blocked
        assert reader.ratings().empty


def test_a_failed_start_leaves_no_selection_and_changed_items_are_named(tmp_path, opened):
    rows = [{"id": f"s{k}", "text": f"Story {k}.", "system": "w"} for k in range(3)]
    items = tmp_path / "stories.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(JudgelabError, match="needs the field 'context'"):
        prepare(items, "chiang-lee-story", tmp_path / "out")
    assert not (tmp_path / "out" / "annotation.json").exists()
    items.write_text("".join(json.dumps({**r, "context": "A prompt"}) + "\n" for r in rows), encoding="utf-8")
    session, _ = opened(items, tmp_path / "out", template="chiang-lee-story")  # fixed: starts
    session.store.close()
    items.write_text("".join(json.dumps({**r, "context": "Another prompt"}) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(JudgelabError, match=r"other settings \(the items changed\)"):
        prepare(items, "chiang-lee-story", tmp_path / "out")


def _post_raw(client, path: str, body: bytes):
    return client.post(path, content=body, headers={"content-type": "application/x-www-form-urlencoded"},
                       follow_redirects=False)


@pytest.mark.parametrize("extra,needle", [
    ("&r%C2%B2=4", "no field 'r²'"),                    # int("²") is a ValueError: it was HTTP 500
    ("&r" + "1" * 5000 + "=4", "no field 'r1111111111111111111…'"),  # int() refuses > 4300 digits: HTTP 500
    ("&r7=4", "no field 'r7'"),                          # a rating the form does not have: was ignored
    ("&r00=1", "no field 'r00'"),                        # a second spelling of r0: was ignored or won
    ("&r0=1", "the field 'r0' is sent twice"),           # the first one was kept silently
    ("&comment=again", "the field 'comment' is sent twice"),
    ("&notes=x", "no field 'notes'"),
])
def test_a_form_with_fields_it_does_not_have_is_400_and_writes_nothing(tmp_path, opened, extra, needle):
    """The TestClient re-raises a server exception, so a 500 of the old parsing fails here rather than passing."""
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    session, client = opened(items, tmp_path / "out")
    page = client.get("/a/alice").text
    body = (f"position={_hidden(page, 'position')}&shown={_hidden(page, 'shown')}&signature={_hidden(page, 'signature')}"
            f"&r0=4&r1=2&comment=fine{extra}")
    response = _post_raw(client, "/a/alice", body.encode())
    assert response.status_code == 400, response.text[:200]
    assert needle in html.unescape(response.text) and "reload the page" in response.text
    assert _human_rows(tmp_path / "out") == []
    # The same form without the extra field is recorded.
    assert _post_raw(client, "/a/alice", body[: len(body) - len(extra)].encode()).status_code == 303
    assert len(_human_rows(tmp_path / "out")) == 2


def test_a_form_that_is_not_utf8_or_rates_with_other_digits_is_400(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    _, client = opened(items, tmp_path / "out")
    page = client.get("/a/alice").text
    head = f"position={_hidden(page, 'position')}&shown={_hidden(page, 'shown')}&signature={_hidden(page, 'signature')}"
    latin1 = _post_raw(client, "/a/alice", f"{head}&r0=4&r1=2&comment=".encode() + "café".encode("latin-1"))
    assert latin1.status_code == 400 and "not UTF-8" in latin1.text   # was stored as "caf\ufffd"
    arabic = _submit(client, "/a/alice", page, {0: "٤", 1: 2})          # int("٤") == 4: was stored as a 4
    assert arabic.status_code == 400 and "is not a point of the scale" in html.unescape(arabic.text)
    assert _human_rows(tmp_path / "out") == []


def test_the_form_parsing_examples_run():
    import doctest

    import judgelab.annotate.app as app_module

    result = doctest.testmod(app_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 2 and result.failed == 0


def test_geval_summeval_form_shows_shared_text_once_and_each_criterion_on_its_scale(tmp_path, opened):
    """The article and summary once; each criterion's definition, question and anchored scale under them;
    G-Eval's model-only wording left out; fluency on its 1-3 scale (a 5 is refused, nothing written)."""
    items = tmp_path / "summeval.jsonl"
    article = "First paragraph of the article.\nSecond paragraph, with <b>markup</b> & more."
    items.write_text(json.dumps({"id": "d1", "text": "The summary.", "context": article}) + "\n", encoding="utf-8")
    session, client = opened(items, tmp_path / "out", template="geval-summeval")
    template = load_template("geval-summeval")
    page = client.get("/a/alice").text
    assert page.count("First paragraph of the article.") == 1 and page.count("The summary.") == 1
    assert "&lt;b&gt;markup&lt;/b&gt; &amp; more" in page
    for wording in ("just give a score ONLY", "Evaluation Steps", "on one metric", "model_only"):
        assert wording not in page
    form = session.form("alice", 0)
    fields = session.items[0].fields()
    assert [q.labels for q in form.questions] == [(1, 2, 3, 4, 5), (1, 2, 3, 4, 5), (1, 2, 3), (1, 2, 3, 4, 5)]
    for q in form.questions:
        assert q.text == template.render(q.criterion, fields, for_people=True)
        # nothing of the person's text is lost by the split: shared, own and question hold every line of it
        shown = "\n".join([form.shared_head or "", q.own, q.question]).split("\n")
        assert sorted(line for line in q.text.split("\n") if line) == sorted(line for line in shown if line)
        assert q.own.startswith("Evaluation Criterion: ") and q.question == f"Evaluation Score - {q.criterion.capitalize()}:"
        assert all(html.escape(label, quote=False) in page for _, label in q.anchors)
    assert _texts(page, "own") == [q.own for q in form.questions]
    refused = _submit(client, "/a/alice", page, {0: 4, 1: 5, 2: 5, 3: 2})
    assert refused.status_code == 400 and "rating 5 is outside the scale 1–3" in html.unescape(refused.text)
    assert _human_rows(tmp_path / "out") == []
    assert _submit(client, "/a/alice", page, {0: 4, 1: 5, 2: 3, 3: 2}).status_code == 303
    assert [(r[1], r[5]) for r in _human_rows(tmp_path / "out")] == [
        ("coherence", 4.0), ("consistency", 5.0), ("fluency", 3.0), ("relevance", 2.0)]


def _two_raters_and_a_judge(n_items: int, seed: int = 3):
    """A ratings table: alice and bob on ``n_items`` items (two systems each), a judge with two samples."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=(n_items, 2))
    rows = []
    for k in range(n_items):
        for s, system in enumerate(("alpha-sys", "beta-sys")):
            for rater, noise in (("human:alice", 0), ("human:bob", 1)):
                score = float(np.clip(truth[k, s] + rng.integers(-noise, noise + 1), 1, 5))
                rows.append(dict(item_id=f"it{k:02d}", system=system, group=f"g{k}", criterion="quality", rater=rater,
                                 sample=0, score=score, status="ok"))
            for sample in range(2):
                rows.append(dict(item_id=f"it{k:02d}", system=system, group=f"g{k}", criterion="quality",
                                 rater="judge@t", sample=sample, score=float(truth[k, s] + sample), status="ok"))
    return pd.DataFrame(rows), [(sy, f"it{k:02d}") for k in range(n_items) for sy in ("alpha-sys", "beta-sys")]


def test_overview_says_in_words_when_too_few_items_are_in_common():
    """Issue 20: the overview showed alpha -0.417 and r -1.000, p 0.000 on 2 common items, with no caution."""
    from judgelab.annotate.overview import overview_of
    from judgelab.annotate.pages import render_page

    ratings, keys = _two_raters_and_a_judge(2)
    view = overview_of(ratings, keys, ["quality"], ["alice", "bob"], {"alice": 4, "bob": 4}, {})
    alpha = view.agreement[0]
    assert alpha.items == 4 and not alpha.shown and np.isfinite(alpha.alpha)  # 4 texts: alpha exists, is not shown
    assert all(j.items == 2 and not j.shown for j in view.judges)  # 2 items (of 2 systems each) in common
    from judgelab.annotate.report_link import ReportState

    page = render_page("overview.html", "n", overview=view, template="t", outputs=["quality"], sample="all",
                       uniform=True, title="t", note="", report=ReportState(Path("r.html"), None, True),
                       report_action="/overview/report")
    alpha_row = re.search(r'<table id="alpha-table">.*?</table>', page, re.S).group(0)
    judge_rows = re.search(r'<table id="judge-table">.*?</table>', page, re.S).group(0)
    assert "too few items (4; at least 5 needed): no number yet" in alpha_row
    assert "too few items (2; at least 5 needed): no number yet" in judge_rows
    for j in view.judges:
        assert np.isnan(j.r) or f"{j.r:.3f}" not in judge_rows
    assert f"{alpha.alpha:.3f}" not in alpha_row and "a bootstrap needs at least 5" in alpha_row
    assert re.search(r"<td class=\"num\">[01]\.\d{3}</td>", judge_rows) is None  # no p-value either


def test_overview_alpha_interval_is_a_bootstrap_over_items():
    """From 5 items on: alpha with its interval; checked against a hand-written bootstrap of the same matrix."""
    import krippendorff

    from judgelab.annotate.overview import alpha_with_interval, overview_of
    from judgelab.stats.bootstrap import expanded_level

    ratings, keys = _two_raters_and_a_judge(40)
    view = overview_of(ratings, keys, ["quality"], ["alice", "bob"], {}, {})
    alpha = view.agreement[0]
    human = ratings[ratings["rater"].str.startswith("human:")]
    wide = human.pivot_table(index="rater", columns=["system", "item_id"], values="score").to_numpy()
    assert alpha.shown and alpha.items == 80 and alpha.note == ""
    assert alpha.alpha == pytest.approx(krippendorff.alpha(reliability_data=wide, level_of_measurement="ordinal"))
    rng = np.random.default_rng(0)
    draws = [krippendorff.alpha(reliability_data=wide[:, rng.integers(0, 80, 80)], level_of_measurement="ordinal")
             for _ in range(999)]
    a = (1 - expanded_level(0.95, 80)) / 2
    low, high = np.quantile(draws, [a, 1 - a])
    assert alpha.ci_low == pytest.approx(low, abs=0.04) and alpha.ci_high == pytest.approx(high, abs=0.04)
    assert alpha.ci_low < alpha.alpha < alpha.ci_high
    judges = {j.method: j for j in view.judges}
    assert judges["kendall"].shown and judges["kendall"].items == 40 and judges["kendall"].has_interval
    # 12 items: shown, with the stats' own caution on an interval from fewer than 20 clusters
    few = alpha_with_interval(wide[:, :12]).ci
    assert few.note.startswith("only 12 item values") and np.isfinite(few.low)


def test_the_overview_writes_the_report_and_says_when_it_is_stale(tmp_path, opened):
    items = write_items(tmp_path / "items.jsonl", per_system=2)
    (tmp_path / "out").mkdir()
    put_judge(tmp_path / "out" / "store.sqlite", read_rows(items), lambda r, c, s: 3.0)
    session, client = opened(items, tmp_path / "out", tokens=True)
    paths = dict(links(session))
    overview = paths["overview"]
    assert "There is no" in client.get(overview).text
    page = client.get(paths["alice"]).text
    assert _submit(client, paths["alice"], page, {0: 4, 1: 2}).status_code == 303
    report = tmp_path / "out" / "report.html"
    assert client.post("/overview/report", follow_redirects=False).status_code == 404  # the organiser's token only
    assert not report.exists()
    written = client.post(overview.replace("/overview", "/overview/report"), follow_redirects=False)
    assert written.status_code == 303 and written.headers["location"].endswith("&note=report")
    shown = client.get(written.headers["location"]).text
    assert f"report: {report}" in html.unescape(shown) and "shows every rating" in shown
    assert '<h2 id="h-items">Disagreements' in report.read_text(encoding="utf-8")  # ranked against the ratings just given
    os.utime(report, (0, 0))  # as if written long ago: the ratings are newer
    assert "before the latest ratings: it does not show them yet" in client.get(overview).text
