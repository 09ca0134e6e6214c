"""The rating form's structure as served (starlette's TestClient, no browser): headings, a legend for
every fieldset, a label for every radio group, the rated text in its own labelled region, and a
refused form that names the question at the top of the page and beside the question itself."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx", reason="starlette's TestClient needs httpx (in judgelab[test])")
from starlette.testclient import TestClient  # noqa: E402

from form_items import ARTICLE, STORY, SUMMARY, story_item, summeval_like_item  # noqa: E402
from judgelab.annotate.app import create_app  # noqa: E402
from judgelab.annotate.form import render_form  # noqa: E402
from judgelab.annotate.setup import prepare  # noqa: E402
from judgelab.prompts import Criterion, Template  # noqa: E402

_VOID = {"input", "meta", "br", "img", "hr", "link", "source", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: "Node | None") -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list["Node"]:
        return [n for n in self.iter() if (tag is None or n.tag == tag) and all(n.attrs.get(k) == v for k, v in attrs.items())]

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def elements(self) -> list["Node"]:
        return [c for c in self.children if isinstance(c, Node)]


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.at = Node("#document", {}, None)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, dict(attrs), self.at)
        self.at.children.append(node)
        if tag not in _VOID:
            self.at = node

    def handle_endtag(self, tag):
        node = self.at
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None, f"</{tag}> closes nothing"
        self.at = node.parent

    def handle_data(self, data):
        self.at.children.append(data)


def parse(page: str) -> Node:
    tree = _Tree()
    tree.feed(page)
    tree.close()
    return tree.root


def by_id(root: Node, element_id: str) -> Node:
    found = root.find_all(id=element_id)
    assert len(found) == 1, f"{len(found)} elements with id {element_id!r}"
    return found[0]


def labelled_by(root: Node, node: Node) -> str:
    """The name aria-labelledby gives ``node`` (the referenced elements' texts, joined)."""
    return " ".join(by_id(root, i).text().strip() for i in (node.attrs.get("aria-labelledby") or "").split())


@pytest.fixture
def served(tmp_path):
    sessions = []

    def serve(template: str, rows: list[dict]):
        items = tmp_path / f"{template}.jsonl"
        items.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        session = prepare(items, template, tmp_path / f"out-{template}", annotators=["ann"])
        sessions.append(session)
        return session, TestClient(create_app(session), base_url="http://127.0.0.1:8765")

    yield serve
    for s in sessions:
        s.store.close()


_FORMS = {
    "plain-quality": [{"id": "p1", "text": "A short paragraph."}],
    "geval-summeval": [summeval_like_item()],
    "chiang-lee-story": [story_item()],
    "nle-esnli": [{"id": "e1", "text": "Because a man is a person.", "premise": "A man sleeps.",
                   "hypothesis": "A person sleeps.", "relationship": "entailment"}],  # one question, two ratings
}


@pytest.mark.parametrize("template", sorted(_FORMS))
def test_every_radio_group_has_a_label_and_every_fieldset_a_legend(served, template):
    session, client = served(template, _FORMS[template])
    root = parse(client.get("/a/ann").text)
    assert [h.text() for h in root.find_all("h1")] == ["Item 1 of 1"]
    fieldsets = root.find_all("fieldset")
    assert len(fieldsets) == len(session.form("ann", 0).questions)
    for n, fieldset in enumerate(fieldsets, 1):
        legend = fieldset.elements()[0]  # a fieldset's name is its first child legend
        assert legend.tag == "legend" and legend.text().strip() == f"Question {n} of {len(fieldsets)}"
        assert [h.tag for h in legend.elements()] == ["h2"]
    radios = root.find_all("input", type="radio")
    groups = [n for n in root.iter() if n.attrs.get("role") == "radiogroup"]
    assert len(groups) == len(session.outputs) and {r.attrs["name"] for r in radios} == {f"r{k}" for k in range(len(groups))}
    for k, group in enumerate(groups):
        fieldset = next(a for a in group.ancestors() if a.tag == "fieldset")
        name = labelled_by(root, group)
        legend_text = fieldset.elements()[0].text().strip()
        assert name.startswith(legend_text + " ") and len(name) > len(legend_text) + 5  # the number and the question
        if len(session.form("ann", 0).questions[0].outputs) > 1:
            assert name.endswith(session.outputs[k])  # each metric's row names its metric
        inside = group.find_all("input", type="radio")
        assert inside and all(r.attrs["name"] == f"r{k}" for r in inside)
        for radio in inside:  # each point is labelled by its label element (the point and its anchor)
            label = next(a for a in radio.ancestors() if a.tag == "label")
            assert label.text().strip().startswith(radio.attrs["value"])
        assert by_id(root, group.attrs["aria-describedby"]).attrs.get("role") == "alert"  # where its error goes
    assert sum(len(g.find_all("input", type="radio")) for g in groups) == len(radios)  # no radio outside a group


def test_the_rated_text_has_its_own_labelled_region(served):
    _, client = served("geval-summeval", [summeval_like_item()])
    root = parse(client.get("/a/ann").text)
    rated = by_id(root, "rated-text")
    region = next(a for a in rated.ancestors() if a.tag == "section")
    assert labelled_by(root, region) == "The text you rate" and region.elements()[0].tag == "h2"
    assert rated.text() == SUMMARY
    context = by_id(root, "context-text")
    assert ARTICLE in context.text() and SUMMARY not in context.text() and context.text().endswith("Summary:")
    assert labelled_by(root, next(a for a in context.ancestors() if a.tag == "section")) == "Task and context"
    _, client = served("chiang-lee-story", [story_item()])
    root = parse(client.get("/a/ann").text)
    assert by_id(root, "rated-text").text() == STORY and by_id(root, "after-text").text() == "(End of story fragment)"


def test_the_rated_text_is_located_only_where_it_stands_alone_once():
    t = Template(name="t", instruction="Rate the text.\nText:\n{{ text }}\nEnd.", criteria={"a": Criterion(question="A?")})
    form = render_form(t, ["a"], {"text": "two\nlines"})
    assert form.parts == ("Rate the text.\nText:", "two\nlines", "End.")
    assert "\n".join(form.parts) == form.shared_head  # every line of the judge's text, in order
    assert render_form(t, ["a"], {"text": "text"}).parts == ("Rate the text.\nText:", "text", "End.")  # the line, not "the text."
    inline = Template(name="t", instruction="Judge the explanation ({{ text }}).", criteria={"a": Criterion(question="A?")})
    assert render_form(inline, ["a"], {"text": "x"}).parts is None  # inside a line of the instruction: one block
    same_line = Template(name="t", instruction="Answers:\nYes\nNo\nThe answer given: {{ text }}", criteria={"a": Criterion(question="A?")})
    assert render_form(same_line, ["a"], {"text": "Yes"}).parts is None  # not the instruction's own line "Yes"
    twice = Template(name="t", instruction="{{ text }}\nAgain:\n{{ text }}", criteria={"a": Criterion(question="A?")})
    assert render_form(twice, ["a"], {"text": "x"}).parts is None  # which one is rated cannot be told: one block


def _submit(client, page: str, ratings: dict[int, object]):
    hidden = {name: re.search(rf'name="{name}" value="([^"]*)"', page).group(1) for name in ("position", "shown", "signature")}
    return client.post("/a/ann", data={**hidden, **{f"r{k}": str(v) for k, v in ratings.items()}, "comment": ""},
                       follow_redirects=False)


def _order(root: Node, *ids: str) -> list[str]:
    return [n.attrs["id"] for n in root.iter() if n.attrs.get("id") in ids]


@pytest.mark.parametrize("ratings,row,says,summary", [
    ({0: 4, 1: 5, 3: 2}, 2, "Please rate this question.", "Question 3: Please rate this question."),
    ({0: 4, 1: 5, 2: 5, 3: 2}, 2, "Use the points of the scale: 1–3.", "Question 3: Use the points of the scale: 1–3."),
    ({0: 4, 1: "x", 2: 3, 3: 2}, 1, "Use the points of the scale: 1–5.", "Question 2: Use the points of the scale: 1–5."),
])
def test_a_refused_form_names_the_question_at_the_top_and_beside_it(served, ratings, row, says, summary):
    """Without the page's script (the server's check): the summary comes first in the page, links to the
    question, and the same message stands inside the question's fieldset; the answers given are kept."""
    _, client = served("geval-summeval", [summeval_like_item()])
    response = _submit(client, client.get("/a/ann").text, ratings)
    assert response.status_code == 400
    root = parse(response.text)
    top = by_id(root, "error")
    assert top.attrs.get("role") == "alert" and top.text().startswith("Not saved: ")
    assert _order(root, "error", "sample", "rating-form") == ["error", "sample", "rating-form"]
    links = top.find_all("a")
    assert [(a.attrs["href"], " ".join(a.parent.text().split())) for a in links] == [(f"#answer{row}", summary)]
    answer = by_id(root, f"answer{row}")
    assert next(a for a in answer.ancestors() if a.tag == "fieldset").attrs["id"] == f"q{row + 1}"
    message = by_id(root, f"e{row}")
    assert message.parent is answer and message.text() == says
    group = answer.find_all(role="radiogroup")[0]
    assert group.attrs.get("aria-invalid") == "true" and group.attrs["aria-describedby"] == f"e{row}"
    others = [n for n in root.iter() if n.attrs.get("class") == "field-error" and n is not message]
    assert all(n.text() == "" for n in others) and len(others) == 3
    kept = {r.attrs["name"]: r.attrs["value"] for r in root.find_all("input", type="radio") if "checked" in r.attrs}
    assert kept == {f"r{k}": str(v) for k, v in ratings.items() if k != row}


def test_an_error_of_the_whole_form_has_no_question_to_point_at(served):
    _, client = served("plain-quality", [{"id": "p1", "text": "A short paragraph."}])
    page = client.get("/a/ann").text
    forged = page.replace(re.search(r'name="signature" value="([^"]*)"', page).group(1), "0" * 64)
    response = _submit(client, forged, {0: 3, 1: 3})
    root = parse(response.text)
    assert response.status_code == 400 and "not served to you" in by_id(root, "error").text()
    assert by_id(root, "error").find_all("a") == []
    assert all(n.text() == "" for n in root.iter() if n.attrs.get("class") == "field-error")


@pytest.mark.parametrize("template,names", [
    ("plain-quality", ["question 1", "question 2"]),
    ("nle-esnli", ["question 1 (informativeness)", "question 1 (clarity)"]),
])
def test_each_rating_is_named_as_its_messages_name_it(served, template, names):
    session, client = served(template, _FORMS[template])
    root = parse(client.get("/a/ann").text)
    groups = [n for n in root.iter() if n.attrs.get("role") == "radiogroup"]
    assert [g.attrs["data-name"] for g in groups] == names == list(session.form("ann", 0).row_names)
