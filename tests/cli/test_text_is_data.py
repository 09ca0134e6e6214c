"""Model and input text is data on the terminal: an answer, an item id, a system name or a rater
label holding rich markup (``[/INST]``, ``[bold]``, ``[link=x]``, ``[/]``) is printed literally,
never read as markup (which raised rich's MarkupError and ended `rate` as an internal error)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from conftest import run_cli

SRC = Path(__file__).resolve().parents[2] / "src" / "judgelab"
#: A failed answer as llama.cpp's server sent one (a chat-template tag), plus markup of every kind.
ANSWER = "[/INST] Hard to say. [bold]The prose[/] is fine, see [link=x]the notes[/link] [/] :smile:"
TAGS = ("[/INST]", "[bold]", "[/]", "[link=x]", ":smile:")


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"[b]s{i}[/b]", "text": f"Story {i} [/INST] ends.", "system":
                                         "[red]A[/]" if i % 2 else "B [/INST]"}) + "\n" for i in range(4)))
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"default": ANSWER}))
    return items, script


def test_answers_with_markup_fail_to_parse_and_the_run_ends_with_exit_3_and_its_report(tmp_path):
    items, script = _inputs(tmp_path)
    out = tmp_path / "out"
    args = ["rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--criteria", "likability",
            "--samples", "1", "--rater", "[bold]judge[/]", "--out", str(out)]  # progress bar drawn (no --quiet)
    for run in ("first", "rerun"):
        result = run_cli(*args)
        assert result.returncode == 3, (run, result.stdout, result.stderr)
        assert "internal error" not in result.stderr and "MarkupError" not in result.stderr
        assert "4 of 4 judgments of [bold]judge[/] failed" in result.stderr
        for tag in TAGS:
            assert tag in result.stdout, (run, tag, result.stdout)
        assert "Ratings by [bold]judge[/]" in result.stdout and "[red]A[/]" in result.stdout
        assert (out / "report.html").exists() and (out / "ratings.csv").exists()
        assert ANSWER in (out / "ratings.csv").read_text()
    assert "calls made 0" in result.stdout  # the rerun answered every call from the store


def _printed(console, show) -> str:
    """What ``show`` printed on ``console``, its line wrapping undone (the console's width is whatever the
    environment held when judgelab.report.terminal was first imported)."""
    with console.capture() as captured:
        show()
    return re.sub(r" *\n *", " ", captured.get().strip())


def test_the_terminal_prints_markup_literally():
    """Lines, tables (cells and title) and the progress bar's label and note, on both consoles."""
    import pandas as pd

    from judgelab.report import terminal

    for console in (terminal.console, terminal._err):
        assert _printed(console, lambda: console.print(ANSWER)).strip() == ANSWER
    table = pd.DataFrame({"system": ["[red]A[/]"], "raw": [ANSWER]})
    shown = _printed(terminal.console, lambda: terminal.print_table(table, title="Ratings by [bold]judge[/]"))
    assert "[red]A[/]" in shown and "Ratings by [bold]judge[/]" in shown and "[/INST]" in shown

    def bar():
        with terminal.progress_bar(2, "judging [/INST] [bold]") as advance:
            advance(1, 1, "retries: [/] server error 1")

    shown = _printed(terminal._err, bar)
    assert "judging [/INST] [bold]" in shown and "retries: [/] server error 1" in shown


def test_only_the_terminal_module_uses_rich_and_nothing_turns_markup_on():
    """One owner: judgelab.report.terminal is the only module importing rich; no call asks for markup."""
    users = []
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "rich" or n.startswith("rich.") for n in names):
                users.append(path.relative_to(SRC).as_posix())
            if isinstance(node, ast.keyword) and node.arg in {"markup", "emoji"} and not (
                    isinstance(node.value, ast.Constant) and node.value.value is False):
                users.append(f"{path.relative_to(SRC).as_posix()}: {node.arg}=")
    assert sorted(set(users)) == ["report/terminal.py"], users
