"""An annotation session: the judge's rubric as a rating form, and every submitted rating in the store.

People see the text the judge gets (:mod:`judgelab.annotate.form`; Chiang & Lee 2023, §2.2),
blind to the system that wrote a text, to its id and to the judge's scores, one item at a time
in their own seeded order (:func:`judgelab.annotate.selection.annotator_order`).

Every submission is written before the HTTP request is answered, in one transaction
(:meth:`judgelab.store.Store.put`): one row per rating, ``rater = human:<annotator>``,
``sample = 0``, ``status = ok``, ``score`` the chosen point, ``raw`` the optional comment,
``latency_s`` the seconds the item was on screen. The store's primary key
``(rater, criterion, system, item_id, sample)`` and its insert-or-ignore make a rating
recorded exactly once: **the first answer wins**. A re-submission of a rated item (a second
tab, the back button, a retried request) changes nothing and is reported as already recorded.
A rating is evidence: it is what the overview, the agreement and the estimates saw, and it is
never rewritten silently.

The plan (the selected items) and the annotators' links live beside the store
(:mod:`judgelab.annotate.folder_state`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from judgelab.annotate.folder_state import AnnotationPlan, Annotators, valid_name
from judgelab.annotate.form import ItemForm, render_form, scale_hint, scale_labels
from judgelab.annotate.overview import Overview, overview_of
from judgelab.annotate.report_link import ReportState, latest_time, report_state
from judgelab.annotate.selection import annotator_order
from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.prompts import Template
from judgelab.store import Judgment, Store
from judgelab.status import Status

__all__ = ["SubmissionError", "SubmitResult", "AnnotationSession", "HUMAN_PREFIX"]

from judgelab.raters import HUMAN_PREFIX, human, parse_label  # noqa: E402  (one definition)
MAX_COMMENT = 2000
_POINT = re.compile(r"-?[0-9]{1,9}")

# --------------------------------------------------------------------------- submissions


class SubmissionError(ValueError):
    """A submitted form that cannot be recorded (a question unanswered, a value off the scale, a forged form).

    ``rows`` maps the index of each rating the error concerns (form order) to what the page says
    next to it; empty when the error concerns the whole form.
    """

    def __init__(self, message: str, rows: Mapping[int, str] | None = None) -> None:
        super().__init__(message)
        self.rows: dict[int, str] = dict(rows or {})


@dataclass(frozen=True)
class SubmitResult:
    """What happened to a submission: ``recorded`` (written now) or ``already`` (the first answer is kept)."""

    status: str
    ratings: int


# --------------------------------------------------------------------------- the session


def _last_submissions(store: Store) -> dict[str, str]:
    """Annotator → time of their latest rating in the store (from the rows' metadata)."""
    ratings = store.ratings(with_meta=True)
    last: dict[str, str] = {}
    for rater, meta in zip(ratings["rater"], ratings["meta"]):
        who = parse_label(rater)
        if not who.is_human:
            continue
        try:
            stamp = json.loads(meta).get("submitted")
        except (TypeError, ValueError, AttributeError):
            continue
        name = who.name
        if isinstance(stamp, str) and stamp > last.get(name, ""):
            last[name] = stamp
    return last



class AnnotationSession:
    """One annotation server's state: the plan, the forms, the store (held by this process), progress.

    Thread-safe: the web app calls it from a thread pool; every store access holds one lock.
    Nothing here prints.
    """

    def __init__(self, store: Store, template: Template, criteria: Sequence[str], variant: str | None,
                 items: Sequence[Item], plan: AnnotationPlan, annotators: Annotators,
                 clock: Callable[[], float] = time.time) -> None:
        by_key = {(i.system, i.item_id): i for i in items}
        missing = [k for k in plan.keys if k not in by_key]
        if missing:
            raise JudgelabError(f"the selection names items that are not in the items file (first: {missing[0]})")
        self.store = store
        self.template = template
        self.criteria = list(criteria)
        self.variant = variant
        self.plan = plan
        self.annotators = annotators
        self.items = [by_key[k] for k in plan.keys]
        self.outputs = tuple(o for c in self.criteria for o in template.outputs(c))
        #: The points each rating may take (each criterion its own scale, e.g. G-Eval's fluency 1-3), in output order.
        self.output_labels = tuple(scale_labels(template, c) for c in self.criteria for _ in template.outputs(c))
        self._clock = clock
        self._lock = threading.Lock()
        self._forms: dict[int, ItemForm] = {}
        self._orders: dict[str, tuple[int, ...]] = {}
        # Render every form once up front: a missing field is an error before the server starts.
        for index, item in enumerate(self.items):
            self._forms[index] = render_form(template, self.criteria, item.fields(), variant)
        self._done: set[tuple[str, str, str, str]] = set()
        for rater, criterion, system, item_id in store.rated_by_humans():
            self._done.add((parse_label(rater).name, criterion, system, item_id))
        self._last: dict[str, str] = _last_submissions(store)
        #: When the latest rating was submitted (epoch s): to the second for earlier sessions' ratings, exact for this one's.
        self._latest: float | None = latest_time(self._last.values())

    # -- who ---------------------------------------------------------------
    @property
    def seed(self) -> int:
        return int(self.plan.settings.get("seed", 0))

    def annotator_by_name(self, name: str) -> str | None:
        """The annotator of a name link (``/a/<name>``); None with token links or for an unknown or invalid name."""
        if self.annotators.use_tokens or not valid_name(name):
            return None
        if self.annotators.names and name not in self.annotators.names:
            return None
        return name

    def annotator_by_token(self, token: str) -> str | None:
        """The annotator whose link token this is (constant-time comparisons), else None."""
        found = None
        for name, secret in self.annotators.tokens.items():
            if hmac.compare_digest(token.encode("utf-8"), secret.encode("utf-8")):
                found = name
        return found

    def is_organiser(self, token: str | None) -> bool:
        """May this request see the overview? Always with name links (loopback only); with tokens, the organiser's token."""
        if not self.annotators.use_tokens:
            return True
        return token is not None and self.annotators.organiser is not None and hmac.compare_digest(
            token.encode("utf-8"), self.annotators.organiser.encode("utf-8"))

    def known_annotators(self) -> list[str]:
        """The named annotators, then everyone else who has rated in this store (sorted)."""
        with self._lock:
            seen = {a for a, *_ in self._done}
        return list(self.annotators.names) + sorted(seen - set(self.annotators.names))

    # -- progress ------------------------------------------------------------
    def order(self, annotator: str) -> tuple[int, ...]:
        if annotator not in self._orders:
            self._orders[annotator] = annotator_order(len(self.items), annotator, self.seed)
        return self._orders[annotator]

    def _item_done(self, annotator: str, index: int) -> bool:
        item = self.items[index]
        return all((annotator, o, item.system, item.item_id) in self._done for o in self.outputs)

    def progress(self, annotator: str) -> tuple[int, int]:
        """(items this annotator has rated, items in the selection)."""
        with self._lock:
            return sum(self._item_done(annotator, i) for i in range(len(self.items))), len(self.items)

    def next_position(self, annotator: str) -> int | None:
        """The first position in the annotator's order that is not rated yet; None when all are."""
        with self._lock:
            for position, index in enumerate(self.order(annotator)):
                if not self._item_done(annotator, index):
                    return position
        return None

    def form(self, annotator: str, position: int) -> ItemForm:
        return self._forms[self.order(annotator)[position]]

    # -- signing forms -----------------------------------------------------------
    def sign(self, annotator: str, position: int, shown: float) -> str:
        """A signature binding a form to its annotator, position and the time it was shown."""
        message = f"{annotator}\x1f{position}\x1f{shown:.3f}".encode("utf-8")
        return hmac.new(self.annotators.secret, message, hashlib.sha256).hexdigest()

    def now(self) -> float:
        return round(self._clock(), 3)

    # -- recording ---------------------------------------------------------------
    def submit(self, annotator: str, position: int, shown: float, signature: str,
               values: Mapping[int, str], comment: str = "") -> SubmitResult:
        """Validate a submitted form and write its ratings in one transaction, before returning.

        ``values`` maps the index of each rating (form order over :attr:`outputs`) to the chosen
        point. The first answer wins: an item this annotator has rated already is left as it is.

        Raises:
            SubmissionError: a forged or stale form, a position outside the selection, an unanswered
                question or a value that is not a point of the scale.
            JudgelabError: the store cannot be written (disk full …); nothing was recorded.
        """
        if not (0 <= position < len(self.items)):
            raise SubmissionError("this form does not belong to the current selection")
        if not hmac.compare_digest(self.sign(annotator, position, shown), signature):
            raise SubmissionError("this form was not served to you by this annotation (reload the page)")
        scores: list[float] = []
        missing = []
        for k in range(len(self.outputs)):
            raw = (values.get(k) or "").strip()
            if not raw:
                missing.append(k + 1)
                continue
            labels = self.output_labels[k]
            if not _POINT.fullmatch(raw):  # ASCII digits only: int() would also take "٤" or "4_0"
                raise SubmissionError(f"rating {raw[:20]!r} is not a point of the scale", {k: scale_hint(labels)})
            value = int(raw)
            if value not in labels:
                raise SubmissionError(f"rating {value} is outside the scale {labels[0]}–{labels[-1]}",
                                      {k: scale_hint(labels)})
            scores.append(float(value))
        if missing:
            raise SubmissionError("please answer every question (missing: " + ", ".join(map(str, missing)) + ")",
                                  {k - 1: "Please rate this question." for k in missing})
        comment = " ".join(comment.split())[:MAX_COMMENT] if comment else ""
        index = self.order(annotator)[position]
        item = self.items[index]
        now = self._clock()
        seconds = max(0.0, now - shown)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        criterion_of = {o: c for c in self.criteria for o in self.template.outputs(c)}
        meta = {"source": "judgelab annotate", "template": self.template.name,
                "template_sha256": self.plan.settings.get("template_sha256"), "variant": self.variant,
                "position": position, "submitted": stamp}
        rows = [Judgment(item_id=item.item_id, system=item.system, group=item.group, criterion=output,
                         rater=human(annotator).label, sample=0, score=score, score_parsed=None, score_logprob=None,
                         logprob_outside=None, status=Status.OK, raw=comment or None, latency_s=seconds,
                         meta={**meta, "question": criterion_of[output]})
                for output, score in zip(self.outputs, scores)]
        with self._lock:
            if self._item_done(annotator, index):
                return SubmitResult("already", 0)
            fresh = [j for j in rows if (annotator, j.criterion, j.system, j.item_id) not in self._done]
            self.store.put(judgments=fresh)  # committed (WAL) before the request is answered
            self._done.update((annotator, j.criterion, j.system, j.item_id) for j in fresh)
            self._last[annotator] = stamp
            self._latest = max(now, self._latest or now)
        return SubmitResult("recorded", len(fresh))

    # -- the organiser's view -------------------------------------------------------
    @property
    def folder(self) -> Path:
        """The annotation folder (the store's)."""
        return Path(self.store.path).parent

    def report_state(self) -> ReportState:
        """When the folder's report.html was written, and whether ratings came in since."""
        with self._lock:
            latest = self._latest
        return report_state(self.folder, latest)

    def overview(self) -> Overview:
        with self._lock:
            ratings = self.store.ratings()
            done = {a: sum(self._item_done(a, i) for i in range(len(self.items))) for a in {a for a, *_ in self._done}}
            last = dict(self._last)
        names = list(self.annotators.names) + sorted(set(done) - set(self.annotators.names))
        return overview_of(ratings, self.plan.keys, self.outputs, names, done, last)
