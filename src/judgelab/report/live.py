"""``judgelab view FOLDER``: the folder's report served on 127.0.0.1, updated in place when its data change.

Only requests addressed to a loopback host name are answered (HTTP 421 otherwise), as by ``annotate``.

The page is the same self-contained report :func:`judgelab.report.html.build_report` and
:func:`~judgelab.report.html.render_report` make, kept in memory (nothing is written into the
folder, whose store a run or the annotation app may be writing), with a status strip and a script
(:mod:`judgelab.report.live_page`). The script asks ``/state`` every few seconds: the data's version — a
fingerprint (size and modification time) of the files the report reads: the store and its write-ahead
log, the ratings and human-ratings files, agree's tables, ``run.json``, and the files a recorded ``agree``
read — and the status of the store's latest run (:func:`judgelab.report.live_status.run_status`). When the
version changed, it fetches the page again and replaces the sections that changed, in place. The report is
rebuilt lazily, on the first request after a change. A page of many items loads the items beyond its share
from ``/report-items/part-0001.js`` …, the parts of the same build (:mod:`judgelab.report.html_parts`).
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from judgelab.report.folder import HUMAN_FILES, agree_inputs, open_folder

__all__ = ["LiveReport", "make_app", "WATCHED_FILES"]

#: Files of the folder whose change rebuilds the report, beside every file its record (results.json) lists
#: and the inputs of its agree steps.
WATCHED_FILES = ("results.json", "run.json", "store.sqlite", "store.sqlite-wal", *HUMAN_FILES)
#: Where the page asks for its item parts (:mod:`judgelab.report.html_parts`), kept in memory with the page.
PARTS_PATH = "report-items"


def _version(stamp: tuple[Any, ...]) -> str:
    return hashlib.sha256(repr(stamp).encode()).hexdigest()[:16]


def _stat(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (str(path), st.st_size, st.st_mtime_ns)


class LiveReport:
    """The report of ``folder`` (with the ``human`` files), rebuilt when :meth:`fingerprint` changes."""

    def __init__(self, folder: str | Path, human: Iterable[str | Path] = (), poll_ms: int = 2000) -> None:
        self.folder = Path(folder)
        self.human = [Path(h) for h in human]
        self.poll_ms = poll_ms
        open_folder(self.folder)  # a missing or foreign folder is one error line before serving
        self._lock = threading.Lock()
        self._built: tuple[Any, str, list[str], str] | None = None
        self._entry: tuple[Any, dict[str, Any] | None] | None = None
        self._entry_lock = threading.Lock()

    def fingerprint(self) -> tuple[Any, ...]:
        """Size and modification time of every file the report reads (absent files count as absent)."""
        paths = [self.folder / name for name in WATCHED_FILES] + self.human
        try:
            rf = open_folder(self.folder)
            paths += [self.folder / name for name in sorted(rf.record.files())]
            for step_input in agree_inputs(rf):
                paths.append(step_input)
                if step_input.parent != self.folder:  # the store beside a run's ratings file (its calls)
                    paths += [step_input.parent / "store.sqlite", step_input.parent / "store.sqlite-wal"]
        except Exception:  # noqa: BLE001 - a folder being rewritten: its files' own stamps still tell
            pass
        return tuple(_stat(p) for p in paths)

    def version(self) -> str:
        """A short text that changes whenever the data behind the report change."""
        return _version(self.fingerprint())

    def state(self) -> dict[str, Any]:
        """What the page asks every few seconds: the data's ``version``, the ``run``'s status (or ``None``) and
        when this was ``checked`` (the page's clock text). The store's run entry is read again only when the
        store's files changed; who holds its lock is looked at every time (a killed run changes no file)."""
        from judgelab.report.live_status import read_last_run, run_status
        from judgelab.store.lock import lock_holder

        store = self.folder / "store.sqlite"
        stamp = (_stat(store), _stat(self.folder / "store.sqlite-wal"))
        with self._entry_lock:  # not the page's lock: a page being built does not hold up the strip
            if self._entry is None or self._entry[0] != stamp:
                self._entry = (stamp, read_last_run(store))
            entry = self._entry[1]
        return {"version": self.version(), "run": run_status(entry, lock_holder(str(store))),
                "checked": "checked " + time.strftime("%H:%M:%S")}

    def page(self) -> str:
        """The report page as the live view serves it; rebuilt only when the data changed since the last build."""
        return self._build()[1]

    def part(self, name: str, version: str | None = None) -> str | None:
        """The item part ``name`` (``part-0001.js`` …) of the page as last built, or None: no such part, or the
        page that asks (its parts' ``version``) was built from other data, whose units these are not."""
        from judgelab.report.html_parts import part_name

        built = self._built or self._build()
        if version is not None and version != built[3]:
            return None
        return next((text for k, text in enumerate(built[2], start=1) if part_name(k) == name), None)

    def _build(self) -> tuple[Any, str, list[str], str]:
        from judgelab.report.html import page_with_parts
        from judgelab.report.live_page import live_page

        with self._lock:
            stamp = self.fingerprint()
            if self._built is None or self._built[0] != stamp:
                html, parts = page_with_parts(self.folder, PARTS_PATH, self.human)
                found = re.search(r'data-part-version="([0-9a-f]*)"', html) if parts else None
                self._built = (stamp, live_page(html, _version(stamp), self.poll_ms), parts,
                               found.group(1) if found else "")
            return self._built


def make_app(live: LiveReport):
    """The Starlette app: ``/`` the report, ``/state`` its data's version and the run's status as JSON; a request whose
    Host header is not a loopback name gets HTTP 421 (:class:`judgelab.serve.LoopbackOnly`, as
    ``annotate``), so a page of another site cannot read the report through DNS rebinding."""
    from judgelab.serve import LoopbackOnly
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    async def index(request: Request) -> HTMLResponse:
        page = await run_in_threadpool(live.page)  # a large report takes seconds: not on the event loop
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def state(request: Request) -> JSONResponse:
        return JSONResponse(await run_in_threadpool(live.state), headers={"Cache-Control": "no-store"})

    async def part(request: Request) -> Response:
        text = await run_in_threadpool(live.part, request.path_params["name"], request.query_params.get("v"))
        if text is None:
            return Response("no such part of this report (or the report changed: the page updates itself)",
                            status_code=404, media_type="text/plain")
        return Response(text, media_type="text/javascript", headers={"Cache-Control": "no-store"})

    routes = [Route("/", index), Route("/state", state), Route(f"/{PARTS_PATH}/{{name}}", part)]
    return LoopbackOnly(Starlette(routes=routes), what="this report")
