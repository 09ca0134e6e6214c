"""A folder of runs on one page (``judgelab view DIR`` where DIR holds several output folders).

:func:`list_runs` reads each subfolder that is a judgelab output folder — its ``run.json`` (command, each
rater's judge, template, criteria, judgments and statuses, when it finished) — and :func:`render_runs` lists
them: name (the folder, a link to its page), command, judge(s), template, criteria, judgments, failures, when;
two pickers open the comparison of two runs (``compare?a=NAME&b=NAME``). Nothing is written into the folders.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from judgelab.errors import JudgelabError
from judgelab.raters import is_human
from judgelab.report.folder import MARKERS
from judgelab.report.html_assets import CSS
from judgelab.report.html_model import natural_key
from judgelab.report.svg import esc

__all__ = ["RunEntry", "list_runs", "render_runs", "is_runs_folder"]


@dataclass(frozen=True)
class RunEntry:
    """One output folder of the folder of runs, as its run.json says."""

    name: str
    command: str
    judges: tuple[str, ...]
    template: str
    criteria: tuple[str, ...]
    judgments: int | None
    failures: int | None
    when: str
    problem: str = ""

    @property
    def href(self) -> str:
        return "run/" + quote(self.name, safe="") + "/"


def _is_output_folder(path: Path) -> bool:
    return path.is_dir() and any((path / m).is_file() for m in MARKERS)


def is_runs_folder(folder: str | Path) -> bool:
    """Whether ``folder`` is no output folder itself but holds at least one (a folder of runs)."""
    path = Path(folder)
    if not path.is_dir() or _is_output_folder(path):
        return False
    try:
        return any(_is_output_folder(p) for p in path.iterdir())
    except OSError:
        return False


def _entry(path: Path) -> RunEntry:
    try:
        doc = json.loads((path / "run.json").read_text(encoding="utf-8")) if (path / "run.json").is_file() else {}
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        return RunEntry(path.name, "", (), "", (), None, None, "", f"run.json not read: {exc}")
    runs = [r for r in doc.get("runs") or [] if isinstance(r, dict) and not is_human(str(r.get("rater", "")))]
    settings = [r.get("settings") or {} for r in runs]
    judges = tuple(dict.fromkeys(str(r.get("rater") or r.get("judge") or "") for r in runs if r.get("rater") or r.get("judge")))
    templates = dict.fromkeys(str(s.get("template")) for s in settings if s.get("template"))
    criteria = dict.fromkeys(str(c) for s in settings for c in s.get("criteria") or [])
    counted = [r for r in runs if isinstance(r.get("judgments"), int)]
    statuses: list[dict[str, Any]] = [st for r in runs if isinstance(st := r.get("statuses"), dict)]
    failures = sum(n for st in statuses for k, n in st.items() if k != "ok" and isinstance(n, int)) if statuses else None
    return RunEntry(path.name, str(doc.get("command") or ""), judges, ", ".join(templates), tuple(criteria),
                    sum(r["judgments"] for r in counted) if counted else None, failures,
                    str(doc.get("finished") or ""))


def list_runs(folder: str | Path) -> list[RunEntry]:
    """Every output folder directly in ``folder``, in natural order of their names (one line when there is none)."""
    path = Path(folder)
    if not path.is_dir():
        raise JudgelabError(f"{path} is not a folder (give a folder of judgelab output folders)")
    entries = [_entry(p) for p in sorted(path.iterdir(), key=lambda p: natural_key(p.name)) if _is_output_folder(p)]
    if not entries:
        raise JudgelabError(f"{path} holds no judgelab output folder (none of its folders has a run.json, results.json, "
                            "store.sqlite or ratings file)")
    return entries


_TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; form-action 'self'">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
<header class="top"><h1>{{ title }}</h1><p>{{ runs|length }} runs in {{ folder }}. Pick two to compare them item by item.</p></header>
<main>
<section id="compare-form" aria-labelledby="compare-h">
<h2 id="compare-h">Compare two runs</h2>
<form method="get" action="compare">
<label for="pick-a">Run A <select id="pick-a" name="a">{% for r in runs %}<option value="{{ r.name }}"{% if loop.index == 1 %} selected{% endif %}>{{ r.name }}</option>{% endfor %}</select></label>
<label for="pick-b">Run B <select id="pick-b" name="b">{% for r in runs %}<option value="{{ r.name }}"{% if loop.index == 2 %} selected{% endif %}>{{ r.name }}</option>{% endfor %}</select></label>
<button type="submit" id="compare-go">Compare</button>
</form>
</section>
<section id="runs" aria-labelledby="runs-h">
<h2 id="runs-h">Runs</h2>
<div class="tablewrap"><table id="runs-table">
<thead><tr>{% for h in heads %}<th scope="col">{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{%- for r in runs %}
<tr data-run="{{ r.name }}"><th scope="row"><a href="{{ r.href }}">{{ r.name }}</a></th><td>{{ r.command }}</td>
<td>{{ r.judges|join(", ") }}</td><td>{{ r.template }}</td><td>{{ r.criteria|join(", ") }}</td>
<td class="int">{{ "—" if r.judgments is none else r.judgments }}</td><td class="int">{{ "—" if r.failures is none else r.failures }}</td>
<td>{{ r.when }}{% if r.problem %} <span class="problem">{{ r.problem }}</span>{% endif %}</td></tr>
{%- endfor %}
</tbody></table></div>
</section>
</main>
</body>
</html>
"""

_env = SandboxedEnvironment(autoescape=True, finalize=lambda v: "" if v is None else (
    v if isinstance(v, Markup) else Markup(esc(v)) if isinstance(v, str) else v))
_page = _env.from_string(_TEMPLATE)


def render_runs(folder: str | Path, runs: list[RunEntry]) -> str:
    """The page listing ``runs`` (of ``folder``), with the form that compares two of them."""
    return _page.render(title=f"judgelab runs: {Path(folder).resolve().name}", folder=str(Path(folder).resolve()),
                        runs=runs, css=Markup(CSS), heads=["run", "command", "judge(s)", "template", "criteria",
                                                           "judgments", "failures", "when"])
