"""Defaults once: one sampling and one connection configuration where "not set" is ``None``, merged
in one function (explicit > run file > recipe's own choice > default); the run file builds the spec
from its fields generically; and a run's identity digest is what it was before this design.
"""
from __future__ import annotations

import pytest

from judgelab.errors import JudgelabError
from judgelab.prompts import load_template
from judgelab.recipes.common import recipe_spec
from judgelab.run.identity import identity_digest, run_identity
from judgelab.runfile import RUN_FILE_KEYS, RunFile, load_run_file
from judgelab.settings import (CONNECTION_DEFAULTS, RUN_SAMPLING_DEFAULTS, JudgeOptions, Sampling, SamplingConfig, merge,
                               run_sampling)
from judgelab.spec import RunSpec

JUDGE = {"kind": "openai", "model": "m", "style": "chat", "base_url": "http://127.0.0.1:9/v1"}


def _digest(spec: RunSpec) -> str:
    spec = spec.resolved()
    return identity_digest(run_identity(spec, JUDGE, load_template(spec.template), ["likability"]))


def _run_file(tmp_path, text: str) -> RunFile:
    path = tmp_path / "run.yaml"
    path.write_text("items: i.jsonl\n" + text)
    return load_run_file(path)


# Regression fixture: these digests were computed with the code before sampling and connection
# settings became "not set"-able configurations (judgelab 0.2.0's spec.py, recipes/common.py and
# runfile.py), then written here. A store made then resumes its raters only while they stay equal.
DIGESTS_BEFORE = {
    "runspec_default": "5b91fe592840",
    "runfile_flags_default": "5b91fe592840",
    "runfile_partial_sampling": "97b8139dc477",
    "runfile_seed": "84b0a60e8940",
    "recipe_default": "b17a6e9c9665",
    "recipe_hanna_ep1": "c3fbbccbe0eb",
    "recipe_nle_pairwise_t0": "7b3e6fd41baf",
    "logprob": "aa62aa6c94c9",
}


def _cases(tmp_path) -> dict[str, RunSpec]:
    return {
        "runspec_default": RunSpec(judge="openai:m"),
        "runfile_flags_default": RunFile(items="i.jsonl", judge="openai:m", samples=3).run_specs()[0],
        "runfile_partial_sampling": _run_file(tmp_path, "judge: openai:m@http://127.0.0.1:9/v1\n"
                                              "sampling: {temperature: 0.5}\ntimeout: 30\n").run_specs()[0],
        "runfile_seed": RunFile(items="i.jsonl", judge="openai:m", sampling={"seed": 7, "max_tokens": 64}).run_specs()[0],
        "recipe_default": recipe_spec("chiang-lee-story", "openai:m")[0],
        "recipe_hanna_ep1": recipe_spec("hanna-ep1", "openai:m", max_tokens=32)[0],
        "recipe_nle_pairwise_t0": recipe_spec("chiang-lee-story", "openai:m", samples=1, max_tokens=96, temperature=0.0)[0],
        "logprob": RunSpec(judge="openai:m", score="logprob"),
    }


def test_run_identities_digest_as_before(tmp_path):
    got = {name: _digest(spec) for name, spec in _cases(tmp_path).items()}
    assert got == DIGESTS_BEFORE


def test_the_defaults_and_the_recipes_choices_give_the_same_sampling_as_before(tmp_path):
    cases = _cases(tmp_path)
    assert cases["runspec_default"].sampling == Sampling(temperature=1.0, top_p=0.9, max_tokens=128)
    assert cases["runfile_partial_sampling"].sampling == Sampling(temperature=0.5, top_p=0.9, max_tokens=128)
    assert cases["recipe_default"].sampling.max_tokens == 256  # the recipes' own choice
    assert cases["recipe_nle_pairwise_t0"].sampling == Sampling(temperature=0.0, top_p=0.9, max_tokens=96)
    assert cases["runfile_partial_sampling"].judge.options.for_backend()["timeout"] == 30.0
    assert cases["runspec_default"].judge.options.for_backend()["timeout"] == CONNECTION_DEFAULTS.timeout == 120.0


