"""Other tools' judge outputs read as ratings by read_ratings (recognised by their fields): FastChat's single-answer
judgments and inspect_ai eval logs (a real log made with inspect_ai's mock model where inspect_ai is installed;
skipped, naming the extra, where it is not), matched with human ratings by label in `agree`, and one-line errors
for files that are none of the formats read."""
import json
import sys
from types import SimpleNamespace

import pytest
from conftest import run_cli

from judgelab.errors import JudgelabError
from judgelab.ratings import read_ratings

JUDGE = ["gpt-4", "single-v1"]
SCORES = {"alpha": [8, 7, 9, 3, 6, 5, 8, 2], "beta": [4, 6, -1, 2, 7, 3, 5, 1]}


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _single(path):
    """A FastChat single-answer judgment file: 8 questions, 2 models, turn 1 (beta's third: no [[rating]] found)."""
    rows = [{"question_id": 81 + q, "model": model, "judge": JUDGE, "user_prompt": f"Rate the answer to question {q}.",
             "judgment": f"The answer is fair. Rating: [[{s}]]" if s != -1 else "I will not give a number.",
             "score": s, "turn": 1, "tstamp": 1700000000.0 + q}
            for model, scores in SCORES.items() for q, s in enumerate(scores)]
    return _jsonl(path, rows)


