"""From the raters' instructions to a template: ``templates show``, ``templates new`` (the instructions
reach the judge byte for byte, Jinja-looking text included) and template errors that name the file,
the line and the field."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from conftest import run_cli

from judgelab.errors import JudgelabError
from judgelab.prompts import load_template, render_text
from judgelab.prompts.scaffold import jinja_literal, parse_scale, write_scaffold

SHIPPED = Path(__file__).resolve().parents[2] / "src/judgelab/prompts/templates"

#: Instructions as raters get them, with text that Jinja would read as its own syntax.
INSTRUCTIONS = ("Please read the story below and rate it.\n"
                "Placeholders such as {{ name }} or {% if x %} were left in by the editor; {# this #} too.\n"
                "A literal {% endraw %} and {%- endraw -%} stay text, as does a lone { and }}.\n"
                "  Indented line with trailing spaces   \n"
                "Last line.\n")


def one_line_error(result, *parts: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


def test_templates_show_prints_the_shipped_yaml_exactly(tmp_path):
    r = run_cli("templates", "show", "chiang-lee-story")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (SHIPPED / "chiang-lee-story.yaml").read_text(encoding="utf-8")
    mine = tmp_path / "mine.yaml"
    mine.write_text("# my own\nname: mine\ninstruction: 'Text: {{ text }}'\ncriteria:\n  q:\n    question: Good?\n")
    assert run_cli("templates", "show", str(mine)).stdout == mine.read_text()
    one_line_error(run_cli("templates", "show", "no-such-template"), "unknown template 'no-such-template'")
    assert "chiang-lee-story: grammaticality" in run_cli("templates").stdout  # the list stays


@pytest.mark.parametrize("yaml_text, parts", [
    ("name: m\ninstructions: 'Rate {{ text }}'\ncriteria:\n  q:\n    question: Good?\n",
     ["unknown field 'instructions'", "line 2", "did you mean 'instruction'"]),
    ("name: m\ninstruction: 'Rate {{ text }}'\ncriteria:\n  fluency:\n    questoin: Good?\n",
     ["unknown field 'questoin'", "criteria.fluency", "line 5", "did you mean 'question'"]),
    ("name: m\nscale: [1, five]\ninstruction: 'Rate {{ text }}'\ncriteria:\n  q:\n    question: Good?\n",
     ["invalid template at scale.1", "line 2"]),
    ("name: m\ninstruction: 'Rate {{ text }}'\ncriteria:\n  q:\n    requires: [context]\n",
     ["criteria.q.question", "line 4", "Field required"]),
    ("name: m\ninstruction: |-\n  Rate\n  {{ text }\ncriteria:\n  q:\n    question: Good?\n",
     ["Jinja syntax error in instruction", "line 4"]),
])
def test_template_errors_name_the_file_the_line_and_the_field(tmp_path, yaml_text, parts):
    path = tmp_path / "mine.yaml"
    path.write_text(yaml_text)
    items = tmp_path / "items.jsonl"
    items.write_text('{"id": "1", "text": "A story."}\n')
    script = tmp_path / "judge.json"
    script.write_text('{"default": "3"}')
    for result in (run_cli("templates", "show", str(path)),
                   run_cli("rate", "--items", str(items), "--template", str(path), "--judge",
                           f"scripted-test-double:{script}", "--dry-run")):
        one_line_error(result, str(path), *parts)


def test_a_field_the_items_lack_is_named_with_its_place_in_the_template(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: m\ninstruction: |-\n  Rate\n  {{ text }}\ncriteria:\n  q:\n    question: Good for {{ audience }}?\n")
    (tmp_path / "items.jsonl").write_text('{"id": "1", "text": "A story."}\n')
    (tmp_path / "judge.json").write_text('{"default": "3"}')
    r = run_cli("rate", "--items", "items.jsonl", "--template", "mine.yaml", "--judge", "scripted-test-double:judge.json",
                "--dry-run", cwd=tmp_path)
    one_line_error(r, "mine.yaml: criteria.q.question (line 7)", "'audience' is undefined", "the item's fields: ", "text")


def test_templates_new_gives_the_judge_the_instructions_verbatim(tmp_path):
    (tmp_path / "instructions.txt").write_text(INSTRUCTIONS, encoding="utf-8")
    (tmp_path / "items.jsonl").write_text('{"id": "s1", "text": "Once upon a time."}\n')
    (tmp_path / "judge.json").write_text('{"default": "3"}')
    r = run_cli("templates", "new", "--instructions", "instructions.txt", "--criteria", "fluency,coherence",
                "--scale", "1-5", "--name", "my-study", "--out", "my-study.yaml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    template = load_template(str(tmp_path / "my-study.yaml"))
    assert template.name == "my-study" and list(template.criteria) == ["fluency", "coherence"]
    assert tuple(template.scale) == (1, 5)
    prompt = template.render("fluency", {"item_id": "s1", "text": "Once upon a time."})
    assert prompt == INSTRUCTIONS + "\nText to rate:\nOnce upon a time.\n(End of text)\n" + \
        "How would you rate the fluency of the text, from 1 (lowest) to 5 (highest)?"
    shown = run_cli("templates", "show", "my-study.yaml", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout == (tmp_path / "my-study.yaml").read_text()
    dry = run_cli("rate", "--items", "items.jsonl", "--template", "my-study.yaml", "--judge",
                  "scripted-test-double:judge.json", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count(INSTRUCTIONS + "\nText to rate:\nOnce upon a time.") == 2  # both criteria, exactly as sent
    assert "@my-study" in dry.stdout
    # A real (scripted) run asks the judge that very text.
    run = run_cli("rate", "--items", "items.jsonl", "--template", "my-study.yaml", "--judge",
                  "scripted-test-double:judge.json", "--samples", "1", "--quiet", "--out", "out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    import sqlite3

    with sqlite3.connect(tmp_path / "out/store.sqlite") as db:
        requests = [json.loads(r) for (r,) in db.execute("SELECT request FROM calls")]
    assert len(requests) == 2
    assert all(q["messages"][0][1].startswith(INSTRUCTIONS + "\nText to rate:\nOnce upon a time.") for q in requests)


def test_windows_line_ends_and_odd_characters_stay_byte_for_byte(tmp_path):
    text = "Rate it.\r\nSecond line {{ x }}\r\n\ttab, NEL \x85, LS \u2028, trailing  \r\n"
    source = tmp_path / "win.txt"
    source.write_bytes(text.encode("utf-8"))
    made = write_scaffold(source, "quality", "0-10", tmp_path / "win.yaml")
    template = load_template(str(made.path))
    assert tuple(template.scale) == (0, 10)
    assert template.render("quality", {"text": "T"}).startswith(text + "\nText to rate:\nT\n")


def test_jinja_literal_renders_to_its_text_for_any_text():
    """Seeded random texts made of Jinja's delimiters, raw/endraw words and line ends render to themselves."""
    rng = random.Random(7)
    alphabet = ["{", "}", "%", "#", "-", "+", " ", "\r", "\n", "endraw", "raw", "{%", "{{", "{#", "%}", "}}", "x"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert render_text(jinja_literal(text) + "|", {}, "test") == text + "|", repr(text)


def test_templates_new_refuses_bad_input_in_one_line(tmp_path):
    (tmp_path / "i.txt").write_text("Rate it.\n")
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "taken.yaml").write_text("keep me")
    new = ("templates", "new", "--instructions")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a", "--scale", "5-1", "--out", "t.yaml", cwd=tmp_path), "--scale")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a", "--scale", "high", "--out", "t.yaml", cwd=tmp_path), "LOW-HIGH")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a,,b", "--out", "t.yaml", cwd=tmp_path), "--criteria")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a,a", "--out", "t.yaml", cwd=tmp_path), "'a' twice")
    one_line_error(run_cli(*new, "empty.txt", "--criteria", "a", "--out", "t.yaml", cwd=tmp_path), "no text")
    one_line_error(run_cli(*new, "missing.txt", "--criteria", "a", "--out", "t.yaml", cwd=tmp_path), "file not found")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a", "--out", "t.txt", cwd=tmp_path), ".yaml")
    one_line_error(run_cli(*new, "i.txt", "--criteria", "a", "--out", "taken.yaml", cwd=tmp_path), "exists", "--force")
    assert (tmp_path / "taken.yaml").read_text() == "keep me" and not (tmp_path / "t.yaml").exists()
    assert run_cli(*new, "i.txt", "--criteria", "a", "--out", "taken.yaml", "--force", cwd=tmp_path).returncode == 0
    assert load_template(str(tmp_path / "taken.yaml")).name == "taken"
    assert parse_scale("1..7") == (1.0, 7.0)
    with pytest.raises(JudgelabError, match="--name"):
        write_scaffold(tmp_path / "i.txt", "a", "1-5", tmp_path / "n.yaml", name=" ")


@pytest.mark.parametrize("name", ["judgelab.prompts", "judgelab.prompts.scaffold", "judgelab.prompts.yaml_places",
                                  "judgelab.datasets.items", "judgelab.ratings"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
