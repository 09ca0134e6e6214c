"""The rating form: the text the judge gets, as people read it (Chiang & Lee 2023, §2.2).

Chiang & Lee (2023, §2.2): "the instructions, samples, and questions in human evaluation are
formatted similarly to those in LLM evaluation"; a person picks a point of the Likert scale
where the LLM writes an answer. :func:`render_form` builds the form from the text
:meth:`judgelab.prompts.Template.render` gives the judge for the same template, criterion, item
and instruction variant, with two differences, both for display only:

* wording the template marks ``{% model_only %}`` (:mod:`judgelab.prompts.model_only`; e.g.
  G-Eval's "just give a score ONLY" and its evaluation steps) is left out, and the scale's
  points carry the criterion's ``anchors`` instead;
* text every criterion shares (the instruction, the article, the story …) is shown once, at the
  top; each criterion shows only its own part (e.g. G-Eval's definition of the criterion) above
  its question. The lines all criteria's texts begin with and end with are the shared text;
  what lies between is the criterion's own. ``Question.text`` is each criterion's full text as
  a person reads it: the judge's text without the model-only wording.

The rated text (the item's ``text``: the summary, the story, the paragraph) is located in the
shared text, so that the page can set it apart from its context (the article, the prompt) while
showing every line of the judge's text in the judge's order (:attr:`ItemForm.parts`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from judgelab.errors import JudgelabError
from judgelab.prompts import Template

__all__ = ["Question", "ItemForm", "render_form", "scale_labels", "scale_hint"]


@dataclass(frozen=True)
class Question:
    """One criterion as a person sees it.

    Attributes:
        criterion: the template's criterion.
        outputs: the ratings one answer gives (the criterion, or each metric of a multi-metric criterion).
        own: the part of the criterion's text that the other criteria do not share ("" when none).
        question: the criterion's question and the variant's appended sentence.
        labels: the points of the criterion's scale.
        anchors: (point, label) for the points the template labels, in order of the points.
        text: the criterion's whole text as a person reads it (the judge's, less model-only wording).
    """

    criterion: str
    outputs: tuple[str, ...]
    own: str
    question: str
    labels: tuple[int, ...]
    anchors: tuple[tuple[int, str], ...]
    text: str

    def anchor(self, point: int) -> str:
        """The label of one point of the scale ("" when the template gives none)."""
        return dict(self.anchors).get(point, "")


@dataclass(frozen=True)
class ItemForm:
    """The rating form of one item.

    Attributes:
        shared_head: the text every criterion shares (None when they share none).
        questions: the criteria, in the form's order.
        rated: where the template put the rated text (the item's ``text``) in ``shared_head``: (start,
            end), or None when it is not there on lines of its own (then the page shows the shared
            text as one block).
    """

    shared_head: str | None
    questions: tuple[Question, ...]
    rated: tuple[int, int] | None = None

    @property
    def parts(self) -> tuple[str, str, str] | None:
        """(the text before the rated text, the rated text, the text after it), blank lines at their edges
        trimmed; None when :attr:`rated` is None. Joined by newlines they are ``shared_head`` less those
        blank lines."""
        if self.rated is None or self.shared_head is None:
            return None
        start, end = self.rated
        head = self.shared_head
        return head[:start].strip("\n"), head[start:end], head[end:].strip("\n")

    @property
    def row_names(self) -> tuple[str, ...]:
        """How the page names each rating, in the order of :attr:`outputs`: "question 2", or
        "question 2 (clarity)" for one metric of a multi-metric criterion."""
        return tuple(f"question {n}" + (f" ({output})" if len(q.outputs) > 1 else "")
                     for n, q in enumerate(self.questions, 1) for output in q.outputs)

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(o for q in self.questions for o in q.outputs)

    @property
    def output_labels(self) -> tuple[tuple[int, ...], ...]:
        """The points each rating may take, in the order of :attr:`outputs`."""
        return tuple(q.labels for q in self.questions for _ in q.outputs)


def scale_labels(template: Template, criterion: str | None = None) -> tuple[int, ...]:
    """The points a person can choose: the integers of the criterion's scale (the template's when
    ``criterion`` is None), at most 11."""
    lo, hi = template.scale_of(criterion) if criterion is not None else template.scale
    if not (float(lo).is_integer() and float(hi).is_integer()) or hi <= lo or hi - lo > 10:
        where = f" criterion {criterion!r}:" if criterion is not None else ""
        raise JudgelabError(f"template {template.name!r}:{where} scale {lo:g}–{hi:g} cannot be shown as a rating form "
                            "(integer points, at most 11)")
    return tuple(range(int(lo), int(hi) + 1))


def scale_hint(labels: Sequence[int]) -> str:
    """What a person is told when a rating is not a point of its scale (the page and the server say the same)."""
    return f"Use the points of the scale: {labels[0]}–{labels[-1]}."


#: Stands in for the rated text in a second rendering, to find where the template puts it.
_PROBE = "\x00judgelab: the rated text\x00"


def _rated_span(shared: str, probed: str | None, text: str) -> tuple[int, int] | None:
    """Where the template put ``text`` in ``shared``: ``probed`` is the same shared text rendered with
    :data:`_PROBE` for it. None unless the probe stands there once, on lines of its own, and the
    shared text is the probed one with the text in its place (a template that changes the text,
    or shows it inside a line of its instruction, keeps its shared text in one block)."""
    if probed is None or probed.count(_PROBE) != 1:
        return None
    before, after = probed.split(_PROBE)
    if shared != before + text + after or (before and not before.endswith("\n")) or (after and not after.startswith("\n")):
        return None
    return len(before), len(before) + len(text)


def _head_template(template: Template, criterion: str) -> Template:
    """The template with the criterion's question and the variants' appended sentences removed."""
    spec = template.criteria[criterion]
    return template.model_copy(update={
        "criteria": {criterion: spec.model_copy(update={"question": ""})},
        "variants": {k: v.model_copy(update={"append": None}) for k, v in template.variants.items()},
    })


def _split(heads: list[str]) -> tuple[str, list[str]]:
    """(the lines every head begins and ends with, each head's lines in between), blank edges trimmed."""
    lines = [h.split("\n") for h in heads]
    shortest = min(len(x) for x in lines)
    start = 0
    while start < shortest and all(x[start] == lines[0][start] for x in lines):
        start += 1
    end = 0
    while end < shortest - start and all(x[len(x) - 1 - end] == lines[0][len(lines[0]) - 1 - end] for x in lines):
        end += 1
    before, after = lines[0][:start], lines[0][len(lines[0]) - end:]
    if before and after and not before[-1].strip() and not after[0].strip():
        after = after[1:]  # one blank line where a criterion's own text was taken out
    own = ["\n".join(x[start:len(x) - end]).strip("\n") for x in lines]
    return "\n".join(before + after).strip("\n"), own


def render_form(template: Template, criteria: Sequence[str], fields: Mapping[str, Any], variant: str | None = None) -> ItemForm:
    """The rating form for one item.

    Each criterion's text (as people read it: :meth:`Template.render` with ``for_people``) is
    split into its head (variant prefix, instruction with the sample) and its question
    (question, variant suffix). The lines the heads of all criteria share at their start and
    end are shown once (``shared_head``); the rest of each head is the criterion's ``own``
    text, shown above its question.

    Example:
        >>> from judgelab.prompts import load_template
        >>> form = render_form(load_template("geval-summeval"), ["coherence", "fluency"], {"text": "S.", "context": "A."})
        >>> form.shared_head.count("A."), form.questions[1].labels, form.questions[1].anchor(3)
        (1, (1, 2, 3), 'Good. Few or no errors; the summary reads easily.')
    """
    parts, shared, owns = _layout(template, criteria, fields, variant)
    questions = tuple(
        Question(criterion, tuple(template.outputs(criterion)), own, question, scale_labels(template, criterion),
                 tuple(sorted(template.criteria[criterion].anchors.items())), full)
        for (criterion, full, _, question), own in zip(parts, owns))
    text, rated = fields.get("text"), None
    if shared is not None and isinstance(text, str) and text.strip():
        rated = _rated_span(shared, _layout(template, criteria, {**fields, "text": _PROBE}, variant)[1], text)
    return ItemForm(shared, questions, rated)


def _layout(template: Template, criteria: Sequence[str], fields: Mapping[str, Any],
            variant: str | None) -> tuple[list[tuple[str, str, str, str]], str | None, list[str]]:
    """((criterion, full text, head, question) per criterion, the shared text or None, each criterion's own text)."""
    parts = []
    for criterion in criteria:
        full = template.render(criterion, fields, variant, for_people=True)
        head = _head_template(template, criterion).render(criterion, fields, variant, for_people=True)
        if head and full.startswith(head + "\n"):
            question = full[len(head) + 1:]
        else:  # a template whose parts do not split cleanly: show the whole text with the question
            head, question = "", full
        parts.append((criterion, full, head, question))
    shared: str | None = None
    owns = [head for _, _, head, _ in parts]
    if all(head for _, _, head, _ in parts):
        common, rest = _split([head for _, _, head, _ in parts])
        if common.strip():
            shared, owns = common, rest
    return parts, shared, owns
