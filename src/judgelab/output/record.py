"""``results.json``: the one record of an output folder — what each step computed, from what, into which files.

One document per folder. Each command that writes into the folder adds one **step** (``rate``,
``agree``, ``audit``, …); a rerun of the same kind of step replaces its entry, the other steps are
kept. A step holds its settings, its inputs (path as given, absolute path, SHA-256 of the file and
the options it was read with), the files it wrote with what each holds, and ``results``: its typed
result serialised (``to_record()`` of the result class). Pages (report.html, ``judgelab view``)
render these records; they recompute nothing and parse no command line.

A record of a newer schema than this judgelab reads is refused in one line naming both versions.
A folder written before records existed has no ``results.json``: :func:`judgelab.output.legacy.folder_record`
builds its record from the old files (the one place that knows them).
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_text_atomic

__all__ = ["RECORD_FILE", "RECORD_SCHEMA", "InputFile", "OutputFile", "Step", "FolderRecord", "input_file",
           "read_record", "NewerRecord", "write_record", "parse_record", "plain"]

RECORD_FILE = "results.json"
#: Raised when the shape of a record changes; a reader refuses records of a higher number.
RECORD_SCHEMA = 1


@dataclass(frozen=True)
class InputFile:
    """A file a step read: its role (``ratings``, ``human``, ``items`` …), the path as given and absolute,
    its SHA-256 (``None`` when it could not be read) and the options it was read with."""

    role: str
    path: str
    absolute: str
    sha256: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def located(self, folder: Path) -> Path | None:
        """The file where it is now: its absolute path, else the path as given (also inside ``folder``)."""
        given = Path(self.path)
        candidates = [Path(self.absolute), given] if given.is_absolute() else [Path(self.absolute), given,
                                                                                folder / given, folder / given.name]
        return next((c for c in candidates if c.is_file()), None)


@dataclass(frozen=True)
class OutputFile:
    """A file a step wrote: its name in the folder, what it holds, and its role (``table``: e.g. ``correlations``)."""

    name: str
    what: str
    table: str | None = None


@dataclass
class Step:
    """One step's entry of the record (see the module docstring)."""

    kind: str
    created: str
    settings: dict[str, Any] = field(default_factory=dict)
    inputs: list[InputFile] = field(default_factory=list)
    files: list[OutputFile] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    #: how the step was recorded: ``"judgelab"`` (written by the command) or ``"rebuilt"`` (from an older folder's files)
    source: str = "judgelab"

    def file(self, table: str) -> str | None:
        """The name of the file holding ``table`` (``None`` when the step wrote none)."""
        return next((f.name for f in self.files if f.table == table), None)

    def inputs_of(self, role: str) -> list[InputFile]:
        return [i for i in self.inputs if i.role == role]


@dataclass
class FolderRecord:
    """A folder's ``results.json``: its steps, oldest first."""

    steps: list[Step] = field(default_factory=list)
    judgelab_version: str = ""
    created: str = ""
    schema_version: int = RECORD_SCHEMA

    def step(self, kind: str) -> Step | None:
        """The step of ``kind`` (the last one recorded), or ``None``."""
        return next((s for s in reversed(self.steps) if s.kind == kind), None)

    def files(self) -> set[str]:
        """Every file the steps list."""
        return {f.name for s in self.steps for f in s.files}

    def file(self, table: str) -> str | None:
        """The file holding ``table`` (the last step's that lists one), or ``None``."""
        return next((name for s in reversed(self.steps) if (name := s.file(table))), None)

    def result(self, key: str) -> Any:
        """``results[key]`` of the last step that recorded one (``None`` when none did)."""
        return next((s.results[key] for s in reversed(self.steps) if key in s.results), None)

    def tables(self) -> dict[str, str]:
        """table -> file name for every file the steps list by the table it holds (a later step's wins)."""
        return {f.table: f.name for s in self.steps for f in s.files if f.table}

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, "judgelab_version": self.judgelab_version,
                "created": self.created, "steps": [asdict(s) for s in self.steps]}


class NewerRecord(JudgelabError):
    """A record of a newer schema than this judgelab reads (refused, never guessed at)."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def input_file(role: str, path: str | Path, options: dict[str, Any] | None = None) -> InputFile:
    """The :class:`InputFile` of ``path`` (its digest read now)."""
    p = Path(path)
    try:
        digest: str | None = hashlib.sha256(p.read_bytes()).hexdigest()
    except OSError:
        digest = None
    return InputFile(role, str(path), str(p.resolve()), digest, dict(options or {}))


def parse_record(doc: Any, where: str = RECORD_FILE) -> FolderRecord:
    """A record from its JSON value, validated.

    Raises:
        JudgelabError: one line: a newer schema (naming both versions) or a malformed record.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("schema_version"), int):
        raise JudgelabError(f"{where} is not a judgelab results record (no schema_version)")
    version = doc["schema_version"]
    if version > RECORD_SCHEMA:
        raise NewerRecord(f"{where} has schema_version {version}; this judgelab reads up to {RECORD_SCHEMA}: "
                            "upgrade judgelab to read it")
    steps = []
    try:
        for s in doc.get("steps") or []:
            steps.append(Step(kind=str(s["kind"]), created=str(s.get("created") or ""),
                              settings=dict(s.get("settings") or {}),
                              inputs=[InputFile(str(i["role"]), str(i["path"]), str(i.get("absolute") or i["path"]),
                                                i.get("sha256"), dict(i.get("options") or {})) for i in s.get("inputs") or []],
                              files=[OutputFile(str(f["name"]), str(f.get("what") or ""), f.get("table"))
                                     for f in s.get("files") or []],
                              results=dict(s.get("results") or {}), source=str(s.get("source") or "judgelab")))
    except (KeyError, TypeError, ValueError) as exc:
        raise JudgelabError(f"{where} is damaged: a step lacks {exc}") from None
    return FolderRecord(steps, str(doc.get("judgelab_version") or ""), str(doc.get("created") or ""), version)


def read_record(folder: str | Path) -> FolderRecord | None:
    """The folder's ``results.json`` (``None`` when it has none: a folder of an older judgelab).

    Raises:
        JudgelabError: one line when the record is unreadable, damaged or of a newer schema.
    """
    path = Path(folder) / RECORD_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise JudgelabError(f"{path} cannot be read: {' '.join(str(exc).split())}") from None
    return parse_record(doc, str(path))


def write_record(into: Path, step: Step, base: FolderRecord | None = None) -> Path:
    """Write ``into/results.json``: ``base`` (the folder's record so far; ``None`` for a new folder) with ``step``
    added — a step of the same kind replaced, the others kept. ``into`` is where the file is written (the
    staging folder of :class:`judgelab.output.OutputFolder`)."""
    from judgelab import __version__

    steps = [s for s in (base.steps if base else []) if s.kind != step.kind] + [step]
    record = FolderRecord(steps, __version__, base.created if base and base.created else _now())
    path = into / RECORD_FILE
    return write_text_atomic(path, json.dumps(plain(record.to_dict()), indent=2, ensure_ascii=False,
                                              allow_nan=False) + "\n")


def plain(value: Any) -> Any:
    """``value`` as plain JSON: numpy scalars as Python numbers, NaN and infinities as ``None``, paths as text."""
    import math

    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)
