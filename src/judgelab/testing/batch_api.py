"""The stub's files and batches endpoints (OpenAI's Batch API) — a TEST UTILITY.

``POST /v1/files`` (multipart, ``purpose=batch``), ``GET /v1/files/{id}`` and ``/content``,
``POST /v1/batches``, ``GET /v1/batches`` (list), ``GET /v1/batches/{id}``,
``POST /v1/batches/{id}/cancel``. A batch takes ``seconds`` to finish (its counters grow with
time), and its answers are the stub's deterministic answers. Modes for tests:

* ``fail_rate``: that share of requests fail (error-file lines), drawn per key and submission,
  so a request submitted again gets a new draw;
* ``fail_times``: a request fails at most this many times (then it is answered), so a test can
  know that every request is answered within its attempts;
* ``expire_first``: the first batch expires half-done (the rest in its error file as
  ``batch_expired``);
* ``max_lines``: a batch file of more lines is refused as OpenAI refuses an invalid input file:
  the batch is created, then ``failed`` at validation with the reason in its ``errors`` (nothing
  runs, nothing is logged as submitted);
* ``state_dir``: batches and files are kept on disk, so a stub restarted on the same folder
  (a server restart mid-poll) continues them.

Every request key submitted in a batch that runs is appended to ``<state_dir>/submitted.jsonl`` (the tests
count submissions there), and every answered one is recorded like a live answer (``--log``).
"""
from __future__ import annotations

import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from judgelab.io_atomic import replace_atomic

__all__ = ["BatchAPI"]

FINAL = ("completed", "expired", "failed", "cancelled")


def _parse_multipart(body: bytes, content_type: str) -> dict[str, tuple[str, bytes]]:
    """Field name → (file name, content) of a multipart/form-data body."""
    boundary = content_type.split("boundary=", 1)[1].strip().strip('"').encode()
    fields: dict[str, tuple[str, bytes]] = {}
    for part in body.split(b"--" + boundary):
        if b"\r\n\r\n" not in part:
            continue
        head, _, content = part.partition(b"\r\n\r\n")
        if content.endswith(b"\r\n"):
            content = content[:-2]
        disposition = next((line for line in head.decode("latin-1").split("\r\n")
                            if line.lower().startswith("content-disposition")), "")
        attrs = dict(item.strip().split("=", 1) for item in disposition.split(";")[1:] if "=" in item)
        name = attrs.get("name", "").strip('"')
        if name:
            fields[name] = (attrs.get("filename", "").strip('"'), content)
    return fields


