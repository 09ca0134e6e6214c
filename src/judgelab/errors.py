"""User-facing errors: one clear line, exit status 2 on the command line."""
from __future__ import annotations


class JudgelabError(Exception):
    """A problem with the user's input or environment, reported as one line (exit 2)."""


class BackendError(JudgelabError):
    """A judge backend could not answer (unreachable, rejected, out of retries)."""


class CapabilityError(JudgelabError):
    """A request asked a backend for something it does not offer (no silent fallback)."""


class TooManyFailures(JudgelabError):
    """More judgments failed (parse failures, refusals, truncations …) than the run allows."""


#: Exit statuses of the ``judgelab`` command (documented in README.md).
EXIT_USAGE = 2
EXIT_TOO_MANY_FAILURES = 3
EXIT_INTERRUPTED = 130
