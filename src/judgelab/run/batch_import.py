"""``judgelab batch import``: the answers of offline batch files, checked whole, then recorded in the ledger.

:func:`check_import` reads every line of every file and checks it against the store before
anything is written; :func:`import_batch` then reads the files a second time and records the
answers in the call ledger exactly as live answers (one transaction per judge). Memory holds the
keys and the answers to write, never a file's parsed lines. Refused in one line, nothing written:

* a file that cannot be read or holds no line; a line that is not UTF-8, not JSON, or JSON that
  cannot be stored (a lone UTF-16 surrogate escape such as ``"\\ud800"``), naming file and line;
* a line that is no batch-output line: no ``custom_id``, neither ``response`` nor ``error``, or a
  batch *request* (``custom_id, method, url, body``: the exported file instead of its answers);
* a ``custom_id`` not exported from this store (another run, other settings, another store);
* an answer whose ``response.body.model`` is not the model its request was exported for
  (:func:`same_model`: the same name, or a provider's dated snapshot of it).

**Decision: another model's answers are recorded as that model's, never as the judge's.** A ledger
key hashes the judge's identity (kind, model, request style, endpoint), and every run of that judge
uses the answers under its keys. With ``accept_model=NAME`` each answer is recorded under the key
its request has for the judge of model NAME — the exported judge's identity with ``model`` =
NAME (``openai:NAME@URL``, same endpoint and style) — so the same ``rate`` command with
``--judge openai:NAME@URL`` uses them without a call, while a run of the exported judge does not:
its requests stay unanswered and are exported again.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

from judgelab.digest import keyed_json
from judgelab.errors import JudgelabError
from judgelab.run.batchfile import OutputLine, output_line, record_output

if TYPE_CHECKING:
    from judgelab.store import Store

__all__ = ["BatchImport", "ImportCheck", "Target", "check_import", "import_batch", "same_model", "judge_string"]

#: A JSON escape of a UTF-16 surrogate: only such a line can decode to text that UTF-8 cannot store.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: A provider's dated snapshot of a model: ``-2024-07-18`` or ``-0613`` after the name asked for.
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})")
_REQUEST_FIELDS = frozenset({"custom_id", "method", "url", "body"})


def same_model(asked: str, answered: str) -> bool:
    """Whether an answer's ``model`` names the model asked: the same name, or a dated snapshot of it.

    OpenAI answers ``gpt-4o-mini`` as ``gpt-4o-mini-2024-07-18``; vLLM answers with the served
    name it was asked for (a request naming another model fails there).

    Example:
        >>> same_model("m", "m"), same_model("gpt-4o-mini", "gpt-4o-mini-2024-07-18"), same_model("gpt-4", "gpt-4-0613")
        (True, True, True)
        >>> same_model("m", "some-other-model-7b"), same_model("Qwen2.5-1.5B", "Qwen2.5-1.5B-Instruct")
        (False, False)
    """
    if answered == asked:
        return True
    return answered.startswith(asked) and _SNAPSHOT.fullmatch(answered[len(asked):]) is not None


def judge_string(identity: dict[str, Any]) -> str:
    """How ``--judge`` names the judge of an identity (a fleet's replicas are not in its identity).

    Example:
        >>> judge_string({"kind": "openai", "model": "m", "style": "chat", "base_url": "http://h:8000/v1"})
        'openai:m@http://h:8000/v1'
    """
    name = f"{identity.get('kind', 'openai')}:{identity.get('model', '')}"
    if identity.get("base_url"):
        return f"{name}@{identity['base_url']}"
    return f"{name}@URL1,URL2,… (the same replicas)" if identity.get("endpoint") == "fleet" else name


class Target(NamedTuple):
    """Where one exported request's answer is recorded: ledger key, canonical request JSON, the
    judge's request style and model (the exported judge's, or the accepted model's) and its kind."""

    key: str
    request: str
    style: str
    model: str
    kind: str = "openai"


@dataclass(frozen=True)
class ImportCheck:
    """What :func:`check_import` found (nothing is written by it).

    Attributes:
        lines: answer lines read.
        batches: judgelab's ids of the batches the answers belong to.
        targets: exported key → :class:`Target` (the same key unless another model was accepted).
        accepted: the other model whose answers are recorded as its own ("" when none).
        judges: the judges whose runs use the answers, as ``--judge`` names them.
    """

    lines: int
    batches: tuple[str, ...]
    targets: dict[str, Target]
    accepted: str = ""
    judges: tuple[str, ...] = ()


@dataclass(frozen=True)
class BatchImport:
    """What :func:`import_batch` recorded.

    Attributes:
        batches: judgelab's ids of the batches the answers belong to.
        lines: answer lines read.
        new: answers recorded in the ledger now.
        already: answers the ledger held already (a second import records nothing).
        failed: requests the file reports as failed or whose answer is unreadable (asked again by the next export).
        store: the store.
        examples: up to three ``(custom_id, why)`` of failed requests.
        accepted: the other model whose answers were recorded as its own ("" when none).
        judges: the judges whose runs use the answers, as ``--judge`` names them.
    """

    batches: tuple[str, ...]
    lines: int
    new: int
    already: int
    failed: int
    store: Path
    examples: tuple[tuple[str, str], ...] = field(default=())
    accepted: str = ""
    judges: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"schema": 1, "batches": list(self.batches), "lines": self.lines, "new": self.new,
                "already": self.already, "failed": self.failed, "store": str(self.store),
                "examples": [list(e) for e in self.examples], "accepted": self.accepted, "judges": list(self.judges)}


