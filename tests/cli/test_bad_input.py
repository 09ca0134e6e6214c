"""Each bad input: exit status 2 and one line naming the problem; no traceback."""
import json

import pytest

from conftest import run_cli, write_items


def check(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err


def scripted(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I rate it 4."}))
    return ["--judge", f"scripted-test-double:{script}", "--quiet", "--out", str(tmp_path / "out")]


def test_missing_file(tmp_path):
    check(run_cli("rate", "--items", str(tmp_path / "nope.jsonl"), *scripted(tmp_path)), "file not found", "nope.jsonl")


def test_unreadable_file(tmp_path):
    bad = tmp_path / "binary.jsonl"
    bad.write_bytes(b"\xff\xfe\x00garbage")
    check(run_cli("rate", "--items", str(bad), *scripted(tmp_path)), "not UTF-8")
    check(run_cli("rate", "--items", str(tmp_path), *scripted(tmp_path)), "is a folder")


def test_malformed_jsonl_names_the_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "text": "ok"}\n{"id": 2, "text": "broken"\n')
    check(run_cli("rate", "--items", str(bad), *scripted(tmp_path)), "line 2")


def test_missing_required_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "story": "wrong column"}\n')
    check(run_cli("rate", "--items", str(bad), *scripted(tmp_path)), "no field 'text'")
    items = write_items(tmp_path / "items.jsonl", 2, with_context=False)
    check(run_cli("rate", "--items", str(items), "--criteria", "relevance", *scripted(tmp_path)), "needs the field 'context'")


def test_unknown_template_and_criterion(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    check(run_cli("rate", "--items", str(items), "--template", "nope", *scripted(tmp_path)), "unknown template 'nope'")
    check(run_cli("rate", "--items", str(items), "--criteria", "beauty", *scripted(tmp_path)), "unknown criterion 'beauty'")
    check(run_cli("rate", "--items", str(items), "--variant", "pirate", *scripted(tmp_path)), "unknown instruction variant")


@pytest.mark.parametrize("option,value,needle", [
    ("--temperature", "-1", "--temperature"), ("--top-p", "0", "--top-p"), ("--max-tokens", "0", "--max-tokens"),
    ("--samples", "0", "samples"), ("--score", "vibes", "--score"),
])
def test_invalid_sampling_parameters(tmp_path, option, value, needle):
    items = write_items(tmp_path / "items.jsonl", 2)
    check(run_cli("rate", "--items", str(items), option, value, *scripted(tmp_path)), needle)


def test_samples_with_log_probability_scoring_are_refused_not_ignored(tmp_path):
    """Log-probability scoring reads one answer's distribution: ``--samples 3`` with it was quietly one sample."""
    items = write_items(tmp_path / "items.jsonl", 2)
    check(run_cli("rate", "--items", str(items), "--score", "logprob", "--samples", "3", *scripted(tmp_path)),
          "--samples 3 with log-probability scoring", "--score parsed")
    # the embedded judge scores by log-probabilities by default: refused before its model is loaded
    check(run_cli("rate", "--items", str(items), "--judge", "local", "--samples", "2", "--out", str(tmp_path / "l")),
          "--samples 2", "unless told --score parsed")
    run_file = tmp_path / "run.yaml"
    run_file.write_text(f"items: {items}\njudge: scripted-test-double:{tmp_path / 'script.json'}\nscore: logprob\nsamples: 3\n")
    check(run_cli("run", str(run_file), "--quiet"), "--samples 3 with log-probability scoring")
    assert not (tmp_path / "out").exists() and not (tmp_path / "l").exists()
    one = run_cli("rate", "--items", str(items), "--score", "logprob", "--samples", "1", *scripted(tmp_path), "--dry-run")
    default = run_cli("rate", "--items", str(items), "--score", "logprob", *scripted(tmp_path), "--dry-run")
    assert one.returncode == default.returncode == 0, (one.stderr, default.stderr)
    parsed = run_cli("rate", "--items", str(items), "--score", "parsed", "--samples", "3", *scripted(tmp_path), "--dry-run")
    assert parsed.returncode == 0, parsed.stderr


def test_unreachable_endpoint_keeps_finished_judgments(tmp_path, stub_factory):
    stub = stub_factory()
    out = tmp_path / "out"
    items = write_items(tmp_path / "items.jsonl", 2)
    args = ["--judge", "openai:m", "--out", str(out), "--quiet", "--max-retries", "1", "--samples", "1"]
    ok = run_cli("rate", "--items", str(items), "--base-url", stub.base_url, *args)
    assert ok.returncode == 0, ok.stderr
    more = write_items(tmp_path / "more.jsonl", 5)
    stub.stop()
    result = run_cli("rate", "--items", str(more), "--base-url", stub.base_url, *args)
    check(result, "is unreachable (connection refused")
    # a failed run replaces no output: the earlier ratings table stays as it was, for the items it covered
    assert (out / "ratings.csv").read_text().count("\n") == 1 + 2 * 4
    exported = run_cli("export", str(out / "store.sqlite"), "--to", str(tmp_path / "kept.csv"))
    assert exported.returncode == 0, exported.stderr
    ratings = (tmp_path / "kept.csv").read_text().splitlines()
    assert len(ratings) == 1 + 2 * 4  # the finished judgments are still in the store


def test_refused_request_is_one_line(tmp_path, stub_factory):
    stub = stub_factory()
    items = write_items(tmp_path / "items.jsonl", 1)
    result = run_cli("rate", "--items", str(items), "--judge", "openai:m", "--quiet",
                          "--base-url", stub.base_url.replace("/v1", "/nope"), "--out", str(tmp_path / "o"))
    check(result, "HTTP 404")


def test_openai_judge_needs_model(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 1)
    check(run_cli("rate", "--items", str(items), "--judge", "openai", "--quiet", "--out", str(tmp_path / "o")),
          "needs a model", "--judge openai:MODEL")



def test_malformed_judge_specs_are_one_line(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 1)
    check(run_cli("rate", "--items", str(items), "--judge", "gpt4", "--out", str(tmp_path / "o")), "unknown judge 'gpt4'")
    check(run_cli("rate", "--items", str(items), "--judge", "openai:", "--out", str(tmp_path / "o")), "needs a model")
    check(run_cli("dhp", "--task", "summarization", "--judge", "ratings.csv", "--out", str(tmp_path / "o")), "unknown judge")


def test_an_output_folder_that_is_a_file(tmp_path):
    items = write_items(tmp_path / "items.jsonl", 2)
    a_file = tmp_path / "taken"
    a_file.write_text("not a folder")
    args = scripted(tmp_path)
    args[args.index("--out") + 1] = str(a_file)
    check(run_cli("rate", "--items", str(items), "--criteria", "grammaticality", *args), "is a file, not a folder")
    assert a_file.read_text() == "not a folder"


def test_agree_out_pointing_at_a_file(tmp_path):
    ratings = tmp_path / "r.csv"
    ratings.write_text("item_id,system,criterion,rater,sample,score\n"
                       + "".join(f"i{i},s,c,judge,0,{i % 5 + 1}\ni{i},s,c,human:a,0,{(i * 2) % 5 + 1}\n" for i in range(6)))
    a_file = tmp_path / "taken.csv"
    a_file.write_text("x")
    check(run_cli("agree", str(ratings), "--out", str(a_file)), "is a file, not a folder")


def test_negative_pairs_per_gap(tmp_path):
    result = run_cli("recipe", "nle", "--dataset", "esnli", "--items", str(tmp_path / "x.csv"), "--per-delta", "-5")
    check(result, "--per-delta")


def test_a_full_disk_is_one_line_and_keeps_finished_judgments(tmp_path, monkeypatch):
    import sqlite3

    from judgelab.errors import JudgelabError
    from judgelab.store import Store

    with Store(tmp_path / "s.sqlite") as store:
        store.put(calls=[("k1", {"q": 1}, {"a": 1})])

        class FullDisk:
            def __init__(self, db):
                self._db = db

            def __getattr__(self, name):
                return getattr(self._db, name)

            def __enter__(self):
                return self._db.__enter__()

            def __exit__(self, *exc):
                return self._db.__exit__(*exc)

            def executemany(self, *args):
                raise sqlite3.OperationalError("database or disk is full")

        real = store._db
        store._db = FullDisk(real)
        with pytest.raises(JudgelabError, match="disk is full"):
            store.put(calls=[("k2", {"q": 2}, {"a": 2})])
        store._db = real
        assert store.call_keys() == {"k1"}