def _humans(path):
    """Two people's ratings of the same answers (criterion turn-1, FastChat's first turn)."""
    lines = ["item_id,system,criterion,rater,score"]
    for model, scores in SCORES.items():
        for q, s in enumerate(scores):
            base = 5 if s == -1 else s
            lines += [f"{81 + q},{model},turn-1,ann,{base}", f"{81 + q},{model},turn-1,bo,{max(1, base - (q % 2))}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fastchat_single_read_as_ratings(tmp_path):
    t = read_ratings(_single(tmp_path / "gpt-4_single.jsonl"))
    assert len(t) == 16 and set(t["rater"]) == {"gpt-4@single-v1"} and set(t["criterion"]) == {"turn-1"}
    assert set(t["rater_kind"]) == {"judge"} and set(t["judge"]) == {"gpt-4"} and set(t["template"]) == {"single-v1"}
    row = t.set_index(["system", "item_id"]).loc[("alpha", "84")]
    assert row["score"] == 3.0 and row["status"] == "ok" and "[[3]]" in row["raw"]
    failed = t.set_index(["system", "item_id"]).loc[("beta", "83")]
    assert failed["status"] == "no_rating" and failed["score"] != failed["score"]  # FastChat's -1: no score


def test_fastchat_single_bad_line_is_one_error(tmp_path):
    rows = [{"question_id": 1, "model": "m", "judge": JUDGE, "score": 5, "turn": 1},
            {"question_id": 2, "model": "m", "judge": JUDGE, "score": "eight", "turn": 1}]
    with pytest.raises(JudgelabError, match=r"line 2, field 'score': score 'eight' is not a number") as info:
        read_ratings(_jsonl(tmp_path / "x.jsonl", rows))
    assert len(str(info.value).splitlines()) == 1
    rows[1] = {"question_id": 2, "model": "m", "score": 5}
    with pytest.raises(JudgelabError, match=r"line 2 has no field 'judge'"):
        read_ratings(_jsonl(tmp_path / "y.jsonl", rows))


def test_agree_matches_fastchat_judge_with_humans_by_label(tmp_path):
    r = run_cli("agree", str(_single(tmp_path / "gpt-4_single.jsonl")), "--human", str(_humans(tmp_path / "h.csv")),
                "--n-resamples", "50", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["tables"]["correlations"]
    overall = [row for row in rows if row["rater"] == "gpt-4@single-v1" and row["level"] == "overall"]
    assert len(overall) == 1 and overall[0]["criterion"] == "turn-1"
    assert overall[0]["n"] == 15 and overall[0]["r"] > 0.9  # 16 answers matched by label, the unrated one left out


@pytest.mark.parametrize("name, text, needle", [
    ("other.jsonl", '{"question": "q", "answer": "a"}\n', "not a ratings file|missing column"),
    ("dict.json", '{"results": []}', "not a ratings file this version reads"),
    ("cut.json", '{"version": 2, "eval": {"model": "m"', "malformed JSON"),
    ("cut.jsonl", '{"question_id": 1, "model": "m", "judge": ["j", "p"], "score": 5}\n{"question_id": 2, "mo', "line 2"),
])
def test_unknown_or_truncated_file_is_one_line_exit_2(tmp_path, name, text, needle):
    path = tmp_path / name
    path.write_text(text)
    r = run_cli("agree", str(path), "--human", str(_humans(tmp_path / "h.csv")))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert __import__("re").search(needle, r.stderr), r.stderr
    if "not a ratings file" in r.stderr or "missing column" in r.stderr:
        assert "inspect_ai eval logs" in r.stderr and "FastChat single-answer judgments" in r.stderr


def test_a_log_without_inspect_ai_is_one_line_naming_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # the import fails as when the extra is not installed
    binary = tmp_path / "run.eval"
    binary.write_bytes(b"PK\x03\x04" + bytes(30))
    with pytest.raises(JudgelabError, match=r"run.eval: reading inspect_ai eval logs needs inspect_ai: "
                                            r"pip install 'judgelab\[inspect\]'"):
        read_ratings(binary)
    log = tmp_path / "run.json"
    log.write_text(json.dumps({"version": 2, "status": "success", "eval": {"model": "m"}, "samples": []}))
    r = run_cli("agree", str(log), "--human", str(_humans(tmp_path / "h.csv")))
    assert r.returncode == 2 and "pip install 'judgelab[inspect]'" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_an_eval_that_is_no_zip_is_not_a_log(tmp_path):
    path = tmp_path / "notes.eval"
    path.write_text("plain text")
    with pytest.raises(JudgelabError, match="not a ratings file this version reads.*inspect_ai eval logs"):
        read_ratings(path)
    with pytest.raises(JudgelabError, match="file not found"):
        read_ratings(tmp_path / "absent.eval")
    (tmp_path / "logs.eval").mkdir()
    with pytest.raises(JudgelabError, match="is a folder, not a file"):
        read_ratings(tmp_path / "logs.eval")


def test_inspect_values_map_as_value_to_float_and_statuses():
    from judgelab.preference.formats.inspect_log import _rating, to_float

    assert [to_float(v) for v in ("C", "P", "I", "N", "yes", "False", " 0.25", 3, True)] == \
        [1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.25, 3.0, 1.0]
    assert [to_float(v) for v in (float("nan"), "maybe", [1], {"a": 1}, "inf")] == [None] * 5
    sample = SimpleNamespace(id=7, epoch=2, error=None)
    score = SimpleNamespace(value="C", explanation="GRADE: C")
    assert _rating(sample, "qa", score, "g@qa") == {"item_id": "7", "criterion": "qa", "rater": "g@qa", "sample": 1,
                                                    "score": 1.0, "status": "ok", "raw": "GRADE: C"}
    assert _rating(sample, "qa", SimpleNamespace(value=float("nan"), explanation="no grade"), "g@qa")["status"] \
        == "no_rating"
    assert _rating(sample, "qa", None, "g@qa")["status"] == "missing"
    broken = SimpleNamespace(id=7, epoch=1, error=SimpleNamespace(message="model timed out"))
    assert _rating(broken, "qa", None, "g@qa") | {} == {"item_id": "7", "criterion": "qa", "rater": "g@qa",
                                                        "sample": 0, "score": None, "status": "error",
                                                        "raw": "model timed out"}


def _log(folder, log_format):
    """A real eval log: inspect_ai's mock model answers 6 questions, model_graded_qa with a mock grader grades them, partial
    credit allowed (C, I, P, C, an answer without a grade, I)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import model_graded_qa

    def out(text):
        o = ModelOutput.from_content("mockllm/model", text)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return o

    grades = ["Right. GRADE: C", "Wrong. GRADE: I", "Half. GRADE: P", "Right. GRADE: C", "I cannot tell", "GRADE: I"]
    grader = get_model("mockllm/model", custom_outputs=[out(g) for g in grades])
    model = get_model("mockllm/model", custom_outputs=[out(f"answer {i}") for i in range(6)])
    task = Task(dataset=[Sample(id=f"q{i}", input=f"Question number {i}?", target=f"answer {i}") for i in range(6)],
                scorer=model_graded_qa(model=grader, partial_credit=True))
    return eval(task, model=model, log_dir=str(folder), display="none", max_samples=1, log_format=log_format)[0].location


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_inspect_log_read_as_ratings_and_agreed_with_humans(tmp_path, log_format):
    pytest.importorskip("inspect_ai", reason="inspect_ai not installed (pip install 'judgelab[inspect]')")
    path = _log(tmp_path / "logs", log_format)
    assert path.endswith("." + log_format)
    t = read_ratings(path).set_index("item_id")
    assert t["score"].to_dict() == pytest.approx({"q0": 1.0, "q1": 0.0, "q2": 0.5, "q3": 1.0, "q4": float("nan"),
                                                  "q5": 0.0}, nan_ok=True)
    assert t.loc["q4", "status"] == "no_rating" and (t.drop("q4")["status"] == "ok").all()
    assert set(t["rater"]) == {"mockllm/model@model_graded_qa"} and set(t["criterion"]) == {"model_graded_qa"}
    assert set(t["system"]) == {"mockllm/model"} and set(t["judge"]) == {"mockllm/model"}
    humans = tmp_path / "h.csv"
    humans.write_text("item_id,system,criterion,rater,score\n" + "".join(
        f"q{i},mockllm/model,model_graded_qa,{who},{v}\n"
        for i, (a, b) in enumerate([(1, 1), (0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]) for who, v in (("ann", a), ("bo", b))))
    r = run_cli("agree", path, "--human", str(humans), "--n-resamples", "50", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["tables"]["correlations"]
    overall = [row for row in rows if row["rater"] == "mockllm/model@model_graded_qa" and row["level"] == "overall"]
    assert len(overall) == 1 and overall[0]["n"] == 5  # 6 samples matched by label, the ungraded one left out


def test_audit_takes_fastchat_judgments_and_counts_the_unrated(tmp_path):
    out = tmp_path / "audit"
    r = run_cli("audit", str(_single(tmp_path / "gpt-4_single.jsonl")), "--human", str(_humans(tmp_path / "h.csv")),
                "--n-resamples", "50", "--out", str(out))
    assert r.returncode == 0, r.stderr
    leniency = (out / "leniency.csv").read_text()
    row = next(line for line in leniency.splitlines() if line.startswith("leniency,gpt-4@single-v1,turn-1,"))
    assert ",15,8," in row and "1 of 16 judgments failed" in row  # 15 rated answers over 8 questions, the -1 counted


def test_the_report_of_an_agree_folder_reads_the_fastchat_file_it_agreed(tmp_path):
    """The report's item cards read the ratings file the agree step recorded, in another tool's format too."""
    from judgelab.report.folder import ratings_from_file

    path = _single(tmp_path / "gpt-4_single.jsonl")
    t = ratings_from_file(path)
    assert len(t) == 16 and set(t["rater"]) == {"gpt-4@single-v1"} and t["seq"].tolist() == list(range(1, 17))
    out = tmp_path / "agreed"
    r = run_cli("agree", str(path), "--human", str(_humans(tmp_path / "h.csv")), "--n-resamples", "50",
                "--out", str(out))
    assert r.returncode == 0, r.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "could not be read (see the problems above)" not in page and "gpt-4@single-v1" in page
