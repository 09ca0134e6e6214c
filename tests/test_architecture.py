"""The package's shape, checked statically: judgelab's import graph has no cycle, every import
goes to the importer's own layer or a lower one, no module is over 400 lines and no function in
``judgelab/cli/`` has a body over 80 lines.

The graph is read with :mod:`ast` from every module under ``src/judgelab``: every ``import`` and
``from … import`` wherever it is written (module level, inside functions and methods), relative
imports resolved. ``from X import Y`` is an edge to ``X.Y`` when that is a module, else to ``X``.
The one exclusion: imports under ``if TYPE_CHECKING:``, which never execute (they exist for the
type checker only). The layers are drawn in ``docs/ARCHITECTURE.md`` ("Layers"); ``LAYERS`` below
is the one table of them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "judgelab"

# Lowest layer first. A module imports only modules of its own layer or a lower one, and output/
# and pages import no analysis module (they read typed results). A module's layer is that of the
# longest prefix below that names it (a prefix names a module and the modules under it); a module
# no prefix names fails the test. Keep in step with docs/ARCHITECTURE.md, "Layers".
FOUNDATION, DATA, ENGINE, ANALYSIS, RECORDS, PAGES, FOLDERS, WORKFLOWS, CLI = range(9)
LAYER_NAMES = ["foundation", "data model", "engine", "analysis", "records", "pages", "folders", "workflows", "cli"]
# layers skipped on the way down: the record, the pages and the folder writer read typed results only
NOT_BELOW: dict[int, set[int]] = {RECORDS: {ANALYSIS}, PAGES: {ANALYSIS}, FOLDERS: {ANALYSIS}}
# analysis modules that hold typed results only: output/ and the pages may read these
RESULT_MODULES = {"judgelab.audit_results", "judgelab.agree_results", "judgelab.published_results", "judgelab.summary_results",
                  "judgelab.annotate.estimate_results", "judgelab.stats.ppi_results", "judgelab.preference.agreement_results",
                  "judgelab.preference.win_rates_results", "judgelab.compare_results"}
LAYERS: dict[str, int] = {
    "judgelab": FOUNDATION,  # the package itself only: its version and lazy exports (names as strings)
    "judgelab.serve": FOUNDATION,  # a socket bound first and the loopback Host check
    "judgelab._lazy": FOUNDATION,
    "judgelab.errors": FOUNDATION,
    "judgelab.paths": FOUNDATION,
    "judgelab.digest": FOUNDATION,
    "judgelab.progress": FOUNDATION,
    "judgelab.status": FOUNDATION,
    "judgelab.choices": FOUNDATION,
    "judgelab.io_atomic": FOUNDATION,
    "judgelab.secrets": FOUNDATION,
    "judgelab.missing": FOUNDATION,
    "judgelab.raters": DATA,
    "judgelab.table": DATA,
    "judgelab.ratings": DATA,
    "judgelab.rating_formats": DATA,  # other tools' judge outputs read as ratings (inspect_ai, FastChat single)
    "judgelab.datasets": DATA,
    "judgelab.prompts": DATA,
    "judgelab.parse": DATA,
    "judgelab.answer_layout": DATA,
    "judgelab.answers": DATA,  # a judge's answer as the ledger stores it
    "judgelab.logprob_score": DATA,
    "judgelab.call_costs": DATA,  # the store's accounting: calls, tokens, latency, statuses per rater (a record part)
    "judgelab.settings": DATA,  # the sampling and connection configurations
    "judgelab.models": ENGINE,
    "judgelab.store": ENGINE,
    "judgelab.run": ENGINE,
    "judgelab.spec": ENGINE,
    "judgelab.llama_server": ENGINE,
    "judgelab.testing": ENGINE,  # test doubles of the engine's backends and provider APIs
    "judgelab.stats": ANALYSIS,
    "judgelab.agree": ANALYSIS,
    "judgelab.jury_agreement": ANALYSIS,
    "judgelab.agree_gate": ANALYSIS,
    "judgelab.agree_standardize": ANALYSIS,
    "judgelab.audit": ANALYSIS,
    "judgelab.audit_pairwise": ANALYSIS,  # the audit of pairwise judges (verdicts) and its self-check
    "judgelab.escalate": ANALYSIS,
    "judgelab.pairwise": ANALYSIS,
    "judgelab.preference": ANALYSIS,  # analyses of pairwise verdicts (agreement, win rates, leaderboards)
    "judgelab.preference.verdicts": DATA,  # the verdicts table
    "judgelab.preference.formats": DATA,  # verdicts files and other tools' judge outputs
    "judgelab.preference.agreement_results": ANALYSIS,  # typed results of preference agree (pages read them)
    "judgelab.preference.pairs": DATA,  # pairs of responses to judge, and their judgments as verdicts
    "judgelab.dhp": ANALYSIS,
    "judgelab.annotate.estimate": ANALYSIS,
    "judgelab.contamination": ANALYSIS,
    "judgelab.summary": ANALYSIS,
    "judgelab.probes.padding": ANALYSIS,
    "judgelab.probes": ANALYSIS,
    "judgelab.recipes.hanna": ANALYSIS,  # HANNA's score files and meta-evaluation tables
    "judgelab.recipes.tables": ANALYSIS,
    "judgelab.recipes.chiang_lee_data": ANALYSIS,
    "judgelab.audit_results": ANALYSIS,
    "judgelab.agree_results": ANALYSIS,
    "judgelab.published_results": ANALYSIS,  # a recipe's correlations beside the published figures
    "judgelab.summary_results": ANALYSIS,
    "judgelab.annotate.estimate_results": ANALYSIS,
    "judgelab.perturb": ANALYSIS,
    "judgelab.retrieve": ANALYSIS,
    "judgelab.compare": ANALYSIS,  # two runs compared item by item
    "judgelab.compare_results": ANALYSIS,
    # the output layer in two: the record and the files' formats (read by the pages) below the pages,
    # the folder writer (which writes a folder's page last) above them
    "judgelab.output.record": RECORDS,
    "judgelab.output.legacy": RECORDS,
    "judgelab.output.accounting": RECORDS,
    "judgelab.output.manifest": RECORDS,
    "judgelab.output.index": RECORDS,
    "judgelab.output.tables": RECORDS,
    "judgelab.output": FOLDERS,
    "judgelab.report": PAGES,
    # the annotation app is a workflow: it collects ratings and shows live estimates while people rate
    "judgelab.annotate": WORKFLOWS,
    # workflows: a command's whole run (plan, call, analyse, write the folder and its pages)
    "judgelab.rate": WORKFLOWS,
    "judgelab.rate_outputs": WORKFLOWS,  # the end of rate: its tables read from the store in bounded memory
    "judgelab.runfile": WORKFLOWS,
    "judgelab.agree_run": WORKFLOWS,
    "judgelab.preference_agree_run": WORKFLOWS,  # preference agree: read verdicts, agreement, folder
    "judgelab.preference_rates_run": WORKFLOWS,  # preference win-rates: read verdicts, win rates, leaderboard, folder
    "judgelab.audit_run": WORKFLOWS,
    "judgelab.escalate_run": WORKFLOWS,
    "judgelab.recipes": WORKFLOWS,
    "judgelab.dhp.study": WORKFLOWS,
    "judgelab.probes.padding_study": WORKFLOWS,
    "judgelab.compare_run": WORKFLOWS,
    "judgelab.view_runs": WORKFLOWS,  # view of a folder of runs: compares two runs when asked
    "judgelab.cli": CLI,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of import nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for stmt in node.body:
                    skipped.update(id(n) for n in ast.walk(stmt))
    return skipped


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """Every judgelab module ``name`` imports, with the line of the import (each target once)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_only(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            while target and target not in modules:  # ``import judgelab.x.y as z`` of a name below
                target = target.rpartition(".")[0]
            if target and target != name:
                found.setdefault(target, node.lineno)
    return sorted(found.items(), key=lambda kv: kv[1])


def import_graph() -> dict[str, dict[str, int]]:
    modules = all_modules()
    return {name: dict(imports_of(name, path, modules)) for name, path in modules.items()}


def find_cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    """One cycle as a path ``[a, b, …, a]``, or None (depth-first search, colours)."""
    colour: dict[str, int] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        trail.append(node)
        for nxt in sorted(graph.get(node, {})):
            if colour.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt]
            if nxt not in colour:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        colour[node] = 2
        trail.pop()
        return None

    for start in sorted(graph):
        if start not in colour:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


