"""The backend registry: a new backend is one registration; importing the package stays light."""
import subprocess
import sys

import pytest

from judgelab.errors import JudgelabError
from judgelab.models import make_judge
from judgelab.models.base import Backend, Capabilities, Choice, JudgeResponse
from judgelab.models.registry import (
    register_backend,
    registered_kinds,
    unregister_backend,
)
from judgelab.models.spec import build_judge, parse_judge


class EchoTestDouble(Backend):
    """A throwaway TEST DOUBLE backend: answers with a fixed word."""

    kind = "echo-test-double"
    capabilities = Capabilities(concurrency=4)

    def __init__(self, word: str, times: int = 1) -> None:
        self.model_id = f"echo-{word}"
        self.word = " ".join([word] * times)

    async def _complete(self, request):
        return JudgeResponse([Choice(self.word, None, "stop")])


@pytest.fixture
def echo_registered():
    register_backend("echo-test-double", syntax="echo-test-double:WORD", options=("times",),
                     parse=lambda rest, defaults: {"word": rest or "3", **{k: v for k, v in defaults.items() if k == "times"}},
                     build=lambda **options: EchoTestDouble(**options))
    yield
    unregister_backend("echo-test-double")


def test_a_registered_backend_works_through_build_judge_and_the_runner(echo_registered):
    import asyncio

    from judgelab.datasets.items import Item
    from judgelab.run import Runner, RunSpec
    from judgelab.store import Store

    judge = build_judge("echo-test-double:4", {"times": 2, "api_key": "ignored"})
    assert isinstance(judge, EchoTestDouble) and judge.word == "4 4" and "echo-test-double" in registered_kinds()
    assert parse_judge("echo-test-double") == ("echo-test-double", {"word": "3"})
    store = Store(":memory:")
    asyncio.run(Runner(build_judge("echo-test-double:4"), store, RunSpec(samples=1)).run([Item("a", "A story.", context="p")]))
    assert set(store.ratings()["score"]) == {4.0}


def test_unknown_kinds_name_every_registered_form(echo_registered):
    with pytest.raises(JudgelabError, match=r"local\[:GGUF\], openai:MODEL\[@BASE_URL\[,BASE_URL…\]\], scripted-test-double:FILE or echo-test-double:WORD"):
        build_judge("nope:x")
    with pytest.raises(JudgelabError, match="unknown judge 'nope'"):
        make_judge("nope")


def test_builtin_spec_forms_are_unchanged(tmp_path):
    assert parse_judge("local") == ("local", {"model_path": None})
    assert parse_judge("local:/m/x.gguf") == ("local", {"model_path": "/m/x.gguf"})
    assert parse_judge("openai:gpt@http://h:1/v1", {"api_key": "k", "model_path": "no"}) == (
        "openai", {"api_key": "k", "model": "gpt", "base_url": "http://h:1/v1"})
    assert parse_judge("openai:gpt", {"base_url": "http://d/v1"})[1]["base_url"] == "http://d/v1"
    script = tmp_path / "s.json"
    script.write_text('{"default": "3"}')
    assert parse_judge(f"scripted-test-double:{script}") == ("scripted-test-double", {"script": str(script)})
    for bad, message in (("openai", "needs a model"), ("scripted-test-double", "needs a script")):
        with pytest.raises(JudgelabError, match=message):
            parse_judge(bad)
    with pytest.raises(JudgelabError, match="needs --model"):
        make_judge("openai")


