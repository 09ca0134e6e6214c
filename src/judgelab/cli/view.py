"""``judgelab view``: a folder's report served on 127.0.0.1, updated in place as a run or annotation progresses."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import app, PEOPLE


@app.command(rich_help_panel=PEOPLE)
def view(
    folder: Path = typer.Argument(..., metavar="FOLDER", help="an output folder of judgelab (a run, agree --out, ...), "
                                  "or a folder of them (listed, each linked, two compared)"),
    port: int = typer.Option(8765, "--port", help="the port on 127.0.0.1 (0: any free port)"),
    human: Optional[list[Path]] = typer.Option(None, "--human", metavar="FILE",
                                               help="human ratings to compare with, as for `judgelab report`; repeatable"),
    every: float = typer.Option(2.0, "--every", metavar="SECONDS", help="how often the page checks for new data"),
) -> None:
    """Serve an output folder's report on 127.0.0.1, updated in place as a run or annotation goes on.

    Only this machine can open it; when the folder's store, ratings or tables change the page replaces
    the sections that changed, keeping filters, open sections and the scroll, and a strip shows the
    run's progress (done of planned, failed, retries, rate, ETA; running, finished or stopped).
    A folder that holds several output folders is listed on one page (command, judges, template, criteria,
    judgments, failures, when), each run linked to its live report, and two picked runs compared item by item.
    Nothing is written into the folder. Ctrl-C stops it."""
    import sys

    from judgelab.serve import bind, serve
    from judgelab.errors import JudgelabError
    from judgelab.report.humans import check_human_files
    from judgelab.report.live import LiveReport, make_app
    from judgelab.report.runs_list import is_runs_folder

    if not every > 0:
        raise JudgelabError("--every is a number of seconds above 0")
    check_human_files(human or ())
    if is_runs_folder(folder):  # a folder of runs: the list, each run's live report, two runs compared
        if human:
            raise JudgelabError("--human is for one run's folder: open the run's own folder to compare it with humans")
        from judgelab.view_runs import RunsView, make_runs_app

        app_, what = make_runs_app(RunsView(folder, poll_ms=int(every * 1000))), "the runs in"
    else:
        app_, what = make_app(LiveReport(folder, human or (), poll_ms=int(every * 1000))), "the report of"
    sock = bind("127.0.0.1", port)
    print(f"judgelab: serving {what} {folder} at http://127.0.0.1:{sock.getsockname()[1]}/ "
          "(Ctrl-C stops)", file=sys.stderr, flush=True)
    serve(app_, sock)
