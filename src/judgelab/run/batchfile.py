"""Offline batch files: a run's pending calls as OpenAI batch-input JSONL, and the answers read back.

The format is OpenAI's Batch API format, which ``vllm run-batch`` reads and writes too — for the
URLs it serves: ``/v1/chat/completions``, ``/v1/embeddings``, ``/score`` and ``/rerank``
(:data:`VLLM_RUN_BATCH_URLS`, from vLLM's ``vllm/entrypoints/openai/run_batch.py``); a
``/v1/completions`` line (a ``--style completion`` judge) is for OpenAI's Batch API only:

* input, one request per line: ``{"custom_id": KEY, "method": "POST", "url":
  "/v1/chat/completions", "body": {...}}`` — ``custom_id`` is the call's ledger key and ``body``
  is exactly what the live call would send (:meth:`~judgelab.models.base.Backend.batch_request`);
* output, one answer per line: ``{"id", "custom_id", "response": {"status_code", "body"},
  "error"}``.

:func:`~judgelab.run.batch_export.export_batch` writes the calls a live run would send now
(:func:`~judgelab.run.pending.pending_calls`), split into files of at most ``max_requests`` lines and
``max_bytes`` bytes (:func:`split_lines`), and records them in the store's ``batches`` table first.
:func:`~judgelab.run.batch_import.import_batch` checks
the answers and records each in the call ledger exactly as a live answer (key, canonical
request, answer), so the same ``rate`` command afterwards makes no call for them and records the
judgments a live run would. :func:`output_line` and :func:`record_output` read and record
answers for it and for provider batches (:mod:`judgelab.run.provider_batch`).
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from judgelab.errors import JudgelabError

if TYPE_CHECKING:
    from judgelab.models.base import Backend
    from judgelab.run.pending import PendingCall
    from judgelab.store import Store

__all__ = ["OutputLine", "batch_line", "split_lines", "output_line",
           "read_output_lines", "record_output", "MAX_REQUESTS", "MAX_BYTES", "new_batch_id", "VLLM_RUN_BATCH_URLS"]

#: OpenAI's limits per batch-input file (requests, bytes); vLLM has none, the same split does no harm.
MAX_REQUESTS = 50_000
MAX_BYTES = 200 * 1024 * 1024

#: The request URLs ``vllm run-batch`` answers (``BatchRequestInput`` and ``create_request_task`` in vLLM's
#: ``vllm/entrypoints/openai/run_batch.py``); a line with another URL fails to validate there.
VLLM_RUN_BATCH_URLS = ("/v1/chat/completions", "/v1/embeddings", "/score", "/rerank")


def new_batch_id() -> str:
    """judgelab's id of a new batch: ``b-`` and 12 random hex digits."""
    return "b-" + uuid.uuid4().hex[:12]


def batch_line(backend: "Backend", call: "PendingCall") -> str:
    """One batch-input line: ``custom_id`` = the ledger key, ``body`` = the live request's body."""
    url, body = backend.batch_request(call.request)
    return json.dumps({"custom_id": call.key, "method": "POST", "url": url, "body": body}, ensure_ascii=False)


