"""One command line: every option and argument says what it is, an idea has one spelling across
commands (old spellings are refused in one line naming the new one), and ``judgelab --help`` says
where to start."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from conftest import run_cli
from judgelab.cli import app
from judgelab.cli.renamed import RENAMED

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[tuple[str, object]]:
    """(path without the root's name, click command) of every command and subcommand."""
    out = []

    def walk(command: object, path: list[str]) -> None:
        out.append((" ".join(path), command))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def _options() -> dict[str, set[str]]:
    """option spelling → the commands that take it."""
    used: dict[str, set[str]] = {}
    for path, command in _commands():
        for param in command.params:  # type: ignore[attr-defined]
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("--"):
                    used.setdefault(opt, set()).add(path)
    return used


def test_every_option_and_argument_has_help() -> None:
    missing = [f"judgelab {path} {'/'.join(p.opts)}".replace("  ", " ")
               for path, command in _commands() for p in command.params  # type: ignore[attr-defined]
               if not (getattr(p, "help", None) or "").strip()]
    assert not missing, f"options and arguments without help: {missing}"


def test_an_idea_has_one_spelling_and_a_spelling_one_meaning() -> None:
    used = _options()
    live_retired = {r.old: sorted(used[r.old]) for r in RENAMED if r.old in used}
    # --alpha is only an interval's error level (the kept items' share of disagreement is --risk);
    # --out is an output folder (a folder that is read is an argument)
    assert live_retired.pop("--alpha", None) == ["human-estimate"]
    assert "batch list" not in live_retired.pop("--out", []) and "batch cancel" not in used["--out"]
    assert not live_retired, f"retired spellings still taken: {live_retired}"
    for r in RENAMED:  # every command that retired a spelling takes what replaces it
        new = r.new.split()[0]
        if new.startswith("--"):
            assert r.command in used[new], r
    assert not [o for o in used if re.search(r"-cols?$", o)], "an input file's columns are --<what>-field"
    assert used["--criteria"] >= {"rate", "audit", "escalate", "human-estimate", "annotate", "probe padding"}


@pytest.mark.parametrize("renamed", RENAMED, ids=lambda r: f"{r.command} {r.old}")
def test_an_old_spelling_is_refused_in_one_line_naming_the_new_one(renamed) -> None:
    result = run_cli(*renamed.command.split(), renamed.old, "x")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: "), result.stderr
    assert f"{renamed.old} is now {renamed.new}" in lines[0] and "docs/cli.md" in lines[0]


def test_an_unknown_option_is_still_click_s_error() -> None:
    result = run_cli("audit", "--nope")
    assert result.returncode == 2 and "No such option: --nope" in result.stderr


def test_docs_cli_lists_every_renamed_option() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([^`]+)` \| `(--[\w-]+)` \| (.+?) \|$", page, re.M))
    expected = {(r.command, r.old, f"`{r.new}`" if r.new.startswith("--") else r.new) for r in RENAMED}
    assert rows == expected


def test_judgelab_help_says_where_to_start() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    text = result.stdout
    steps = [re.search(rf"^\W*{n}\. {name}\s+\S", text, re.M) for n, name in ((1, "rate"), (2, "agree"), (3, "audit"))]
    assert all(steps) and steps[0].start() < steps[1].start() < steps[2].start(), text  # type: ignore[union-attr]
    panels = [m.group(1) for m in re.finditer(r"╭─ (.+?) ─", text)]
    assert panels[:2] == ["Options", "Start here"] and "Installation" in panels
    start = text[text.index("Start here ─"):text.index("╰", text.index("Start here ─"))]
    assert re.findall(r"│ (\w[\w-]*) ", start) == ["rate", "agree", "audit"]


def test_help_texts_are_shown_as_written() -> None:
    """Help goes through rich markup: ``[system]`` and ``openai:MODEL[@URL]`` must not vanish as style tags."""
    assert "item_id, [system], length" in run_cli("audit", "--help").stdout
    assert "openai:MODEL[@URL]" in run_cli("demo", "--help").stdout
