"""``run.json``: what ran, with what, and what it cost — written into every output folder.

It records judgelab's and its dependencies' versions, the command line, each run's
settings (the run identity: judge, template hash, criteria, sampling, score mode …),
counts by status, tokens and timings, so that a folder of results says how it was made.
Credentials never enter it: judge identities carry no key, and ``--api-key`` values are
masked in the recorded command line.
"""
from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any

from judgelab.io_atomic import write_text_atomic
from judgelab.secrets import mask_url_secrets, masked_argv

__all__ = ["MANIFEST_SCHEMA", "environment", "masked_argv", "mask_url_secrets", "write_manifest", "record_step"]

MANIFEST_SCHEMA = 1

_DISTRIBUTIONS = ("judgelab", "llama-cpp-python", "openai", "aiohttp", "numpy", "scipy", "pandas", "pydantic",
                  "jinja2", "typer", "krippendorff")


def environment() -> dict[str, Any]:
    """Python, platform and the versions of the distributions judgelab's results depend on."""
    from importlib.metadata import PackageNotFoundError, version

    versions: dict[str, str | None] = {}
    for dist in _DISTRIBUTIONS:
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            versions[dist] = None
    return {"python": platform.python_version(), "platform": platform.platform(), "versions": versions}


def write_manifest(folder: Path, command: str, runs: list[dict[str, Any]], extra: dict[str, Any] | None = None,
                   started: float | None = None) -> Path:
    """Write ``folder/run.json`` atomically and return its path."""
    doc = {
        "schema": MANIFEST_SCHEMA,
        "command": command,
        "argv": masked_argv(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)) if started else None,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "wall_s": round(time.time() - started, 3) if started else None,
        **environment(),
        "runs": runs,
        **(extra or {}),
    }
    return _write_json(folder / "run.json", doc)


def _write_json(path: Path, doc: dict[str, Any]) -> Path:
    """Write ``doc`` to ``path`` atomically (a temporary file, then a rename)."""
    return write_text_atomic(path, json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def record_step(folder: Path, command: str, extra: dict[str, Any] | None = None, into: Path | None = None) -> Path:
    """Record a command that wrote into a folder another command made (``agree --out RUN``): its
    argv and outputs are appended to ``steps`` of the folder's ``run.json`` instead of replacing
    the manifest of the run (a rerun of the same step replaces its entry); a folder without
    ``run.json`` gets one of its own.

    Args:
        folder: the folder whose run.json is read.
        command: the step's command.
        extra: further fields of the step.
        into: where to write the new run.json (a staging folder; default ``folder``).

    Returns:
        The path written.
    """
    target = (into or folder) / "run.json"
    path = folder / "run.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("command") == command:
        return write_manifest(into or folder, command, [], extra=extra)
    steps = [s for s in doc.get("steps") or [] if not (isinstance(s, dict) and s.get("command") == command)]
    doc["steps"] = steps + [{"command": command, "argv": masked_argv(),
                             "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **(extra or {})}]
    return _write_json(target, doc)