def split_lines(lines: list[str], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list[list[str]]:
    """Lines in order, cut into chunks of at most ``max_requests`` lines and ``max_bytes`` bytes.

    Raises:
        JudgelabError: one line alone is larger than ``max_bytes``.

    Example:
        >>> [len(c) for c in split_lines(["a" * 9] * 5, max_requests=2, max_bytes=100)]
        [2, 2, 1]
        >>> [len(c) for c in split_lines(["a" * 9] * 5, max_requests=10, max_bytes=25)]
        [2, 2, 1]
    """
    if max_requests < 1 or max_bytes < 1:
        raise JudgelabError("batch limits must be positive")
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        if n > max_bytes:
            raise JudgelabError(f"one batch request is {n} bytes, more than the limit of {max_bytes} bytes per file")
        if current and (len(current) >= max_requests or size + n > max_bytes):
            chunks.append(current)
            current, size = [], 0
        current.append(line)
        size += n
    if current:
        chunks.append(current)
    return chunks


# -- answers ---------------------------------------------------------------------------------
#: Error codes of a batch-output line whose request was never run (OpenAI's error file).
NOT_RUN = ("batch_expired", "batch_cancelled")


@dataclass(frozen=True)
class OutputLine:
    """One line of a batch-output (or error) file.

    Attributes:
        custom_id: the ledger key.
        body: the answer's JSON body (``None`` when the request failed).
        error: why it failed ("" when answered).
        missed: the request was not run at all (its batch expired or was cancelled first), so no
            answer came back failed for it.
    """

    custom_id: str
    body: Any
    error: str = ""
    missed: bool = field(default=False, repr=False)


def output_line(entry: dict[str, Any]) -> OutputLine:
    """One batch-output line's JSON object (with a string ``custom_id``) as an :class:`OutputLine`.

    A line is answered when it has no ``error``, its ``response.status_code`` is 200 and its
    ``response.body`` is an object; otherwise ``error`` says why (the error's message or code,
    ``HTTP <status>`` and the body's error message, or ``no answer``), and ``missed`` whether the
    request was never run (OpenAI's ``batch_expired``, ``batch_cancelled``).

    Example:
        >>> output_line({"custom_id": "k", "response": {"status_code": 429, "body": None}, "error": None})
        OutputLine(custom_id='k', body=None, error='HTTP 429')
    """
    found = entry.get("response")
    response: dict[str, Any] = found if isinstance(found, dict) else {}
    error = entry.get("error")
    status = response.get("status_code")
    body = response.get("body")
    if not error and status == 200 and isinstance(body, dict):
        return OutputLine(entry["custom_id"], body)
    if isinstance(error, dict):
        why = str(error.get("message") or error.get("code") or error)
    elif error:
        why = str(error)
    else:
        why = f"HTTP {status}" if status is not None else "no answer"
        if isinstance(body, dict) and isinstance(body.get("error"), dict):  # the server's own words
            why += f" {body['error'].get('message', '')}".rstrip()
    code = error.get("code") if isinstance(error, dict) else None
    return OutputLine(entry["custom_id"], None, why, missed=code in NOT_RUN)


def read_output_lines(text: str, where: str) -> list[OutputLine]:
    """Parse a batch-output file's text (OpenAI's and vLLM's shapes; results and error files).

    Raises:
        JudgelabError: a line that is not JSON or has no ``custom_id`` (naming the file and line).

    Example:
        >>> read_output_lines('{"custom_id": "k", "response": {"status_code": 200, "body": {"x": 1}}, "error": null}\\n', "f")
        [OutputLine(custom_id='k', body={'x': 1}, error='', missed=False)]
    """
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise JudgelabError(f"{where} line {number}: not JSON (a batch-output file has one JSON object per line)") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
            raise JudgelabError(f"{where} line {number}: no custom_id; not a batch-output line")
        out.append(output_line(entry))
    return out


def record_output(store: "Store", lines: Iterable[OutputLine], requests: dict[str, str], reader: Any) -> tuple[
        dict[str, Any], dict[str, str]]:
    """Record answered lines in the ledger (key, canonical request, answer), as a live answer is recorded.

    Args:
        store: the store; lines: the output lines; requests: key → canonical request JSON;
        reader: ``body -> JudgeResponse`` (the judge's reader of live answers).

    Returns:
        ``({key: JudgeResponse}, {key: why it failed})``; keys already in the ledger are answered
        from it (nothing is written twice).
    """
    from judgelab.models.base import JudgeResponse

    answers: dict[str, Any] = {}
    failures: dict[str, str] = {}
    rows = []
    known = store.call_keys()
    for line in lines:
        key = line.custom_id
        if line.body is None:
            if key not in answers:
                failures[key] = line.error
            continue
        try:
            response = reader(line.body)
        except JudgelabError as exc:
            failures.setdefault(key, str(exc))
            continue
        if not response.choices:
            failures.setdefault(key, "an answer without choices")
            continue
        failures.pop(key, None)
        if key in known:
            stored = store.get_call(key)
            if stored is not None:
                answers[key] = JudgeResponse.from_json(stored)
                continue
        answers[key] = response
        known.add(key)
        rows.append((key, requests[key], json.dumps(response.to_json(), ensure_ascii=False)))
    if rows:
        store.put(calls=rows)
    return answers, failures