class BatchAPI:
    """Files and batches of the stub (see the module's docstring).

    Args:
        answer: ``(batch-input line dict) -> batch-output line dict`` (the stub's answers).
        record: called with each answered key (the stub's answer log).
        state_dir: a folder keeping the state across restarts (a temporary one when ``None``).
        fail_rate: share of requests failing; fail_times: the most failures of one request (``None``: no limit);
        expire_first: the first batch expires half-done; seconds: how long a batch takes;
        max_lines: the most lines of a batch file (``None``: no limit).
    """

    def __init__(self, answer: Callable[[dict[str, Any]], dict[str, Any]], record: Callable[[str], None],
                 state_dir: str | None = None, fail_rate: float = 0.0, expire_first: bool = False,
                 seconds: float = 1.0, fail_times: int | None = None, max_lines: int | None = None) -> None:
        self.answer = answer
        self.record = record
        self.dir = Path(state_dir or tempfile.mkdtemp(prefix="judgelab-stub-batches-"))
        (self.dir / "files").mkdir(parents=True, exist_ok=True)
        self.fail_rate = fail_rate
        self.expire_first = expire_first
        self.seconds = seconds
        self.fail_times = fail_times
        self.max_lines = max_lines
        state = self.dir / "state.json"
        saved = json.loads(state.read_text()) if state.exists() else {}
        self.files: dict[str, dict[str, Any]] = saved.get("files", {})
        self.batches: dict[str, dict[str, Any]] = saved.get("batches", {})
        self.submitted: dict[str, int] = saved.get("submitted", {})
        self.failed: dict[str, int] = saved.get("failed", {})

    # -- state -----------------------------------------------------------------------------
    def _save(self) -> None:
        state = json.dumps({"files": self.files, "batches": self.batches, "submitted": self.submitted,
                            "failed": self.failed})
        replace_atomic(self.dir / "state.json", lambda tmp: tmp.write_text(state))

    def _new_file(self, name: str, content: bytes, purpose: str) -> dict[str, Any]:
        file_id = f"file-{len(self.files) + 1:06d}{hashlib.sha256(content).hexdigest()[:8]}"
        (self.dir / "files" / file_id).write_bytes(content)
        meta = {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                "filename": name, "purpose": purpose, "status": "processed"}
        self.files[file_id] = meta
        return meta

    def _failing(self, key: str, submission: int) -> bool:
        if self.fail_times is not None and self.failed.get(key, 0) >= self.fail_times:
            return False
        digest = hashlib.sha256(f"{key}|{submission}".encode()).digest()
        return int.from_bytes(digest[:4], "big") / 2 ** 32 < self.fail_rate

    # -- batches ---------------------------------------------------------------------------
    def _create(self, payload: dict[str, Any]) -> tuple[int, Any]:
        file_id = payload.get("input_file_id")
        if file_id not in self.files:
            return 400, {"error": {"message": f"no file {file_id}", "type": "invalid_request_error"}}
        lines = [json.loads(line) for line in (self.dir / "files" / file_id).read_text().splitlines() if line.strip()]
        keys = [line["custom_id"] for line in lines]
        if self.max_lines is not None and len(lines) > self.max_lines:
            return 200, self._refused(payload, file_id, len(lines))
        with open(self.dir / "submitted.jsonl", "a") as log:
            for key in keys:
                self.submitted[key] = self.submitted.get(key, 0) + 1
                log.write(json.dumps({"key": key}) + "\n")
        batch_id = f"batch_{len(self.batches) + 1:06d}"
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": payload.get("endpoint"), "input_file_id": file_id,
            "completion_window": payload.get("completion_window", "24h"), "status": "validating",
            "created_at": time.time(), "output_file_id": None, "error_file_id": None, "errors": None,
            "metadata": payload.get("metadata"),
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "_draws": {k: self.submitted[k] for k in keys}, "_expire": self.expire_first and not self._expired_once(),
        }
        self._save()
        return 200, self._public(self.batches[batch_id])

    def _refused(self, payload: dict[str, Any], file_id: str, n: int) -> dict[str, Any]:
        """A batch created and failed at validation (as OpenAI fails an input file it does not accept)."""
        batch_id = f"batch_{len(self.batches) + 1:06d}"
        message = f"The input file has {n} requests, more than the {self.max_lines} requests allowed in a batch."
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": payload.get("endpoint"), "input_file_id": file_id,
            "completion_window": payload.get("completion_window", "24h"), "status": "failed",
            "created_at": time.time(), "output_file_id": None, "error_file_id": None, "metadata": payload.get("metadata"),
            "errors": {"object": "list", "data": [{"code": "too_many_requests", "message": message, "param": None,
                                                   "line": None}]},
            "request_counts": {"total": 0, "completed": 0, "failed": 0}, "_draws": {}, "_expire": False,
        }
        self._save()
        return self._public(self.batches[batch_id])

    def _expired_once(self) -> bool:
        return any(b.get("_expire") for b in self.batches.values())

    def _public(self, batch: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in batch.items() if not k.startswith("_")}
        out["created_at"] = int(batch["created_at"])
        return out

    def _advance(self, batch: dict[str, Any]) -> None:
        """Move a batch on with time: counters grow; at the end (or half-way when expiring) it is final."""
        if batch["status"] in FINAL:
            return
        total = batch["request_counts"]["total"]
        share = min(1.0, (time.time() - batch["created_at"]) / self.seconds) if self.seconds > 0 else 1.0
        if batch["status"] == "cancelling":
            self._finish(batch, "cancelled", int(total * share))
        elif batch["_expire"] and share >= 0.5:
            self._finish(batch, "expired", total // 2)
        elif share >= 1.0:
            self._finish(batch, "completed", total)
        else:
            batch["status"] = "in_progress"
            done = int(total * share)
            keys = list(batch["_draws"])[:done]
            failed = sum(1 for k in keys if self._failing(k, batch["_draws"][k]))
            batch["request_counts"] = {"total": total, "completed": done - failed, "failed": failed}

    def _finish(self, batch: dict[str, Any], status: str, done: int) -> None:
        lines = [json.loads(line) for line in
                 (self.dir / "files" / batch["input_file_id"]).read_text().splitlines() if line.strip()]
        outputs, errors = [], []
        for i, line in enumerate(lines):
            key = line["custom_id"]
            if i >= done:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                errors.append({"id": f"req_{i}", "custom_id": key, "response": None,
                               "error": {"code": code, "message": f"this request was not run: the batch {status}"}})
            elif self._failing(key, batch["_draws"][key]):
                self.failed[key] = self.failed.get(key, 0) + 1
                errors.append({"id": f"req_{i}", "custom_id": key, "response": {"status_code": 500, "body": {
                    "error": {"message": "injected failure", "type": "server_error"}}}, "error": None})
            else:
                outputs.append(self.answer(line))
                self.record(key)
        if outputs:
            batch["output_file_id"] = self._new_file(f"{batch['id']}_output.jsonl", "".join(
                json.dumps(o) + "\n" for o in outputs).encode(), "batch_output")["id"]
        if errors:
            batch["error_file_id"] = self._new_file(f"{batch['id']}_error.jsonl", "".join(
                json.dumps(e) + "\n" for e in errors).encode(), "batch_output")["id"]
        batch["status"] = status
        batch["request_counts"] = {"total": len(lines), "completed": len(outputs), "failed": len(errors)}
        self._save()

    # -- HTTP --------------------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, bytes | None]:
        """(status, JSON payload, raw bytes instead of JSON) of one request to ``/v1/files…`` or ``/v1/batches…``."""
        route = path.split("?", 1)[0].rstrip("/").split("/")[2:]  # ["files", id, "content"] …
        if route[0] == "files":
            if method == "POST" and len(route) == 1:
                fields = _parse_multipart(body, headers.get("content-type", ""))
                name, content = fields.get("file", ("", b""))
                purpose = fields.get("purpose", ("", b"batch"))[1].decode()
                meta = self._new_file(name or "upload.jsonl", content, purpose)
                self._save()
                return 200, meta, None
            if method == "GET" and len(route) >= 2 and route[1] in self.files:
                if len(route) == 3 and route[2] == "content":
                    return 200, None, (self.dir / "files" / route[1]).read_bytes()
                return 200, self.files[route[1]], None
        elif route[0] == "batches":
            if method == "POST" and len(route) == 1:
                status, payload = self._create(json.loads(body or b"{}"))
                return status, payload, None
            if method == "GET" and len(route) == 1:
                for batch in self.batches.values():
                    self._advance(batch)
                data = [self._public(b) for b in sorted(self.batches.values(), key=lambda b: -b["created_at"])]
                return 200, {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None, "has_more": False}, None
            if len(route) >= 2 and route[1] in self.batches:
                batch = self.batches[route[1]]
                if method == "POST" and len(route) == 3 and route[2] == "cancel":
                    if batch["status"] not in FINAL:
                        batch["status"] = "cancelling"
                        self._save()
                    return 200, self._public(batch), None
                if method == "GET" and len(route) == 2:
                    self._advance(batch)
                    return 200, self._public(batch), None
        return 404, {"error": {"message": f"not found: {method} {path}"}}, None
