"""``--constrain``: part of the run identity and of every request's ledger key (a changed setting never
reuses old judgments), a label of its own beside the free rater, refused where it cannot work, and
answered with JSON by an OpenAI-compatible endpoint that honours ``response_format``."""
from __future__ import annotations

import asyncio
import json

import pytest

from conftest import one_line_error, run_cli, write_items
from judgelab.datasets.items import load_items
from judgelab.errors import CapabilityError, JudgelabError
from judgelab.models.base import Backend, Capabilities, Choice, JudgeRequest, JudgeResponse, Sampling
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.prompts import load_template
from judgelab.run import RunSpec, Runner, run_identity, run_spec
from judgelab.store import Store


class GrammarJudge(Backend):
    """A judge that offers a grammar and answers a bare number (what the grammar admits)."""

    kind, model_id = "grammar-test", "g"
    capabilities = Capabilities(max_n=1, constrain="grammar", seed=True)

    def __init__(self):
        self.requests: list[JudgeRequest] = []

    async def _complete(self, request):
        self.requests.append(request)
        return JudgeResponse([Choice("3" if request.answer_format else "I would rate it a 5.", None, "stop")])


@pytest.fixture()
def items(tmp_path):
    return load_items(write_items(tmp_path / "items.jsonl", 3))


def spec(**kw):
    kw.setdefault("criteria", ["grammaticality", "likability"])
    return RunSpec(judge="openai:m", samples=2, score="parsed", **kw)


def test_the_identity_has_constrain_only_when_set():
    template = load_template("chiang-lee-story")
    judge = {"kind": "openai", "model": "m"}
    free = run_identity(spec().resolved(), judge, template, ["likability"])
    constrained = run_identity(spec(constrain=True).resolved(), judge, template, ["likability"])
    assert "constrain" not in free  # earlier free runs keep their identity (and label)
    assert constrained == {**free, "constrain": True}


def test_the_label_gets_plus_constrained():
    assert spec(constrain=True).preferred_label("m", "t") == "m@t+constrained"
    assert spec(constrain=True, variant="explain").preferred_label("m", "t") == "m@t+explain+constrained"
    assert spec(constrain=True, label="{model}@dhp").preferred_label("m", "t") == "m@dhp+constrained"
    assert spec().preferred_label("m", "t") == "m@t"


def test_free_and_constrained_runs_sit_side_by_side_and_never_share_an_answer(tmp_path, items):
    judge = GrammarJudge()
    with Store(tmp_path / "s.sqlite") as store:
        free = run_spec(spec(), items, store, backend=judge)
        constrained = run_spec(spec(constrain=True), items, store, backend=judge)
        again = run_spec(spec(constrain=True), items, store, backend=judge)
        ratings = store.ratings()
    assert free.rater == "g@chiang-lee-story" and constrained.rater == "g@chiang-lee-story+constrained"
    assert constrained.calls_made == free.calls_made == 12 and constrained.cache_hits == 0  # new keys
    assert again.calls_made == 0 and again.already_done == again.total  # resumes as any run
    by_rater = ratings.groupby("rater")["score"].agg(set).to_dict()
    assert by_rater == {"g@chiang-lee-story": {5.0}, "g@chiang-lee-story+constrained": {3.0}}
    formats = {r.answer_format for r in judge.requests}
    assert None in formats and any(f is not None and (f.low, f.high) == (1, 5) for f in formats)


def test_the_ledger_key_of_a_free_call_is_unchanged_and_a_constrained_one_differs(tmp_path, items):
    with Store(tmp_path / "s.sqlite") as store:
        free = Runner(GrammarJudge(), store, spec()).plan(items)
        constrained = Runner(GrammarJudge(), store, spec(constrain=True)).plan(items)
    free_keys = [c.key for c in free.calls]
    assert set(free_keys).isdisjoint(c.key for c in constrained.calls)
    assert all("answer_format" not in c.extra for c in free.calls)
    assert all(c.extra["answer_format"]["kind"] == "rating" for c in constrained.calls)
    assert all(c.request.answer_format is None for c in free.calls)


def test_log_probability_scoring_with_constrain_is_one_line():
    with pytest.raises(JudgelabError, match="--constrain constrains generated answers"):
        RunSpec(judge="openai:m", score="logprob", constrain=True)
    with pytest.raises(JudgelabError, match="use --score parsed with --constrain"):
        RunSpec(judge="local", constrain=True)  # the embedded judge's default is logprob
    with pytest.raises(JudgelabError, match="use --score parsed with --constrain"):
        spec(constrain=True).model_copy(update={"score": "auto"}).resolved("local")  # a backend given directly


@pytest.mark.parametrize("flags", [["--judge", "local"], ["--judge", "openai:m@http://127.0.0.1:9/v1", "--score", "logprob"]])
def test_rate_constrain_with_log_probability_scoring_is_one_line_and_writes_nothing(tmp_path, flags):
    items = write_items(tmp_path / "items.jsonl", 2)
    result = run_cli("rate", "--items", str(items), *flags, "--constrain", "--out", str(tmp_path / "out"), "--quiet")
    one_line_error(result, "use --score parsed with --constrain")
    assert not (tmp_path / "out").exists()


def test_a_judge_without_a_mechanism_is_refused_before_any_work(tmp_path, items):
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(CapabilityError, match="cannot constrain its answers"):
            Runner(ScriptedTestJudge({"default": "4"}), store, spec(constrain=True))
        assert store.ratings().empty and not store.runs()


