"""Every command of README.md and docs/*.md runs as written, page by page, in an empty folder.

The pages follow one convention (docs/development.md, "Commands in the docs"): a fenced block tagged
``bash``, ``sh``, ``shell`` or ``console`` (there only the ``$ `` lines) holds commands that run as
shown; each page's blocks run in order in one empty folder, so a command may use what an earlier one
wrote; ``<!-- not run: REASON -->`` on the line above a fence marks a block that only illustrates
(its reason is listed as a skip). ``judgelab`` lines run in this process (:func:`conftest.run_cli`,
their words expanded by bash), other lines in bash, with the variables they set kept for the page.
A page that continues another page's example (:data:`CONTINUES`) runs after that page's commands in
the same folder. ``../shared/data`` beside the folder is the real data; a page that reads a file that
is absent there is skipped with a reason naming it (``needs_shared_data``).

What the test changes, and nothing else:

* **the judge.** No model is called: every model judge is answered by the OpenAI-compatible stub
  (``judgelab.testing.openai_stub``, deterministic 1-5 ratings, the documented test double of
  docs/at-scale.md). ``$OPENAI_BASE_URL`` is the stub, so ``--judge openai:MODEL`` reaches it as it
  reaches any server a user names there; ``openai:MODEL@URL`` (a fleet too) loses its URL for the
  same; ``local``, ``local:GGUF`` and a model-calling command without ``--judge`` (the embedded
  judge) get ``openai:embedded-judge-double``. Judges a page names itself (``scripted-test-double``)
  are kept. The stub rates on 1-5; a page whose commands ask for other answers (the NLE study's two
  1-7 scores, Yes / No / Neutral comparisons) gets the scripted test double of :data:`PAGE_JUDGES`.
* ``annotate`` serves until Ctrl-C: it gets ``--port 0`` (a free port), the test rates every item
  in the form as a person would, then sends Ctrl-C and expects exit status 0.
* ``vllm run-batch`` (a GPU node's offline batch runner) is answered by its documented stand-in,
  ``python -m judgelab.testing.openai_stub run-batch`` with the same flags (docs/at-scale.md).
* ``rate --execution batch`` gets ``--batch-poll 0.2`` (the stub's batches finish in a second; the
  default 30 s between looks only slows the test).

:data:`NOT_RUN` lists the lines that are not executed at all, each with its reason (installs,
the test suite, servers and simulations that run for minutes).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer

from conftest import SHARED_DATA, StubServer, run_cli
from servers import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN_TAGS = ("bash", "sh", "shell", "console")
FENCE = re.compile(r"^( *)```([\w-]*)[^\n]*\n(.*?)^\1```[ \t]*$", re.S | re.M)
MARKER = re.compile(r"^<!-- not run: (.+?) -->$")
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
EMBEDDED_DOUBLE = "openai:embedded-judge-double"
SHARED_NAMES = {"summeval": "summeval/summeval_expert_means.jsonl", "topical-chat": "topical-chat/topical_chat.json"}

#: Lines that are not executed (a regular expression on the line → why).
NOT_RUN = [
    (r"^pip install -e \. && judgelab demo$", "installs judgelab and runs the demo on the real embedded judge (a few "
     "minutes): .ci/run runs this line as written in a fresh virtual environment"),
    (r"^pip install -e \"\.\[test\]\" && python3 -m pytest", "installs the test tools and runs the whole test suite, "
     "which this test is part of (.ci/run runs it as written)"),
    (r"^python benchmarks/interval_coverage\.py", "a 12-minute simulation: tests/stats/test_interval_coverage_script.py "
     "runs it at a small size"),
    (r"^pytest tests/", "runs other tests of this suite"),
    (r"^judgelab contamination ", "scores every token under the embedded GGUF model with llama.cpp (no judge to "
     "substitute): the slow tests/recipes/test_recipes.py::test_contamination_command runs it on two texts"),
]

#: Pages that continue another page's example (in the same folder, after its commands), as their text says.
CONTINUES = {"audit.md": "README.md", "cli.md": "README.md", "agreement.md": "rate.md", "at-scale.md": "rate.md"}

#: Pages whose judge answers what the stub cannot (module docstring): the scripted test double's script.
#: G-Eval's scales are 1-5, 1-3 and 0-1: "1" (and its log-probabilities) is a rating on each of them.
G_EVAL_SCRIPT = {"default": "1", "default_probs": {"0": 0.1, "1": 0.6, "2": 0.2, "3": 0.1}}
PAGE_JUDGES = {"scales.md": {"rules": [{"contains": "Please give the score for informativeness",
                                         "reply": "[Informativeness] 5 [Clarity] 4. Clear enough."},
                                        {"contains": "Please answer Yes or No or Neutral", "reply": "Yes."}],
                              "default": "Rating: 4"},
               "geval.md": G_EVAL_SCRIPT, "agreement.md": G_EVAL_SCRIPT, "recipes.md": G_EVAL_SCRIPT}

#: Pages whose commands take more than a few seconds with the stub (marked ``slow``), and why (seconds on a
#: quiet 2-core machine; the other pages take about a minute together).
SLOW = {"audit.md": "the audit's self-check at 200 items, HANNA's tables and the measured Topical-Chat and SummEval "
                    "sections (1,300 judgments, three padding probes): about 75 s",
        "geval.md": "G-Eval on Topical-Chat with two judges and on 10 SummEval and Topical-Chat documents: about 50 s",
        "scales.md": "the NLE recipe on 100 e-SNLI explanations and pairwise comparisons of 100 LIAR ones: about 50 s",
        "dhp.md": "five DHP runs, one of 30 SummEval references: about 20 s",
        "recipes.md": "the chiang-lee, hanna and geval recipes on real data: about 20 s"}


@dataclass(frozen=True)
class Step:
    """One command of a page: ``kind`` is ``judgelab``, ``shell`` or ``not run`` (then ``reason``)."""

    page: Path
    line: int
    text: str
    kind: str
    reason: str = ""

    @property
    def where(self) -> str:
        name = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{name}:{self.line}"


def steps(page: Path) -> list[Step]:
    """The page's commands in order (continuation lines joined, heredocs kept whole)."""
    text = page.read_text(encoding="utf-8")
    found: list[Step] = []
    for fence in FENCE.finditer(text):
        indent, tag = fence.group(1), fence.group(2)
        if tag not in RUN_TAGS:
            continue
        first = text[:fence.start()].count("\n") + 2
        above = text[:fence.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        marker = MARKER.match(above)
        lines = [line.removeprefix(indent) for line in fence.group(3).split("\n")]
        i = 0
        while i < len(lines):
            start, line = first + i, lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            if tag == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            heredoc = HEREDOC.search(line)
            if heredoc:  # the lines up to its end word belong to this command
                while i < len(lines) and lines[i].strip() != heredoc.group(1):
                    line += "\n" + lines[i]
                    i += 1
                line += "\n" + heredoc.group(1)
                i += 1
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            reason = marker.group(1) if marker else next((why for rule, why in NOT_RUN if re.search(rule, line)), "")
            kind = "not run" if reason else "judgelab" if line.startswith("judgelab ") else "shell"
            found.append(Step(page, start, line, kind, reason))
    return found


def shared_files(page: Path) -> list[str]:
    """The files under ../shared/data the page's commands read (names relative to it)."""
    names: list[str] = []
    for step in steps(page):
        if step.kind == "not run":
            continue
        names += re.findall(r"\.\./shared/data/([\w./-]+)", step.text)
        names += [SHARED_NAMES[m] for m in re.findall(r"--dataset (summeval|topical-chat)", step.text)
                  if "--items" not in step.text]
    return sorted(set(names))


def page_param(page: Path):
    chain = [page] if page.name not in CONTINUES else [next(p for p in PAGES if p.name == CONTINUES[page.name]), page]
    marks = [pytest.mark.needs_shared_data(*files)] if (files := sorted({f for p in chain for f in shared_files(p)})) else []
    if page.name in SLOW:
        marks.append(pytest.mark.slow)
    return pytest.param(chain, id=page.name, marks=marks)


RUNNABLE = [page_param(p) for p in PAGES if any(s.kind != "not run" for s in steps(p))]
NOT_RUN_STEPS = [pytest.param(s, id=f"{s.where}") for p in PAGES for s in steps(p) if s.kind == "not run"]


# -- running a page ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    server = StubServer(tmp_path_factory.mktemp("stub"))
    yield server
    server.stop()


def command_of(argv: list[str]):
    """The click command a judgelab argv names (a group with its own options counts, as ``dhp``)."""
    command = typer.main.get_command(__import__("judgelab.cli", fromlist=["app"]).app)
    for token in argv:
        sub = getattr(command, "commands", {}).get(token)
        if sub is None:
            break
        command = sub
    return command


def scripted(folder: Path, script: dict, spec: str) -> str:
    """The scripted double standing in for the judge ``spec``: one script file per judge, so two judges stay two."""
    path = folder / ("judge-" + re.sub(r"[^\w.-]+", "-", spec) + ".json")
    path.write_text(json.dumps(script))
    return f"scripted-test-double:{path}"


def with_doubles(argv: list[str], script: dict | None = None, folder: Path | None = None) -> list[str]:
    """The argv with every model judge answered by the stub, or by the scripted double ``script`` (module docstring)."""
    out = list(argv)
    for i, token in enumerate(out[:-1]):
        if token in ("--judge", "--generator"):
            spec = out[i + 1]
            if script is not None and folder is not None and not spec.startswith("scripted-test-double:"):
                out[i + 1] = scripted(folder, script, spec)
            elif spec == "local" or spec.startswith("local:"):
                out[i + 1] = EMBEDDED_DOUBLE
            elif spec.startswith("openai:") and "@" in spec:
                out[i + 1] = spec.split("@", 1)[0]
    options = {o for p in command_of(argv).params for o in p.opts}
    if "--judge" in options and "--judge" not in out and "--help" not in out:
        out += ["--judge", EMBEDDED_DOUBLE if script is None or folder is None else scripted(folder, script, "local")]
    if "--execution" in out and out[out.index("--execution") + 1] == "batch" and "--dry-run" not in out:
        out += ["--batch-poll", "0.2"]
    return out


def expand(step: Step, cwd: Path, env: dict[str, str]) -> list[str]:
    """The words bash gives the command (quotes, variables, $(...) and comments as a shell reads them)."""
    done = subprocess.run(["bash", "-c", "printf '%s\\0' " + step.text[len("judgelab "):]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{step.where}: bash could not read {step.text!r}: {done.stderr}"
    return done.stdout.split("\0")[:-1]


#: Programs the test replaces by their documented test double (the line's start → its replacement).
STAND_INS = {"vllm run-batch ": "python -m judgelab.testing.openai_stub run-batch "}


def run_shell(step: Step, cwd: Path, env: dict[str, str]) -> None:
    dump = cwd.parent / "env.dump"
    text = next((new + step.text[len(old):] for old, new in STAND_INS.items() if step.text.startswith(old)), step.text)
    done = subprocess.run(["bash", "-c", f"set -ea\n{text}\nenv -0 > {shlex.quote(str(dump))}"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{step.where}: {step.text!r} exited {done.returncode}:\n{done.stderr[-3000:]}"
    env.clear()
    env.update(dict(v.split("=", 1) for v in dump.read_text().split("\0") if "=" in v))


def rate_in_the_form(link: str) -> int:
    """Rate every item of one annotator's form as a person would (a point chosen from the text); the count."""
    rated = 0
    while True:
        page = urllib.request.urlopen(link, timeout=30).read().decode()
        hidden = dict(re.findall(r'name="(position|shown|signature)" value="([^"]*)"', page))
        if "signature" not in hidden:
            return rated
        questions = sorted(set(re.findall(r'name="(r\d+)"', page)))
        point = 1 + hashlib.sha256(page.encode()).digest()[0] % 5
        form = {**hidden, **{q: str(point) for q in questions}, "comment": ""}
        urllib.request.urlopen(link, data=urllib.parse.urlencode(form).encode(), timeout=30).read()
        rated += 1


def run_annotate(step: Step, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    argv = argv if "--port" in argv else [*argv, "--port", "0"]
    server = ServerProcess([sys.executable, "-m", "judgelab.cli", *argv], cwd.parent / "logs", cwd=cwd, env=env,
                           ready_line=r"^Ratings are saved", name=f"{step.where} judgelab annotate")
    try:
        links = dict(re.findall(r"^  (\S+): (http\S+)$", server.stdout(), re.M))
        overview = links.pop("overview")
        links = {name: link.replace("<name>", "reader") for name, link in links.items()}  # "anyone: …/a/<name>"
        assert urllib.request.urlopen(overview, timeout=30).status == 200
        assert all(rate_in_the_form(link) > 0 for link in links.values()), f"{step.where}: nothing to rate"
        assert urllib.request.urlopen(overview, timeout=30).status == 200
        server.proc.send_signal(signal.SIGINT)
        assert server.wait() == 0, f"{step.where}: annotate exited {server.proc.returncode}: {server.stderr_tail()}"
    finally:
        server.stop()


def run_page(page: Path, cwd: Path, env: dict[str, str]) -> int:
    """Run the page's commands in ``cwd``; the number run."""
    ran, script = 0, PAGE_JUDGES.get(page.name)
    for step in steps(page):
        if step.kind == "shell":
            run_shell(step, cwd, env)
        elif step.kind == "judgelab":
            argv = with_doubles(expand(step, cwd, env), script, cwd.parent)
            if argv[0] == "annotate":
                run_annotate(step, argv, cwd, env)
            else:
                r = run_cli(*argv, cwd=cwd, env=env)
                assert r.returncode == 0, (f"{step.where}: exit status {r.returncode}\n  {step.text}\n  ran as: judgelab "
                                           f"{shlex.join(argv)}\nstderr: {r.stderr[-3000:]}\nstdout: {r.stdout[-2000:]}")
        ran += step.kind != "not run"
    return ran


REPO_ONLY = re.compile(r"\bdocs/[\w.-]+\.md\b")


def repository_paths_in_outputs(cwd: Path) -> list[str]:
    """Files the commands wrote that point to a page of the repository's docs/ (not installed with judgelab)."""
    found = []
    for path in cwd.rglob("*"):
        if path.suffix in (".html", ".md", ".csv", ".json") and path.is_file():
            for m in REPO_ONLY.finditer(path.read_text(encoding="utf-8", errors="replace")):
                found.append(f"{path.relative_to(cwd)}: {m.group(0)}")
    return sorted(set(found))


@pytest.mark.parametrize("chain", RUNNABLE)
def test_page_runs_as_written(chain: list[Path], tmp_path: Path, stub: StubServer) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    (tmp_path / "shared").mkdir()
    if SHARED_DATA.exists():
        (tmp_path / "shared" / "data").symlink_to(SHARED_DATA)
    bin_dir = tmp_path / "bin"  # `python` and `python3` are this interpreter, with this checkout's sources
    bin_dir.mkdir()
    for name in ("python", "python3"):  # a script, not a link: a link would lose the virtual environment
        (bin_dir / name).write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "sk-test-double", "COLUMNS": "200",
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    env.pop("JUDGELAB_SHARED_DATA", None)
    ran = sum(run_page(page, cwd, env) for page in chain)
    assert ran > 0
    assert not repository_paths_in_outputs(cwd), "outputs point to repository-only pages"


@pytest.mark.parametrize("step", NOT_RUN_STEPS)
def test_lines_not_run_say_why(step: Step) -> None:
    pytest.skip(f"{step.where} not run: {step.text.splitlines()[0][:80]} — {step.reason}")


def test_every_not_run_rule_still_matches_a_page() -> None:
    lines = [s.text for p in PAGES for s in steps(p)]
    stale = [rule for rule, _ in NOT_RUN if not any(re.search(rule, line) for line in lines)]
    assert not stale, f"NOT_RUN rules that match no page any more: {stale}"


def test_the_runner_catches_a_broken_command(tmp_path: Path) -> None:
    """A page whose command fails fails the test, naming the page and line: the check can fail."""
    page = tmp_path / "broken.md"
    page.write_text("# x\n\n```bash\nprintf '%s\\n' '{\"id\": \"1\", \"text\": \"A.\"}' > items.jsonl\n"
                    "judgelab rate --items items.jsonl --template no-such-template --out r\n```\n")
    found = steps(page)
    assert [(s.kind, s.line) for s in found] == [("shell", 4), ("judgelab", 5)]
    cwd = tmp_path / "project"
    cwd.mkdir()
    with pytest.raises(AssertionError, match=r"broken\.md:5: exit status 2"):
        run_page(page, cwd, dict(os.environ))
    assert (cwd / "items.jsonl").read_text() == '{"id": "1", "text": "A."}\n'  # the shell line ran first
