"""The form's split of the judge's text (pure): what every criterion shares is shown once, the rest under its question."""
from __future__ import annotations

from judgelab.annotate.form import render_form
from judgelab.prompts import Criterion, Template


def _template(**criteria: Criterion) -> Template:
    return Template(name="t", scale=(1, 4), criteria=criteria)


def test_shared_lines_at_both_ends_are_shown_once_and_each_criterion_keeps_its_own():
    t = _template(
        a=Criterion(instruction="Intro.\n\nDefinition A.\nMore on A.\n\nText:\n{{ text }}", question="Score A:", anchors={1: "bad"}),
        b=Criterion(instruction="Intro.\n\nDefinition B.\n\nText:\n{{ text }}", question="Score B:", scale=(0, 1)))
    form = render_form(t, ["a", "b"], {"text": "line 1\nline 2"})
    assert form.shared_head == "Intro.\n\nText:\nline 1\nline 2"
    assert [q.own for q in form.questions] == ["Definition A.\nMore on A.", "Definition B."]
    assert [q.labels for q in form.questions] == [(1, 2, 3, 4), (0, 1)] and form.output_labels == ((1, 2, 3, 4), (0, 1))
    assert form.questions[0].anchor(1) == "bad" and form.questions[0].anchor(2) == "" and form.questions[1].anchors == ()
    for q, c in zip(form.questions, "ab"):
        assert q.text == t.render(c, {"text": "line 1\nline 2"})


def test_nothing_in_common_shows_each_criterion_whole():
    t = _template(a=Criterion(instruction="Read {{ text }}.", question="A?"), b=Criterion(instruction="Judge {{ text }}.", question="B?"))
    form = render_form(t, ["a", "b"], {"text": "x"})
    assert form.shared_head is None and [q.own for q in form.questions] == ["Read x.", "Judge x."]


def test_one_criterion_or_equal_heads_share_everything():
    t = Template(name="t", instruction="Read:\n{{ text }}", criteria={"a": Criterion(question="A?"), "b": Criterion(question="B?")})
    for criteria in (["a"], ["a", "b"]):
        form = render_form(t, criteria, {"text": "x"})
        assert form.shared_head == "Read:\nx" and all(q.own == "" for q in form.questions)


def test_model_only_wording_is_not_in_the_form():
    t = _template(a=Criterion(instruction="Rate.{% model_only %} Steps: think.{% endmodel_only %}\n{{ text }}",
                              question="Score{% model_only %} ONLY{% endmodel_only %}:"))
    form = render_form(t, ["a"], {"text": "x"})
    assert form.shared_head == "Rate.\nx" and form.questions[0].question == "Score:"
    assert t.render("a", {"text": "x"}) == "Rate. Steps: think.\nx\nScore ONLY:"