def test_rate_constrain_on_the_scripted_judge_is_one_line_and_writes_nothing(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "4"}))
    items = write_items(tmp_path / "items.jsonl", 2)
    out = tmp_path / "out"
    result = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--score", "parsed",
                     "--constrain", "--out", str(out), "--quiet")
    one_line_error(result, "cannot constrain")
    assert not (out / "ratings.csv").exists()


def test_the_request_body_carries_the_json_schema_and_so_does_a_batch_line():
    from judgelab.models.backends.openai_compatible import OpenAIBackend
    from judgelab.run.plan import answer_format

    backend = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="k")
    fmt = answer_format(load_template("chiang-lee-story"), "likability")
    request = JudgeRequest((("user", "Rate it."),), Sampling(), answer_format=fmt)
    path, body = backend.request_body(request)
    assert path == "/v1/chat/completions"
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "rating", "strict": True, "schema": {
        "type": "object", "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}}, "required": ["score"],
        "additionalProperties": False}}}
    assert backend.batch_request(request) == (path, body)
    assert "response_format" not in backend.request_body(JudgeRequest((("user", "Rate it."),), Sampling()))[1]
    completion = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key="k", style="completion")
    with pytest.raises(CapabilityError, match="cannot constrain"):
        completion.check(request)
    asyncio.run(backend.aclose())
    asyncio.run(completion.aclose())


def test_the_stub_answers_json_and_every_answer_is_parsed(tmp_path, stub_factory):
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 4)
    out = tmp_path / "out"
    common = ["rate", "--items", str(items), "--judge", f"openai:m@{stub.base_url}", "--samples", "2",
              "--out", str(out), "--quiet", "--all-runs"]
    assert run_cli(*common).returncode == 0
    result = run_cli(*common, "--constrain")
    assert result.returncode == 0, result.stderr
    import pandas as pd

    ratings = pd.read_csv(out / "ratings.csv")
    constrained = ratings[ratings["rater"] == "m@chiang-lee-story+constrained"]
    free = ratings[ratings["rater"] == "m@chiang-lee-story"]
    assert len(constrained) == len(free) == 32
    assert (constrained["status"] == "ok").all()
    raw = constrained["raw"].map(json.loads)
    assert (raw.map(lambda d: float(d["score"])) == constrained["score"]).all()  # the JSON's value is the rating
    assert set(constrained["score"]) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert not free["raw"].str.startswith("{").any()

    audit = run_cli("audit", str(out / "ratings.csv"), "--format", "csv", "--out", str(tmp_path / "audit"))
    assert audit.returncode == 0, audit.stderr
    shift = pd.read_csv(tmp_path / "audit" / "constrained_shift.csv")
    assert list(shift["criterion"]) == ["cohesiveness", "grammaticality", "likability", "relevance", "all"]
    assert (shift["n"][:4] == 4).all() and shift["n"].iloc[-1] == 16
    assert (shift["failed_second"] == 0).all()
    assert "rates" in audit.stderr and "bias skipped" in audit.stderr


class JsonJudge(Backend):
    """A judge that answers every constrained call with the first value of each field of its schema."""

    kind, model_id = "json-test", "j"
    capabilities = Capabilities(max_n=1, constrain="json_schema")

    async def _complete(self, request):
        schema = request.answer_format.json_schema()
        answer = {name: prop["enum"][-1] for name, prop in schema["properties"].items()}
        return JudgeResponse([Choice(json.dumps(answer), None, "stop")])


@pytest.mark.parametrize("template, extra, want", [
    ("nle-esnli", {"premise": "p", "hypothesis": "h", "relationship": "neutral"},
     {"informativeness": 7.0, "clarity": 7.0}),
    ("nle-esnli-pairwise", {k: {"premise": "p", "hypothesis": "h", "relationship": "neutral", "text": "t"}
                            for k in ("first", "second")}, None),
])
def test_json_answers_of_multi_metric_and_comparison_templates_are_read_field_by_field(tmp_path, template, extra, want):
    from judgelab.datasets.items import Item

    tpl = load_template(template)
    fields = {f: "x" for c in tpl.criteria for f in tpl.required_fields(c)} | extra
    items = [Item("a", "An explanation.", extra=fields)]
    with Store(tmp_path / "s.sqlite") as store:
        stats = run_spec(RunSpec(judge="openai:m", template=template, samples=1, score="parsed", constrain=True), items,
                         store, backend=JsonJudge())
        ratings = store.ratings()
    assert stats.statuses == {"ok": len(ratings)} and len(ratings) > 0
    if want is not None:
        assert ratings.set_index("criterion")["score"].to_dict() == want
    else:  # the last enum value is "Neutral": 0
        assert set(ratings["score"]) == {0.0}


def test_a_run_file_and_the_flags_plan_the_same_constrained_run(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    judge = "openai:m@http://127.0.0.1:9/v1"
    (tmp_path / "run.yaml").write_text(f"items: items.jsonl\njudge: {judge}\nscore: parsed\nconstrain: true\n"
                                       "samples: 1\nout: out\n")
    from_file = run_cli("run", str(tmp_path / "run.yaml"), "--dry-run")
    from_flags = run_cli("rate", "--items", str(items), "--judge", judge, "--score", "parsed", "--constrain",
                         "--samples", "1", "--out", str(tmp_path / "out"), "--dry-run")
    assert from_file.returncode == from_flags.returncode == 0, (from_file.stderr, from_flags.stderr)
    line = next(l for l in from_file.stdout.splitlines() if l.startswith("rating:"))
    assert "as m@chiang-lee-story+constrained: 8 calls" in line
    assert line in from_flags.stdout
