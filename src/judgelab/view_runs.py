"""``judgelab view DIR`` for a folder of runs: the runs listed on one page, each run's live report, and the
comparison of two runs, made when asked (a workflow: the comparison is an analysis, the pages only render).

Routes: ``/`` the list (:mod:`judgelab.report.runs_list`), ``/run/NAME/`` the live report of one run (as
``judgelab view NAME``; its ``state`` beside it), ``/compare?a=NAME&b=NAME`` the compare page of two runs
(:func:`judgelab.compare_run.compare_page`). Only the folders the list names are served; a request whose Host
header is not a loopback name gets HTTP 421, as the single-folder view.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["RunsView", "make_runs_app"]


class RunsView:
    """The folder of runs ``folder`` (checked now: one line when it holds none) and a live report per run."""

    def __init__(self, folder: str | Path, poll_ms: int = 2000) -> None:
        from judgelab.report.runs_list import list_runs

        self.folder = Path(folder)
        self.poll_ms = poll_ms
        list_runs(self.folder)
        self._live: dict[str, Any] = {}
        self._lock = threading.Lock()

    def runs(self) -> list[Any]:
        from judgelab.report.runs_list import list_runs

        return list_runs(self.folder)

    def index(self) -> str:
        from judgelab.report.runs_list import render_runs

        return render_runs(self.folder, self.runs())

    def run(self, name: str) -> Any | None:
        """The live report of the run ``name`` (``None`` when the list has no such run)."""
        from judgelab.report.live import LiveReport

        if name not in {r.name for r in self.runs()}:
            return None
        with self._lock:
            if name not in self._live:
                self._live[name] = LiveReport(self.folder / name, poll_ms=self.poll_ms)
            return self._live[name]

    def compare(self, a: str, b: str) -> str:
        """The compare page of the runs ``a`` and ``b`` (one line when one is not a run of the list)."""
        from judgelab.compare_run import compare_page

        names = {r.name for r in self.runs()}
        for side, name in (("A", a), ("B", b)):
            if name not in names:
                raise JudgelabError(f"run {side}: no run {name!r} in {self.folder}")
        return compare_page(self.folder / a, self.folder / b, f"judgelab compare: {a} vs {b}")


def make_runs_app(view: RunsView) -> Any:
    """The Starlette app of :class:`RunsView` (loopback only)."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.routing import Route

    from judgelab.serve import LoopbackOnly

    headers = {"Cache-Control": "no-store"}

    async def index(request: Request) -> Response:
        return HTMLResponse(await run_in_threadpool(view.index), headers=headers)

    async def run_page(request: Request) -> Response:
        live = await run_in_threadpool(view.run, request.path_params["name"])
        if live is None:
            return PlainTextResponse("no such run in this folder\n", 404)
        if request.path_params.get("what") == "state":
            return JSONResponse(await run_in_threadpool(live.state), headers=headers)
        return HTMLResponse(await run_in_threadpool(live.page), headers=headers)

    async def run_slash(request: Request) -> Response:
        return RedirectResponse(f"{request.path_params['name']}/")

    async def compare(request: Request) -> Response:
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        try:
            page = await run_in_threadpool(view.compare, a, b)
        except JudgelabError as exc:
            return PlainTextResponse(f"{exc}\n", 400)
        return HTMLResponse(page, headers=headers)

    routes = [Route("/", index), Route("/compare", compare), Route("/run/{name}", run_slash),
              Route("/run/{name}/", run_page), Route("/run/{name}/{what}", run_page)]
    return LoopbackOnly(Starlette(routes=routes), what="this view")