# -- reading -------------------------------------------------------------------------------------
def _entries(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, entry)`` of each non-blank line of a batch-output file, read line by line."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise JudgelabError(f"cannot read {path}: {exc.strerror or exc}") from None
    empty = True
    with handle:
        try:
            for number, raw in enumerate(handle, start=1):
                where = f"{path} line {number}"
                entry = _entry(raw, where, first=number == 1)
                if entry is not None:
                    empty = False
                    yield where, entry
        except OSError as exc:
            raise JudgelabError(f"cannot read {path}: {exc.strerror or exc}") from None
    if empty:
        raise JudgelabError(f"{path} is empty: give the answers file that vllm run-batch -o (or the provider) wrote")


def _entry(raw: bytes, where: str, first: bool) -> dict[str, Any] | None:
    """One line as a batch-output object (``None`` when blank), or one line saying what is wrong with it."""
    try:
        text = raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        raise JudgelabError(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); "
                            "a batch-output file is UTF-8 JSON, one object per line") from None
    if not text.strip():
        return None
    try:
        entry = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = f"{exc.msg} at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise JudgelabError(f"{where}: not JSON ({why}); a batch-output file has one JSON object per line") from None
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(entry, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise JudgelabError(f"{where}: a lone surrogate escape (such as \\ud800) is no Unicode text and cannot be "
                                "stored; nothing was imported: answer this request again or remove the line") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("custom_id"), str):
        raise JudgelabError(f"{where}: no custom_id; not a batch-output line")
    if "response" not in entry and "error" not in entry:
        if _REQUEST_FIELDS <= entry.keys():
            raise JudgelabError(f"{where}: a batch request (custom_id, method, url, body), not an answer: import the "
                                "answers vllm run-batch -o wrote, not the exported file")
        raise JudgelabError(f"{where}: neither response nor error; not a batch-output line")
    return entry


def _scan(paths: list[Path]) -> tuple[int, dict[str, str], list[tuple[str, str, str]]]:
    """Every line checked: (lines, custom_id → where it first occurs, (where, custom_id, model) of answers)."""
    lines = 0
    where_of: dict[str, str] = {}
    answered: list[tuple[str, str, str]] = []
    for path in paths:
        for where, entry in _entries(Path(path)):
            line = output_line(entry)
            lines += 1
            where_of.setdefault(line.custom_id, where)
            model = line.body.get("model") if line.body is not None else None
            if isinstance(model, str) and model:  # an answer naming no model is read (or failed) as it is
                answered.append((where, line.custom_id, model))
    return lines, where_of, answered


# -- checking ------------------------------------------------------------------------------------
def check_import(paths: list[Path], store: "Store", accept_model: str | None = None) -> ImportCheck:
    """Check batch-output files against ``store`` before anything is written.

    Args:
        paths: batch-output files; store: the store the requests were exported from.
        accept_model: record answers of this other model as its own (see the module's Decision).

    Returns:
        :class:`ImportCheck`.

    Raises:
        JudgelabError: one line naming the file and line of the first problem (see the module).
    """
    lines, where_of, answered = _scan(paths)
    owners = store.batches_of(where_of)
    files = {b.id for b in store.batches(kind="file")}
    owned = {k: [b for b in owners.get(k, []) if b in files] for k in where_of}
    unknown = [k for k in where_of if not owned[k]]
    if unknown:
        raise JudgelabError(f"{where_of[unknown[0]]}: {len(unknown)} of {len(where_of)} answers were not exported from "
                            f"{store.path} (custom_id {unknown[0][:16]}…): the file belongs to another run, other "
                            "settings or another store; nothing was imported")
    batches = tuple(sorted({b for found in owned.values() for b in found}))
    identities: dict[str, dict[str, Any]] = {}
    targets: dict[str, Target] = {}
    accepted = ""
    for b in batches:
        for key, (request, _) in store.batch_requests(b).items():
            if key in where_of and key not in targets:
                target, identity = _target(key, request, accept_model)
                targets[key] = target
                identities[key] = identity
                accepted = accepted or (target.model if target.key != key else "")
    _check_models(answered, targets, identities, accept_model if accepted else None)
    judges = sorted({judge_string(dict(identities[k], model=t.model)) for k, t in targets.items()})
    return ImportCheck(lines, batches, targets, accepted, tuple(judges))


