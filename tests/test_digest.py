"""Canonical JSON: the text every ledger key, prompt key and rater digest is taken over."""
import hashlib
import json

import pytest

from judgelab.digest import ReusedEncoder, canonical_json, keyed_json, plain_json

VALUES = [
    {"b": 1, "a": [1, "é", None, True, False, 1.5, 1e300, -0.0, 10**30]},
    {"judge": {"kind": "openai", "model": "m"}, "messages": [["user", "Rate it.\n\"quoted\" \u2028 \x00 😀"]], "n": 3},
    [], {}, "a plain string", 7, 0.1, None, {"z": {"y": [{"x": "\ud800"}]}}, [[["deep"]]],
]


def _dumps(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("value", VALUES)
def test_canonical_json_is_the_sorted_compact_dumps(value):
    assert canonical_json(value) == _dumps(value)


def test_a_failed_encoding_leaves_the_next_one_right():
    cycle: list = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        canonical_json({"a": [cycle]})
    with pytest.raises(TypeError, match="not JSON serializable"):
        canonical_json({"a": [1, object()]})
    shared = ["x"]  # the same list twice is no cycle: no container stays marked after the failures
    assert canonical_json({"a": shared, "b": shared}) == '{"a":["x"],"b":["x"]}'
    assert keyed_json({"n": 1}) == (hashlib.sha256(b'{"n":1}').hexdigest(), '{"n":1}')


@pytest.mark.parametrize("value", VALUES)
def test_plain_json_is_dumps(value):
    assert plain_json(value) == json.dumps(value, ensure_ascii=False)


def test_a_reused_encoder_refuses_what_it_would_encode_otherwise():
    with pytest.raises(ValueError, match="ensure_ascii=False"):
        ReusedEncoder(json.JSONEncoder())
    with pytest.raises(ValueError, match="indent"):
        ReusedEncoder(json.JSONEncoder(ensure_ascii=False, indent=2))
