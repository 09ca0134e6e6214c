"""The annotation web app (Starlette): one item at a time, the judge's rubric, keyboard first.

Routes:

* ``GET /`` — the start page (a list of name links; with tokens nothing but "use your link");
* ``GET /a/<name>``, ``POST /a/<name>`` — an annotator by name (without ``--tokens``);
* ``GET /t/<token>``, ``POST /t/<token>`` — an annotator by secret link token (with ``--tokens``);
* ``GET /overview`` (``?token=<organiser token>`` with tokens) — progress, alpha, judge–human correlation,
  and whether the folder's report.html shows every rating;
* ``POST /overview/report`` (the same token) — write the folder's report.html now, back to the overview.

``GET`` shows the annotator's next unrated item (their own seeded order), so returning to the
link continues where they left. ``POST`` records the form — written to the store before the
response is sent — and redirects (303) to the next item.

Every response carries a Content-Security-Policy that allows only the page's own inline CSS
and JS (by a per-response nonce) and form posts to the app itself, ``no-referrer`` (link
tokens never leave in a Referer header), ``nosniff`` and ``frame-ancestors 'none'``. Without
tokens the app answers only requests addressed to a loopback host name (a guard against DNS
rebinding); with tokens every annotator page needs a token, compared in constant time.
"""
from __future__ import annotations

import re
import secrets
from typing import Iterable
from urllib.parse import parse_qsl, quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from judgelab.annotate.pages import render_page
from judgelab.annotate.session import AnnotationSession, SubmissionError
from judgelab.errors import JudgelabError
from judgelab.serve import LOOPBACK_NAMES, LoopbackOnly

__all__ = ["create_app", "parse_form"]
MAX_BODY = 64 * 1024
_NOTES = {
    "saved": "Saved.",
    "already": "You had rated that item already; your first answer is kept.",
}


_FIXED_FIELDS = ("position", "shown", "signature", "comment")
_RATING_FIELD = re.compile(r"r(0|[1-9][0-9]{0,5})")  # one spelling per index: r0, r1 … (not r00)
_POSITION = re.compile(r"[0-9]{1,9}")