def layer_of(name: str) -> int:
    named = [p for p in LAYERS if name == p or (p != "judgelab" and name.startswith(p + "."))]
    if not named:
        raise AssertionError(f"{name} has no layer: add it to LAYERS in tests/test_architecture.py")
    return LAYERS[max(named, key=len)]


def layer_violations(graph: dict[str, dict[str, int]], modules: dict[str, Path]) -> list[str]:
    out = []
    for name, targets in sorted(graph.items()):
        for target, line in targets.items():
            low, high = layer_of(name), layer_of(target)
            wrong = high > low or (high in NOT_BELOW.get(low, set()) and target not in RESULT_MODULES)
            if wrong:  # no exceptions: every import obeys the layers
                where = modules[name].relative_to(SRC.parent)
                out.append(f"{where}:{line}: {name} ({LAYER_NAMES[low]}) imports {target} ({LAYER_NAMES[high]})")
    return out


def test_the_graph_reads_function_level_imports():
    graph = import_graph()
    assert len(graph) > 150
    # runfile imports rate inside a method only; the check must see that edge
    assert "judgelab.rate" in graph["judgelab.runfile"]


def test_find_cycle_reports_the_path():
    assert find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": 1}, "b": {}}) is None


def test_type_checking_imports_are_left_out(tmp_path):
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from judgelab import errors\ndef f():\n    from judgelab import paths\n"
    path = tmp_path / "m.py"
    path.write_text(source)
    modules = {"judgelab.errors": path, "judgelab.paths": path, "judgelab.m": path}
    assert imports_of("judgelab.m", path, modules) == [("judgelab.paths", 5)]


