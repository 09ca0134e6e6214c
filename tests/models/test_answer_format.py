"""Constrained answers (``--constrain``): the grammar and the JSON schema of every shipped template
admit only answers the parse rules read as a valid rating, and llama.cpp compiles each grammar."""
from __future__ import annotations

import itertools
import json

import pytest

from judgelab.errors import BackendError
from judgelab.models.answer_format import AnswerFormat
from judgelab.parse import parse_comparison, parse_judgment, parse_metric, parse_structured
from judgelab.prompts import available_templates, load_template
from judgelab.run.plan import answer_format

# every shipped template with a constrained format (pairwise verdict templates have none: --constrain is refused)
FORMATS = sorted({answer_format(load_template(name), c) for name in available_templates()
                  if load_template(name).answer != "preference" for c in load_template(name).criteria}, key=repr)
PREFIXES = ["", " ", "\n", "  ", " \n", "\n\n"]  # [ \n]{0,2}


def sentences(fmt: AnswerFormat):
    """Every answer the grammar admits (it is finite), with the rating(s) it stands for."""
    if fmt.kind == "comparison":
        for prefix, word in itertools.product(PREFIXES, ["Yes", "No", "Neutral"]):
            yield prefix + word, {"Yes": 1.0, "No": -1.0, "Neutral": 0.0}[word]
        return
    combos = itertools.product(fmt.points, repeat=max(1, len(fmt.metrics)))
    for prefix, combo in itertools.product(PREFIXES, combos):
        if fmt.metrics:
            yield prefix + "\n".join(f"{m}: {v}" for m, v in zip(fmt.metrics, combo)), dict(zip(fmt.metrics, combo))
        else:
            yield prefix + str(combo[0]), float(combo[0])


def test_the_shipped_templates_have_rating_metric_and_comparison_formats():
    kinds = {(f.kind, bool(f.metrics)) for f in FORMATS}
    assert kinds == {("rating", False), ("rating", True), ("comparison", False)}
    assert {(f.low, f.high) for f in FORMATS if f.kind == "rating"} >= {(1, 5), (1, 3), (0, 1), (1, 7)}


@pytest.mark.parametrize("fmt", FORMATS, ids=repr)
def test_every_sentence_of_the_grammar_parses_to_its_rating(fmt):
    lines = fmt.gbnf().splitlines()
    assert lines[0].startswith("root ::= [ \\n]{0,2} ")
    for text, want in sentences(fmt):
        if fmt.kind == "comparison":
            assert parse_comparison(text).score == want, text
        elif fmt.metrics:
            for metric, value in want.items():
                assert parse_metric(text, metric, (fmt.low, fmt.high)).score == value, text
        else:
            result = parse_judgment(text, (fmt.low, fmt.high))
            assert result.ok and result.score == want, text


def test_the_grammar_names_exactly_the_scale_points():
    gbnf = AnswerFormat("rating", 1, 10).gbnf()
    assert 'score ::= "10" | "9" | "8" | "7" | "6" | "5" | "4" | "3" | "2" | "1"' in gbnf
    assert "0" not in gbnf.split("score ::=")[1].replace("10", "")
    nle = answer_format(load_template("nle-esnli"), "quality").gbnf()
    assert 'root ::= [ \\n]{0,2} "informativeness: " score "\\n" "clarity: " score' in nle


@pytest.mark.parametrize("fmt", FORMATS, ids=repr)
def test_every_answer_of_the_json_schema_parses(fmt):
    schema = fmt.response_format()
    assert schema["type"] == "json_schema" and schema["json_schema"]["strict"] is True
    props = schema["json_schema"]["schema"]["properties"]
    assert schema["json_schema"]["schema"]["required"] == list(props)
    assert schema["json_schema"]["schema"]["additionalProperties"] is False
    choices = [props[name]["enum"] for name in props]
    for combo in itertools.product(*choices):
        text = json.dumps(dict(zip(props, combo)))
        for name, value in zip(props, combo):
            result = parse_structured(text, name, None if fmt.kind == "comparison" else (fmt.low, fmt.high))
            assert result is not None and result.ok, text
            if fmt.kind == "rating":
                assert result.score == value


def test_a_json_answer_off_the_schema_is_not_a_rating():
    assert parse_structured('{"score": 6}', "score", (1, 5)).status == "out_of_range"
    assert parse_structured('{"score": "4"}', "score", (1, 5)).status == "no_rating"
    assert parse_structured('{"mark": 4}', "score", (1, 5)).status == "no_rating"
    assert parse_structured('{"score": true}', "score", (1, 5)).status == "no_rating"
    assert parse_structured("4", "score", (1, 5)) is None  # not JSON: the free rules read it


@pytest.fixture(scope="module")
def vocab():
    """The embedded judge's vocabulary only (no weights: about a second)."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from judgelab.models.backends.local_model import default_model_path

    return llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)


def test_llama_cpp_compiles_every_grammar(vocab):
    from judgelab.models.backends.local import compile_grammar

    for fmt in FORMATS:
        grammar = compile_grammar(fmt.gbnf(), vocab)
        assert grammar._grammar == fmt.gbnf()


def test_llama_cpp_rejects_a_broken_grammar_in_one_line(vocab):
    from judgelab.models.backends.local import compile_grammar

    with pytest.raises(BackendError, match="does not accept the answer grammar"):
        compile_grammar('root ::= score', vocab)  # an undefined rule
