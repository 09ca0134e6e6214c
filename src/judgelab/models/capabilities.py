"""What an OpenAI-compatible endpoint showed it can do, learned from its answers during a run.

An endpoint's documentation and its behaviour differ (llama-cpp-python's server accepts ``n`` and
answers one sample; it refuses a JSON-schema ``response_format`` with HTTP 500), so the OpenAI
backend learns these from the answers, acts on them, and records them in run.json
(``capabilities``). :class:`EndpointCapabilities` is the one owner of that knowledge:

* **samples per request** (``n``): a request for ``n > 1`` answers that comes back with fewer
  means the endpoint ignores ``n``. The run asks the missing samples one call each (no sample is
  lost) and plans every later call one sample per call. Until an endpoint has answered an ``n``
  request, a dry run says "up to" the calls it would make if ``n`` were ignored
  (:func:`calls_at_most`).
* **log-probabilities over chat**: ``--score logprob`` over ``--style chat`` needs the answer's
  ``logprobs``/``top_logprobs``. An endpoint that answers without them cannot score: the run stops
  with one line naming ``--style completion`` (:meth:`EndpointCapabilities.saw_chat_scoring`). One
  that returns them but puts little probability on the scale's labels (a chat model that starts its
  answer with a line break) is said after the run (:meth:`EndpointCapabilities.label_mass_advice`).
* **response_format** (``--constrain``): the strict JSON schema first; an endpoint that refuses it
  (its error names ``response_format`` or ``json_schema``) is asked with ``{"type": "json_object",
  "schema": …}`` from then on — llama-cpp-python turns that schema into a grammar, other servers
  at least return JSON, which the parser reads (an answer without the field is counted as
  failed, never guessed). An endpoint that refuses that too stops the run in one line
  (:meth:`EndpointCapabilities.refused_response_format`). Free text is never substituted: a run
  labelled ``+constrained`` is constrained.
* **concurrency reached**: the calls in flight the adaptive limit came down to after 429s, 503s
  and timeouts (:class:`judgelab.models.retry.AdaptiveLimit`), and where it ended.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from judgelab.errors import CapabilityError
from judgelab.models.answer_format import AnswerFormat

__all__ = ["EndpointCapabilities", "calls_at_most", "refuses_response_format", "RESPONSE_FORMATS", "LOW_LABEL_MASS"]

#: The ``response_format`` mechanisms tried for ``--constrain``, in order.
RESPONSE_FORMATS = ("json_schema", "json_object")

#: A scored token whose labels hold less than this share of its probability rests on little mass.
LOW_LABEL_MASS = 0.5


@dataclass
class EndpointCapabilities:
    """What one endpoint (or a fleet of replicas of one model) showed while answering.

    Attributes:
        samples_per_request: answers returned to the first request that asked for several (``None``:
            no such request yet).
        n_asked: the ``n`` of that request.
        chat_logprobs: whether chat answers carried the log-probabilities asked for (``None``: not asked).
        response_format: the ``--constrain`` mechanism in use (``json_schema``, ``json_object``; ``None``:
            not asked).
        response_format_refused: the endpoint's reason for refusing the stronger mechanisms, by mechanism.
        concurrency: ``{"ceiling", "lowest", "final"}`` calls in flight of the last run (``None``: no run).

    Example:
        >>> caps = EndpointCapabilities()
        >>> caps.saw_samples(asked=3, returned=1), caps.n_ignored, caps.max_n(128)
        (True, True, 1)
        >>> caps.response_format_body(AnswerFormat("rating", 1, 3))["type"]
        'json_schema'
        >>> caps.refused_response_format("json_schema", "Input should be 'text' or 'json_object'")
        'json_object'
        >>> caps.response_format_body(AnswerFormat("rating", 1, 3))["schema"]["properties"]
        {'score': {'type': 'integer', 'enum': [1, 2, 3]}}
    """

    samples_per_request: int | None = None
    n_asked: int | None = None
    chat_logprobs: bool | None = None
    response_format: str | None = None
    response_format_refused: dict[str, str] = field(default_factory=dict)
    concurrency: dict[str, int] | None = None
    #: Chat scoring answers seen (for the label-mass advice).
    chat_scored: int = 0

    # -- n ---------------------------------------------------------------------------------------
    def saw_samples(self, asked: int, returned: int) -> bool:
        """Record the answers to a request for ``asked`` samples; True the first time one returns fewer (the
        caller says it once)."""
        if asked <= 1:
            return False
        was_ignored = self.n_ignored
        if self.samples_per_request is None or returned < self.samples_per_request:
            self.samples_per_request, self.n_asked = returned, asked
        return returned < asked and not was_ignored

    @property
    def n_ignored(self) -> bool:
        """The endpoint answered a request for several samples with fewer."""
        return self.samples_per_request is not None and self.n_asked is not None and self.samples_per_request < self.n_asked

    @property
    def n_known(self) -> bool:
        """Whether it is known how many samples one request returns (an ``n`` request was answered)."""
        return self.samples_per_request is not None

    def max_n(self, declared: int) -> int:
        """The most samples to ask in one request: 1 once the endpoint ignored ``n``, else ``declared``."""
        return 1 if self.n_ignored else declared

    # -- log-probabilities over chat ---------------------------------------------------------------
    def saw_chat_scoring(self, tokens: Sequence[Any | None], where: str) -> None:
        """Check a chat answer to a log-probability request.

        Args:
            tokens: each choice's tokens (``None`` or empty: the answer carried no log-probabilities).
            where: the endpoint, for the message.

        Raises:
            CapabilityError: no log-probabilities came back — one line naming ``--style completion``.
        """
        if not tokens or any(not t for t in tokens):
            self.chat_logprobs = False
            raise CapabilityError(f"the chat endpoint {where} answered without the log-probabilities --score logprob asks "
                                  "for (logprobs/top_logprobs): run with --style completion (or --score parsed)")
        self.chat_logprobs = True
        self.chat_scored += 1

    def label_mass_advice(self, low: int, scored: int) -> str | None:
        """What to say when most log-probability scores over chat rest on little label mass (None otherwise).

        Args:
            low: judgments whose scored token put less than :data:`LOW_LABEL_MASS` on the scale's labels.
            scored: log-probability judgments recorded.
        """
        if not self.chat_logprobs or not scored or low * 2 <= scored:
            return None
        return (f"{low} of {scored} log-probability scores over chat put less than {LOW_LABEL_MASS:.0%} of the scored "
                "token's probability on the scale's labels (the chat answer's first token is mostly something else, "
                "e.g. a line break): the scores rest on little mass; --style completion reads the labels right after "
                "the cue")

    # -- response_format ------------------------------------------------------------------------------
    def response_format_in_use(self) -> str:
        """The ``response_format`` mechanism constrained requests are sent with now (the first until one is refused)."""
        if self.response_format is None:
            self.response_format = RESPONSE_FORMATS[0]
        return self.response_format

    def response_format_body(self, fmt: AnswerFormat) -> dict[str, Any]:
        """The ``response_format`` of a constrained chat request in the mechanism now in use."""
        if self.response_format_in_use() == "json_object":
            return {"type": "json_object", "schema": fmt.json_schema()}
        return fmt.response_format()

    def refused_response_format(self, sent: str, reason: str) -> str:
        """The endpoint refused the mechanism ``sent``: the next one to try (also for a request sent before an
        earlier refusal moved on).

        Raises:
            CapabilityError: every mechanism was refused — one line with the server's reason.
        """
        self.response_format_refused.setdefault(sent, reason)
        order = list(RESPONSE_FORMATS)
        current = order.index(self.response_format) if self.response_format in order else 0
        following = max(current, order.index(sent) + 1)
        if following >= len(order):
            raise CapabilityError(
                f"--constrain: the endpoint accepts neither a JSON-schema response_format nor a JSON object with a schema "
                f"(it said: {reason}); run without --constrain")
        self.response_format = order[following]
        return self.response_format

    # -- concurrency --------------------------------------------------------------------------------
    def saw_concurrency(self, ceiling: int, lowest: int, final: int) -> None:
        """Record the calls in flight a run's adaptive limit allowed: at most, at its lowest, at the end."""
        self.concurrency = {"ceiling": ceiling, "lowest": lowest, "final": final}

    def notes(self) -> list[str]:
        """What the user should know after a run (shown with the backend's notes)."""
        out = []
        if self.response_format == "json_object" and "json_schema" in self.response_format_refused:
            out.append("the endpoint refused the JSON-schema response_format of --constrain: the schema was sent as "
                       "{\"type\": \"json_object\", \"schema\": …} instead (llama-cpp-python enforces it)")
        c = self.concurrency
        if c and c["lowest"] < c["ceiling"]:
            out.append(f"calls in flight came down from {c['ceiling']} to {c['lowest']} (rate limits, overload or "
                       f"timeouts) and ended at {c['final']}")
        return out

    def to_dict(self) -> dict[str, Any]:
        """run.json's ``capabilities``."""
        return {"samples_per_request": self.samples_per_request, "n_asked": self.n_asked,
                "chat_logprobs": self.chat_logprobs, "response_format": self.response_format,
                "response_format_refused": dict(self.response_format_refused), "concurrency": self.concurrency}


