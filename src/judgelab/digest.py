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

__all__ = ["canonical_json", "plain_json", "sha256_hex", "keyed_json", "ReusedEncoder"]

#: The C encoder's maker (``None`` where Python has no C accelerator: then ``JSONEncoder.encode`` is used).
_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)


class ReusedEncoder:
    """``encoder.encode`` (an ``ensure_ascii=False`` encoder without indent) with its C encoder made once
    per thread: ``JSONEncoder.encode`` makes it anew per value (half the cost of encoding a request).
    The circular-reference check is kept; an encoding that fails half way unmarks its containers.

    Example:
        >>> ReusedEncoder(json.JSONEncoder(ensure_ascii=False)).encode({"b": [1, "é"]})
        '{"b": [1, "é"]}'
    """

    def __init__(self, encoder: json.JSONEncoder) -> None:
        if encoder.ensure_ascii or encoder.indent is not None:
            raise ValueError("ReusedEncoder takes an ensure_ascii=False encoder without indent")
        self.encoder: json.JSONEncoder = encoder
        self._local: threading.local = threading.local()

    def _made(self) -> tuple[dict[int, Any], Any]:
        made = getattr(self._local, "made", None)
        if made is None:
            e = self.encoder
            markers: dict[int, Any] = {}
            made = self._local.made = (markers, _C_ENCODER(markers, e.default, json.encoder.encode_basestring, None,
                                                           e.key_separator, e.item_separator, e.sort_keys,
                                                           e.skipkeys, e.allow_nan))
        return made

    def encode(self, value: Any) -> str:
        """The same text as ``self.encoder.encode(value)``."""
        if _C_ENCODER is None or isinstance(value, str) or not self.encoder.check_circular:
            return self.encoder.encode(value)
        markers, encode = self._made()
        try:
            return "".join(encode(value, 0))
        except BaseException:
            markers.clear()
            raise


#: ``json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))``, its encoder made once.
_CANONICAL = ReusedEncoder(json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")))
#: ``json.dumps(value, ensure_ascii=False)``: a stored answer, a judgment's attempts.
_PLAIN = ReusedEncoder(json.JSONEncoder(ensure_ascii=False))


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value``.

    Example:
        >>> canonical_json({"b": 1, "a": [1, "é"]})
        '{"a":[1,"é"],"b":1}'
    """
    return _CANONICAL.encode(value)


def plain_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` (keys in their order, default separators), its encoder made once.

    Example:
        >>> plain_json({"b": 1, "a": "é"})
        '{"b": 1, "a": "é"}'
    """
    return _PLAIN.encode(value)


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
