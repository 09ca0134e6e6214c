"""Canonical JSON and its SHA-256: the one way judgelab names a request, a run's settings or a template.

Sorted keys, compact separators, UTF-8 kept (``ensure_ascii=False``): equal values give equal
text whatever their key order, so equal requests get equal ledger keys and equal settings the
same rater label.
"""
from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

__all__ = ["canonical_json", "sha256_hex", "keyed_json"]

#: ``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))`` builds this
#: encoder anew on every call (a fifth of a ledger key's cost); one instance gives the same text.
_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
#: ``JSONEncoder.encode`` still makes its C encoder anew per value (half of a request's encoding);
#: this is that C encoder made once per thread, with its circular-reference check kept.
_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_local = threading.local()


def _encoder() -> Any:
    made = getattr(_local, "encoder", None)
    if made is None:
        markers: dict[int, Any] = {}
        made = _local.encoder = (markers, _C_ENCODER(markers, _CANONICAL.default, json.encoder.encode_basestring, None,
                                                    ":", ",", True, False, True))
    return made


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``.

    Example:
        >>> canonical_json({"b": 1, "a": [1, "é"]})
        '{"a":[1,"é"],"b":1}'
    """
    if _C_ENCODER is None or isinstance(value, str):
        return _CANONICAL.encode(value)
    markers, encode = _encoder()
    try:
        return "".join(encode(value, 0))
    except BaseException:
        markers.clear()  # an encoding that failed half way leaves its containers marked
        raise


def sha256_hex(value: Any) -> str:
    """64 hex digits: the SHA-256 of :func:`canonical_json` of ``value``.

    Example:
        >>> sha256_hex({"b": 1, "a": 2}) == sha256_hex({"a": 2, "b": 1})
        True
    """
    return keyed_json(value)[0]


def keyed_json(value: Any) -> tuple[str, str]:
    """``(sha256_hex, canonical_json)`` of ``value``, computing the text once.

    Example:
        >>> keyed_json({"n": 1})[1]
        '{"n":1}'
    """
    text = canonical_json(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), text
