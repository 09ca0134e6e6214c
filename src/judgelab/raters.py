"""Who rated: the typed rater identity and the one place a rater label is read.

Every rating carries a rater label, the text that names its rater in stores, ratings files and
tables. The label is rendered from a :class:`Rater` by :attr:`Rater.label`, and read back into one
only by :func:`parse_label` — no other module looks inside a label (``tests/test_raters.py`` checks
that). The conventions, all kept byte for byte so that stores and files keep their names:

=========================  ==========================================================================
``human:<id>``             a person (``kind="human"``; the annotation app, imported human ratings)
``human:mean``             a file of mean human ratings: one rater that is no individual person
                           (``kind="consensus"``)
``jury:<method>``          a jury of judges (``kind="jury"``, :mod:`judgelab.stats.jury`)
``model@template``         a judge run (``kind="judge"``): the model id and the template's name
``…+variant``              a template variant, and any further ``+`` stage (NLE's ``+dynamic``)
``…+constrained``          the run's answers were constrained to the scale (the last ``+`` segment)
``…|stage``                a stage asked on top of another rater (NLE's ``|pairwise``,
                           ``|pairwise-test-<prompting>``): the rater before ``|`` is its ``parent``
``…#1a2b3c``               the store's digest: the preferred label was held by other settings
``…#<n>``                  one sample of a judge, as an annotator of its own (Chiang & Lee's Table 1)
=========================  ==========================================================================

Any other text is a judge's label as the user chose it (``--rater``, a recipe's ``label``), so
:func:`parse_label` is total: every string parses and ``parse_label(x).label == x``.

**Decision: a rater is human by its kind only.** A label is a human's when it starts with
``human:`` (or it came from a human-ratings file, which names it so); a judge labelled
``humanlike`` or ``human-judge`` is a judge everywhere — in ``rate``'s failure check, in ``agree``
and in ``audit`` alike (before, two checks tested the bare prefix ``human`` and treated it as a person).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Rater", "RaterKind", "parse_label", "human", "jury", "judge", "is_human", "human_mask", "is_individual_human",
           "is_judge", "is_jury", "base_label", "model_of", "with_sample", "with_digest", "free_twin", "undigested", "with_variant", "with_stage", "claims", "person_label", "template_part", "HUMAN_PREFIX", "JURY_PREFIX",
           "MEAN_HUMAN", "CONSTRAINED", "FIELDS"]

RaterKind = Literal["judge", "human", "consensus", "jury"]
#: The identity as columns (:attr:`Rater.fields`): the kind, the judge's model, template, ``+`` segments, whether
#: constrained, and the store's digest.
FIELDS = ("rater_kind", "judge", "template", "variant", "constrained", "digest")

HUMAN_PREFIX = "human:"
JURY_PREFIX = "jury:"
#: The one rater of a file of mean human ratings (``human:mean``).
MEAN_HUMAN = "mean"
#: The variant segment of a constrained run (:meth:`judgelab.spec.RunSpec.preferred_label`).
CONSTRAINED = "constrained"

_DIGEST = re.compile(r"#([0-9a-f]{6})$")
_SAMPLE = re.compile(r"#(0|[1-9][0-9]*)$")
#: A digest in the middle of a label, followed by further ``+`` segments (``m@t#1a2b3c+dynamic``).
_INNER_DIGEST = re.compile(r"#[0-9a-f]{6}(?=\+)")


@dataclass(frozen=True)
class Rater:
    """A rater's identity; :attr:`label` is its text in stores and files.

    Attributes:
        kind: ``judge``, ``human`` (one person), ``consensus`` (``human:mean``) or ``jury``.
        name: the judge's model id (or its whole label when it names no template), the person's id,
            the jury's method; ``mean`` for the consensus.
        template: the judge's template name (the part after ``@``); ``None`` when the label has no ``@``.
        variants: the ``+`` segments after the template, in order (the template variant, ``dynamic`` …),
            without a last ``constrained``.
        constrained: the label ends in ``+constrained``.
        digest: the store's 6 hex digits (``#1a2b3c``) when the preferred label was taken.
        sample: one sample of the judge as an annotator of its own (``#0``, ``#1`` …).
        stage: the stage after ``|`` (``pairwise``); with it, ``parent`` is the rater it was asked on top of.
        parent: the rater this one extends (``parent|stage…``, or ``parent#digest+variant…``).

    Example:
        >>> r = parse_label("gemma@story+short+constrained#1a2b3c")
        >>> r.kind, r.name, r.template, r.variants, r.constrained, r.digest, r.label
        ('judge', 'gemma', 'story', ('short',), True, '1a2b3c', 'gemma@story+short+constrained#1a2b3c')
        >>> parse_label("human:ann").kind, parse_label("human:mean").kind, parse_label("humanlike").kind
        ('human', 'consensus', 'judge')
    """

    kind: RaterKind
    name: str
    template: str | None = None
    variants: tuple[str, ...] = ()
    constrained: bool = False
    digest: str | None = None
    sample: int | None = None
    stage: str | None = None
    parent: Rater | None = None

    @property
    def label(self) -> str:
        """The rater's label (what :func:`parse_label` reads back)."""
        if self.kind == "human":
            return HUMAN_PREFIX + self.name
        if self.kind == "consensus":
            return HUMAN_PREFIX + MEAN_HUMAN
        if self.kind == "jury":
            return JURY_PREFIX + self.name
        if self.parent is not None:
            head = self.parent.label + ("" if self.stage is None else "|" + self.stage)
        else:
            head = self.name + ("" if self.template is None else "@" + self.template)
        return (head + "".join("+" + v for v in self.variants) + ("+" + CONSTRAINED if self.constrained else "")
                + ("" if self.digest is None else "#" + self.digest) + ("" if self.sample is None else f"#{self.sample}"))

    @property
    def is_human(self) -> bool:
        """A person or the consensus of people (``human:…``)."""
        return self.kind in ("human", "consensus")

    @property
    def base(self) -> Rater:
        """The same rater without the store's digest and the sample (what the run asked for)."""
        return replace(self, digest=None, sample=None)

    @property
    def undigested(self) -> Rater:
        """The same rater without the store's digest: the label its run asked for."""
        return replace(self, digest=None)

    @property
    def model(self) -> str:
        """A judge's model id (its root rater's name): what ``--self-family`` and variant groups key on."""
        return self.parent.model if self.parent is not None else self.name

    @property
    def chain(self) -> tuple[Rater, ...]:
        """The raters this one stands on (``parent``), the root first, then itself."""
        return (*self.parent.chain, self) if self.parent is not None else (self,)

    @property
    def fields(self) -> dict[str, object]:
        """The identity as flat values (:data:`FIELDS`): the columns of ratings tables and the store's ``runs``.

        Example:
            >>> parse_label("m@t+short+constrained#1a2b3c").fields
            {'rater_kind': 'judge', 'judge': 'm', 'template': 't', 'variant': 'short', 'constrained': True, 'digest': '1a2b3c'}
        """
        judge = self.kind == "judge"
        variants = [v for link in self.chain for v in link.variants]
        return {"rater_kind": self.kind, "judge": self.model if judge else None,
                "template": self.chain[0].template if judge else None,
                "variant": "+".join(variants) if judge and variants else None,
                "constrained": judge and self.constrained, "digest": self.digest}

    def __str__(self) -> str:
        return self.label


def human(name: str) -> Rater:
    """A person (``human:<name>``); ``mean`` is the consensus of a file of mean ratings."""
    return Rater("consensus", MEAN_HUMAN) if name == MEAN_HUMAN else Rater("human", name)


def jury(method: str) -> Rater:
    """A jury of judges (``jury:<method>``)."""
    return Rater("jury", method)


def judge(model: str, template: str | None = None, variant: str | None = None, constrained: bool = False) -> Rater:
    """A judge run's preferred rater: ``model@template[+variant][+constrained]``."""
    return Rater("judge", model, template, (variant,) if variant else (), constrained)


def parse_label(label: object) -> Rater:
    """The rater a label names (total: any text is some rater, and ``parse_label(x).label == x``).

    Example:
        >>> parse_label("m@nle-x#1a2b3c|pairwise").parent.digest, parse_label("jury:mean").name
        ('1a2b3c', 'mean')
    """
    text = str(label)
    if text.startswith(HUMAN_PREFIX):
        return human(text[len(HUMAN_PREFIX):])
    if text.startswith(JURY_PREFIX):
        return jury(text[len(JURY_PREFIX):])
    return _judge(text)


def _judge(text: str) -> Rater:
    digest = sample = None
    if (m := _DIGEST.search(text)) is None and (s := _SAMPLE.search(text)) is not None:
        sample, text = int(s.group(1)), text[:s.start()]
        m = _DIGEST.search(text)
    if m is not None:
        digest, text = m.group(1), text[:m.start()]
    first_at = text.find("@")  # the root keeps the first "@": the model is always the text before it
    cut = max([-1] + [i for i in (text.rfind("|"), *(m.end() for m in _INNER_DIGEST.finditer(text))) if i > first_at])
    if cut >= 0:  # a rater on top of another: everything before the cut is the parent
        parent = _judge(text[:cut])
        if text[cut] == "|":
            stage, *variants = text[cut + 1:].split("+")
            return _finish(Rater("judge", parent.model, None, (), False, digest, sample, stage, parent), variants)
        return _finish(Rater("judge", parent.model, None, (), False, digest, sample, None, parent),
                       text[cut + 1:].split("+"))
    name, at, rest = text.partition("@")
    if at:
        template, *variants = rest.split("+")
        return _finish(Rater("judge", name, template, (), False, digest, sample), variants)
    name, *variants = text.split("+")
    return _finish(Rater("judge", name, None, (), False, digest, sample), variants)


def _finish(rater: Rater, variants: list[str]) -> Rater:
    constrained = bool(variants) and variants[-1] == CONSTRAINED
    return replace(rater, variants=tuple(variants[:-1] if constrained else variants), constrained=constrained)


# -- predicates on labels (the tables' ``rater`` values) -------------------------------------------------

def is_human(label: object) -> bool:
    """A person or the mean of people: the label starts with ``human:`` (a ``humanlike`` judge is a judge)."""
    return str(label).startswith(HUMAN_PREFIX)


def human_mask(labels: "pd.Series") -> "pd.Series":
    """:func:`is_human` of each label of a column, at once (a million rows: no Python call per row)."""
    return labels.astype(str).str.startswith(HUMAN_PREFIX).astype(bool)


def is_individual_human(label: object) -> bool:
    """One person (``human:<id>``, not the ``human:mean`` of a file of means)."""
    return parse_label(label).kind == "human"


def is_jury(label: object) -> bool:
    """A jury of judges (``jury:<method>``)."""
    return str(label).startswith(JURY_PREFIX)


def is_judge(label: object) -> bool:
    """A judge run: neither a person, their mean, nor a jury."""
    return not is_human(label) and not is_jury(label)


def base_label(label: object) -> str:
    """The label without the store's ``#digest`` and a sample's ``#n``."""
    return parse_label(label).base.label


def model_of(label: object) -> str | None:
    """A judge label's model id when the label names a template (``model@template…``: the text before its
    first ``@``), else ``None``."""
    rater = parse_label(label)
    root = rater
    while root.parent is not None:
        root = root.parent
    return rater.model if rater.kind == "judge" and root.template is not None else None


def template_part(label: object) -> str:
    """A judge label's text after its model (``model@`` … ): the template and what follows it."""
    return str(label).partition("@")[2]


def free_twin(label: object) -> str | None:
    """The label of the unconstrained run a constrained one twins (its first ``+constrained`` taken out), or
    ``None`` for a label without one (``audit --compare``'s default pairs)."""
    text, marker = str(label), "+" + CONSTRAINED
    return text.replace(marker, "", 1) if marker in text else None


def undigested(label: object) -> str:
    """The label without a last ``#digest`` (the store's suffix when the preferred label was taken)."""
    return _DIGEST.sub("", str(label))


def person_label(name: object, prefix: str = HUMAN_PREFIX) -> str:
    """The label of a person named ``name`` in a human-ratings file: ``ann1`` → ``human:ann1``; a name that
    already carries ``prefix`` keeps it (``prefix`` is :func:`judgelab.ratings.import_long`'s choice)."""
    text = str(name)
    return text if text.startswith(prefix) else prefix + text


def with_variant(label: object, variant: str) -> str:
    """``label+<variant>``: a further ``+`` stage of a rater (``+dynamic``, ``+constrained``)."""
    rater = parse_label(label)
    if rater.kind == "judge" and rater.digest is None and rater.sample is None and not rater.constrained:
        return _finish(rater, [*rater.variants, variant]).label
    return _finish(Rater("judge", rater.model, parent=rater), [variant]).label  # on top of the label as it is


def with_stage(label: object, stage: str) -> str:
    """``label|<stage>``: a stage asked on top of a rater (NLE's ``|pairwise``)."""
    rater = parse_label(label)
    return Rater("judge", rater.model, stage=stage, parent=rater).label


def with_digest(label: object, digest: str) -> str:
    """``label#<digest>``: a preferred label another run holds, told apart by its settings' digest."""
    rater = parse_label(label)
    if rater.kind == "judge" and rater.digest is None and rater.sample is None:
        return replace(rater, digest=digest).label
    return Rater("judge", rater.model, digest=digest, parent=rater).label  # on top of the label as it is


def claims(label: object, preferred: object) -> bool:
    """Whether ``label`` is ``preferred`` or a form the store gave it (``preferred#…``, :func:`with_digest`)."""
    return str(label) == str(preferred) or str(label).startswith(f"{preferred}#")


def with_sample(label: object, sample: int) -> str:
    """A judge's label for one of its samples as an annotator of its own (``label#<sample>``): distinct
    for distinct labels and samples (a label that already ends in ``#<n>`` becomes the parent)."""
    rater = parse_label(label)
    if rater.sample is None:
        return replace(rater, sample=int(sample)).label
    return Rater("judge", rater.model, sample=int(sample), parent=rater).label
