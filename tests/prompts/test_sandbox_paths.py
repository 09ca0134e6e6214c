"""User templates cannot run code; names from data never become paths; figure paths are checked."""
import json
import os

import jinja2
import pytest
import yaml

from conftest import run_cli
from judgelab.errors import JudgelabError
from judgelab.paths import safe_filename


def check(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in result.stderr + result.stdout
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def payloads(target):
    """Template texts that create ``target`` when rendered by a plain (unsandboxed) Jinja environment."""
    texts = [
        "{{ lipsum.__globals__['os'].mkdir('TARGET') }}",
        "{% for c in ''.__class__.__mro__[1].__subclasses__() %}{% if c.__name__ == 'catch_warnings' %}"
        "{{ c()._module.__builtins__['__import__']('os').mkdir('TARGET') }}{% endif %}{% endfor %}",
    ]
    return [t.replace("TARGET", str(target)) for t in texts]


@pytest.mark.parametrize("index", [0, 1])
def test_payloads_work_unsandboxed(tmp_path, index):
    """The control: each payload really creates the file in a plain environment."""
    target = tmp_path / "pwned"
    jinja2.Environment().from_string(payloads(target)[index]).render()
    assert target.exists()


def scripted(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "4"}))
    return script


@pytest.mark.parametrize("index", [0, 1])
def test_template_payload_cannot_run_code(tmp_path, index):
    target = tmp_path / "pwned"
    template = {"name": "evil", "instruction": "Rate this.\n" + payloads(target)[index] + "\n{{ text }}",
                "criteria": {"quality": {"question": "How good?"}}}
    path = tmp_path / "evil.yaml"
    path.write_text(yaml.safe_dump(template))
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "1", "text": "A story."}\n')
    result = run_cli("rate", "--items", str(items), "--template", str(path), "--judge", f"scripted-test-double:{scripted(tmp_path)}",
                          "--quiet", "--out", str(tmp_path / "out"))
    check(result, "evil.yaml", "sandbox")
    assert not target.exists()


def test_task_file_payload_cannot_run_code(tmp_path):
    target = tmp_path / "pwned"
    task = yaml.safe_load((__import__("judgelab.dhp.task", fromlist=["x"])._tasks_dir() / "question-answering.yaml").read_text())
    if isinstance(task["template"], str):  # the shipped task names its rubric template: inline it, as a user task may
        from judgelab.prompts import _shipped_dir

        task["template"] = yaml.safe_load((_shipped_dir() / f"{task['template']}.yaml").read_text())
    crit = next(iter(task["template"]["criteria"].values()))
    crit["question"] = payloads(target)[0] + crit["question"]
    path = tmp_path / "evil-task.yaml"
    path.write_text(yaml.safe_dump(task))
    result = run_cli("dhp", "--task", str(path), "--judge", f"scripted-test-double:{scripted(tmp_path)}",
                          "--n-items", "3", "--quiet", "--out", str(tmp_path / "out"))
    check(result, "evil-task.yaml", "sandbox")
    assert not target.exists()


