"""``batch import``: answers are bound to the model asked, and every bad file is one line with nothing written."""
import json
import sqlite3
from pathlib import Path

import pytest

from judgelab.errors import JudgelabError
from judgelab.run.batch_import import check_import, import_batch, same_model
from judgelab.testing.openai_stub import answer_batch_file
from conftest import one_line_error, run_cli, write_items

OTHER = "some-other-model-7b"


def _counts(out: Path) -> tuple[int, int]:
    """(ledger rows, judgments) of a run folder's store."""
    with sqlite3.connect(out / "store.sqlite") as db:
        return (db.execute("SELECT COUNT(*) FROM calls").fetchone()[0],
                db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])


def _answers(requests: Path, model: str | None = None) -> Path:
    """The stand-in's answers to an exported file; with ``model``, each answer names that model (as
    ``vllm run-batch --model MODEL`` serving it under another name would write)."""
    out = requests.with_name(requests.stem + ".out.jsonl")
    answer_batch_file(str(requests), str(out), seed=3)
    if model is not None:
        lines = [json.loads(l) for l in out.read_text().splitlines()]
        for line in lines:
            line["response"]["body"]["model"] = model
        out.write_text("".join(json.dumps(l) + "\n" for l in lines))
    return out


@pytest.fixture
def exported(tmp_path, stub_factory):
    """A run folder with 8 exported requests (4 items × 2 criteria) of ``openai:m`` at a stub, which
    counts the calls a later run makes."""
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 4)
    args = ["rate", "--items", str(items), "--criteria", "cohesiveness,likability", "--quiet", "--seed", "7"]
    out = tmp_path / "run"
    r = run_cli(*args, "--judge", f"openai:m@{stub.base_url}", "--out", str(out), "--export-batch", str(tmp_path / "req.jsonl"))
    assert r.returncode == 0, r.stderr
    assert len((tmp_path / "req.jsonl").read_text().splitlines()) == 8
    return args, out, tmp_path / "req.jsonl", stub


# -- the command line ------------------------------------------------------------------------------
def test_another_models_answers_are_refused_and_nothing_is_written(exported):
    _, out, requests, _ = exported
    answers = _answers(requests, OTHER)
    line = one_line_error(run_cli("batch", "import", str(answers), "--out", str(out)),
                          f"{answers} line 1", repr(OTHER), "exported for 'm'", "8 of 8", f"--accept-model {OTHER}")
    assert "nothing was imported" in line
    assert _counts(out) == (0, 0)


def test_right_model_imports_and_the_next_rate_makes_no_call(exported):
    args, out, requests, stub = exported
    imported = run_cli("batch", "import", str(_answers(requests)), "--out", str(out))
    assert imported.returncode == 0, imported.stderr
    assert "8 new, 0 already" in imported.stdout and _counts(out) == (8, 0)
    rerun = run_cli(*args, "--judge", f"openai:m@{stub.base_url}", "--out", str(out))
    assert rerun.returncode == 0, rerun.stderr
    assert "calls made 0, cache hits 8" in rerun.stdout.replace("\n", " ")
    assert _counts(out) == (8, 24) and stub.answered() == []  # 8 calls of n=3 samples


def test_accept_model_records_the_answers_as_the_other_models(exported):
    args, out, requests, stub = exported
    imported = run_cli("batch", "import", str(_answers(requests, OTHER)), "--out", str(out), "--accept-model", OTHER)
    assert imported.returncode == 0, imported.stderr
    assert f"as answers of {OTHER}: 8 new" in imported.stdout
    assert f"--judge openai:{OTHER}@{stub.base_url}" in imported.stdout
    with sqlite3.connect(out / "store.sqlite") as db:
        recorded = [(json.loads(q)["judge"]["model"], json.loads(a)["model"])
                    for q, a in db.execute("SELECT request, response FROM calls")]
    assert recorded == [(OTHER, OTHER)] * 8

    # the other model's run uses them without a call ...
    other = run_cli(*args, "--judge", f"openai:{OTHER}@{stub.base_url}", "--out", str(out))
    assert other.returncode == 0, other.stderr
    assert "calls made 0, cache hits 8" in other.stdout.replace("\n", " ") and stub.answered() == []
    # ... and the exported judge reuses none: its next export writes all 8 again, its run asks all 8
    again = run_cli(*args, "--judge", f"openai:m@{stub.base_url}", "--out", str(out),
                    "--export-batch", str(requests.with_name("again.jsonl")))
    assert again.returncode == 0 and "8 requests" in again.stdout
    live = run_cli(*args, "--judge", f"openai:m@{stub.base_url}", "--out", str(out))
    assert live.returncode == 0, live.stderr
    assert len(stub.answered()) == 8 and "calls made 8, cache hits 0" in live.stdout.replace("\n", " ")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _with_line(answers: Path, number: int, text: str) -> bytes:
    lines = _lines(answers)
    lines[number - 1] = text
    return ("\n".join(lines) + "\n").encode("utf-8")


