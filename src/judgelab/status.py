"""The status of a judgment: why a rating has a score or has none.

A ``str`` enum, so a member equals the text stored in the ``status`` column and written to
every ratings file (``Status.OK == "ok"``); stores and files keep plain strings.
"""
from __future__ import annotations

from enum import Enum

__all__ = ["Status", "DEFAULT_MAX_FAILURE_RATE"]

#: The share of failed judgments (status other than ``ok``) above which a command that judges ends with
#: exit status 3 (``--max-failure-rate``; :func:`judgelab.rate.check_failure_rate` applies it).
DEFAULT_MAX_FAILURE_RATE = 0.5


class Status(str, Enum):
    """Every status a judgment or a rating row can have.

    Members:
        OK: a score was read.
        REFUSAL: the judge declined to rate (Chiang & Lee 2023, appendix D.2.1); regenerated
            up to ``max_refusal_retries`` times before it is recorded.
        NO_RATING: an answer with no rating phrase in it.
        OUT_OF_RANGE: a rating outside the scale.
        EMPTY: an empty answer.
        TRUNCATED: cut off at ``max_tokens`` before a rating was given.
        NO_LABEL_MASS: log-probability scoring found none of the scale's labels among the
            top tokens.
        MISSING: an imported (human) rating row without a score.
        ERROR: the call ran out of its retry budget (rate limited, server errors, timeouts);
            no answer was recorded, and the next run asks again.

    Example:
        >>> Status.OK == "ok", Status("refusal") is Status.REFUSAL, str(Status.TRUNCATED)
        (True, True, 'truncated')
    """

    OK = "ok"
    REFUSAL = "refusal"
    NO_RATING = "no_rating"
    OUT_OF_RANGE = "out_of_range"
    EMPTY = "empty"
    TRUNCATED = "truncated"
    NO_LABEL_MASS = "no_label_mass"
    MISSING = "missing"
    ERROR = "error"

    def __str__(self) -> str:  # the stored text, not "Status.OK"
        return self.value

    def __format__(self, format_spec: str) -> str:  # f"{Status.OK}" is "ok" on every Python version
        return str.__format__(self, format_spec)