def test_jinja_syntax_errors_name_the_file_and_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: broken\ninstruction: |-\n  Read this.\n  {{ text \ncriteria:\n  q:\n    question: How good?\n")
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "1", "text": "A story."}\n')
    result = run_cli("rate", "--items", str(items), "--template", str(path), "--judge", f"scripted-test-double:{scripted(tmp_path)}",
                          "--quiet", "--out", str(tmp_path / "out"))
    check(result, "broken.yaml", "Jinja syntax error", "instruction", "line 4")
    task = tmp_path / "broken-task.yaml"
    task.write_text("name: t\ntemplate:\n  name: t\n  criteria:\n    q:\n      question: 'Rate {% if %}'\n"
                    "perturbations:\n- {name: typos/minor, level: character, method: rule, kind: typos, k: 1}\n")
    check(run_cli("dhp", "--task", str(task), "--quiet", "--out", str(tmp_path / "o2")),
          "broken-task.yaml", "Jinja syntax error", "template.criteria.q.question", "line 6")


def test_huge_repetition_is_refused():
    from judgelab.prompts import render_text

    with pytest.raises(JudgelabError, match="sandbox"):
        render_text("{{ 'a' * 10**9 }}", {}, "mine.yaml")
    with pytest.raises(JudgelabError, match="sandbox"):
        render_text("{{ 2 ** 100000000 }}", {}, "mine.yaml")
    assert render_text("{{ 'ab' * 3 }} {{ 2 ** 10 }} {{ text }}", {"text": "{{ not rendered }}"}, "x") == "ababab 1024 {{ not rendered }}"


def test_shipped_names_are_looked_up_not_joined_as_paths(tmp_path):
    from judgelab.prompts import load_template

    with pytest.raises(JudgelabError, match="unknown template"):
        load_template("../prompts/templates/plain-quality")
    from judgelab.datasets.dhp_sources import demo_set

    with pytest.raises(JudgelabError, match="no demo set"):
        demo_set("../../datasets/demo/dhp-summarization")
    assert demo_set("summarization").name == "dhp-summarization.jsonl"


# -- file names from data --------------------------------------------------------------
@pytest.mark.parametrize("name", ["../../evil/x", "a/b", "a\\b", "..", ".", ".hidden", "x\x00y", "tab\there", "nul",
                                  "CON", "", " ", "x" * 500, "é\u0301", "trailing.", "new\nline"])
def test_safe_filename(name):
    safe = safe_filename(name)
    assert safe and len(safe) <= 80
    assert "/" not in safe and "\\" not in safe and "\x00" not in safe and ".." not in safe
    assert not safe.startswith(".") and not safe.endswith(".")
    assert all(ch.isprintable() and not ch.isspace() for ch in safe)
    assert safe != name  # every one of these had to change …
    assert safe == safe_filename(name)  # … stably
    assert safe_filename(safe) == safe  # and the result is itself safe


def test_safe_filename_keeps_plain_names_and_separates_different_ones():
    for name in ("fluency", "Kohärenz", "informativeness", "ROUGE-1", "v1.2"):
        assert safe_filename(name) == name
    names = ["a/b", "a\\b", "a_b", "a:b", "a b", "a?b"]
    assert len({safe_filename(n) for n in names}) == len(names)


def test_criterion_named_like_a_path_stays_in_the_output_folder(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    evil = "../../evil/x"
    judge = work / "judge.csv"
    human = work / "human.csv"
    rows = [f"{i},{evil},j,0,{1 + i % 5},ok" for i in range(8)]
    judge.write_text("item_id,criterion,rater,sample,score,status\n" + "\n".join(rows) + "\n")
    human.write_text('id,"../../evil/x"\n' + "\n".join(f"{i},{1 + (i * 3) % 5}" for i in range(8)) + "\n")
    figures = work / "out" / "figs"
    before = set(tmp_path.rglob("*"))
    result = run_cli("scales", str(judge), "--human", str(human), "--figures", str(figures), "--format", "csv")
    assert result.returncode == 0, result.stderr
    new = set(tmp_path.rglob("*")) - before
    written = [p for p in new if p.is_file()]
    assert written and all(figures in p.parents for p in written), written
    assert [p.name for p in written] == [f"scatter_{safe_filename(evil)}.png"]
    assert not (tmp_path / "evil").exists()


def test_figure_paths_are_checked(tmp_path):
    header = "Model,Relevance,Coherence,Empathy,Surprise,Engagement,Complexity,BLEU\n"
    body = "".join(f"{s}," + ",".join(f'"[{k + 1}.0, {(k * 7) % 5}.0]"' for _ in range(6)) + f',"[0.{k}, 0.{(k * 3) % 4}]"\n'
                   for k, s in enumerate(["Human", "A", "B", "C", "D"]))
    scores = tmp_path / "scores.csv"
    scores.write_text(header + body)
    check(run_cli("hanna", "correlations", str(scores), "--figure", str(tmp_path / "x.xyz")),
          "x.xyz", "unknown image format '.xyz'", ".png")
    check(run_cli("hanna", "correlations", str(scores), "--figure", str(tmp_path / "nope" / "x.png")),
          "does not exist")
    assert not (tmp_path / "nope").exists()
    ok = run_cli("hanna", "correlations", str(scores), "--figure", str(tmp_path / "h.svg"), "--format", "csv")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "h.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    assert os.path.getsize(tmp_path / "h.svg") > 0
