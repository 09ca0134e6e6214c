"""A criterion's instruction and question rendered in one Jinja context: the same text as each on its own."""
import jinja2.runtime
import pytest

from judgelab.errors import JudgelabError
from judgelab.prompts import Criterion, Template, available_templates, load_template, render_text
from judgelab.prompts.render import _PART

FIELDS = {"item_id": "a", "text": "A story {{ not code }} {% neither %}\nwith lines\n", "context": "ctx", "system": "s",
          "group": None}


def _separately(template, criterion, item):
    spec = template.criteria[criterion]
    parts = [render_text(spec.instruction or template.instruction or "", {"examples": None, **item}, "x"),
             render_text(spec.question, {"examples": None, **item}, "x")]
    return "\n".join(p for p in parts if p)


@pytest.mark.parametrize("instruction", ["Rate {{ text }}", "Rate {{ text }}\n", "Rate {{ text }}\r\n", "",
                                         "{% set x = 1 %}Rate {{ text }}", "Rate {{ text -}}  ", "{# note #}Rate",
                                         "{{ text }}" + _PART])
@pytest.mark.parametrize("question", ["{{- context }} 1-5?", "How good? {{ x | default('none') }}", "\n{{ text }}\n"])
def test_the_pair_renders_as_each_text_alone(instruction, question):
    template = Template(name="t", instruction=instruction, criteria={"q": Criterion(question=question)})
    for text in (FIELDS["text"], "holds the separator " + _PART, " x "):
        item = {**FIELDS, "text": text}
        assert template.render("q", item) == _separately(template, "q", item)


@pytest.mark.parametrize("name", available_templates())
def test_a_shipped_prompt_takes_at_most_one_context_per_text(name, monkeypatch):
    template = load_template(name)
    made = []
    init = jinja2.runtime.Context.__init__
    monkeypatch.setattr(jinja2.runtime.Context, "__init__", lambda self, *a, **k: made.append(1) or init(self, *a, **k))
    for criterion in template.criteria:
        item = {**FIELDS, **{f: "x" for f in template.required_fields(criterion)}}
        made.clear()
        try:
            template.render(criterion, item)
        except JudgelabError:
            continue
        spec = template.criteria[criterion]
        plain = not any(m in t for t in (spec.instruction or template.instruction or "", spec.question) for m in ("{%", "{#"))
        assert len(made) == (1 if plain and not (spec.instruction or template.instruction or "").endswith("\n") else 2)


def test_a_failing_text_is_named_as_before():
    template = Template(name="t", instruction="Rate {{ text }}", criteria={"q": Criterion(question="{{ missing }}?")})
    with pytest.raises(JudgelabError, match="template field missing: 'missing' is undefined"):
        template.render("q", FIELDS)