def _target(key: str, request: str, accept_model: str | None) -> tuple[Target, dict[str, Any]]:
    """Where the answer of one exported request is recorded, and the exported judge's identity."""
    described = json.loads(request)
    identity = described.get("judge") or {}
    model = str(identity.get("model", ""))
    style = str(identity.get("style", "chat"))
    kind = str(identity.get("kind", "openai"))
    if not accept_model or same_model(model, accept_model):
        return Target(key, request, style, model, kind), identity
    new_key, new_request = keyed_json(dict(described, judge=dict(identity, model=accept_model)))
    return Target(new_key, new_request, style, accept_model, kind), identity


def _check_models(answered: list[tuple[str, str, str]], targets: dict[str, Target],
                  identities: dict[str, dict[str, Any]], accepted: str | None) -> None:
    """Refuse answers of a model other than the one each was exported for (or the accepted one)."""
    wrong = [(where, key, model) for where, key, model in answered
             if not same_model(accepted or str(identities[key].get("model", "")), model)]
    if not wrong:
        return
    where, key, model = wrong[0]
    count = f"{len(wrong)} of {len(answered)} answers are from another model; nothing was imported"
    if accepted:
        raise JudgelabError(f"{where}: the answer is from model {model!r}, not --accept-model {accepted!r}; {count}")
    identity = identities[key]
    asked = str(identity.get("model", ""))
    raise JudgelabError(
        f"{where}: the answer is from model {model!r}, but its request was exported for {asked!r} "
        f"(--judge {judge_string(identity)}); {count}. Answer the file with {asked!r} (vllm run-batch --model {asked}), "
        f"or record them as answers of {model!r} (for --judge {judge_string(dict(identity, model=model))}, never for "
        f"{asked!r}) with --accept-model {model}")


# -- recording -----------------------------------------------------------------------------------
def _lines(paths: list[Path], targets: dict[str, Target], keys: set[str]) -> Iterator[OutputLine]:
    """The files read again: each line of ``keys`` under the ledger key it is recorded with."""
    for path in paths:
        for where, entry in _entries(Path(path)):
            line = output_line(entry)
            target = targets.get(line.custom_id)
            if target is None:
                raise JudgelabError(f"{where}: the file changed while it was imported; import it again")
            if target.key in keys:
                yield OutputLine(target.key, line.body, line.error)


def import_batch(paths: list[Path], out: Path, accept_model: str | None = None) -> BatchImport:
    """Record the answers of batch-output files in ``out/store.sqlite``'s ledger.

    Every file is checked whole first (:func:`check_import`); a refused import writes nothing.
    Answers the ledger holds already are left as they are (importing twice changes nothing);
    failed lines are counted, and their calls are exported again by the next ``--export-batch``.

    Args:
        paths: batch-output files (``vllm run-batch -o``, or a provider's output and error files).
        out: the run's output folder.
        accept_model: record the answers of this other model as its own (module docstring).

    Returns:
        :class:`BatchImport`.

    Raises:
        JudgelabError: a missing store, or anything :func:`check_import` refuses.
    """
    from judgelab.models.registry import backend_entry
    from judgelab.store import Store

    store_path = Path(out) / "store.sqlite"
    if not store_path.is_file():
        raise JudgelabError(f"no store in {out}: import into the --out folder the batch was exported from")
    with Store(store_path) as store:
        check = check_import(paths, store, accept_model)
        requests = {t.key: t.request for t in check.targets.values()}
        before = store.call_keys() & requests.keys()
        answers: dict[str, Any] = {}
        failures: dict[str, str] = {}
        for kind, style, model in sorted({(t.kind, t.style, t.model) for t in check.targets.values()}):
            keys = {t.key for t in check.targets.values() if (t.kind, t.style, t.model) == (kind, style, model)}
            read = backend_entry(kind).read_answer
            if read is None:
                raise JudgelabError(f"the {kind} judge cannot read batch answers; batches need an openai:MODEL judge")
            got, failed = record_output(store, _lines(paths, check.targets, keys), requests,
                                        lambda body, r=read, j={"style": style, "model": model}: r(body, j))
            answers.update(got)
            failures.update(failed)
        if not check.accepted:  # the exported requests are answered; accepted answers leave them open
            _mark(store, check.batches, answers, failures)
    new = len(set(answers) - before)
    exported = {t.key: k for k, t in check.targets.items()}  # failures are named by the file's custom_id
    examples = tuple(sorted((exported[k], why) for k, why in failures.items())[:3])
    return BatchImport(check.batches, check.lines, new, len(set(answers) & before), len(failures), store_path,
                       examples, check.accepted, check.judges)


def _mark(store: "Store", batches: tuple[str, ...], answers: dict[str, Any], failures: dict[str, str]) -> None:
    """Set the batches' request states from the answers; a batch with every request answered is done."""
    for b in batches:
        states = store.batch_requests(b)
        store.set_request_states(b, [(k, "answered" if k in answers else "failed") for k in states
                                     if k in answers or k in failures])
        if all(k in answers or s == "answered" for k, (_, s) in states.items()):
            store.update_batch(b, state="done")
