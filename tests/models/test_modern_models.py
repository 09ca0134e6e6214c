"""Judging with today's models: reasoning models (max_completion_tokens, reasoning text), truncated
answers, the log-probability of the rating's own token, endpoints that answer the wrong thing."""
from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import judgelab_cmd, write_items
from judgelab.models.base import Backend, Capabilities, Choice, JudgeResponse
from judgelab.logprob_score import rating_token_index
from judgelab.parse import ParseResult, parse_judgment, truncation_checked
from judgelab.run import RunSpec, run_spec
from judgelab.store import Store


def rate_cmd(tmp_path, stub, *extra):
    items = write_items(tmp_path / "items.jsonl", 3)
    return judgelab_cmd("rate", "--items", str(items), "--criteria", "grammaticality", "--judge", "openai:o",
                        "--base-url", stub.base_url, "--quiet", "--out", str(tmp_path / "out"), *extra)


def test_a_reasoning_model_gets_max_completion_tokens_and_its_reasoning_is_kept(tmp_path, stub_factory):
    stub = stub_factory(mode="reasoning-model")
    result = rate_cmd(tmp_path, stub)
    assert result.returncode == 0, result.stderr
    assert "switched to max_completion_tokens" in result.stdout
    manifest = json.loads((tmp_path / "out" / "run.json").read_text())
    assert manifest["runs"][0]["max_tokens_param"] == "max_completion_tokens"
    db = sqlite3.connect(tmp_path / "out" / "store.sqlite")
    responses = [json.loads(r[0]) for r in db.execute("SELECT response FROM calls")]
    assert responses and all(c["reasoning"] == "The text is clear; a 4 fits." for r in responses for c in r["choices"])
    attempts = [json.loads(r[0]) for r in db.execute("SELECT attempts FROM judgments")]
    assert all(a[0]["reasoning"] for a in attempts)


def test_max_completion_tokens_can_be_chosen_up_front(tmp_path, stub_factory):
    stub = stub_factory(mode="reasoning-model")
    result = rate_cmd(tmp_path, stub, "--max-tokens-param", "max_completion_tokens")
    assert result.returncode == 0, result.stderr
    assert "switched" not in result.stdout


@pytest.mark.parametrize("mode,needle", [("html", "not an OpenAI chat completion"), ("wrong-shape", "not an OpenAI chat completion")])
def test_an_endpoint_answering_something_else_is_one_line(tmp_path, stub_factory, mode, needle):
    stub = stub_factory(mode=mode)
    result = rate_cmd(tmp_path, stub, "--max-retries", "0")
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.stderr


def test_truncation_rule():
    cut = "The story has 3 characters and the plot develops over"
    assert truncation_checked(parse_judgment(cut), "length").status == "truncated"
    assert truncation_checked(parse_judgment(cut), "stop").status == "ok"  # not cut: the first-number rule applies
    explicit = "I would rate it a 4. The story has 3 characters and"
    assert truncation_checked(parse_judgment(explicit), "length") == parse_judgment(explicit)
    assert truncation_checked(parse_judgment("The plot develops over"), "length").status == "truncated"
    assert truncation_checked(ParseResult(None, "refusal"), "length").status == "refusal"


def test_rating_token_is_found_by_position():
    text = "Of the 4 criteria, I rate it 3."
    tokens = [(t, -0.1, {}) for t in ["Of", " the", " 4", " criteria", ",", " I", " rate", " it", " 3", "."]]
    parsed = parse_judgment(text)
    assert parsed.score == 3 and tokens[rating_token_index(tokens, text, parsed.start)][0] == " 3"
    assert rating_token_index(tokens[:-1], text, parsed.start) is None  # tokens that do not spell the text


class _FixedJudge(Backend):
    kind = "fixed-test-double"
    model_id = "fixed"

    def __init__(self, choice: Choice):
        self.capabilities = Capabilities(max_n=1, top_logprobs=5)
        self._choice = choice

    async def _complete(self, request):
        return JudgeResponse([self._choice], prompt_tokens=10, completion_tokens=5)


def _one(choice, tmp_path, **spec):
    from judgelab.datasets.items import load_items

    items = load_items(write_items(tmp_path / "i.jsonl", 1))
    with Store(tmp_path / "s.sqlite") as store:
        run_spec(RunSpec(criteria=["grammaticality"], samples=1, **spec), items, store, backend=_FixedJudge(choice))
        return store.ratings().iloc[0]


def test_a_cut_off_answer_is_truncated_not_scored(tmp_path):
    row = _one(Choice("The story has 3 characters and the plot", None, "length"), tmp_path, max_refusal_retries=0)
    import pandas as pd

    assert row["status"] == "truncated" and pd.isna(row["score"])


def test_parsed_mode_reads_the_log_probability_at_the_rating_token(tmp_path):
    text = "Of the 4 criteria, I rate it 3."
    pieces = ["Of", " the", " 4", " criteria", ",", " I", " rate", " it", " 3", "."]
    at_rating = {" 3": -0.2, " 2": -1.9, " 4": -3.0}
    tokens = [(t, -0.1, at_rating if t == " 3" else {" 4": -0.05, " 5": -4.0}) for t in pieces]
    row = _one(Choice(text, tokens, "stop"), tmp_path)
    assert row["score_parsed"] == 3
    import math

    weights = {k.strip(): math.exp(v) for k, v in at_rating.items()}
    expected = sum(int(k) * w for k, w in weights.items()) / sum(weights.values())
    assert row["score_logprob"] == pytest.approx(expected)
