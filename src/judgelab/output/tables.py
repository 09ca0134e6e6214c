"""Tables as files (CSV, JSON lines, Parquet) and the JSON document shape every command prints."""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_atomic

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["write_table", "json_document"]


def write_table(df: "pd.DataFrame | None", path: str | Path, *, check_only: bool = False) -> Path:
    """Write a table as CSV, JSONL or Parquet, by the file's extension (atomically: a temporary file is renamed).

    Everything that can be checked is checked before writing; on any failure the temporary
    file is removed, so a refused or failed write leaves nothing behind (an existing file
    at ``path`` is kept as it was).

    Args:
        df: the table.
        path: ``.csv``, ``.jsonl``/``.json`` (JSON lines) or ``.parquet``.
        check_only: only check ``path`` (extension, folder) and write nothing — what a command
            does before any work (``df`` may then be None).

    Returns:
        The path written (or that would be written).

    Raises:
        JudgelabError: an unknown extension, a missing output folder, a target that is a
            folder, or a file that cannot be written (one line).

    Example:
        >>> import pandas as pd, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> write_table(pd.DataFrame({"r": [0.5]}), folder / "t.csv").read_text().splitlines()
        ['r', '0.5']
    """
    import os

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".jsonl", ".json", ".parquet"}:
        what = f"unknown output format {suffix!r}" if suffix else f"{path} has no extension"
        raise JudgelabError(f"{what}: use .csv, .jsonl or .parquet")
    if not path.parent.exists():
        raise JudgelabError(f"output folder does not exist: {path.parent}")
    if not path.parent.is_dir():
        raise JudgelabError(f"cannot write {path}: {path.parent} is a file, not a folder")
    if path.is_dir():
        raise JudgelabError(f"cannot write {path}: it is a folder; give a file name, e.g. {path / ('table' + suffix)}")
    if not os.access(path.parent, os.W_OK):
        raise JudgelabError(f"cannot write {path}: the folder {path.parent} is not writable")
    if check_only:
        return path
    if df is None:
        raise TypeError("write_table needs a table unless check_only=True")
    def fill(tmp: Path) -> None:
        if suffix == ".csv":
            df.to_csv(tmp, index=False)
        elif suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_json(tmp, orient="records", lines=True, force_ascii=False)

    try:
        write_atomic(path, fill)
    except ImportError as exc:  # .parquet without pyarrow
        raise JudgelabError(f"cannot write {path}: {' '.join(str(exc).split())}") from None
    return path


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def json_document(command: str, schema: int = 1, **parts: Any) -> dict[str, Any]:
    """A command's JSON output: ``{"schema": N, "command": ..., **parts}``, NaN as null, tables as row lists."""
    import pandas as pd

    def clean(value: Any) -> Any:
        if isinstance(value, pd.DataFrame):
            return [{k: _clean(v) for k, v in row.items()} for row in value.to_dict(orient="records")]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return _clean(value)

    return {"schema": schema, "command": command, **{k: clean(v) for k, v in parts.items()}}
