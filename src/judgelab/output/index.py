"""The README.md index of an output folder: one row per file, then notes."""
from __future__ import annotations

from pathlib import Path

from judgelab.errors import JudgelabError

__all__ = ["write_index"]


def write_index(folder: Path, title: str, entries: list[tuple[str, str]], notes: list[str] | None = None,
                store: bool | None = None) -> Path:
    """Write ``folder/README.md``: the index of a command's output folder (one row per file, then notes).

    ``store.sqlite`` is listed when ``store`` (by default: when present); ``run.json`` and
    ``report.html`` always (every command that writes a folder writes them). Returns the README's path.

    Example:
        >>> import tempfile
        >>> write_index(Path(tempfile.mkdtemp()), "demo", [("a.csv", "a table")]).name
        'README.md'
    """
    lines = [f"# {title}", "", "| file | what |", "| --- | --- |"]
    lines += [f"| `{n}` | {d} |" for n, d in entries]
    if (folder / "store.sqlite").exists() if store is None else store:
        lines.append("| `store.sqlite` | every model call and judgment (cache and resume point) |")
    lines += ["| `run.json` | what ran: versions, command line, settings of each run |",
              "| `report.html` | one self-contained HTML page of this folder (`judgelab report` rewrites it) |"]
    if notes:
        lines += ["", "Notes:", "", *[f"- {n}" for n in notes]]
    path = folder / "README.md"
    try:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    except OSError as exc:
        raise JudgelabError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
