"""The ledger's calls as the report reads them: requests and responses by key, their messages, and
the next-token distribution where a score was read (for the item browser and "What ran")."""
from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Any, Callable, Iterable

__all__ = ["CallCache", "messages_of", "distribution", "parse_attempts", "TOP_TOKENS"]

TOP_TOKENS = 10


@lru_cache(maxsize=64)
def _scale_of(template: str | None) -> tuple[float, float]:
    """The rating scale of a shipped or file template (1–5 when it cannot be loaded)."""
    if template:
        try:
            from judgelab.prompts import load_template

            return tuple(load_template(template).scale)  # type: ignore[return-value]
        except Exception:  # noqa: BLE001 - a template of another version or a DHP task's own template
            pass
    return (1.0, 5.0)


def parse_attempts(value: Any) -> list[dict[str, Any]]:
    """The attempts of a judgment (its ``attempts`` JSON or list); [] when absent or unreadable."""
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value:
        try:
            parsed = json.loads(value)
            return parsed if isinstance(parsed, list) else []
        except json.JSONDecodeError:
            return []
    return []


class CallCache:
    """The ledger's requests and responses (key → JSON texts).

    ``request(key)`` is a slim, cached summary of a request (its ``messages`` as a tuple,
    ``n`` and ``score_cue``), so that 100,000 judgments do not keep 100,000 parsed requests
    in memory; ``response(key)`` parses on demand (the last one is remembered, as the
    samples of one call ask for it in turn).

    Given ``fetch`` (keys → that dict, e.g. :meth:`judgelab.report.folder.StoreReader.calls`) and the ``keys``
    it may be asked for (``None``: any key), the calls are read from the store as they are needed: :meth:`load` reads a block of
    keys and lets the previous block go (the item cards ask block by block), and a key outside the block is
    read alone.
    """

    def __init__(self, calls: dict[str, tuple[str, str]] | None = None,
                 fetch: Callable[[list[str]], dict[str, tuple[str, str]]] | None = None,
                 keys: Iterable[str] | None = ()) -> None:
        self._raw = calls or {}
        self._fetch = fetch
        #: None: any key may be asked for (read from the store when asked; no set of every key is held)
        self._keys: set[str] | None = (None if keys is None else set(keys)) if fetch is not None else set(self._raw)
        self._req: dict[str, dict[str, Any] | None] = {}
        self._last: tuple[str | None, dict[str, Any] | None] = (None, None)

    def __len__(self) -> int:
        return 1 if self._keys is None else len(self._keys)  # any key: not empty

    def __contains__(self, key: object) -> bool:
        return self._keys is None or key in self._keys

    def load(self, keys: Iterable[str]) -> None:
        """Read the calls of ``keys`` from the store at once, in place of the block read before (no-op without
        ``fetch``)."""
        if self._fetch is not None:
            self._raw = self._fetch(sorted({k for k in keys if k in self}))
            self._req = {}

    def _has(self, key: str | None) -> bool:
        if not key or key not in self:
            return False
        if key not in self._raw and self._fetch is not None:
            self._raw.update(self._fetch([key]))
        return key in self._raw

    def request(self, key: str | None) -> dict[str, Any] | None:
        """``{"messages": ((role, content), …) or None, "n": int, "score_cue": str or None}`` of a stored request."""
        if not self._has(key):
            return None
        assert key is not None
        if key not in self._req:
            try:
                full = json.loads(self._raw[key][0])
            except json.JSONDecodeError:
                full = None
            if not isinstance(full, dict):
                self._req[key] = None
            else:
                msgs = messages_of(full)
                self._req[key] = {"messages": None if msgs is None else tuple(msgs), "n": full.get("n"),
                                  "score_cue": full.get("score_cue")}
        return self._req[key]

    def messages(self, key: str | None) -> tuple[tuple[str, str], ...] | None:
        """The (role, content) messages of the stored request ``key``."""
        request = self.request(key)
        return None if request is None else request["messages"]

    def has_tokens(self, key: str | None) -> bool:
        """Whether the stored response carries per-token log-probabilities (read without parsing it)."""
        if not self._has(key):
            return False
        assert key is not None
        text = self._raw[key][1]
        return '"tokens": [' in text or '"tokens":[' in text

    def response(self, key: str | None) -> dict[str, Any] | None:
        """The stored response of ``key``, parsed."""
        if not self._has(key):
            return None
        assert key is not None
        if self._last[0] != key:
            try:
                parsed = json.loads(self._raw[key][1])
            except json.JSONDecodeError:
                parsed = None
            self._last = (key, parsed if isinstance(parsed, dict) else None)
        return self._last[1]


def messages_of(request: dict[str, Any] | None) -> list[tuple[str, str]] | None:
    """The (role, content) messages of a stored request."""
    if not request or not isinstance(request.get("messages"), (list, tuple)):
        return None
    out = []
    for m in request["messages"]:
        if isinstance(m, dict):
            out.append((str(m.get("role", "")), str(m.get("content", ""))))
        elif isinstance(m, (list, tuple)) and len(m) == 2:
            out.append((str(m[0]), str(m[1])))
    return out


def _choice(request: dict[str, Any] | None, response: dict[str, Any] | None, sample: int) -> dict[str, Any] | None:
    if not response or not isinstance(response.get("choices"), list):
        return None
    choices = response["choices"]
    index = sample if request and int(request.get("n") or 1) > 1 else 0
    return choices[index] if 0 <= index < len(choices) else None


def distribution(request: dict[str, Any] | None, response: dict[str, Any] | None, sample: int, text: str | None,
                 template: str | None) -> list[list[Any]] | None:
    """The next-token distribution where the score was read: the cue's (score mode) or the rating token's."""
    choice = _choice(request, response, sample)
    if not choice or not choice.get("tokens"):
        return None
    tokens = choice["tokens"]
    index: int | None = None
    if request and request.get("score_cue") is not None:
        index = 0
    else:
        from judgelab.logprob_score import rating_token_index
        from judgelab.parse import parse_judgment

        try:
            parsed = parse_judgment(text or choice.get("text") or "", _scale_of(template))
            index = rating_token_index([tuple(t) for t in tokens], choice.get("text") or "", parsed.start)
        except Exception:  # noqa: BLE001 - a malformed token list: no distribution
            index = None
    if index is None or index >= len(tokens):
        return None
    token = tokens[index]
    alternatives = token[2] if len(token) > 2 and isinstance(token[2], dict) else {}
    if not alternatives and len(token) > 1:
        alternatives = {token[0]: token[1]}
    probs: list[list] = []
    for tok, logprob in alternatives.items():
        try:
            p = math.exp(float(logprob))
        except (TypeError, ValueError, OverflowError):
            continue
        probs.append([str(tok), round(p, 5)])
    probs.sort(key=lambda tp: -float(tp[1]))
    return probs[:TOP_TOKENS] or None
