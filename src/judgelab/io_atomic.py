"""Atomic file writes: the one way judgelab replaces a file.

A file is written into a temporary file in its own folder and renamed over the target
(``os.replace``, atomic on POSIX and Windows), so a reader, a crash or a full disk never sees half a
file under the real name, and a failed write removes its temporary file.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from judgelab.errors import JudgelabError

__all__ = ["replace_atomic", "write_atomic", "write_text_atomic"]


def replace_atomic(path: Path, fill: Callable[[Path], object], mode: int = 0o644, fsync: bool = False) -> Path:
    """Make ``path`` by ``fill(tmp)`` writing a temporary file beside it, then renaming it over ``path``.

    Args:
        path: the file to write (its folder must exist).
        fill: writes the whole file at the path it is given.
        mode: the file's permissions (``0o600`` for a file only its owner may read).
        fsync: flush the file to disk before the rename (state that must survive a power cut).

    Returns:
        ``path``.

    Raises:
        OSError: the folder cannot be written; whatever ``fill`` raises. The temporary file is removed.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.txt"
        >>> replace_atomic(p, lambda tmp: tmp.write_text("hi")).read_text()
        'hi'
    """
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        fill(tmp)
        if fsync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # mkstemp's 0600 would hide the file from the user's group
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_atomic(path: Path, fill: Callable[[Path], object], mode: int = 0o644, fsync: bool = False) -> Path:
    """:func:`replace_atomic`, an ``OSError`` given as one line: ``cannot write PATH: why``.

    Raises:
        JudgelabError: the file cannot be written.
    """
    try:
        return replace_atomic(path, fill, mode, fsync)
    except OSError as exc:
        raise JudgelabError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_text_atomic(path: Path, text: str, mode: int = 0o644, fsync: bool = False) -> Path:
    """Write ``text`` (UTF-8, newlines as they are) to ``path`` atomically (:func:`write_atomic`)."""
    def fill(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    return write_atomic(path, fill, mode, fsync)
