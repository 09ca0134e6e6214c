"""The annotate and human-estimate commands: every bad input is one line and exit 2; the server starts,
stops on Ctrl-C, and the estimates read the store or ratings files."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

from annotate_helpers import Server, env, judgelab, one_line_error, put_judge, read_rows, write_items


@pytest.fixture
def items(tmp_path):
    return write_items(tmp_path / "items.jsonl", per_system=4)


def annotate(*args):
    return judgelab("annotate", *args, timeout=60)


def in_process(capsys, *args: str) -> str:
    """The command in this process (fast): assert exit 2 and one error line; return it."""
    from judgelab.cli import main

    with pytest.raises(SystemExit) as stop:
        main(list(args))
    captured = capsys.readouterr()
    assert stop.value.code == 2, captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("judgelab: error: ") and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_other_hosts_need_tokens(tmp_path, items):
    """Binding to 0.0.0.0 without --tokens is refused with one line, exit 2."""
    line = one_line_error(annotate("--items", str(items), "--template", "plain-quality", "--out", str(tmp_path / "o"),
                                   "--host", "0.0.0.0"), "--host 0.0.0.0", "--tokens")
    assert "127.0.0.1" in line
    assert not (tmp_path / "o").exists()  # refused before anything was created


@pytest.mark.parametrize("extra,needles", [
    (["--template", "nope"], ["unknown template 'nope'"]),
    (["--criteria", "fluency,wit"], ["unknown criterion 'wit'"]),
    (["--variant", "shouty"], ["unknown instruction variant 'shouty'"]),
    (["--sample", "random:lots"], ["bad --sample"]),
    (["--sample", "random:99"], ["more items than there are (8)"]),
    (["--sample", "ids:/nonexistent/ids.txt"], ["ids file not found"]),
    (["--sample", "disagreement:3"], ["needs the judge's ratings"]),
    (["--stratify-by-system"], ["random:N only"]),
    (["--tokens"], ["--tokens needs --annotators"]),
    (["--annotators", "alice,../x"], ["bad annotator name '../x'"]),
    (["--annotators", "alice,alice"], ["twice"]),
    (["--template", "nle-esnli-pairwise"], ["comparisons"]),
    (["--port", "70000"], ["not a port number"]),
])
def test_bad_inputs_are_one_line(tmp_path, items, capsys, extra, needles):
    args = ["annotate", "--items", str(items), "--template", "plain-quality", "--out", str(tmp_path / "o"), "--port", "0", *extra]
    line = in_process(capsys, *args)
    assert all(n in line for n in needles), line


def test_missing_items_file(tmp_path, capsys):
    line = in_process(capsys, "annotate", "--items", str(tmp_path / "none.jsonl"), "--template", "plain-quality",
                      "--out", str(tmp_path / "o"))
    assert "file not found" in line


def test_missing_field_for_a_criterion(tmp_path, items, capsys):
    # chiang-lee-story's relevance needs a context; these items have none.
    line = in_process(capsys, "annotate", "--items", str(items), "--template", "chiang-lee-story", "--out", str(tmp_path / "o"))
    assert "needs the field 'context'" in line


def test_port_in_use(tmp_path, items, capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = in_process(capsys, "annotate", "--items", str(items), "--template", "plain-quality", "--out",
                          str(tmp_path / "o"), "--port", str(port))
        assert f"port {port}" in line and "in use" in line


def test_a_second_server_on_the_same_folder_and_ctrl_c(tmp_path, items):
    out = tmp_path / "o"
    server = Server("--items", str(items), "--template", "plain-quality", "--out", str(out), "--annotators", "alice",
                    "--port", "0", "--sample", "random:4", "--seed", "2")
    try:
        page = urllib.request.urlopen(server.links["alice"], timeout=10).read().decode()
        assert "Item 1 of 4" in page
        second = annotate("--items", str(items), "--template", "plain-quality", "--out", str(out), "--port", "0",
                          "--sample", "random:4", "--seed", "2")
        one_line_error(second, "is in use by judgelab process")
        other = annotate("--items", str(items), "--template", "plain-quality", "--out", str(out), "--port", "0")
        assert other.returncode == 2 and "Traceback" not in other.stderr
        server.proc.send_signal(signal.SIGINT)
        assert server.wait() == 0
        tail = server.stdout()
        assert "stopped; items rated of 4: alice 0" in tail and server.stderr() == ""
        assert f"report: {out / 'report.html'}" in tail and (out / "report.html").stat().st_size > 0  # written on stop
    finally:
        server.stop()
    # Another --sample for the same folder: one line naming the change.
    one_line_error(annotate("--items", str(items), "--template", "plain-quality", "--out", str(out), "--port", "0",
                            "--sample", "random:5", "--seed", "2"), "other settings", "'random:4' → 'random:5'")


def test_a_malformed_form_is_400_with_no_traceback_in_the_server_terminal(tmp_path, items):
    """The HTTP contract in a real server: a field named r² or r + 5,000 digits was HTTP 500 and a
    traceback on the server's stderr; it is a 400 page, nothing is stored, and stderr stays empty."""
    import re
    import sqlite3
    import urllib.error
    import urllib.parse

    out = tmp_path / "out"
    server = Server("--items", str(items), "--template", "plain-quality", "--out", str(out), "--annotators", "alice",
                    "--port", "0")
    try:
        link = server.links["alice"]
        page = urllib.request.urlopen(link, timeout=10).read().decode()
        form = {name: re.search(rf'name="{name}" value="([^"]*)"', page).group(1) for name in ("position", "shown", "signature")}
        for field in ("r²", "r" + "1" * 5000):
            body = urllib.parse.urlencode({**form, "r0": "4", "r1": "2", field: "4"}).encode()
            with pytest.raises(urllib.error.HTTPError) as answer:
                urllib.request.urlopen(urllib.request.Request(link, data=body, method="POST"), timeout=10)
            assert answer.value.code == 400 and "no field" in answer.value.read().decode()
        server.proc.send_signal(signal.SIGINT)
        assert server.wait() == 0
        assert server.stderr() == ""
    finally:
        server.stop()
    db = sqlite3.connect(out / "store.sqlite")
    try:
        assert db.execute("SELECT COUNT(*) FROM judgments WHERE rater LIKE 'human:%'").fetchone() == (0,)
    finally:
        db.close()


