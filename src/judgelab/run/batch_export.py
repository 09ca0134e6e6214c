"""``rate --export-batch``: the calls a live run would send now, written as offline batch files.

The lines are :func:`~judgelab.run.batchfile.batch_line`'s (OpenAI's batch-input format, which
``vllm run-batch`` reads), split by :func:`~judgelab.run.batchfile.split_lines`; the batch is
recorded in the store first, so ``judgelab batch import`` can check the answers against it.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judgelab.errors import JudgelabError
from judgelab.io_atomic import write_text_atomic
from judgelab.run.batchfile import MAX_BYTES, MAX_REQUESTS, VLLM_RUN_BATCH_URLS, batch_line, new_batch_id, split_lines

if TYPE_CHECKING:
    from judgelab.datasets.items import Item
    from judgelab.spec import RunSpec

__all__ = ["BatchExport", "export_batch"]


@dataclass(frozen=True)
class BatchExport:
    """What :func:`export_batch` wrote.

    Attributes:
        batch: judgelab's id of the batch (``judgelab batch list``); "" when nothing was pending.
        rater: the run's label.
        model: the judge's model (``vllm run-batch --model``).
        files: the batch-input files written.
        requests: requests in them.
        store: the store that records the batch.
        url: the request URL of its lines (``/v1/chat/completions`` or ``/v1/completions``; "" when empty).
    """

    batch: str
    rater: str
    model: str
    files: tuple[Path, ...]
    requests: int
    store: Path
    url: str = ""

    @property
    def vllm_accepts(self) -> bool:
        """Whether ``vllm run-batch`` reads these lines (it serves :data:`VLLM_RUN_BATCH_URLS` only)."""
        return self.url in VLLM_RUN_BATCH_URLS

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "batch": self.batch, "rater": self.rater, "model": self.model,
                "files": [str(f) for f in self.files], "requests": self.requests, "store": str(self.store), "url": self.url}


def _file_names(path: Path, n: int) -> list[Path]:
    if n == 1:
        return [path]
    suffix = path.suffix or ".jsonl"
    return [path.with_name(f"{path.stem}-{i:03d}{suffix}") for i in range(1, n + 1)]


def export_batch(items: list[Item], spec: RunSpec, out: Path, path: Path, max_requests: int = MAX_REQUESTS,
                 max_bytes: int = MAX_BYTES) -> BatchExport:
    """Write the calls a live run of ``spec`` over ``items`` would send now as batch-input JSONL.

    The batch and its keys are recorded in ``out/store.sqlite`` (created) before the files are
    written. Nothing is called; no judgment is recorded.

    Args:
        items: the items; spec: the run (one judge, which must offer batches: ``openai:MODEL``).
        out: the run's output folder (its store records the batch).
        path: the batch-input file; several files ``STEM-001.jsonl`` … when the limits split it.
        max_requests, max_bytes: the most lines and bytes per file.

    Returns:
        :class:`BatchExport` (``requests == 0``: the ledger answers every call; no file is written).

    Raises:
        JudgelabError: a judge without batches, an unwritable file or folder.
    """
    from judgelab.paths import output_folder
    from judgelab.run.identity import identity_digest
    from judgelab.run.pending import pending_calls
    from judgelab.run.runner import Runner
    from judgelab.store import Store

    from judgelab.models.registry import backend_entry

    if not backend_entry(spec.judge.kind).batch:  # before the store is opened: a refused export writes nothing
        raise JudgelabError(f"the {spec.judge.kind} judge cannot be asked through a batch file; batches need an "
                            "openai:MODEL judge")
    if path.is_dir():
        raise JudgelabError(f"--export-batch {path} is a folder; give a .jsonl file")
    if not path.parent.is_dir():
        raise JudgelabError(f"the folder of --export-batch {path} does not exist")
    backend = spec.judge.build()
    try:
        store_path = output_folder(out) / "store.sqlite"
        with Store(store_path) as store:
            runner = Runner(backend, store, spec)
            calls = asyncio.run(pending_calls(runner, items))
            lines = [batch_line(backend, call) for call in calls]  # a judge without batches fails here, before writing
            chunks = split_lines(lines, max_requests, max_bytes)
            files = _file_names(path, len(chunks))
            if not calls:
                return BatchExport("", runner.rater, backend.model_id, (), 0, store_path)
            rater = runner.claim()
            batch = new_batch_id()
            store.add_batch(batch, "file", identity_digest(runner.identity), rater,
                            [(c.key, c.request_json) for c in calls], state="exported",
                            detail={"files": [str(f) for f in files], "model": backend.model_id,
                                    "judge": backend.identity(), "requests": len(calls)})
            for file, chunk in zip(files, chunks):
                write_text_atomic(file, "\n".join(chunk) + "\n")
            url = backend.batch_request(calls[0].request)[0]
            return BatchExport(batch, rater, backend.model_id, tuple(files), len(calls), store_path, url)
    finally:
        asyncio.run(backend.aclose())
