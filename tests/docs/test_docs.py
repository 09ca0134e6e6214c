"""The front page stays a front page, every link in the docs resolves, and every judgelab command
shown in README.md and docs/*.md uses options the command has (and the ones it requires)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer

from judgelab.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_readme_is_a_front_page() -> None:
    size = (ROOT / "README.md").stat().st_size
    assert size < 12_000, f"README.md is {size} bytes; move reference material into docs/"


def test_readme_maps_every_docs_page() -> None:
    """The README's map of the docs names every page of docs/ (one line each)."""
    linked = set(LINK.findall((ROOT / "README.md").read_text(encoding="utf-8")))
    missing = [f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in linked]
    assert not missing, f"README.md's map of the docs lacks {missing}"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_point_to_existing_files(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target + " (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def shown_commands(text: str) -> list[tuple[str, bool]]:
    """judgelab command lines in fenced bash blocks (continuations joined; True: a whole command)
    and in inline code (False: often a command's name in prose, so only its options are checked)."""
    lines = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("judgelab "):
                lines.append((line.strip(), True))
    lines += [(span, False) for span in re.findall(r"`(judgelab [^`]+)`", text)]
    return lines


def check(line: str, root: object, whole: bool = True) -> list[str]:
    """What is wrong with one shown command (empty when nothing)."""
    tokens = [t for t in shlex.split(line.replace("[", " ").replace("]", " "), comments=True)[1:]]
    command, path = root, ["judgelab"]
    while tokens and tokens[0] in getattr(command, "commands", {}):  # typer's groups (typer no longer uses click)
        path.append(tokens[0])
        command = command.commands[tokens.pop(0)]  # type: ignore[attr-defined]
    params = command.params  # type: ignore[attr-defined]
    known = {opt for p in params for opt in (*p.opts, *p.secondary_opts)} | {"--help"}
    if len(path) == 1:
        known.add("--version")
    problems = [f"{' '.join(path)} has no option {t.split('=')[0]}"
                for t in tokens if t.startswith("--") and t.split("=")[0] not in known]
    if whole and "--help" not in tokens and "--version" not in tokens and not (len(path) == 1 and not tokens):
        for p in params:
            if type(p).__name__.endswith("Option") and p.required and not set(p.opts) & {t.split("=")[0] for t in tokens}:
                problems.append(f"{' '.join(path)} needs {p.opts[0]}")
    return problems


def test_every_shown_command_uses_real_options() -> None:
    root = typer.main.get_command(app)
    problems, seen = [], 0
    for page in PAGES:
        for line, whole in shown_commands(page.read_text(encoding="utf-8")):
            seen += 1
            problems += [f"{page.relative_to(ROOT)}: {line}\n    {p}" for p in check(line, root, whole)]
    assert seen > 40  # the check saw the docs' commands
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_wrong_option() -> None:
    root = typer.main.get_command(app)
    assert check("judgelab rate --items x.jsonl --model gpt", root) == ["judgelab rate has no option --model"]
    assert check("judgelab rate --judge local", root) == ["judgelab rate needs --items"]
    assert check("judgelab hanna icc s.csv --generated-only", root) == []


def test_every_option_of_every_command_is_documented() -> None:
    """Each command's options are named somewhere in README.md or docs/ (the reference moved there)."""
    text = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    undocumented = []

    def walk(command: object, path: list[str]) -> None:
        for param in getattr(command, "params", []):
            for opt in param.opts:
                if opt.startswith("--") and opt != "--help" and not re.search(re.escape(opt) + r"(?![\w-])", text):
                    undocumented.append(f"{' '.join(path)} {opt}")
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), ["judgelab"])
    assert not undocumented, f"options no page names: {undocumented}"


INTERNAL = re.compile(r"\bthe issue'?s?\b|\bissue \d+|\bthe brief\b|\bspec papers\b|`search` tools?|\bthe lead\b|"
                      r"\bhelper session|\bclosing note\b", re.I)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_are_product_documentation_without_internal_wording(page: Path) -> None:
    """The pages say what the product does: no word of how its work was organised (issues, briefs, leads)."""
    found = [f"line {text[:m.start()].count(chr(10)) + 1}: {m.group(0)!r}"
             for text in [page.read_text(encoding="utf-8")] for m in INTERNAL.finditer(text)]
    assert not found, f"{page.relative_to(ROOT)}: internal wording {found}"
