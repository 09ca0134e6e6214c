"""docs/templates.md's "Your raters' instructions as a template" runs as written, in an empty folder.

The files, the commands, the YAML and the prompt are read from the page itself: the section's
fenced blocks are, in order, the instructions and the reviews (``bash``: each written by a ``cat > FILE``
heredoc), the commands (``bash``), the template the commands write (``yaml``) and the dry run's prompt
(``text``). The
commands run in-process (:func:`conftest.run_cli`). The page's dry run names ``--judge local``;
the test runs it with the scripted test double instead (a dry run calls no model, and the prompt
it prints does not depend on the judge), so it needs no model file.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from conftest import run_cli

PAGE = Path(__file__).resolve().parents[2] / "docs" / "templates.md"
HEADING = "Your raters' instructions as a template"


def section_blocks() -> list[tuple[str, str]]:
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(HEADING)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"docs/templates.md has no '## {HEADING}' section"
    return re.findall(r"^```(\w+)\n(.*?)^```", match.group(1), re.S | re.M)


def heredoc(block: str, name: str) -> str:
    """The text a ``cat > NAME <<'EOF' … EOF`` block writes."""
    match = re.fullmatch(rf"cat > {re.escape(name)} <<'EOF'\n(.*)EOF\n", block, re.S)
    assert match, f"the block does not write {name} with a heredoc:\n{block}"
    return match.group(1)


def test_the_instructions_walk_through_runs_as_written(tmp_path):
    blocks = section_blocks()
    assert [lang for lang, _ in blocks] == ["bash", "bash", "bash", "yaml", "text"]
    (_, instructions), (_, reviews), (_, commands), (_, template), (_, prompt) = blocks
    instructions, reviews = heredoc(instructions, "instructions.txt"), heredoc(reviews, "reviews.jsonl")
    (tmp_path / "instructions.txt").write_text(instructions, encoding="utf-8")
    (tmp_path / "reviews.jsonl").write_text(reviews, encoding="utf-8")
    (tmp_path / "judge.json").write_text('{"default": "3"}')
    lines = [line.strip() for line in commands.splitlines() if line.strip()]
    assert [line.split()[:3] for line in lines] == [["judgelab", "templates", "new"], ["judgelab", "templates", "show"],
                                                    ["judgelab", "rate", "--items"]]
    outputs = []
    for line in lines:
        args = shlex.split(line)[1:]
        if "--judge" in args:  # the page's --judge local: the test double (see the module docstring)
            assert args[args.index("--judge") + 1] == "local" and "--dry-run" in args
            args[args.index("--judge") + 1] = "scripted-test-double:judge.json"
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 0, f"{line}\n{result.stderr}"
        outputs.append(result.stdout)
    assert (tmp_path / "reviews.yaml").read_text(encoding="utf-8") == template  # the page shows the file written
    assert outputs[1] == template  # templates show prints it as written
    assert prompt.strip("\n") in outputs[2]  # the dry run's prompt, exactly as the page shows it
    assert instructions.rstrip("\n") + "\n\nText to rate:\n" in outputs[2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["instructions.txt", "judge.json", "reviews.jsonl", "reviews.yaml"]