def test_workflow_modules_do_not_import_each_other():
    graph = import_graph()
    assert "judgelab.dhp.study" not in graph["judgelab.rate"]
    assert "judgelab.recipes.common" not in graph["judgelab.rate"]


def test_stats_imports_no_other_analysis_module():
    """stats/ is the bottom of the analysis layer: pure statistics that agree, audit and the recipes use."""
    graph = import_graph()
    up = sorted(f"{a} -> {b}" for a, t in graph.items() if a.startswith("judgelab.stats") for b in t
                if layer_of(b) == ANALYSIS and not b.startswith("judgelab.stats"))
    assert up == []


def test_the_engine_is_ordered_store_then_models_then_run():
    """store/ keeps the ledger and the judgments and imports neither models/ nor run/; models/ (backends,
    the ledger's cached judge) imports no run/ module."""
    graph = import_graph()
    up = sorted(f"{a} -> {b}" for a, t in graph.items() for b in t
                if (a.startswith("judgelab.store") and b.startswith(("judgelab.models", "judgelab.run")))
                or (a.startswith("judgelab.models") and b.startswith("judgelab.run")))
    assert up == []


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_import_goes_to_the_same_layer_or_lower():
    violations = layer_violations(import_graph(), all_modules())
    assert violations == [], "\n".join(violations)


def test_every_module_has_a_layer():
    for name in import_graph():
        layer_of(name)  # raises when no prefix names it


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_400_lines(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 400, f"{path.relative_to(SRC.parent)} has {lines} lines"


def test_no_cli_function_body_over_80_lines():
    long = []
    for path in sorted((PACKAGE / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                if body:
                    size = body[-1].end_lineno - body[0].lineno + 1  # type: ignore[operator]
                    if size > 80:
                        long.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {node.name} ({size} lines)")
    assert long == [], "\n".join(long)
