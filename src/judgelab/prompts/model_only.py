"""Wording meant only for the judge: ``{% model_only %}…{% endmodel_only %}`` in a template's Jinja text.

The judge gets the marked wording as if the tags were not there (the tags themselves render to
nothing and take no whitespace, so a prompt is byte-for-byte what it was before the wording was
marked); people rating with the same template in ``judgelab annotate`` do not see it. G-Eval's
"please don't give any feedback, just give a score ONLY" and its evaluation steps are for the
model; a person is shown the criterion, the text and the scale's anchor labels instead.

Because marking changes nothing the judge is asked, the tags are left out of a template's
digest (:meth:`judgelab.prompts.Template.digest`, part of a run's identity): a run folder made
before the wording was marked resumes under the same rater label. Only the exact spellings
``{% model_only %}`` and ``{% endmodel_only %}`` are left out; a tag with whitespace control
(``{%- model_only %}``) changes what the judge gets, so it stays in the digest.
"""
from __future__ import annotations

from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.parser import Parser

__all__ = ["ModelOnly", "OPEN", "CLOSE", "without_tags"]

OPEN = "{% model_only %}"
CLOSE = "{% endmodel_only %}"


class ModelOnly(Extension):
    """The ``model_only`` block: its body is kept in the judge's environment and dropped in the people's."""

    tags = {"model_only"}

    def __init__(self, environment) -> None:
        super().__init__(environment)
        environment.extend(judgelab_for_people=False)

    def parse(self, parser: Parser) -> list[nodes.Node]:
        next(parser.stream)  # the tag's name
        body = parser.parse_statements(("name:endmodel_only",), drop_needle=True)
        return [] if getattr(self.environment, "judgelab_for_people", False) else list(body)


def without_tags(source: str) -> str:
    """The text with the exact model-only tags removed: what the judge's rendering of ``source`` equals.

    Example:
        >>> without_tags("Score{% model_only %} (a score ONLY){% endmodel_only %}:")
        'Score (a score ONLY):'
    """
    return source.replace(OPEN, "").replace(CLOSE, "")