def calls_at_most(calls: Sequence[Any], learned: EndpointCapabilities | None) -> int | None:
    """The calls a plan makes at most when the endpoint may ignore ``n`` (then each sample is a call of its own),
    or None when the count is exact (``n`` known to be honoured, not asked, or no endpoint to learn from).

    Args:
        calls: the plan's first calls (:class:`judgelab.run.plan.PlannedCall`: ``n`` and ``cached``).
        learned: the judge's :class:`EndpointCapabilities` (None: an in-process judge).

    Example:
        >>> from types import SimpleNamespace as Call
        >>> calls_at_most([Call(n=3, cached=False), Call(n=1, cached=False)], EndpointCapabilities())
        4
    """
    if learned is None or (learned.n_known and not learned.n_ignored):
        return None
    uncached = [c for c in calls if not c.cached]
    extra = sum(c.n - 1 for c in uncached if c.n > 1)
    return len(uncached) + extra if extra else None


def refuses_response_format(code: int, reason: str) -> bool:
    """Whether a failed constrained call's answer refuses its ``response_format`` (llama-cpp-python: HTTP 500
    "Input should be 'text' or 'json_object'"; others: HTTP 400 or 422 naming ``response_format`` or ``json_schema``).

    Example:
        >>> refuses_response_format(500, "HTTP 500 ... 'loc': ('body', 'response_format', 'type') ..."), refuses_response_format(500, "HTTP 500 oops")
        (True, False)
    """
    return code in {400, 422, 500} and ("response_format" in reason or "json_schema" in reason)