def _surrogate(answers: Path) -> bytes:
    line = json.loads(_lines(answers)[5])
    line["response"]["body"]["choices"][0]["message"]["content"] = "PLACEHOLDER"
    return _with_line(answers, 6, json.dumps(line).replace("PLACEHOLDER", "4 \\ud800"))


BAD_FILES = {
    "the request file": (lambda answers, requests: requests.read_bytes(), ["line 1", "a batch request", "not the exported file"]),
    "an empty file": (lambda answers, requests: b"", ["is empty"]),
    "blank lines only": (lambda answers, requests: b"\n \n", ["is empty"]),
    "bytes that are not UTF-8": (lambda answers, requests: answers.read_bytes().replace(b'"content": "', b'"content": "\xff', 1),
                                 ["line 1", "not UTF-8", "0xff"]),
    "a lone surrogate": (lambda answers, requests: _surrogate(answers), ["line 6", "lone surrogate"]),
    "a torn last line": (lambda answers, requests: _with_line(answers, 8, _lines(answers)[7][:40]), ["line 8", "not JSON"]),
    "a line that is no answer": (lambda answers, requests: _with_line(answers, 7, json.dumps({"custom_id": "x"})),
                                 ["line 7", "neither response nor error"]),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_a_bad_file_is_one_line_and_writes_nothing(exported, case):
    _, out, requests, _ = exported
    answers = _answers(requests)
    make, needles = BAD_FILES[case]
    bad = out.parent / "bad.jsonl"
    bad.write_bytes(make(answers, requests))
    one_line_error(run_cli("batch", "import", str(answers), str(bad), "--out", str(out)), str(bad), *needles)
    assert _counts(out) == (0, 0)  # not even the good file given first
    listed = run_cli("batch", "list", str(out))
    assert " file exported: 8 requests" in listed.stdout


# -- in process: the check ---------------------------------------------------------------------
@pytest.fixture
def exported_store(tmp_path):
    from judgelab.datasets.items import Item
    from judgelab.run import RunSpec
    from judgelab.run.batch_export import export_batch

    spec = RunSpec(judge="openai:m@http://127.0.0.1:9/v1", samples=1, criteria=["cohesiveness"])
    items = [Item(f"i{n}", f"Story {n}.", context="p") for n in range(3)]
    assert export_batch(items, spec, tmp_path / "o", tmp_path / "r.jsonl").requests == 3
    return tmp_path / "o", tmp_path / "r.jsonl"


def test_check_import_keeps_the_exported_keys_for_the_judges_own_model(exported_store):
    from judgelab.store import Store

    out, requests = exported_store
    with Store(out / "store.sqlite") as store:
        check = check_import([_answers(requests)], store)
        assert check.lines == 3 and not check.accepted and check.judges == ("openai:m@http://127.0.0.1:9/v1",)
        assert all(t.key == key and t.model == "m" for key, t in check.targets.items())
        # the same judge's dated snapshot is the same model
        assert check_import([_answers(requests, "m-2024-07-18")], store).targets == check.targets
        # an empty model names none: taken as the exported model's
        assert check_import([_answers(requests, "")], store).targets == check.targets


def test_check_import_rekeys_accepted_answers_to_the_other_judges_identity(exported_store):
    from judgelab.digest import keyed_json
    from judgelab.models.backends.openai_compatible import OpenAIBackend
    from judgelab.store import Store

    out, requests = exported_store
    identity = OpenAIBackend(OTHER, base_url="http://127.0.0.1:9/v1", api_key="x").identity()
    with Store(out / "store.sqlite") as store:
        with pytest.raises(JudgelabError, match="not --accept-model 'third'"):
            check_import([_answers(requests, OTHER)], store, accept_model="third")
        check = check_import([_answers(requests, OTHER)], store, accept_model=OTHER)
        assert check.accepted == OTHER and check.judges == (f"openai:{OTHER}@http://127.0.0.1:9/v1",)
        for key, target in check.targets.items():
            described = json.loads(target.request)
            assert described["judge"] == identity and target.model == OTHER
            assert target.key != key and keyed_json(described) == (target.key, target.request)
        # accepting the judge's own model changes nothing
        assert check_import([_answers(requests)], store, accept_model="m").targets == check_import([_answers(requests)], store).targets
        assert store.call_keys() == set()


def test_a_bad_last_line_leaves_nothing_imported(exported_store):
    out, requests = exported_store
    answers = _answers(requests)
    answers.write_text(answers.read_text() + '{"custom_id": "k", "response": \n')
    with pytest.raises(JudgelabError, match=r"line 4: not JSON"):
        import_batch([answers], out)
    assert _counts(out) == (0, 0)
    assert import_batch([_answers(requests)], out).new == 3


def test_same_model_accepts_the_name_or_a_dated_snapshot():
    assert same_model("gpt-4o-mini", "gpt-4o-mini-2024-07-18") and same_model("gpt-4", "gpt-4-0613")
    assert same_model("Qwen/Qwen2.5-1.5B-Instruct", "Qwen/Qwen2.5-1.5B-Instruct")
    assert not same_model("m", OTHER) and not same_model("gpt-4o", "gpt-4o-mini")
    assert not same_model("Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B-Instruct") and not same_model("gpt-4", "gpt-4-turbo")