def parse_form(body: bytes, n_ratings: int) -> tuple[dict[str, str], dict[int, str]]:
    """The fields of a posted rating form: ``position``, ``shown``, ``signature``, ``comment`` and
    ``r0`` … ``r{n_ratings-1}`` (the ratings, by their index in the form).

    Returns:
        (the fields by name, the ratings by index).

    Raises:
        SubmissionError: a body that is not UTF-8, a field the form does not have (``r²``,
            ``r`` + thousands of digits, ``r7`` of a form with 2 ratings), a field sent twice or a
            position that is not a number — one short line, shown with HTTP 400.

    Example:
        >>> parse_form(b"position=0&shown=1.5&signature=ab&r0=4&r1=2&comment=", 2)
        ({'position': '0', 'shown': '1.5', 'signature': 'ab', 'r0': '4', 'r1': '2', 'comment': ''}, {0: '4', 1: '2'})
        >>> parse_form(b"position=0&r0=4&r0=5", 2)
        Traceback (most recent call last):
        ...
        judgelab.annotate.session.SubmissionError: the field 'r0' is sent twice
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise SubmissionError("the form is not UTF-8 text") from None
    fields: dict[str, str] = {}
    values: dict[int, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True):
        shown_name = repr(name[:20] + ("…" if len(name) > 20 else ""))
        if name in fields:
            raise SubmissionError(f"the field {shown_name} is sent twice")
        rating = _RATING_FIELD.fullmatch(name)
        if rating is not None and int(rating.group(1)) < n_ratings:
            values[int(rating.group(1))] = value
        elif name not in _FIXED_FIELDS:
            raise SubmissionError(f"this form has no field {shown_name}")
        fields[name] = value
    if "position" in fields and not _POSITION.fullmatch(fields["position"]):
        raise SubmissionError(f"the position {fields['position'][:20]!r} is not a number")
    return fields, values


def _headers(nonce: str) -> dict[str, str]:
    return {
        "Content-Security-Policy": (f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; "
                                    "img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
    }


def _page(name: str, status: int = 200, **context: object) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    context.setdefault("title", "judgelab annotation")
    return HTMLResponse(render_page(name, nonce, **context), status_code=status, headers=_headers(nonce))


def _not_found() -> HTMLResponse:
    return _page("message.html", 404, heading="Not found", message="There is nothing at this address.")


def create_app(session: AnnotationSession, allowed_hosts: Iterable[str] | None = LOOPBACK_NAMES) -> ASGIApp:
    """The ASGI app for one session.

    Args:
        session: the annotation session (store, plan, annotators).
        allowed_hosts: host names the app answers to when link tokens are off (default: loopback
            names); ``None`` answers any host (with tokens the links themselves are the secret).
    """
    use_tokens = session.annotators.use_tokens

    def base_url(kind: str, key: str) -> str:
        return f"/{kind}/{quote(key, safe='')}"

    async def index(request: Request) -> Response:
        return _page("index.html", tokens=use_tokens, names=list(session.annotators.names),
                     url_for_name=lambda name: base_url("a", name))

    async def by_query(request: Request) -> Response:  # the name form of the start page
        name = request.query_params.get("name", "").strip()
        if session.annotator_by_name(name) is None:
            return _not_found()
        return RedirectResponse(base_url("a", name), status_code=303)

    def who(request: Request) -> tuple[str, str] | None:
        kind = request.url.path.split("/", 2)[1]
        key = request.path_params["key"]
        annotator = session.annotator_by_name(key) if kind == "a" else session.annotator_by_token(key)
        return (annotator, base_url(kind, key)) if annotator is not None else None

    def item_page(annotator: str, action: str, note: str = "", error: str = "", status: int = 200,
                  position: int | None = None, chosen: dict[int, str] | None = None, comment: str = "",
                  field_errors: dict[int, str] | None = None) -> Response:
        done, total = session.progress(annotator)
        if position is None:
            position = session.next_position(annotator)
        if position is None:
            return _page("done.html", status, done=done, total=total, note=note)
        shown = session.now()
        return _page("item.html", status, form=session.form(annotator, position), position=position, total=total,
                     done=done, action=action, shown=f"{shown:.3f}",
                     signature=session.sign(annotator, position, shown), note=note, error=error,
                     field_errors=field_errors or {}, chosen=chosen or {}, comment=comment)

    async def annotate_get(request: Request) -> Response:
        found = who(request)
        if found is None:
            return _not_found()
        annotator, action = found
        note = _NOTES.get(request.query_params.get("note", ""), "")
        return await run_in_threadpool(item_page, annotator, action, note)

    async def annotate_post(request: Request) -> Response:
        found = who(request)
        if found is None:
            return _not_found()
        annotator, action = found
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return _page("message.html", 413, heading="Too large", message="The form is too large.")
        try:
            fields, values = parse_form(body, len(session.outputs))
        except SubmissionError as exc:  # not a form this app served: nothing is recorded
            return _page("message.html", 400, heading="Bad form", message=f"{exc}; reload the page.")
        comment = fields.get("comment", "")
        try:
            position = int(fields.get("position", ""))
            shown = float(fields.get("shown", ""))
        except ValueError:
            return _page("message.html", 400, heading="Bad form", message="This form is incomplete; reload the page.")
        try:
            result = await run_in_threadpool(session.submit, annotator, position, shown, fields.get("signature", ""),
                                             values, comment)
        except SubmissionError as exc:
            ok_position = 0 <= position < len(session.items)
            return await run_in_threadpool(item_page, annotator, action, "", str(exc), 400,
                                           position if ok_position else None, values, comment, exc.rows)
        except JudgelabError as exc:  # the store could not be written: nothing was recorded
            return _page("message.html", 503, heading="Not saved", message=f"Your rating was not saved: {exc}")
        return RedirectResponse(f"{action}?note={'saved' if result.status == 'recorded' else 'already'}", status_code=303)

    report_line = {"text": ""}  # what the last report written from the overview said

    def overview_url(token: str | None, note: str = "") -> str:
        query = [f"token={quote(token, safe='')}"] if token else []
        return "/overview" + ("?" + "&".join(query + ([f"note={note}"] if note else [])) if query or note else "")

    async def overview(request: Request) -> Response:
        token = request.query_params.get("token")
        if not session.is_organiser(token):
            return _not_found()
        view = await run_in_threadpool(session.overview)
        note = report_line["text"] if request.query_params.get("note") == "report" else ""
        return _page("overview.html", overview=view, template=session.template.name, outputs=list(session.outputs),
                     sample=session.plan.settings.get("sample", "all"), uniform=session.plan.uniform,
                     report=session.report_state(), note=note, report_action=overview_url(token).replace(
                         "/overview", "/overview/report", 1), title="judgelab annotation: overview")

    async def write_report(request: Request) -> Response:
        token = request.query_params.get("token")
        if not session.is_organiser(token):
            return _not_found()
        from judgelab.annotate.report_link import refresh_report

        _, line = await run_in_threadpool(refresh_report, session.folder)
        report_line["text"] = line
        return RedirectResponse(overview_url(token, "report"), status_code=303)

    async def missing(request: Request) -> Response:
        return _not_found()

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/a", by_query, methods=["GET"]),
        Route("/a/{key}", annotate_get, methods=["GET"]),
        Route("/a/{key}", annotate_post, methods=["POST"]),
        Route("/t/{key}", annotate_get, methods=["GET"]),
        Route("/t/{key}", annotate_post, methods=["POST"]),
        Route("/overview", overview, methods=["GET"]),
        Route("/overview/report", write_report, methods=["POST"]),
        Route("/{rest:path}", missing),
    ]
    app: ASGIApp = Starlette(routes=routes)
    if not use_tokens and allowed_hosts is not None:
        app = LoopbackOnly(app, allowed_hosts, "this annotation")
    return app
