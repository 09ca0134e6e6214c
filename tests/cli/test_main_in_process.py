"""``judgelab.cli.main`` called in a process that goes on (a library caller, the tests' ``run_cli``):
it puts back what it changed for the command and keeps nothing of one command for the next."""
from __future__ import annotations

import json
import logging
import sys

import pytest

from conftest import run_cli, write_items


def _state():
    from judgelab import progress

    logger = logging.getLogger("judgelab")
    return sys.stdout, sys.stderr, list(logger.handlers), logger.level, logger.propagate, progress._factory


def test_main_puts_back_stdout_the_logger_and_the_progress_display(tmp_path):
    from judgelab.cli import main

    before = _state()
    with pytest.raises(SystemExit) as refused:  # the judge is read, then the file is missing
        main(["rate", "--items", str(tmp_path / "missing.jsonl"), "--judge", "openai:m",
              "--out", str(tmp_path / "o")])
    assert refused.value.code == 2
    assert _state() == before
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    items = write_items(tmp_path / "items.jsonl", 2)
    main(["rate", "--items", str(items), "--criteria", "grammaticality", "--judge", f"scripted-test-double:{script}",
          "--samples", "1", "--out", str(tmp_path / "ok"), "--quiet"])  # success: main returns
    assert _state() == before



def test_library_warnings_are_shown_once_per_command(tmp_path):
    """The ``judgelab: warning:`` handler is installed for one command and removed after it: never
    twice (two lines per warning), never left on the logger for library use."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 4."}))
    items = write_items(tmp_path / "items.jsonl", 2)
    for attempt in range(2):
        out = tmp_path / f"out{attempt}"
        args = ["rate", "--items", str(items), "--criteria", "grammaticality", "--judge", f"scripted-test-double:{script}",
                "--samples", "1", "--out", str(out), "--quiet"]
        assert run_cli(*args).returncode == 0
        (out / "store.sqlite.journal").mkdir()  # not a journal file: moved aside with a warning
        warned = run_cli(*args)
        assert warned.returncode == 0, warned.stderr
        lines = [line for line in warned.stderr.splitlines() if line.startswith("judgelab: warning:")]
        assert len(lines) == 1 and "was not a journal file" in lines[0], warned.stderr
    from judgelab.cli import _WarningLines

    assert not any(isinstance(h, _WarningLines) for h in logging.getLogger("judgelab").handlers)


def test_the_store_of_an_earlier_command_is_not_named_by_the_next(monkeypatch):
    """The interrupted-run message names the store this command opened, not one an earlier
    command in the same process opened."""
    from judgelab.cli import _forget_earlier_commands, _interrupted_message
    from judgelab.store import lock as store

    monkeypatch.setattr(store, "_last_opened", "/somewhere/store.sqlite")  # as an earlier command leaves it
    _forget_earlier_commands()
    assert _interrupted_message() == "interrupted"