def test_importing_the_models_and_looking_up_kinds_loads_no_heavy_sdk():
    code = ("import sys, judgelab.models, judgelab.models.spec, judgelab.run\n"
            "from judgelab.models.registry import registered_kinds; registered_kinds()\n"
            "print(','.join(m for m in ('llama_cpp', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("script,needles", [
    ([1, 2], ("is a list", "expected a JSON object")),
    ("4", ("is a text", "expected a JSON object")),
    ({"rules": "nope"}, ("'rules' is a text", "expected a list of rules")),
    ({"rules": [7]}, ("rule 1 is a number", "expected an object")),
    ({"rules": [{"reply": "4"}]}, ("rule 1 has no 'contains'",)),
    ({"rules": [{"contains": 3, "reply": "4"}]}, ("'contains' a number",)),
    ({"rules": [{"contains": "x"}]}, ("rule 1 has no answer", "'reply', 'replies' or 'probs'")),
    ({"rules": [{"contains": "x", "reply": "4", "replies": ["4"]}]}, ("both 'reply' and 'replies'",)),
    ({"rules": [{"contains": "x", "reply": ["4"]}]}, ("reply is a list", "expected a text")),
    ({"rules": [{"contains": "x", "replies": []}]}, ("replies is empty", "non-empty list of texts")),
    ({"rules": [{"contains": "x", "replies": ["4", {"a": 1}]}]}, ("not a text",)),
    ({"rules": [{"contains": "x", "reply": "4", "repyl": "5"}]}, ("unknown key 'repyl'",)),
    ({"rules": [{"contains": "x", "probs": "4"}]}, ("probs is a text", "label → probability")),
    ({"rules": [{"contains": "x", "probs": {"1": 0.7, "2": 0.7}}]}, ("sums to 1.4", "at most 1")),
    ({"rules": [{"contains": "x", "probs": {"1": -0.5}}]}, ("is -0.5", "probability in [0, 1]")),
    ({"rules": [{"contains": "x", "probs": {"1": 0.0}}]}, ("sums to 0",)),
    ({"default": None}, ("'default' is null", "expected a text")),
    ({"defualt": "4"}, ("unknown key 'defualt'", "rules, default, default_probs")),
    ({"default_probs": {"1": True}}, ("is True",)),
])
def test_a_scripted_judge_script_of_the_wrong_shape_is_refused_when_built(tmp_path, script, needles):
    """The test double's script is checked when the judge is built (and when its spec is parsed, before any
    work), with one line saying what shape is expected — not an AttributeError in the middle of a run."""
    import json

    from judgelab.models.backends.scripted import ScriptedTestJudge

    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    for build in (lambda: build_judge(f"scripted-test-double:{path}"), lambda: parse_judge(f"scripted-test-double:{path}"),
                  lambda: ScriptedTestJudge(script)):
        with pytest.raises(JudgelabError) as refused:
            build()
        message = str(refused.value)
        assert "\n" not in message
        for needle in needles:
            assert needle in message, message


def test_a_scripted_judge_script_that_is_no_json_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"default": "4",}')
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'\xff\xfe{"default": "4"}')
    for spec, needle in ((bad, "not valid JSON (line 1"), (tmp_path, "is a folder, not a JSON file"),
                         (tmp_path / "nope.json", "script file not found"), (binary, "not UTF-8")):
        with pytest.raises(JudgelabError, match=needle.replace("(", r"\(")):
            build_judge(f"scripted-test-double:{spec}")


def test_every_documented_script_shape_still_builds():
    """The shapes the module docstring documents (and numbers where a text is expected) are accepted."""
    import asyncio

    from judgelab.models.base import JudgeRequest, Sampling
    from judgelab.models.backends.scripted import ScriptedTestJudge

    judge = ScriptedTestJudge({"rules": [{"contains": "Once", "replies": ["I am an AI ...", 4]},
                                         {"contains": "typo", "probs": {"1": 0.5, "2": 0.5}},
                                         {"contains": "both", "reply": 2, "probs": {"2": 0.9}}],
                               "default": 3, "default_probs": None})
    ask = lambda text: asyncio.run(judge.complete(JudgeRequest((("user", text),), Sampling()))).choices[0].text  # noqa: E731
    assert [ask("Once upon"), ask("Once upon"), ask("Once upon"), ask("a both"), ask("other")] == [
        "I am an AI ...", "4", "4", "2", "3"]


class ShoutTestDouble(Backend):
    """A TEST DOUBLE backend defined here, as a plugin would be: one class plus one registration.

    It answers every request with the score given after ``shout-test-double:`` and declares the
    protocol's optional members (notes, run facts, identity) that the run reads without knowing the kind.
    """

    kind = "shout-test-double"

    def __init__(self, score: str) -> None:
        self.model_id = f"shout-{score}"
        self.score = score
        self.calls = 0

    @property
    def notes(self) -> tuple[str, ...]:
        return (f"shout answered {self.calls} calls",)

    def run_facts(self) -> dict:
        return {"shout_volume": "loud"}

    async def _complete(self, request):
        self.calls += 1
        return JudgeResponse([Choice(self.score, None, "stop")], prompt_tokens=3, completion_tokens=1)


