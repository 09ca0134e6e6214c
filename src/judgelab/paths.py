"""File names built from names found in data (criteria, systems, raters, tasks …).

A name from a user's file or option never becomes part of a path as it is: ``../../x``, a
``/``, a NUL or a name longer than the file system allows would write outside the output
folder or fail. :func:`safe_filename` maps any string to one safe file-name component.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

from judgelab.errors import JudgelabError

__all__ = ["safe_filename", "output_folder", "StagedOutputs"]

#: Names Windows reserves whatever the extension (``nul.png`` cannot be created there).
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}
_ALLOWED_PUNCTUATION = "._-+"


def _allowed(ch: str) -> bool:
    if ch in _ALLOWED_PUNCTUATION:
        return True
    return ch.isalnum() and unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co", "Cn"}


def safe_filename(name: str, max_length: int = 80) -> str:
    """One file-name component for ``name``: the name itself when it is already safe, otherwise
    its safe characters (others become ``_``) followed by ``-`` and 8 hex digits of its SHA-256.

    Safe: letters, digits and ``. _ - +`` only (so no ``/``, ``\\``, NUL, control characters or
    spaces), no two dots in a row, not starting or ending with a dot (no ``..``, no hidden files), not a reserved device name,
    at most ``max_length`` characters. The mapping is stable (the same name always gives the
    same file name) and two different names never share one unless SHA-256 prefixes collide.
    """
    name = str(name)
    normal = unicodedata.normalize("NFC", name)
    cleaned = re.sub(r"\.{2,}", "_", "".join(ch if _allowed(ch) else "_" for ch in normal)).lstrip(".")
    if (cleaned == name and cleaned and len(cleaned) <= max_length and not cleaned.endswith(".")
            and cleaned.split(".")[0].lower() not in _RESERVED):
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    stem = cleaned[: max(1, max_length - 9)].rstrip(".") or "_"
    return f"{stem}-{digest}"


def output_folder(path: str | Path, what: str = "output folder") -> Path:
    """Create ``path`` as a folder (parents too) and return it; one clear error when it is a file or
    cannot be created (a full disk, no permission)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise JudgelabError(f"{what} {folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JudgelabError(f"cannot create {what} {folder}: {exc.strerror or exc}") from None
    return folder


class StagedOutputs:
    """New output files written beside a folder's current ones and swapped in only at the end.

    A command writes its outputs into :attr:`folder` (a hidden staging folder inside the output
    folder); :meth:`commit` moves each into place (``os.replace``, atomic per file) and removes the
    earlier outputs of the same command that this run did not produce (a ``welch.csv`` from a run
    with ``--compare`` when this one has none; a ``report.html`` of the old outputs). A run that
    is refused, fails or is interrupted never reaches :meth:`commit`: :meth:`discard` removes the
    staging folder and every earlier output stays as it was, byte for byte.

    Use it as a context manager: commit on success, discard on any exception (Ctrl-C included).

    Args:
        out: the output folder (created when missing).
        replaces: the command's output names; those this run does not produce are removed at commit.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> _ = (out / "old.csv").write_text("old")
        >>> with StagedOutputs(out, replaces=("old.csv", "new.csv")) as stage:
        ...     _ = (stage.folder / "new.csv").write_text("new")
        ...     (out / "old.csv").exists(), (out / "new.csv").exists()
        (True, False)
        >>> sorted(p.name for p in out.iterdir())
        ['new.csv']
    """

    PREFIX = ".judgelab-new-"

    def __init__(self, out: str | Path, replaces: tuple[str, ...] = ()) -> None:
        import os
        import secrets

        self.out = output_folder(out)
        self.replaces = replaces
        for stale in self.out.glob(self.PREFIX + "*"):  # left by a killed run (one writer per folder: the store's lock)
            _remove_tree(stale)
        self.folder = self.out / f"{self.PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            self.folder.mkdir()
        except OSError as exc:
            raise JudgelabError(f"cannot write into {self.out}: {exc.strerror or exc}") from None

    def commit(self) -> list[Path]:
        """Move the new files into the output folder; remove the command's outputs this run did not make.

        Returns:
            The paths of the files now in place.
        """
        import os

        made = sorted(p for p in self.folder.iterdir() if p.is_file())
        names = {p.name for p in made}
        try:
            for name in self.replaces:
                if name not in names:
                    (self.out / name).unlink(missing_ok=True)
            placed = []
            for path in made:
                os.replace(path, self.out / path.name)
                placed.append(self.out / path.name)
        except OSError as exc:
            raise JudgelabError(f"cannot replace the outputs in {self.out}: {exc.strerror or exc}") from None
        finally:
            _remove_tree(self.folder)
        return placed

    def discard(self) -> None:
        """Remove the staging folder; the earlier outputs stay as they were."""
        _remove_tree(self.folder)

    def __enter__(self) -> "StagedOutputs":
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
