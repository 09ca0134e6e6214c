"""The human loop on the command line: annotate (a local web app) and human-estimate (PPI++, Alt-Test, planner)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from judgelab.cli.common import (
    PEOPLE,
    ContextFieldOpt,
    GroupFieldOpt,
    IdFieldOpt,
    SystemFieldOpt,
    TextFieldOpt,
    app,
    split_list,
)
from judgelab.errors import JudgelabError


@app.command(rich_help_panel=PEOPLE)
def annotate(
    items: Path = typer.Option(..., "--items", help="JSONL/CSV with id, text and optional context, system, group (as for rate)"),
    template: str = typer.Option("chiang-lee-story", "--template", help="the judge's template: shipped name or path to a .yaml"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all of the template)"),
    variant: Optional[str] = typer.Option(None, "--variant", help="instruction variant, e.g. persona"),
    out: Path = typer.Option(..., "--out", help="folder: store.sqlite (shared with `judgelab rate --out`), annotation.json"),
    annotators: Optional[str] = typer.Option(None, "--annotators", help="comma-separated annotator names (default: anyone "
                                             "opening /a/<name>)"),
    tokens: bool = typer.Option(False, "--tokens", help="a secret link per annotator (and for the overview) instead of /a/<name>"),
    sample: str = typer.Option("all", "--sample", help="all | random:N | disagreement:N | ids:FILE"),
    seed: int = typer.Option(0, "--seed", help="seed of the selection and of each annotator's order"),
    stratify_by_system: bool = typer.Option(False, "--stratify-by-system", help="random:N drawn per system, in proportion"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on; anything but loopback needs --tokens"),
    port: int = typer.Option(8765, "--port", help="port (0 picks a free one; a fixed port keeps links valid across restarts)"),
    id_field: str = IdFieldOpt, text_field: str = TextFieldOpt, context_field: str = ContextFieldOpt,
    system_field: str = SystemFieldOpt, group_field: str = GroupFieldOpt,
) -> None:
    """Collect human ratings in the browser with the judge's own instructions, sample and questions.

    Each annotator rates the selected items one at a time, in their own seeded order (digits
    rate, Enter saves); every rating is written to OUT/store.sqlite as a human:<name> row before
    the page moves on. Stop with Ctrl-C; the same command resumes. When it stops, OUT/report.html
    is written again (the overview can also write it while annotation goes on).
    """
    from judgelab.serve import bind, is_loopback, url_host

    if not is_loopback(host) and not tokens:
        raise JudgelabError(f"--host {host} is reachable from other machines: add --tokens (a secret link per annotator), "
                            "or listen on 127.0.0.1")
    names = split_list(annotators) or []
    if tokens and not names:
        raise JudgelabError("--tokens needs --annotators (one secret link per annotator)")

    from judgelab.annotate.app import create_app
    from judgelab.annotate.setup import links, prepare
    from judgelab.serve import LOOPBACK_NAMES, serve
    from judgelab.datasets.items import FieldMap

    fields = FieldMap(id=id_field, text=text_field, context=context_field, system=system_field, group=group_field)
    session = prepare(items, template, out, criteria=split_list(criteria), variant=variant, annotators=names,
                      tokens=tokens, sample=sample, seed=seed, stratify=stratify_by_system, fields=fields)
    try:
        sock = bind(host, port)
        try:
            # Without tokens the host is a loopback one: answer loopback names only (DNS-rebinding guard).
            web = create_app(session, allowed_hosts=None if tokens else (*LOOPBACK_NAMES, host.strip("[]")))
            shown_host = host
            if host in {"0.0.0.0", "::"}:
                import socket

                shown_host = socket.gethostname()
            base = f"http://{url_host(shown_host)}:{sock.getsockname()[1]}"
            n_items = len(session.items)
            who = f"annotators: {', '.join(names)}" if names else "annotators by name"
            typer.echo(f"judgelab annotate: {n_items} items × {len(session.outputs)} questions ({session.template.name}), "
                       f"{who}; ratings go to {out / 'store.sqlite'}")
            for label, path in links(session):
                typer.echo(f"  {label}: {base}{path}")
            if not names:
                typer.echo(f"  anyone: {base}/a/<name>")
            typer.echo("Ratings are saved as they are submitted. Ctrl-C stops; the same command resumes.")
            try:
                serve(web, sock)
            except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: stopping is the normal end
                pass
        finally:
            sock.close()
    finally:
        session.store.close()
    done = ", ".join(f"{a} {session.progress(a)[0]}" for a in session.known_annotators()) or "none yet"
    typer.echo(f"stopped; items rated of {len(session.items)}: {done}; ratings in {out / 'store.sqlite'}")
    from judgelab.annotate.report_link import refresh_report

    typer.echo(f"writing {out / 'report.html'} with the ratings collected (Ctrl-C skips it) …")
    try:
        _, line = refresh_report(out)  # the folder's report shows the ratings just collected
    except KeyboardInterrupt:
        line = f"report not written (interrupted); `judgelab report {out}` writes it"
    typer.echo(line)


@app.command("human-estimate", rich_help_panel=PEOPLE)
def human_estimate(
    ratings: Optional[Path] = typer.Argument(None, metavar="[RATINGS]", help="the judge's ratings file, with "
                                             "--human (or give --store instead)"),
    store: Optional[Path] = typer.Option(None, "--store", help="a store with judge and human ratings (e.g. FOLDER/store.sqlite), "
                                         "instead of RATINGS and --human"),
    human: Optional[Path] = typer.Option(None, "--human", help="human ratings, tidy long layout (with RATINGS)"),
    criteria: Optional[str] = typer.Option(None, "--criteria", help="comma-separated criteria (default: all with judge and human ratings)"),
    systems: Optional[str] = typer.Option(None, "--systems", help="systems, comma-separated; differences are first minus second"),
    judge_rater: Optional[str] = typer.Option(None, "--judge-rater", help="the judge's rater label when the ratings hold several"),
    target_half_width: Optional[float] = typer.Option(None, "--target-half-width", help="plan the human ratings this half-width needs"),
    alpha: float = typer.Option(0.05, "--alpha", help="error level of the intervals, 1 - their confidence (0.05: 95% intervals)"),
    quantile: str = typer.Option("t", "--quantile", help="t: small-sample t intervals (about 95% at 10 human ratings per "
                                 "system); normal: ppi-python's normal intervals (cover 87-90% at 10; trusted from 50)"),
    epsilon: float = typer.Option(0.2, "--epsilon", help="Alt-Test margin: 0.2 experts, 0.15 skilled, 0.1 crowd"),
    escalation: Optional[Path] = typer.Option(None, "--escalation", help="escalation.csv of `judgelab escalate`: the "
                                              "judge's predictions are its ratings on kept items and the people's on "
                                              "escalated ones (--escalated-human); --human must be a random sample"),
    escalated_human: Optional[Path] = typer.Option(None, "--escalated-human", help="with --escalation: the human "
                                                   "ratings of the escalated items (tidy long layout)"),
    alt_min_items: int = typer.Option(30, "--alt-min-items", min=2, help="items an annotator needs for the Alt-Test (paper: 30)"),
    out: Path = typer.Option(Path("judgelab-runs/human-estimate"), "--out", help="folder for estimates.csv, differences.csv, "
                             "alt_test.csv, plan.csv and estimates.json"),
) -> None:
    """Combine a few human ratings with the judge on every item: PPI++ means and differences, Alt-Test, planner."""

    from judgelab.annotate.estimate import human_estimates
    from judgelab.report.terminal import console, print_table
    if not (0 < alpha < 1):
        raise JudgelabError(f"--alpha must be between 0 and 1, got {alpha}")
    if not (0 <= epsilon < 1):
        raise JudgelabError(f"--epsilon must be in [0, 1), got {epsilon}")
    if quantile not in ("t", "normal"):
        raise JudgelabError(f"--quantile must be t or normal, got {quantile!r}")
    hybrid_notes: list[str] = []
    if escalation is not None:
        frame, hybrid_notes = _hybrid(store, ratings, human, escalation, escalated_human)
        uniform = None
    elif escalated_human is not None:
        raise JudgelabError("--escalated-human goes with --escalation (the escalation.csv of `judgelab escalate`)")
    else:
        frame, uniform = _load_ratings(store, ratings, human)
    result = human_estimates(frame, judge=judge_rater, criteria=split_list(criteria), systems=split_list(systems),
                             target_half_width=target_half_width, alpha=alpha, epsilon=epsilon,
                             alt_min_items=alt_min_items, uniform_sample=uniform, quantile=quantile)
    from judgelab.output.steps import write_estimates
    from judgelab.cli.common import NotesDisplay
    from judgelab.output.record import input_file

    given = [("store", store), ("ratings", ratings), ("human", human), ("escalation", escalation),
             ("escalated_human", escalated_human)]
    write_estimates(result, out, hybrid_notes, settings={"alpha": alpha, "epsilon": epsilon, "quantile": quantile,
                                                         "target_half_width": target_half_width},
                    inputs=[input_file(role, p) for role, p in given if p is not None], display=NotesDisplay())
    tables = result.tables()

    for note in hybrid_notes:
        console.print(f"note: {note}")
    level = f"{1 - alpha:.0%} {'t' if quantile == 't' else 'normal (ppi-python)'}"
    show = ["criterion", "system", "method", "estimate", "ci_low", "ci_high", "half_width", "df", "n_human", "n_judge", "lam"]
    print_table(tables["estimates"][[c for c in show if c in tables["estimates"]]],
                title=f"Mean rating per system ({level} intervals): PPI++ vs human-only vs judge-only ({result.judge})")
    if not tables["differences"].empty:
        cols = ["criterion", "system_a", "system_b", "method", "estimate", "ci_low", "ci_high", "p_value"]
        print_table(tables["differences"][cols], title="Difference between systems (A - B)")
    for m in result.means:
        if m.note:
            console.print(f"note ({m.system}, {m.criterion}): {m.note}")
    for d in result.differences:
        if d.note:
            console.print(f"note ({d.system_a} - {d.system_b}, {d.criterion}): {d.note}")
    for a in result.alt_tests:
        if a.ran and a.result is not None:
            r = a.result
            console.print(f"Alt-Test ({a.criterion}): winning rate {r.winning_rate:.2f}, advantage probability "
                          f"{r.advantage_probability:.2f}, epsilon {r.epsilon} → the judge "
                          f"{'may' if r.passed else 'may not'} replace the annotators")
        else:
            console.print(f"Alt-Test ({a.criterion}) cannot run: {a.reason}")
    if "plan" in tables:
        cols = ["criterion", "scope", "systems", "n_human_now", "n_needed", "more_needed", "predicted_half_width",
                "valid_from", "n_human_only", "note"]
        print_table(tables["plan"][cols], title=f"Human ratings needed for a half-width of {target_half_width} "
                                                 "(per system for a difference)")
    for note in result.notes:
        console.print(f"note: {note}")
    console.print(f"wrote {', '.join(sorted(p.name for p in out.iterdir() if p.suffix in {'.csv', '.json'}))} to {out}")


def _hybrid(store, ratings, human, escalation: Path, escalated_human: Optional[Path]):
    """``--escalation``: the hybrid rater's predictions beside the random human sample (--human)."""
    from judgelab.escalate import hybrid_ratings, read_escalation
    from judgelab.ratings import combine, read_ratings

    if store is not None or ratings is not None:
        raise JudgelabError("--escalation replaces RATINGS and --store: the predictions are escalation.csv's ratings")
    if human is None:
        raise JudgelabError("--escalation needs --human: a uniform random sample of human ratings (PPI's labelled set; "
                            "never the escalated items)")
    people = _people(read_ratings(escalated_human)) if escalated_human is not None else None
    rows, notes = hybrid_ratings(read_escalation(escalation), people)
    return combine([rows, _people(read_ratings(human))]), notes