def _parse_shout(rest: str, defaults: dict) -> dict:
    if not rest.isdigit():
        raise JudgelabError("shout-test-double:SCORE needs a score, e.g. shout-test-double:4")
    return {"score": rest}


@pytest.fixture
def shout_registered():
    from judgelab.models.registry import backend_entry

    entry = register_backend("shout-test-double", syntax="shout-test-double:SCORE", parse=_parse_shout,
                             build=lambda **options: ShoutTestDouble(**options), description="a test double")
    assert backend_entry("shout-test-double") is entry
    yield entry
    unregister_backend("shout-test-double")
    assert "shout-test-double" not in registered_kinds()


def test_a_backend_defined_in_a_test_is_one_class_and_one_registration_usable_from_the_command_line(shout_registered, tmp_path):
    """``--judge shout-test-double:4`` through ``judgelab rate`` in-process: ratings, rater label, the backend's
    notes and run facts in run.json — nothing outside the registry knows the kind."""
    import json

    import pandas as pd

    from conftest import run_cli, write_items

    items = write_items(tmp_path / "items.jsonl", 3)
    out = tmp_path / "run"
    result = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--judge", "shout-test-double:4",
                     "--samples", "1", "--quiet", "--out", str(out))
    assert result.returncode == 0, result.stderr
    ratings = pd.read_csv(out / "ratings.csv")
    assert len(ratings) == 3 * ratings["criterion"].nunique() and set(ratings["score"]) == {4.0}
    assert set(ratings["rater"]) == {"shout-4@plain-quality"} and set(ratings["status"]) == {"ok"}
    (run,) = json.loads((out / "run.json").read_text())["runs"]
    assert run["shout_volume"] == "loud" and run["backend_notes"] == [f"shout answered {len(ratings)} calls"]
    assert run["calls_made"] == len(ratings)

    again = run_cli("rate", "--items", str(items), "--template", "plain-quality", "--judge", "shout-test-double:4",
                    "--samples", "1", "--quiet", "--out", str(out))
    assert again.returncode == 0, again.stderr
    resumed = json.loads((out / "run.json").read_text())["runs"][0]
    assert resumed["this_run"]["calls_made"] == 0  # the ledger answers a resume
    assert resumed["calls_made"] == len(ratings)  # the calls that made the judgments stay counted

    refused = run_cli("rate", "--items", str(items), "--judge", "shout-test-double:loud", "--out", str(tmp_path / "x"))
    assert refused.returncode == 2 and "needs a score" in refused.stderr


def test_an_unregistered_kind_is_refused_on_the_command_line(tmp_path):
    from conftest import run_cli, write_items

    items = write_items(tmp_path / "items.jsonl", 2)
    refused = run_cli("rate", "--items", str(items), "--judge", "shout-test-double:4", "--out", str(tmp_path / "run"))
    assert refused.returncode == 2 and "unknown judge" in refused.stderr and "shout-test-double" in refused.stderr
    assert not (tmp_path / "run" / "ratings.csv").exists()


def test_the_builtin_backends_come_from_the_backends_package_table():
    """The built-in kinds are registered by the modules named in BUILTIN_BACKENDS, one module each."""
    import importlib

    from judgelab.models.registry import BUILTIN_BACKENDS, backend_entry

    kinds = {"local": "local", "openai_compatible": "openai", "scripted": "scripted-test-double"}
    assert set(BUILTIN_BACKENDS) == set(kinds)
    for module, kind in kinds.items():
        assert backend_entry(kind).build.__module__ == importlib.import_module(f"judgelab.models.backends.{module}").__name__


def test_a_run_file_resolves_the_judges_whose_registry_entry_takes_a_file(tmp_path, shout_registered):
    """``local:PATH`` and ``scripted-test-double:PATH`` resolve against the run file's folder because their
    entries say ``file_argument``; an entry that does not (openai, the test's shout double) is left as written."""
    from judgelab.runfile import load_run_file

    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "run.yaml").write_text("items: items.jsonl\njudge:\n  - scripted-test-double:s.json\n  - local:m.gguf\n"
                                     "  - openai:m@http://h:1/v1\n  - shout-test-double:4\n  - local\n")
    spec = load_run_file(folder / "run.yaml")
    assert spec.judge == [f"scripted-test-double:{folder / 's.json'}", f"local:{folder / 'm.gguf'}",
                          "openai:m@http://h:1/v1", "shout-test-double:4", "local"]
