"""inspect_ai eval logs: a model-graded scorer's scores read as ratings with inspect_ai's own reader (the optional
extra judgelab[inspect]; the test that needs it skips without it), one line without it, and refused as verdicts."""
import json
import sys

import pytest
from conftest import run_cli

from judgelab.errors import JudgelabError
from judgelab.preference.formats import read_verdicts
from judgelab.preference.formats.inspect_log import inspect_ratings


def test_without_inspect_ai_one_line_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as when it is not installed
    with pytest.raises(JudgelabError, match=r"pip install 'judgelab\[inspect\]'"):
        inspect_ratings(tmp_path / "x.eval")


def test_a_log_is_refused_as_verdicts(tmp_path):
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"version": 2, "status": "success", "eval": {"model": "m"}, "samples": []}))
    with pytest.raises(JudgelabError, match=r"\(ratings\), not pairwise verdicts.*as a ratings file"):
        read_verdicts(log)
    binary = tmp_path / "log.eval"
    binary.write_bytes(b"PK\x03\x04")
    r = run_cli("preference", "agree", str(binary))
    assert r.returncode == 2 and "as a ratings file" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _log(folder):
    """A real eval log: inspect_ai's mock model answers, model_graded_qa with a mock grader grades (C, then an
    answer without a grade)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import model_graded_qa

    def out(text):
        o = ModelOutput.from_content("mockllm/model", text)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
        return o

    grader = get_model("mockllm/model", custom_outputs=[out("Right. GRADE: C"), out("I cannot tell")])
    model = get_model("mockllm/model", custom_outputs=[out("4"), out("blue")])
    task = Task(dataset=[Sample(id="q1", input="What is two plus two?", target="4"),
                         Sample(id="q2", input="Name a colour of the sky at noon.", target="blue")],
                scorer=model_graded_qa(model=grader))
    return eval(task, model=model, log_dir=str(folder), display="none", max_samples=1)[0].location


def test_model_graded_scores_become_ratings(tmp_path):
    pytest.importorskip("inspect_ai", reason="inspect_ai not installed (pip install 'judgelab[inspect]')")
    t = inspect_ratings(_log(tmp_path)).set_index("item_id")
    assert t.loc["q1", "score"] == 1.0 and t.loc["q1", "status"] == "ok"
    assert t.loc["q2", "status"] == "no_rating" and t.loc["q2", "score"] != t.loc["q2", "score"]
    assert set(t["rater"]) == {"mockllm/model@model_graded_qa"} and set(t["criterion"]) == {"model_graded_qa"}
    assert set(t["system"]) == {"mockllm/model"} and "GRADE: C" in t.loc["q1", "raw"]