def test_start_up_does_not_import_the_web_stack():
    code = ("import sys\nfrom judgelab.cli import app\n"
            "print(','.join(m for m in ('starlette', 'uvicorn', 'pandas', 'judgelab.annotate.session') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr


# -- human-estimate ----------------------------------------------------------------------


def _store_with_people(tmp_path):
    items = write_items(tmp_path / "items.jsonl", per_system=8)
    rows = read_rows(items)
    out = tmp_path / "run"
    out.mkdir()
    put_judge(out / "store.sqlite", rows, lambda r, c, s: 1.0 + (int(r["id"][-2:]) + s) % 5)
    from judgelab.store import Judgment, Store

    people = []
    for r in rows:
        k = int(r["id"][-2:])
        if k < 5:
            for a, shift in (("ann", 0), ("bob", 1)):
                for c in ("fluency", "coherence"):
                    v = float(min(5, 1 + (k + shift) % 5))
                    people.append(Judgment(r["id"], r["system"], r["group"], c, f"human:{a}", 0, v, None, None, None, "ok", None))
    with Store(out / "store.sqlite") as store:
        store.put(judgments=people)
    return out


def test_human_estimate_from_a_store_and_from_files_agree(tmp_path):
    run = _store_with_people(tmp_path)
    a = judgelab("human-estimate", "--store", str(run / "store.sqlite"), "--out", str(tmp_path / "est-a"),
                 "--target-half-width", "0.5")
    assert a.returncode == 0, a.stderr
    assert "PPI++" in a.stdout and "Alt-Test (fluency) cannot run" in a.stdout and "at least 3 annotators" in a.stdout
    assert sorted(p.name for p in (tmp_path / "est-a").iterdir()) == [
        "README.md", "alt_test.csv", "differences.csv", "estimates.csv", "estimates.json", "plan.csv", "report.html",
        "results.json", "run.json"]
    assert judgelab("export", str(run / "store.sqlite"), "--to", str(tmp_path / "all.csv")).returncode == 0
    import pandas as pd

    table = pd.read_csv(tmp_path / "all.csv")
    table[~table["rater"].str.startswith("human:")].to_csv(tmp_path / "judge.csv", index=False)
    humans = table[table["rater"].str.startswith("human:")].copy()
    humans["rater"] = humans["rater"].str.removeprefix("human:")  # a plain human file: names without the prefix
    humans.to_csv(tmp_path / "human.csv", index=False)
    b = judgelab("human-estimate", str(tmp_path / "judge.csv"), "--human", str(tmp_path / "human.csv"),
                 "--out", str(tmp_path / "est-b"), "--target-half-width", "0.5")
    assert b.returncode == 0, b.stderr
    ja = json.loads((tmp_path / "est-a" / "estimates.json").read_text())
    jb = json.loads((tmp_path / "est-b" / "estimates.json").read_text())
    assert ja["schema"] == 1 and ja["means"] == jb["means"] and ja["differences"] == jb["differences"]
    est = pd.read_csv(tmp_path / "est-a" / "estimates.csv")
    assert {"ci_low", "ci_high"} <= set(est.columns) and est["ci_low"].dtype.kind == "f"
    # Without a target the plan file is not left behind.
    assert judgelab("human-estimate", "--store", str(run / "store.sqlite"), "--out", str(tmp_path / "est-a")).returncode == 0
    assert not (tmp_path / "est-a" / "plan.csv").exists()


@pytest.mark.parametrize("args,needle", [
    ([], "--store"),
    (["--store", "nope.sqlite"], "store not found"),
    (["r.csv", "--store", "x.sqlite"], "not both"),
    (["r.csv"], "--human"),
])
def test_human_estimate_bad_inputs(tmp_path, capsys, args, needle):
    assert needle in in_process(capsys, "human-estimate", *args, "--out", str(tmp_path / "e"))


def test_human_estimate_unknown_criterion_and_target(tmp_path, capsys):
    run = _store_with_people(tmp_path)
    store = str(run / "store.sqlite")
    e = str(tmp_path / "e")
    assert "'wit'" in in_process(capsys, "human-estimate", "--store", store, "--criteria", "wit", "--out", e)
    assert "unknown system 'zeta'" in in_process(capsys, "human-estimate", "--store", store, "--systems", "alpha-sys,zeta",
                                                 "--out", e)
    assert "positive" in in_process(capsys, "human-estimate", "--store", store, "--target-half-width", "-1", "--out", e)
