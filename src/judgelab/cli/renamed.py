"""Spellings the command line no longer takes: one name per idea across commands.

An idea has one spelling in every command (the texts to rate are ``--items``; ratings files are
arguments; an input file's columns are ``--<what>-field``; criteria are ``--criteria``, a comma
list; ``--alpha`` is only an interval's error level, the share of kept items allowed to disagree is
``--risk``). The old spellings are refused in one line naming the new one (exit status 2), by the
one check in :func:`retired_hint` — no command declares them. ``docs/cli.md`` shows this table
(tested equal).
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["Renamed", "RENAMED", "retired_hint"]


class Renamed(NamedTuple):
    """An option spelling a command no longer takes: ``command`` (e.g. ``recipe nle``), the ``old``
    option, and what replaces it (``new``: an option, or an argument in words)."""

    command: str
    old: str
    new: str


def _argument(command: str, old: str, metavar: str, rest: str = "") -> Renamed:
    return Renamed(command, old, f"the argument {metavar}: judgelab {command} {metavar}{rest}")


RENAMED: tuple[Renamed, ...] = (
    # the texts to rate: --items
    Renamed("contamination", "--texts", "--items"),
    Renamed("dhp", "--data", "--items"),
    Renamed("pairwise", "--data", "--items"),
    Renamed("recipe chiang-lee", "--stories", "--items"),
    Renamed("recipe hanna", "--stories", "--items"),
    Renamed("recipe nle", "--data", "--items"),
    Renamed("recipe geval", "--data", "--dataset NAME (summeval, topical-chat) or --items FILE"),
    # the columns of an input file: --<what>-field
    Renamed("agree", "--item-col", "--id-field"),
    Renamed("agree", "--rater-col", "--rater-field"),
    Renamed("agree", "--criterion-col", "--criterion-field"),
    Renamed("agree", "--score-col", "--score-field"),
    Renamed("agree", "--system-col", "--system-field"),
    Renamed("agree", "--group-col", "--group-field"),
    Renamed("agree", "--criteria-cols", "--criteria-fields"),
    Renamed("recipe chiang-lee", "--story-field", "--text-field"),
    Renamed("recipe chiang-lee", "--prompt-field", "--context-field"),
    Renamed("recipe chiang-lee", "--writer-field", "--system-field"),
    # criteria: --criteria, comma-separated
    Renamed("audit", "--criterion", "--criteria"),
    Renamed("escalate", "--criterion", "--criteria"),
    Renamed("human-estimate", "--criterion", "--criteria"),
    # --alpha is an interval's error level (human-estimate) only
    Renamed("audit", "--alpha", "--risk"),
    Renamed("escalate", "--alpha", "--risk"),
    # files that are read are arguments
    _argument("scales", "--ratings", "RATINGS", " --human FILE"),
    _argument("human-estimate", "--ratings", "RATINGS", " --human FILE"),
    _argument("recipe user-study", "--annotations", "ANNOTATIONS"),
    *(_argument(f"hanna {sub}", "--scores", "SCORES") for sub in ("correlations", "williams", "baseline", "icc")),
    _argument("batch list", "--out", "FOLDER"),
    _argument("batch cancel", "--out", "FOLDER"),
)

_BY_COMMAND = {(r.command, r.old): r for r in RENAMED}


def _command_path(ctx: object) -> str:
    """``recipe nle`` for the context of ``judgelab recipe nle`` (the root's own name left out)."""
    names = []
    while ctx is not None and getattr(ctx, "parent", None) is not None:
        names.append(str(getattr(ctx, "info_name", "")))
        ctx = getattr(ctx, "parent", None)
    return " ".join(reversed(names))


def retired_hint(exc: BaseException) -> str | None:
    """The one line for an option a command no longer takes (click's "no such option" error), naming
    what replaces it; None for any other error.

    Example:
        >>> class Ctx:
        ...     def __init__(self, name, parent=None): self.info_name, self.parent = name, parent
        >>> class NoSuchOption(Exception):
        ...     option_name, ctx = "--alpha", Ctx("audit", Ctx("judgelab"))
        >>> retired_hint(NoSuchOption())
        '--alpha is now --risk (judgelab audit; docs/cli.md lists every renamed option)'
    """
    option = getattr(exc, "option_name", None)
    if not isinstance(option, str):
        return None
    command = _command_path(getattr(exc, "ctx", None))
    entry = _BY_COMMAND.get((command, option.split("=", 1)[0]))
    if entry is None:
        return None
    where = "" if entry.new.startswith("the argument") else f"judgelab {command}; "
    return f"{entry.old} is now {entry.new} ({where}docs/cli.md lists every renamed option)"
