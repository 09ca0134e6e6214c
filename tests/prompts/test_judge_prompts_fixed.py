"""The judge's prompts and the templates' digests do not move when wording is marked for the model only
or anchors are added for people.

``judge_prompts_before.json`` holds, for every shipped template, its digest and the SHA-256 of every
prompt it renders (each criterion × instruction variant, with and without dynamic-prompting examples),
computed by judgelab before ``{% model_only %}`` and ``anchors`` existed (commit fab667b). A change here
means the ledger would pay for calls again and run folders would get new rater labels.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from judgelab.errors import JudgelabError
from judgelab.prompts import Criterion, Template, available_templates, load_template
from render_fixture import sample_items

BEFORE = json.loads((Path(__file__).parent / "judge_prompts_before.json").read_text(encoding="utf-8"))


def test_every_shipped_template_is_in_the_fixture():
    assert sorted(BEFORE) == available_templates()


def test_marked_templates_are_the_ones_with_model_only_wording():
    marked = [n for n in available_templates() if any("{% model_only %}" in text for _, text in load_template(n).jinja_texts())]
    assert marked == MARKED


@pytest.mark.parametrize("name", available_templates())
def test_judge_prompts_and_digest_are_those_before_marking(name):
    template = load_template(name)
    expected = BEFORE[name]
    got = {"digest": template.digest()}
    for label, item in sample_items(template):
        for criterion in template.criteria:
            for variant in [None, *template.variants]:
                text = template.render(criterion, item, variant)
                got[f"{label}|{criterion}|{variant}"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert got == expected


MARKED = ["dhp-question-answering", "dhp-story-completion", "dhp-summarization", "dhp-translation", "geval-summeval",
          "geval-topical-chat"]


@pytest.mark.parametrize("name", MARKED)
def test_g_eval_style_templates_hide_the_models_wording_from_people_only(name):
    template = load_template(name)
    item = {"text": "THE TEXT", "context": "THE CONTEXT", "history": "THE HISTORY"}
    for criterion in template.criteria:
        judge = template.render(criterion, item)
        people = template.render(criterion, item, for_people=True)
        for wording in ("just give a score ONLY", "Evaluation Steps:", "on one metric."):
            assert wording in judge and wording not in people
        assert "model_only" not in judge + people
        assert "THE CONTEXT" in people and "THE TEXT" in people and "Evaluation Criterion:" in people
        assert re.search(r"\nEvaluation Score - [\w ]+:$", people)
        lo, hi = template.scale_of(criterion)
        assert sorted(template.criteria[criterion].anchors) == list(range(int(lo), int(hi) + 1))
        # every anchor is the step's own wording, which the judge gets
        assert all(f"- {k}: {v}" in judge for k, v in template.criteria[criterion].anchors.items())


def _template(question: str, **criterion) -> Template:
    return Template(name="t", instruction="Rate.\n{{ text }}", criteria={"q": Criterion(question=question, **criterion)})


def test_marking_keeps_the_judges_text_and_the_digest():
    plain = _template("Score (a number ONLY):")
    marked = _template("Score{% model_only %} (a number ONLY){% endmodel_only %}:")
    item = {"text": "x"}
    assert marked.render("q", item) == plain.render("q", item) == "Rate.\nx\nScore (a number ONLY):"
    assert marked.render("q", item, for_people=True) == "Rate.\nx\nScore:"
    assert marked.digest() == plain.digest()
    # whitespace control changes what the judge gets: it is a different template
    stripped = _template("Score\n{%- model_only %} (a number ONLY){% endmodel_only %}:")
    assert stripped.render("q", item) == "Rate.\nx\nScore (a number ONLY):"
    assert stripped.digest() != plain.digest()
    # anchors are for people: not part of the digest, never in the prompt
    anchored = _template("Score (a number ONLY):", anchors={1: "awful", 5: "great"})
    assert anchored.digest() == plain.digest() and "awful" not in anchored.render("q", item)


def test_model_only_may_hold_jinja_and_nest():
    t = _template("{% model_only %}{% if text %}Think of {{ text }}. {% endif %}{% endmodel_only %}Score:")
    assert t.render("q", {"text": "x"}) == "Rate.\nx\nThink of x. Score:"
    assert t.render("q", {"text": "x"}, for_people=True) == "Rate.\nx\nScore:"


def test_anchors_off_the_scale_and_an_unclosed_block_are_one_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("name: t\nscale: [1, 3]\ninstruction: 'Rate {{ text }}'\ncriteria:\n  q:\n    question: Score?\n"
                    "    anchors: {1: bad, 4: good}\n", encoding="utf-8")
    with pytest.raises(JudgelabError, match=r"t\.yaml: invalid template.*anchors \[4\] are not points of its scale 1-3"):
        load_template(str(path))
    path.write_text("name: t\ninstruction: 'Rate {{ text }}'\ncriteria:\n  q:\n    question: 'Score{% model_only %} now'\n",
                    encoding="utf-8")
    with pytest.raises(JudgelabError, match=r"t\.yaml: Jinja syntax error in criteria\.q\.question"):
        load_template(str(path))
