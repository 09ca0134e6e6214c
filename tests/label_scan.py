"""Finds string operations that read rater labels outside ``judgelab/raters.py`` (``tests/test_raters.py``).

The heuristics, on the syntax tree of every module of ``src/judgelab``:

* a string method that looks inside text — ``startswith``, ``endswith``, ``split``, ``rsplit``,
  ``partition``, ``rpartition``, ``removeprefix``, ``removesuffix``, ``replace``, ``find``, ``rfind``,
  ``index``, ``count`` (and pandas' ``.str.`` forms, ``contains``, ``extract``, ``match``) — called with a
  *label token*;
* a ``re`` call (``compile``, ``match``, ``search``, ``fullmatch``, ``sub``, ``split``, ``findall``)
  whose pattern is a label token;
* an ``in`` / ``not in`` test whose left side is a label token.

A label token is a string constant holding a convention character (``@``, ``#``, ``+``, ``|``) or the
word ``human`` or ``jury``, or a name spelling a convention (``HUMAN_PREFIX``, ``JURY_PREFIX``,
``…SUFFIX``, ``…DIGEST…``, ``CONSTRAINED…``). Text that is no rater label but uses the same characters
(a judge *spec*'s ``MODEL@URL``, an item id ``a|b`` of a pair, comment lines of an id file, URLs) is
listed in :data:`NOT_LABELS` by file and enclosing function, each with the reason; anything new is
reported as ``file:line``.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "judgelab"
OWNER = "raters.py"

TEXT_METHODS = {"startswith", "endswith", "split", "rsplit", "partition", "rpartition", "removeprefix",
                "removesuffix", "replace", "find", "rfind", "index", "count", "contains", "extract", "match"}
RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "sub", "split", "findall", "finditer"}
_TOKEN_TEXT = re.compile(r"[@#+|]|^(human|jury)")
#: In a regular expression ``+`` and ``|`` are its own syntax: only ``@``, ``#`` and the words count.
_TOKEN_PATTERN = re.compile(r"[@#]|human|jury")
_TOKEN_NAME = re.compile(r"[A-Z_]*(HUMAN|JURY|SUFFIX|DIGEST|CONSTRAINED)[A-Z_]*")

#: (file, enclosing function) → why the text there is not a rater label.
NOT_LABELS: dict[tuple[str, str], str] = {
    ("models/backends/openai_compatible.py", "__init__"): "the endpoint URL ('?' and '#' refused in a base URL)",
    ("models/backends/openai_compatible.py", "_parse_spec"): "a judge spec 'openai:MODEL@URL', not a rater label",
    ("annotate/selection.py", "read_ids"): "comment lines ('#') of an ids file",
    ("recipes/nle.py", "_verdicts"): "a pair's item id 'first|second' (nle._pair_items)",
    ("recipes/hanna.py", "to_ratings"): "HANNA's column names ('Human 1 RE'), read to make labels",
    ("recipes/hanna.py", "<module>"): "HANNA's column names ('Human 1 RE')",
    ("secrets.py", "<module>"): "credentials in URLs",
    ("secrets.py", "mask"): "credentials in URLs",
    ("parse.py", "<module>"): "markdown in a judge's answer",
    ("parse.py", "_normalise"): "markdown in a judge's answer",
    ("prompts/scaffold.py", "<module>"): "Jinja tags of a template",
    ("answer_layout.py", "<module>"): "bullets in a judge's answer",
    ("datasets/readers.py", "<module>"): "numbers in a data file",
    ("prompts/scaffold.py", "_scale"): "a scale '1-5' in raters' instructions",
    ("report/readme.py", "_cells"): "a Markdown table row ('|') of the folder's README",
    ("report/readme.py", "readme_blocks"): "Markdown headings ('#') and table rows ('|') of the folder's README",
    ("preference/leaderboard.py", "<module>"): "Markdown headers ('#') in a response (Arena-Hard's style features)",
}


def _is_token(node: ast.AST, text: re.Pattern[str] = _TOKEN_TEXT) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(text.search(node.value))
    if isinstance(node, ast.JoinedStr):
        return any(_is_token(v, text) for v in node.values)
    if isinstance(node, ast.Name):
        return bool(_TOKEN_NAME.fullmatch(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_TOKEN_NAME.fullmatch(node.attr))
    if isinstance(node, ast.BinOp):
        return _is_token(node.left, text) or _is_token(node.right, text)
    return False


def _finding(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        func = node.func
        if isinstance(func.value, ast.Name) and func.value.id == "re":
            return func.attr in RE_FUNCTIONS and bool(node.args) and _is_token(node.args[0], _TOKEN_PATTERN)
        return func.attr in TEXT_METHODS and any(_is_token(a) for a in node.args[:1])
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
        return _is_token(node.left) and not isinstance(node.comparators[0], (ast.List, ast.Tuple, ast.Set, ast.Dict))
    return False


def _scopes(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node → the name of the function it is in (``<module>`` outside any)."""
    where: dict[ast.AST, str] = {}

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
            where[child] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return where


def label_reads(source: str, name: str) -> list[str]:
    """``name:line: text`` of every label read in ``source`` (one module) not excused by :data:`NOT_LABELS`."""
    tree = ast.parse(source)
    scopes = _scopes(tree)
    lines = source.splitlines()
    out = []
    for node in ast.walk(tree):
        if _finding(node) and (name, scopes.get(node, "<module>")) not in NOT_LABELS:
            line = getattr(node, "lineno", 0)
            out.append(f"{name}:{line}: {lines[line - 1].strip()}")
    return out


def scan(root: Path = SRC) -> list[str]:
    """Every label read outside ``raters.py`` in the package, as ``file:line: code``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == OWNER:
            continue
        found += label_reads(path.read_text(encoding="utf-8"), rel)
    return found
