"""The rating form: the text the judge gets, split for display only (Chiang & Lee 2023, §2.2).

Chiang & Lee (2023, §2.2): "the instructions, samples, and questions in human evaluation are
formatted similarly to those in LLM evaluation"; a person picks a point of the Likert scale
where the LLM writes an answer. :func:`render_form` builds the form from exactly the text
:meth:`judgelab.prompts.Template.render` gives the judge for the same template, criterion, item
and instruction variant, split only for display: the instruction with the sample (shown once
when every criterion shares it) and each criterion's question with the scale's points.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from judgelab.errors import JudgelabError
from judgelab.prompts import Template

__all__ = ["Question", "ItemForm", "render_form", "scale_labels"]


@dataclass(frozen=True)
class Question:
    """One criterion as a person sees it.

    Attributes:
        criterion: the template's criterion.
        outputs: the ratings one answer gives (the criterion, or each metric of a multi-metric criterion).
        head: the variant's prepended sentence and the instruction with the sample.
        question: the criterion's question and the variant's appended sentence.
    """

    criterion: str
    outputs: tuple[str, ...]
    head: str
    question: str

    @property
    def text(self) -> str:
        """The exact text the judge gets for this criterion (:meth:`Template.render`)."""
        return f"{self.head}\n{self.question}" if self.head else self.question


@dataclass(frozen=True)
class ItemForm:
    """The rating form of one item: the shared head (when every criterion has the same), the questions, the scale."""

    shared_head: str | None
    questions: tuple[Question, ...]
    labels: tuple[int, ...]

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(o for q in self.questions for o in q.outputs)


def scale_labels(template: Template) -> tuple[int, ...]:
    """The points a person can choose: the integers of the template's scale (at most 11)."""
    lo, hi = template.scale
    if not (float(lo).is_integer() and float(hi).is_integer()) or hi <= lo or hi - lo > 10:
        raise JudgelabError(f"template {template.name!r}: scale {lo}–{hi} cannot be shown as a rating form "
                            "(integer points, at most 11)")
    return tuple(range(int(lo), int(hi) + 1))


def _head_template(template: Template, criterion: str) -> Template:
    """The template with the criterion's question and the variants' appended sentences removed."""
    spec = template.criteria[criterion]
    return template.model_copy(update={
        "criteria": {criterion: spec.model_copy(update={"question": ""})},
        "variants": {k: v.model_copy(update={"append": None}) for k, v in template.variants.items()},
    })


def render_form(template: Template, criteria: Sequence[str], fields: Mapping[str, Any], variant: str | None = None) -> ItemForm:
    """The rating form for one item: exactly the text :meth:`Template.render` gives the judge, per criterion.

    Each criterion's text is split into its head (variant prefix, instruction with the sample)
    and its question (question, variant suffix); ``head + "\\n" + question`` is the judge's text,
    character for character. When every criterion has the same head it is shown once.
    """
    questions = []
    for criterion in criteria:
        full = template.render(criterion, fields, variant)
        head = _head_template(template, criterion).render(criterion, fields, variant)
        if head and full.startswith(head + "\n"):
            question = full[len(head) + 1:]
        else:  # a template whose parts do not split cleanly: show the whole text with the question
            head, question = "", full
        questions.append(Question(criterion, tuple(template.outputs(criterion)), head, question))
    heads = {q.head for q in questions}
    shared = heads.pop() if len(heads) == 1 and questions[0].head else None
    return ItemForm(shared, tuple(questions), scale_labels(template))
