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
    with pytest.raises(JudgelabError, match=r"local\[:GGUF\], openai:MODEL\[@BASE_URL\], scripted-test-double:FILE or echo-test-double:WORD"):
        build_judge("nope:x")
    with pytest.raises(JudgelabError, match="unknown judge 'nope'"):
        make_judge("nope")


def test_builtin_spec_forms_are_unchanged():
    assert parse_judge("local") == ("local", {"model_path": None})
    assert parse_judge("local:/m/x.gguf") == ("local", {"model_path": "/m/x.gguf"})
    assert parse_judge("openai:gpt@http://h:1/v1", {"api_key": "k", "model_path": "no"}) == (
        "openai", {"api_key": "k", "model": "gpt", "base_url": "http://h:1/v1"})
    assert parse_judge("openai:gpt", {"base_url": "http://d/v1"})[1]["base_url"] == "http://d/v1"
    assert parse_judge("scripted-test-double:s.json") == ("scripted-test-double", {"script": "s.json"})
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
