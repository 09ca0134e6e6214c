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

__all__ = ["safe_filename", "output_folder"]

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