def _people(df):
    from judgelab.raters import person_label

    df["rater"] = [person_label(r) for r in df["rater"]]
    return df


def _load_ratings(store: Optional[Path], ratings: Optional[Path], human: Optional[Path]):
    """(ratings table, whether the human items were a uniform sample: True, False or None unknown)."""
    import json

    from judgelab.raters import person_label
    from judgelab.ratings import combine, read_ratings

    if store is not None and (ratings is not None or human is not None):
        raise JudgelabError("give --store, or RATINGS with --human, not both")
    if store is not None:
        from judgelab.store import Store

        with Store(store, read_only=True) as s:  # never locks: works while the annotation server runs
            frame = s.ratings()
        uniform = None
        plan = Path(store).parent / "annotation.json"
        if plan.is_file():
            try:
                uniform = bool(json.loads(plan.read_text(encoding="utf-8"))["uniform_sample"])
            except (OSError, ValueError, KeyError, TypeError):
                uniform = None
        return frame, uniform
    if ratings is None or human is None:
        raise JudgelabError("give --store FOLDER/store.sqlite, or RATINGS (judge.csv) with --human human.csv")
    judge = read_ratings(ratings)
    people = read_ratings(human)
    people["rater"] = [person_label(r) for r in people["rater"]]
    return combine([judge, people]), None