def test_merge_takes_the_first_set_value_and_zero_is_a_value():
    explicit, run_file, recipe = SamplingConfig(temperature=0.0), {"temperature": 0.7, "top_p": 0.5}, SamplingConfig(max_tokens=256)
    merged = merge(explicit, run_file, recipe, RUN_SAMPLING_DEFAULTS, into=SamplingConfig)
    assert merged.model_dump() == {"temperature": 0.0, "top_p": 0.5, "max_tokens": 256, "seed": None}
    assert run_sampling(None, SamplingConfig()) == run_sampling()


def test_not_set_is_none_and_bounds_live_in_the_models():
    assert set(SamplingConfig().model_dump().values()) == {None}
    assert {v for k, v in JudgeOptions().model_dump().items()} == {None}
    with pytest.raises(ValueError, match="greater than 0"):
        JudgeOptions(timeout=0)
    with pytest.raises(ValueError, match="less than or equal to 2"):
        SamplingConfig(temperature=2.5)


def test_a_bad_connection_value_on_the_command_line_is_one_line_and_exit_2(tmp_path):
    from conftest import run_cli

    items = tmp_path / "i.jsonl"
    items.write_text('{"id": "1", "text": "a story"}\n')
    result = run_cli("rate", "--items", str(items), "--judge", "openai:m@http://127.0.0.1:9/v1", "--timeout", "0",
                     "--dry-run", "--out", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "invalid value for --timeout" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# RunSpec fields a run file spells another way: the judge is a list of spec strings (``judge``),
# the connection options are flat keys (``CONNECTION_KEYS``), a preferred label is the recipes'.
SPELLED_OTHERWISE = {"judge", "label", "concurrency"}
EXAMPLE_VALUES = {
    "template": "hanna-ep2", "criteria": ["likability"], "variant": "explain", "samples": 2,
    "sampling": {"temperature": 0.3}, "score": "parsed", "query_mode": "conversation", "max_refusal_retries": 1,
    "top_logprobs": 5, "constrain": True, "rater": "me", "execution": "batch", "batch": {"max_requests": 10},
}


def test_every_spec_field_is_accepted_by_the_run_file_loader(tmp_path):
    """A field added to the shared settings works in run files with no edit to runfile.py; a field
    added to RunSpec alone fails here until a run file can say it."""
    import yaml

    fields = set(RunSpec.model_fields) - SPELLED_OTHERWISE
    assert fields == set(EXAMPLE_VALUES), "give each new RunSpec field an example value here"
    assert fields <= set(RUN_FILE_KEYS)
    doc = {"items": "i.jsonl", "judge": "openai:m@http://127.0.0.1:9/v1", **EXAMPLE_VALUES}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(doc))
    spec = load_run_file(tmp_path / "run.yaml").run_specs()[0]
    default = RunSpec(judge="openai:m")
    for name in fields:
        assert getattr(spec, name) != getattr(default, name), name  # the file's value arrived
    assert spec.sampling.temperature == 0.3 and spec.sampling.top_p == 0.9 and spec.batch.max_requests == 10


def test_an_unknown_sampling_key_in_a_run_file_is_one_line(tmp_path):
    with pytest.raises(JudgelabError, match="unknown key 'sampling.temp'"):
        _run_file(tmp_path, "judge: openai:m\nsampling: {temp: 0.5}\n")


def test_the_help_texts_say_the_defaults_stated_in_settings():
    """The command's start-up imports no pydantic, so the help texts spell the defaults out: they
    must say the values settings.py states."""
    import inspect

    from judgelab.cli import common
    from judgelab.cli.rating import rate

    d = CONNECTION_DEFAULTS
    assert f"default {d.concurrency})" in common.ConcurrencyOpt.help
    assert f"(default {d.max_retries})" in common.RetriesOpt.help
    assert f"default {d.timeout:g})" in common.TimeoutOpt.help
    assert f"default {d.style})" in common.StyleOpt.help
    params = inspect.signature(rate).parameters
    s = RUN_SAMPLING_DEFAULTS
    assert f"(default {s.temperature}" in params["temperature"].default.help
    assert f"(default {s.top_p})" in params["top_p"].default.help
    assert f"(default {s.max_tokens};" in params["max_tokens"].default.help
