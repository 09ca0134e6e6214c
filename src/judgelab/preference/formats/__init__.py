"""Verdicts from files: judgelab's own verdicts files and the ecosystem's judge outputs.

:func:`read_verdicts` reads one file into the verdicts table (:func:`judgelab.preference.verdicts.normalise_verdicts`).
A file is recognised by its fields, not its name: each reader module of this package registers a
:class:`VerdictFormat` (its name, a test on the parsed file, a reader) with :func:`register`, and the
first format whose test accepts the file reads it; a file no format accepts is one error naming the
formats known. judgelab's own layout (``rater, item_id, first, second, choice`` + optional columns,
CSV or JSONL) is the format ``verdicts``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from judgelab.errors import JudgelabError
from judgelab.preference.verdicts import REQUIRED_COLUMNS, normalise_verdicts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["VerdictFormat", "register", "formats", "read_verdicts", "read_verdict_files", "load_file"]


@dataclass(frozen=True)
class VerdictFormat:
    """One kind of file of verdicts.

    ``accepts(data, path)`` says whether the parsed file (a list of dicts for CSV/JSONL/a JSON list, else
    the JSON value) is of this kind, looking only at its fields; ``read(data, path)`` gives its rows as a
    DataFrame with the verdict columns (:data:`judgelab.preference.verdicts.VERDICT_COLUMNS`, as many as the
    source has), or raises :class:`judgelab.errors.JudgelabError` naming the file and what is wrong.
    """

    name: str
    accepts: Callable[[Any, Path], bool]
    read: Callable[[Any, Path], "pd.DataFrame"]
    description: str = ""


_FORMATS: list[VerdictFormat] = []


def register(fmt: VerdictFormat) -> VerdictFormat:
    """Add a format (a later registration of the same name replaces the earlier one)."""
    _FORMATS[:] = [f for f in _FORMATS if f.name != fmt.name]
    _FORMATS.append(fmt)
    return fmt


def formats() -> list[VerdictFormat]:
    """The formats known, judgelab's own first."""
    _load_builtin()
    return list(_FORMATS)


def load_file(path: Path) -> Any:
    """A file parsed as data: the rows of a CSV or JSONL file (:class:`judgelab.datasets.readers.Records`, a list
    of dicts that says where row ``i`` is), else the JSON value (a JSON list of objects is Records too); an ``.eval``
    file (inspect_ai's zip log) as its path."""
    from judgelab.datasets import readers

    if path.suffix.lower() == ".eval":  # inspect_ai's binary log (a zip): its own reader opens it by its path
        return path
    if path.suffix.lower() == ".json":
        value = readers.read_json(path)
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            return readers.Records(value, path=path)
        return value
    return readers.read_records(path)


def read_verdicts(path: str | Path) -> "pd.DataFrame":
    """The verdicts of one file, whatever tool wrote it (recognised by its fields)."""
    path = Path(path)
    data = load_file(path)
    for fmt in formats():
        if fmt.accepts(data, path):
            return normalise_verdicts(fmt.read(data, path), where=str(path))
    names = ", ".join(f.name for f in formats())
    raise JudgelabError(f"{path}: not a file of verdicts this version reads (known: {names}); a verdicts file "
                        f"has the columns {', '.join(REQUIRED_COLUMNS)}")


def read_verdict_files(paths: list[str | Path]) -> "pd.DataFrame":
    """The verdicts of several files in one table: a verdict given identically in several files counts once, a rater's
    verdict given differently twice is an error."""
    import pandas as pd

    tables = [read_verdicts(p) for p in paths]
    if not tables:
        raise JudgelabError("no verdicts files given")
    joined = pd.concat(tables, ignore_index=True)
    # the same verdict in several files (e.g. a gold label every result file of a data set carries) is one fact
    joined = joined.drop_duplicates(["rater", "criterion", "item_id", "first", "second", "sample", "choice", "p_first",
                                     "status"])
    return normalise_verdicts(joined, where=" + ".join(str(p) for p in paths))


def _own_accepts(data: Any, path: Path) -> bool:
    return isinstance(data, list) and bool(data) and isinstance(data[0], dict) and "rater" in data[0] \
        and all(c in data[0] for c in ("item_id", "first", "second"))


def _own_read(data: Any, path: Path) -> "pd.DataFrame":
    from judgelab.datasets.readers import records_frame

    return records_frame(data)


_BUILTIN = ["judgelab.preference.formats.alpaca_eval", "judgelab.preference.formats.fastchat",
            "judgelab.preference.formats.arena_hard", "judgelab.preference.formats.llmbar",
            "judgelab.preference.formats.inspect_log"]
_loaded = False


def _load_builtin() -> None:
    """Import the reader modules of the other tools' formats (each registers itself); one not yet written is
    skipped."""
    global _loaded
    if _loaded:
        return
    import importlib

    _loaded = True
    for module in _BUILTIN:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


register(VerdictFormat("verdicts", _own_accepts, _own_read, "judgelab's verdicts file (CSV or JSONL)"))
