"""A local OpenAI-compatible stub server — a TEST UTILITY, not a judge.

It answers ``/v1/chat/completions`` and ``/v1/completions`` on loopback with a
deterministic rating derived from a hash of the prompt, so runs are reproducible;
it can inject 429 (with ``Retry-After``) and 500 answers at seeded rates, add latency, hang
(accept requests and never answer, for timeouts), answer one request at a time (``--slots 1``:
the others wait their turn, and one whose client gave up is dropped, as llama-cpp-python's server does),
and counts the successful answers per ``X-Judgelab-Request-Key`` (``GET /stats``, or a
JSON-lines log with ``--log``). Used by the tests and ``benchmarks/``.

Run: ``python -m judgelab.testing.openai_stub --port 0`` prints ``PORT <n>`` when ready.

``python -m judgelab.testing.openai_stub run-batch -i IN.jsonl -o OUT.jsonl --model M`` is a
stand-in for ``vllm run-batch``: it answers an OpenAI batch-input file offline with the same
deterministic answers (:func:`answer_batch_file`).
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import sys
import time
from collections import Counter
from typing import Any

__all__ = ["StubState", "serve", "stub_reply", "stub_json_reply", "answer_batch_file", "answer_batch_line",
           "LLAMA_CPP_PYTHON_REJECTS"]


def stub_reply(prompt: str, index: int = 0) -> str:
    """The deterministic answer: a rating phrase with a number 1-5, or a verdict when the prompt names ``[[A]]`` and ``[[B]]``."""
    digest = hashlib.sha256(f"{prompt}|{index}".encode()).digest()
    if "[[A]]" in prompt and "[[B]]" in prompt:  # the verdict is also the fifth word from the end (one-token answers)
        return f"Verdict {'AB'[digest[0] % 2]} after comparing both. [[{'AB'[digest[0] % 2]}]]"
    return f"I would rate it a {1 + digest[0] % 5}. It reads well enough."


def stub_json_reply(prompt: str, schema: dict[str, Any], index: int = 0) -> str:
    """The deterministic answer under a JSON-schema ``response_format``: every property of the schema
    gets one of its ``enum`` values, chosen by a hash of the prompt (as :func:`stub_reply` chooses)."""
    answer: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        values = prop.get("enum") or ([prop.get("minimum", 1)] if prop.get("type") == "integer" else [""])
        digest = hashlib.sha256(f"{prompt}|{index}|{name}".encode()).digest()
        answer[name] = values[digest[0] % len(values)]
    return json.dumps(answer)


#: Behaviours of the stub (``--mode``): an ordinary server; a reasoning model that refuses
#: ``max_tokens`` and sends ``reasoning_content``; a server answering HTML with status 200; a server
#: answering chat requests with completion-shaped bodies; one that never answers; llama-cpp-python's
#: server (0.3.36, measured), which answers one sample whatever ``n`` asks, accepts only ``text`` and
#: ``json_object`` as ``response_format`` (a ``schema`` inside ``json_object`` is enforced) and answers
#: any other with HTTP 500 and its request validation error (:data:`LLAMA_CPP_PYTHON_REJECTS`); a server
#: whose chat answers carry no log-probabilities; one that refuses every ``response_format`` but ``text``
#: (HTTP 400).
MODES = ("normal", "reasoning-model", "html", "wrong-shape", "hang", "llama-cpp-python", "no-chat-logprobs",
         "no-response-format")

#: llama-cpp-python's answer (HTTP 500) to a chat request whose ``response_format`` is a JSON schema:
#: FastAPI's validation error, passed through the server's error handler as an internal error
#: (recorded from llama-cpp-python 0.3.36's server, FastAPI 0.165; only the file's folder changed).
LLAMA_CPP_PYTHON_REJECTS = {"error": {
    "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
               "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
               "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File "
               "\"/opt/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in "
               "create_chat_completion\n    POST /v1/chat/completions",
    "type": "internal_server_error", "param": None, "code": None}}


class StubState:
    """The stub server's settings (failure rate, latency, mode, log file) and its counters."""

    def __init__(self, fail_rate: float = 0.0, seed: int = 0, latency: float = 0.0, log: str | None = None,
                 mode: str = "normal", rate_limited: float | None = None, server_errors: float | None = None,
                 retry_after: str = "0", batch_fail_rate: float = 0.0, batch_expire_first: bool = False,
                 batch_seconds: float = 1.0, state_dir: str | None = None, download_delay: float = 0.0,
                 batch_fail_times: int | None = None, batch_max_lines: int | None = None,
                 slots: int = 0) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown stub mode {mode!r}")
        self.mode = mode
        #: Shares of requests answered 429 and 500 (``fail_rate`` splits evenly between them).
        self.rate_limited = fail_rate / 2 if rate_limited is None else rate_limited
        self.server_errors = fail_rate / 2 if server_errors is None else server_errors
        self.retry_after = retry_after
        self.rng = random.Random(seed)
        self.latency = latency
        #: Requests served at once (0: any number); the others wait, and one whose client left is dropped.
        self.slots = slots
        self._slots: asyncio.Semaphore | None = None
        #: Requests dropped because their client had gone when their turn came.
        self.abandoned = 0
        self.answered: Counter[str] = Counter()
        self.errors = 0
        self.requests = 0
        self._log = open(log, "a", buffering=1) if log else None
        from judgelab.testing.batch_api import BatchAPI

        #: Seconds before a file's content is sent (a kill while downloading, in tests).
        self.download_delay = download_delay

        #: The files and batches endpoints (OpenAI's Batch API), answering with :func:`answer_batch_line`.
        self.batch_api = BatchAPI(lambda line: answer_batch_line(line), self.record, state_dir, batch_fail_rate,
                                  batch_expire_first, batch_seconds, batch_fail_times, batch_max_lines)

    def slot(self) -> asyncio.Semaphore:
        """The semaphore of the serving slots (made in the server's event loop)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.slots))
        return self._slots

    def record(self, key: str) -> None:
        self.answered[key] += 1
        if self._log:
            self._log.write(json.dumps({"key": key}) + "\n")


def _body(path: str, payload: dict[str, Any], mode: str = "normal") -> dict[str, Any]:
    n = 1 if mode == "llama-cpp-python" else int(payload.get("n") or 1)  # llama-cpp-python ignores n
    model = payload.get("model", "stub")
    if path.endswith("/chat/completions"):
        prompt = "\n".join(m.get("content", "") for m in payload.get("messages", []))
        want_lp = bool(payload.get("logprobs")) and mode != "no-chat-logprobs"
        top = int(payload.get("top_logprobs") or 0)
        choices = []
        fmt = payload.get("response_format") or {}
        schema = ((fmt.get("json_schema") or {}).get("schema") if fmt.get("type") == "json_schema"
                  else fmt.get("schema") if fmt.get("type") == "json_object" else None)
        for i in range(n):
            if schema is not None:  # honour the schema: the answer is JSON with its fields
                text = stub_json_reply(prompt, schema, i)
            else:
                text = stub_reply(prompt, i) if payload.get("max_tokens", 16) > 1 else stub_reply(prompt, i).split()[-5][0]
            entry: dict[str, Any] = {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            if want_lp:
                entry["logprobs"] = {"content": [
                    {"token": tok, "logprob": -0.1, "bytes": None,
                     "top_logprobs": [{"token": tok, "logprob": -0.1, "bytes": None}][:max(top, 1)]}
                    for tok in text.split(" ")
                ]}
            choices.append(entry)
        obj = "chat.completion"
    else:
        prompt = payload.get("prompt", "")
        choices = [_completion_choice(prompt, i, payload.get("max_tokens", 16), int(payload.get("logprobs") or 0))
                   for i in range(n)]
        obj = "text_completion"
    words = len(prompt.split())
    return {"id": "stub", "object": obj, "created": int(time.time()), "model": model, "choices": choices,
            "usage": {"prompt_tokens": words, "completion_tokens": 9 * n, "total_tokens": words + 9 * n}}


def _completion_choice(prompt: str, index: int, max_tokens: int, top: int) -> dict[str, Any]:
    """One ``/v1/completions`` choice. With ``logprobs`` (``top`` > 0) it carries the legacy completion
    log-probabilities (``tokens``, ``token_logprobs``, ``top_logprobs``, ``text_offset``), as
    llama-cpp-python's server sends them. A one-token request (log-probability scoring) is answered with
    the rating's digit as " D" and a next-token distribution over " 1" … " 5": 0.6 on D, 0.1 on each other
    label, so the expected rating is 0.5 × D + 1.5."""
    reply = stub_reply(prompt, index)
    if max_tokens <= 1:
        digit = reply.split()[-5][0]
        text = " " + digit
        alternatives = {f" {k}": math.log(0.6 if str(k) == digit else 0.1) for k in range(1, 6)}
        tokens = [(text, alternatives[text], alternatives)]
    else:
        text = " " + reply
        tokens = [(" " + w, -0.1, {" " + w: -0.1}) for w in reply.split(" ")]
    choice: dict[str, Any] = {"index": index, "text": text, "finish_reason": "length" if max_tokens <= 1 else "stop",
                              "logprobs": None}
    if top:
        offsets, at = [], len(prompt)
        for token, _, _ in tokens:
            offsets.append(at)
            at += len(token)
        choice["logprobs"] = {"tokens": [t for t, _, _ in tokens], "token_logprobs": [lp for _, lp, _ in tokens],
                              "top_logprobs": [dict(sorted(alt.items(), key=lambda kv: -kv[1])[:top]) for _, _, alt in tokens],
                              "text_offset": offsets}
    return choice


#: The URLs ``vllm run-batch`` serves (vLLM's ``vllm/entrypoints/openai/run_batch.py``).
VLLM_URLS = ("/v1/chat/completions", "/v1/embeddings", "/score", "/rerank")


def answer_batch_line(line: dict[str, Any], model: str | None = None, failed: bool = False,
                      vllm: bool = False) -> dict[str, Any]:
    """The output line of one batch-input line, in vLLM's ``run-batch`` shape.

    Args:
        line: ``{"custom_id", "method", "url", "body"}``.
        model: the served model (a request naming another model fails, as in vLLM).
        failed: answer with an error instead (a failure injected by a test).
        vllm: answer as ``vllm run-batch`` does: a URL it does not serve (``/v1/completions``) fails with its
            message (the OpenAI Batch API stand-in answers ``/v1/completions`` too).
    """
    body = line.get("body") or {}
    custom_id = line.get("custom_id")
    request_id = "vllm-batch-" + hashlib.sha256(str(custom_id).encode()).hexdigest()[:16]
    url = str(line.get("url", ""))
    error = None
    if failed:
        error = "injected failure"
    elif model is not None and body.get("model") != model:
        error = f"The model `{body.get('model')}` does not exist."
    elif not url.endswith("completions") or (vllm and url not in VLLM_URLS):
        error = f"URL {url} was used. Supported endpoints: {', '.join(VLLM_URLS)}." if vllm else f"unsupported url {url!r}"
    if error is not None:
        return {"id": f"vllm-{request_id[11:]}", "custom_id": custom_id,
                "response": {"status_code": 400, "request_id": request_id, "body": None}, "error": error}
    return {"id": f"vllm-{request_id[11:]}", "custom_id": custom_id,
            "response": {"status_code": 200, "request_id": request_id, "body": _body(url, body)}, "error": None}


def answer_batch_file(input_path: str, output_path: str, model: str | None = None, fail_rate: float = 0.0,
                      seed: int = 0) -> dict[str, int]:
    """A stand-in for ``vllm run-batch -i IN -o OUT --model M``: answer every line of a batch-input
    file offline (the stub's deterministic answers) into a batch-output file.

    Returns:
        ``{"requests": n, "answered": a, "failed": f}``.
    """
    rng = random.Random(seed)
    answered = failed = 0
    with open(input_path, encoding="utf-8") as src, open(output_path, "w", encoding="utf-8") as dst:
        for text in src:
            if not text.strip():
                continue
            out = answer_batch_line(json.loads(text), model, failed=rng.random() < fail_rate, vllm=True)
            if out["error"] is None:
                answered += 1
            else:
                failed += 1
            dst.write(json.dumps(out) + "\n")
    return {"requests": answered + failed, "answered": answered, "failed": failed}


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: StubState) -> None:
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            method, path, _ = line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                h = await reader.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            if headers.get("transfer-encoding", "").lower() == "chunked":
                body = b""
                while True:
                    size = int((await reader.readline()).strip().split(b";")[0], 16)
                    chunk = await reader.readexactly(size + 2)
                    if size == 0:
                        break
                    body += chunk[:-2]
            else:
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
            extra = ""
            payload: Any
            raw: bytes | None = None
            if path.startswith(("/v1/files", "/v1/batches")):
                if state.download_delay and path.endswith("/content"):
                    await asyncio.sleep(state.download_delay)
                status, payload, raw = state.batch_api.handle(method, path, headers, body)
            elif method == "GET" and path.startswith("/stats"):
                status, payload = 200, {"answered": dict(state.answered), "errors": state.errors, "requests": state.requests,
                                         "abandoned": state.abandoned}
            elif method == "POST" and path.startswith("/v1/") and path.endswith("completions"):
                state.requests += 1
                if state.mode == "hang":
                    await asyncio.sleep(3600)  # accepted, never answered: the client's timeout must end it
                if state.slots:
                    async with state.slot():  # one request at a time per slot; the others wait in line
                        if reader.at_eof():  # the client gave up while waiting: dropped, as llama-cpp-python does
                            state.abandoned += 1
                            break
                        await asyncio.sleep(state.latency)
                elif state.latency:
                    await asyncio.sleep(state.latency)
                roll = state.rng.random()
                if roll < state.rate_limited:
                    state.errors += 1
                    status, payload = 429, {"error": {"message": "rate limited", "type": "rate_limit"}}
                    extra = f"Retry-After: {state.retry_after}\r\n"
                elif roll < state.rate_limited + state.server_errors:
                    state.errors += 1
                    status, payload = 500, {"error": {"message": "internal error", "type": "server_error"}}
                else:
                    request = json.loads(body or b"{}")
                    status, payload = 200, None
                    response_format = (request.get("response_format") or {}).get("type", "text")
                    if state.mode == "llama-cpp-python" and response_format not in {"text", "json_object"}:
                        status, payload = 500, LLAMA_CPP_PYTHON_REJECTS
                    elif state.mode == "no-response-format" and response_format != "text":
                        status, payload = 400, {"error": {"message": f"response_format {response_format!r} is not "
                                                          "supported", "type": "invalid_request_error"}}
                    elif state.mode == "reasoning-model" and "max_tokens" in request:
                        status, payload = 400, {"error": {
                            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                       "Use 'max_completion_tokens' instead.", "type": "invalid_request_error",
                            "param": "max_tokens", "code": "unsupported_parameter"}}
                    elif state.mode == "reasoning-model":
                        request["max_tokens"] = request.get("max_completion_tokens", 16)
                        payload = _body(path, request)
                        for choice in payload["choices"]:
                            if "message" in choice:
                                choice["message"]["reasoning_content"] = "The text is clear; a 4 fits."
                    elif state.mode == "wrong-shape" and path.endswith("/chat/completions"):
                        payload = _body("/v1/completions", {**request, "prompt": "x"})
                    else:
                        payload = _body(path, request, state.mode)
                    if status == 200:
                        state.record(headers.get("x-judgelab-request-key", ""))
            else:
                status, payload = 404, {"error": {"message": "not found"}}
            data = json.dumps(payload).encode() if raw is None else raw
            content_type = "application/json" if raw is None else "application/octet-stream"
            if state.mode == "html" and status == 200 and method == "POST":
                data, content_type = b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>", "text/html"
            reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}[status]
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(data)}\r\n{extra}\r\n".encode()
                + data
            )
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


async def serve(port: int = 0, state: StubState | None = None, ready: "asyncio.Future[int] | None" = None) -> None:
    """Serve the stub on 127.0.0.1 until cancelled; the bound port goes to ``ready`` or is printed as ``PORT n``."""
    state = state or StubState()
    server = await asyncio.start_server(lambda r, w: _handle(r, w, state), "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    if ready is not None:
        ready.set_result(bound)
    else:
        print(f"PORT {bound}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    """``python -m judgelab.testing.openai_stub [--port N] [--fail-rate F] [--mode M] [--log FILE]``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run-batch"]:
        batch = argparse.ArgumentParser(prog="openai_stub run-batch", description="a stand-in for vllm run-batch")
        batch.add_argument("-i", "--input-file", required=True)
        batch.add_argument("-o", "--output-file", required=True)
        batch.add_argument("--model", default=None)
        batch.add_argument("--fail-rate", type=float, default=0.0)
        batch.add_argument("--seed", type=int, default=0)
        b = batch.parse_args(argv[1:])
        counts = answer_batch_file(b.input_file, b.output_file, b.model, b.fail_rate, b.seed)
        print(json.dumps(counts), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fail-rate", type=float, default=0.0, help="share of requests answered 429 or 500 (half each)")
    parser.add_argument("--rate-limited", type=float, default=None, help="share of requests answered 429")
    parser.add_argument("--server-errors", type=float, default=None, help="share of requests answered 500")
    parser.add_argument("--retry-after", default="0", help="the Retry-After header of a 429 (seconds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--slots", type=int, default=0, help="requests answered at once (0: any number; 1: one at a "
                        "time, the others wait, as llama-cpp-python's server)")
    parser.add_argument("--log", default=None, help="append one JSON line per successful answer")
    parser.add_argument("--mode", default="normal", choices=MODES, help="how the stub behaves (see MODES)")
    parser.add_argument("--batch-fail-rate", type=float, default=0.0, help="share of batch requests that fail")
    parser.add_argument("--batch-fail-times", type=int, default=None, help="the most failures of one batch request")
    parser.add_argument("--batch-max-lines", type=int, default=None,
                        help="refuse batch files of more lines (the batch fails at validation, OpenAI-style)")
    parser.add_argument("--batch-expire-first", action="store_true", help="the first batch expires half-done")
    parser.add_argument("--batch-seconds", type=float, default=1.0, help="seconds a batch takes")
    parser.add_argument("--state-dir", default=None, help="keep batches and files here (a restart continues them)")
    parser.add_argument("--download-delay", type=float, default=0.0, help="seconds before a file's content is sent")
    args = parser.parse_args(argv)
    try:
        asyncio.run(serve(args.port, StubState(args.fail_rate, args.seed, args.latency, args.log, args.mode,
                                               args.rate_limited, args.server_errors, args.retry_after,
                                               args.batch_fail_rate, args.batch_expire_first, args.batch_seconds,
                                               args.state_dir, args.download_delay, args.batch_fail_times,
                                               args.batch_max_lines, args.slots)))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
