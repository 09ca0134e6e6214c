"""One owner for small facts: atomic file writes (io_atomic) and secrets in URLs (secrets)."""
from __future__ import annotations

import ast
import stat
from pathlib import Path

import pytest

from judgelab.errors import JudgelabError
from judgelab.io_atomic import replace_atomic, write_text_atomic
from judgelab.secrets import mask_url_secrets, masked_argv, url_without_credentials

SRC = Path(__file__).resolve().parents[1] / "src" / "judgelab"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")

    def half(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        replace_atomic(target, half)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_a_write_is_readable_by_the_group_unless_private_and_an_os_error_is_one_line(tmp_path):
    assert stat.S_IMODE(write_text_atomic(tmp_path / "a", "x").stat().st_mode) == 0o644
    assert stat.S_IMODE(write_text_atomic(tmp_path / "b", "x", mode=0o600, fsync=True).stat().st_mode) == 0o600
    with pytest.raises(JudgelabError, match="^cannot write .*missing"):
        write_text_atomic(tmp_path / "missing" / "c", "x")


def test_only_io_atomic_replaces_files():
    """No module but io_atomic renames a temporary file over another (``os.replace``/``Path.replace``
    of a path); output.folder's commit moves finished staged files, which is not a write."""
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "io_atomic.py" or path.relative_to(SRC).as_posix() == "output/folder.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("replace", "mkstemp"):
                owner = node.func.value
                if node.func.attr == "mkstemp" or (isinstance(owner, ast.Name) and owner.id in ("os", "tmp")):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_secrets_in_urls_have_one_owner():
    assert url_without_credentials("http://u:pw@host:8000/v1?key=s") == "http://host:8000/v1"
    assert mask_url_secrets("see http://u:pw@h/v1?k=1") == "see http://***@h/v1?***"
    assert masked_argv(["judgelab", "--api-key", "sk-1", "--api-key=sk-2"]) == ["judgelab", "--api-key", "***", "--api-key=***"]
    from judgelab.output import manifest
    from judgelab.run import identity

    assert manifest.mask_url_secrets is mask_url_secrets  # the old import paths keep working
    assert identity.public_identity({"base_url": "http://u:pw@h/v1"})["base_url"] == "http://h/v1"
