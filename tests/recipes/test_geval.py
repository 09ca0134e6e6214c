"""G-Eval meta-evaluation: templates (per-criterion scales, DHP rubrics as templates), the SummEval and
Topical-Chat loaders (real files in ../shared/data, skipped when absent), the correlations against scipy
by hand, the clustered CIs, and `judgelab recipe geval` end to end (scripted test double in process,
the OpenAI-compatible stub server, the embedded judge)."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ (conftest helpers)
from conftest import SHARED_DATA, run_cli, one_line_error  # noqa: E402

from judgelab.datasets.geval_sources import load_geval_data, load_summeval, load_topical_chat  # noqa: E402
from judgelab.dhp.task import load_task  # noqa: E402
from judgelab.errors import JudgelabError  # noqa: E402
from judgelab.prompts import load_template  # noqa: E402
from judgelab.recipes.geval import meta_evaluate, run_geval, scale_groups  # noqa: E402

SUMMEVAL = SHARED_DATA / "summeval" / "summeval_expert_means.jsonl"
TOPICAL = SHARED_DATA / "topical-chat" / "topical_chat.json"
needs_summeval = pytest.mark.needs_shared_data("summeval/summeval_expert_means.jsonl")
needs_topical = pytest.mark.needs_shared_data("topical-chat/topical_chat.json")
SCORES = ("coherence", "consistency", "fluency", "relevance")


def write_summeval(path: Path, docs: int = 4, systems: int = 5, seed: int = 0) -> Path:
    """A small file in SummEval's layout; summary k of a document carries the marker ``Qk``."""
    rng = np.random.default_rng(seed)
    with path.open("w") as f:
        for d in range(docs):
            for s in range(systems):
                row = {"doc_id": f"doc{d}", "system": f"M{s}", "source": f"Article {d} about a topic.",
                       "reference": "ref", "summary": f"Summary Q{s} of article {d}."}
                row.update({c: float(np.clip(1 + s + rng.normal(0, 0.3), 1, 5)) for c in SCORES})
                f.write(json.dumps(row) + "\n")
    return path


# --- templates ---------------------------------------------------------------------------------

def test_geval_templates_have_the_g_eval_scales_and_form():
    summ = load_template("geval-summeval")
    assert list(summ.criteria) == list(SCORES)
    assert [tuple(summ.scale_of(c)) for c in SCORES] == [(1, 5), (1, 5), (1, 3), (1, 5)]
    tc = load_template("geval-topical-chat")
    assert [tuple(tc.scale_of(c)) for c in tc.criteria] == [(1, 3), (1, 3), (1, 3), (0, 1)]
    text = summ.render("fluency", {"text": "THE SUMMARY", "context": "THE ARTICLE"})
    assert "Evaluation Criterion: Fluency (1-3)" in text and "Evaluation Steps:" in text and "\n1. " in text
    assert text.index("THE ARTICLE") < text.index("THE SUMMARY") < text.index("score ONLY) - Fluency:")
    prompt = tc.render("groundedness", {"text": "RESP", "context": "FACT", "history": "HIST"})
    assert prompt.index("HIST") < prompt.index("FACT") < prompt.index("RESP") and "(0-1)" in prompt
    # coherence is the DHP paper's appendix E prompt, the same text as the DHP rubric
    assert summ.criteria["coherence"].instruction == load_template("dhp-summarization").criteria["coherence"].instruction


def test_a_run_asks_criteria_of_one_scale_only():
    summ = load_template("geval-summeval")
    assert summ.for_criteria(["fluency"]).scale == (1, 3)
    assert summ.for_criteria(["coherence", "relevance"]).scale == (1, 5)
    with pytest.raises(JudgelabError, match="different scales .*fluency 1-3"):
        summ.for_criteria(["coherence", "fluency"])
    plain = load_template("plain-quality")
    assert plain.for_criteria(list(plain.criteria)) is plain  # no per-criterion scale: unchanged identity
    assert scale_groups(summ, SCORES) == [["coherence", "consistency", "relevance"], ["fluency"]]


def test_rate_uses_the_new_templates_and_refuses_mixed_scales(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "a", "text": "A summary.", "context": "An article."}) + "\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "2", "default_probs": {"1": 0.5, "5": 0.5}}))
    base = ["rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--score", "logprob"]
    one_line_error(run_cli(*base, "--template", "geval-summeval", "--out", str(tmp_path / "mixed")), "different scales")
    r = run_cli(*base, "--template", "geval-summeval", "--criteria", "fluency", "--out", str(tmp_path / "fluency"))
    assert r.returncode == 0, r.stderr
    assert pd.read_csv(tmp_path / "fluency" / "ratings.csv")["score"].tolist() == [pytest.approx(1.0)]  # "5" is off the 1-3 scale
    r = run_cli(*base, "--template", "dhp-summarization", "--criteria", "coherence", "--out", str(tmp_path / "dhp"))
    assert r.returncode == 0, r.stderr


def test_dhp_tasks_name_their_rubric_templates(tmp_path):
    for task in ("summarization", "story-completion", "question-answering", "translation"):
        loaded = load_task(task)
        shipped = load_template(f"dhp-{task}")
        assert loaded.template.name == f"dhp-{task}"
        assert loaded.template.model_dump() == shipped.model_dump()
    # a user's task file may still hold its template inline, or name a template file by path
    inline = tmp_path / "inline.yaml"
    inline.write_text("name: mine\ntemplate:\n  name: t\n  instruction: 'Rate {{ text }}'\n  criteria: {quality: {question: 'Score:'}}\n"
                      "perturbations:\n  - {name: typos/minor, level: character, method: rule, kind: typos, k: 3}\n")
    assert load_task(str(inline)).template.name == "t"
    named = tmp_path / "named.yaml"
    named.write_text("name: mine2\ntemplate: dhp-translation\n"
                     "perturbations:\n  - {name: typos/minor, level: character, method: rule, kind: typos, k: 3}\n")
    assert load_task(str(named)).metrics == list(load_template("dhp-translation").criteria)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntemplate: no-such-template\nperturbations: []\n")
    with pytest.raises(JudgelabError, match="unknown template 'no-such-template'"):
        load_task(str(bad))


def test_templates_command_lists_the_new_templates():
    r = run_cli("templates")
    assert r.returncode == 0, r.stderr
    for name in ("geval-summeval", "geval-topical-chat", "dhp-summarization", "dhp-translation"):
        assert name in r.stdout


# --- loaders -----------------------------------------------------------------------------------

@needs_summeval
def test_summeval_loader_reads_the_real_file():
    data = load_summeval(SUMMEVAL)
    assert len(data.items) == 1600 and data.n_groups == 100
    assert len(data.human) == 6400 and set(data.human["rater"]) == {"human:mean"}
    first = data.items[0]
    assert first.item_id == first.group and first.context and first.text
    assert set(data.human["criterion"]) == set(SCORES)
    assert data.human["score"].between(1, 5).all()
    two = load_summeval(SUMMEVAL, n_items=2)
    assert len(two.items) == 32 and two.n_groups == 2
    assert {i.group for i in two.items} == {data.items[0].group, next(i.group for i in data.items if i.group != first.group)}


@needs_topical
def test_topical_chat_loader_reads_the_real_file():
    data = load_topical_chat(TOPICAL)
    assert len(data.items) == 360 and data.n_groups == 60
    assert len(data.human) == 360 * 4
    item = data.items[0]
    assert item.item_id == "tc-000" and item.extra["history"] and item.context and item.text
    g = data.human[data.human["criterion"] == "groundedness"]["score"]
    assert g.between(0, 1).all()
    one = load_topical_chat(TOPICAL, n_items=1)
    assert len(one.items) == 6 and {i.system for i in one.items} == {i.system for i in data.items}


def test_summeval_loader_on_a_small_file(tmp_path):
    """The loader on a file written here in SummEval's layout, so it is covered without ../shared/data."""
    path = write_summeval(tmp_path / "summeval.jsonl", docs=3, systems=4)
    written = [json.loads(line) for line in path.read_text().splitlines()]
    data = load_summeval(path)
    assert len(data.items) == 12 and data.n_groups == 3
    assert [(i.group, i.system, i.text, i.context) for i in data.items] == [
        (r["doc_id"], r["system"], r["summary"], r["source"]) for r in written]
    assert all(i.item_id == i.group for i in data.items)
    assert len(data.human) == 12 * 4 and set(data.human["rater"]) == {"human:mean"}
    human = data.human.set_index(["group", "system", "criterion"])["score"]
    assert all(human[(r["doc_id"], r["system"], c)] == r[c] for r in written for c in SCORES)
    two = load_summeval(path, n_items=2)
    assert len(two.items) == 8 and {i.group for i in two.items} == {"doc0", "doc1"}


def test_topical_chat_loader_on_a_small_file(tmp_path):
    """The loader on a file written here in topical_chat.json's layout (a JSON list of source,
    context, system_id, system_output and scores), so it is covered without ../shared/data."""
    rows = [{"source": f"hello , how are you ? \n fine , and you ? {c}", "context": f"fact number {c}",
             "system_id": system, "system_output": f"reply {c} of {system}",
             "scores": {"understandability": 1, "naturalness": 1 + (c + k) % 3, "coherence": 2, "engagingness": 3,
                        "groundedness": (c + k) % 2, "overall": 4.5}}
            for c in range(3) for k, system in enumerate(["Original Ground Truth", "Nucleus Decoding (p = 0.3)"])]
    path = tmp_path / "tc.json"
    path.write_text(json.dumps(rows, indent=4))
    data = load_topical_chat(path)
    assert len(data.items) == 6 and data.n_groups == 3
    assert [i.item_id for i in data.items] == ["tc-000", "tc-000", "tc-001", "tc-001", "tc-002", "tc-002"]
    assert [(i.text, i.system, i.context, i.extra["history"]) for i in data.items] == [
        (r["system_output"], r["system_id"], r["context"], r["source"]) for r in rows]
    assert len(data.human) == 6 * 4 and set(data.human["criterion"]) == {"naturalness", "coherence", "engagingness", "groundedness"}
    grounded = data.human[data.human["criterion"] == "groundedness"]["score"].tolist()
    assert grounded == [float(r["scores"]["groundedness"]) for r in rows]
    one = load_topical_chat(path, n_items=1)
    assert len(one.items) == 2 and {i.item_id for i in one.items} == {"tc-000"}


def test_loaders_fail_with_one_clear_error(tmp_path):
    with pytest.raises(JudgelabError, match="not found|No such|does not exist"):
        load_summeval(tmp_path / "missing.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"doc_id": "d", "system": "M0", "source": "a", "summary": "s", "coherence": "high",
                               "consistency": 1, "fluency": 1, "relevance": 1}) + "\n")
    with pytest.raises(JudgelabError, match="line 1.*coherence"):
        load_summeval(bad)
    dup = write_summeval(tmp_path / "dup.jsonl", docs=1, systems=1)
    dup.write_text(dup.read_text() * 2)
    with pytest.raises(JudgelabError, match="twice"):
        load_summeval(dup)
    tc = tmp_path / "tc.json"
    tc.write_text(json.dumps([{"source": "h", "context": "f", "system_id": "s", "system_output": "r", "scores": 3}]))
    with pytest.raises(JudgelabError, match="scores"):
        load_topical_chat(tc)
    with pytest.raises(JudgelabError, match="no such file"):
        load_geval_data(tmp_path / "x.csv")
    (tmp_path / "x.csv").write_text("doc_id,system\n")  # present, but its type names no dataset
    with pytest.raises(JudgelabError, match="--dataset"):
        load_geval_data(tmp_path / "x.csv")


# --- analysis ----------------------------------------------------------------------------------

def synthetic_ratings(docs: int = 12, systems: int = 6, noise: float = 1.0, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(docs):
        for s in range(systems):
            human = s + rng.normal(0, 1)
            judge = human + rng.normal(0, noise)
            for rater, score in (("human:mean", human), ("judge", judge)):
                rows.append(dict(item_id=f"d{d}", system=f"s{s}", group=f"d{d}", criterion="coherence", rater=rater,
                                 sample=0, score=score, status="ok"))
    return pd.DataFrame(rows)


def test_summary_and_system_level_match_scipy_by_hand():
    ratings = synthetic_ratings()
    # a second, failed sample must not count; a second ok sample is averaged
    extra = ratings[ratings["rater"] == "judge"].copy()
    extra["sample"], extra["status"], extra["score"] = 1, "failed", 99.0
    ratings = pd.concat([ratings, extra], ignore_index=True)
    report = meta_evaluate(ratings, n_resamples=0)
    frame = report.to_frame()
    ok = ratings[ratings["status"] == "ok"]
    j = ok[ok["rater"] == "judge"].pivot(index="system", columns="group", values="score")
    h = ok[ok["rater"] == "human:mean"].pivot(index="system", columns="group", values="score")
    for method, fn in (("spearman", st.spearmanr), ("kendall", st.kendalltau)):
        per_doc = [fn(j[d], h[d]).statistic for d in j.columns]
        got = frame[(frame["level"] == "summary") & (frame["method"] == method)].iloc[0]
        assert got["r"] == pytest.approx(np.mean(per_doc)) and got["n"] == 12
        sys_r = fn(j.mean(axis=1), h.mean(axis=1)).statistic
        got = frame[(frame["level"] == "system") & (frame["method"] == method)].iloc[0]
        assert got["r"] == pytest.approx(sys_r) and got["n"] == 6
    assert list(frame.columns) == ["rater", "criterion", "method", "level", "r", "ci_low", "ci_high", "n", "note"]
    assert frame["note"].str.contains("no bootstrap").all()


def test_turn_level_pools_all_responses():
    ratings = synthetic_ratings(docs=5)
    frame = meta_evaluate(ratings, methods=["pearson"], levels=["turn"], n_resamples=0).to_frame()
    ok = ratings.pivot_table(index=["group", "system"], columns="rater", values="score")
    assert frame["r"].iloc[0] == pytest.approx(st.pearsonr(ok["judge"], ok["human:mean"]).statistic)
    assert frame["n"].iloc[0] == 30


def test_ci_contains_r_and_widens_with_fewer_documents():
    many = meta_evaluate(synthetic_ratings(docs=40, seed=3), methods=["spearman"], n_resamples=400).to_frame()
    few = meta_evaluate(synthetic_ratings(docs=6, seed=3), methods=["spearman"], n_resamples=400).to_frame()
    for frame in (many, few):
        for _, row in frame.iterrows():
            if pd.isna(row["ci_low"]):  # a zero-width interval (every resample ranks the systems alike) is not printed
                assert "zero-width interval is not a 95% interval" in row["note"], row.to_dict()
            else:
                assert row["ci_low"] <= row["r"] <= row["ci_high"], row.to_dict()
    width = lambda f, level: float((f[f.level == level]["ci_high"] - f[f.level == level]["ci_low"]).iloc[0])  # noqa: E731
    assert width(few, "summary") > width(many, "summary")
    assert width(few, "system") > 0 and pd.isna(width(many, "system"))  # 40 documents: every resample gives r = 1


def test_every_nan_has_a_note():
    ratings = synthetic_ratings(docs=3, systems=4)
    judge = ratings["rater"] == "judge"
    ratings.loc[judge & (ratings["group"] == "d0"), "score"] = 3.0  # constant within one document
    frame = meta_evaluate(ratings, methods=["kendall"], n_resamples=50).to_frame()
    summary = frame[frame.level == "summary"].iloc[0]
    assert summary["n"] == 2 and "1 of 3 documents have no defined correlation" in summary["note"]
    ratings.loc[judge, "score"] = 3.0  # constant everywhere
    frame = meta_evaluate(ratings, methods=["kendall"], n_resamples=50).to_frame()
    assert frame["r"].isna().all() and (frame["note"].str.len() > 0).all()
    with pytest.raises(JudgelabError, match="no human ratings"):
        meta_evaluate(ratings[ratings["rater"] == "judge"])


# --- the recipe --------------------------------------------------------------------------------

def test_recipe_in_process_with_the_scripted_test_double(tmp_path):
    data = write_summeval(tmp_path / "summeval.jsonl")
    # the test double's score distribution rises with the system number, as the human scores do
    script = {"rules": [{"contains": f"Summary Q{s} ", "probs": {str(k): (1.0 if k == min(s + 1, 3) else 0.0) for k in range(1, 6)}}
                        for s in range(5)], "default": "1"}
    (tmp_path / "script.json").write_text(json.dumps(script))
    out = tmp_path / "out"
    report = run_geval(data, out, [f"scripted-test-double:{tmp_path / 'script.json'}"], dataset="summeval", score="logprob",
                       n_resamples=100, progress=False)
    for name in ("summary_level.csv", "system_level.csv", "ratings.csv", "README.md", "run.json", "published_comparison.csv"):
        assert (out / name).exists(), name
    summary = pd.read_csv(out / "summary_level.csv")
    assert list(summary.columns) == ["rater", "criterion", "method", "level", "r", "ci_low", "ci_high", "n", "note"]
    assert len(summary) == 4 * 2 and summary["rater"].nunique() == 1
    assert summary["r"].between(0.5, 1.0).all()  # scores rise with the system, as the human means do
    ratings = pd.read_csv(out / "ratings.csv")
    fluency = ratings[ratings["criterion"] == "fluency"]["score"]
    assert fluency.max() <= 3 and ratings[ratings["criterion"] == "coherence"]["score"].max() == 3
    assert ratings["rater"].nunique() == 1 and len(ratings) == 4 * 5 * 4
    runs = json.loads((out / "run.json").read_text())
    assert len(runs.get("runs", [])) == 2  # one run per scale group
    assert report.groups == 4
    comparison = pd.read_csv(out / "published_comparison.csv")
    assert set(comparison["geval4_r"]) >= {0.582, 0.457}


def test_recipe_through_the_openai_compatible_stub(tmp_path, stub_factory):
    stub = stub_factory()
    data = write_summeval(tmp_path / "summeval.jsonl", docs=3, systems=4)
    r = run_cli("recipe", "geval", "--items", str(data), "--judge", f"openai:stub@{stub.base_url}", "--score", "parsed",
                     "--n-resamples", "50", "--out", str(tmp_path / "out"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert len(stub.answered()) == 3 * 4 * 4
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    fluency = ratings[ratings["criterion"] == "fluency"]
    # the stub answers 1-5; fluency is read on its own 1-3 scale, so a 4 or 5 is out of range there
    assert fluency[fluency["status"] == "ok"]["score"].max() <= 3
    assert "out_of_range" in set(fluency["status"]) and (ratings[ratings["criterion"] != "fluency"]["status"] == "ok").all()
    system = pd.read_csv(tmp_path / "out" / "system_level.csv")
    assert set(system["criterion"]) == set(SCORES) and (system["level"] == "system").all()
    assert (tmp_path / "out" / "summary_level.csv").exists() and (tmp_path / "out" / "run.json").exists()
    assert "summary level" in r.stdout  # the command line shows the tables it wrote


def test_dry_run_calls_nothing_and_shows_each_scale_group(tmp_path, stub_factory):
    stub = stub_factory()
    data = write_summeval(tmp_path / "summeval.jsonl", docs=2, systems=3)
    r = run_cli("recipe", "geval", "--items", str(data), "--judge", f"openai:stub@{stub.base_url}", "--score", "parsed",
                     "--dry-run", "--price-in", "1", "--price-out", "2", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert stub.answered() == [] and not (tmp_path / "out").exists()
    # 2 documents x 3 systems x 4 criteria, one call each; two runs (the 1-5 criteria, fluency on 1-3)
    assert "total: 24 calls, 24 judgments" in r.stdout
    assert "scale 1-5" in r.stdout and "scale 1-3" in r.stdout
    assert "Evaluation Criterion" in r.stdout or "Coherence" in r.stdout  # the first prompt, as it would be sent


@pytest.mark.parametrize("args,needle", [
    (["--items", "nosuch.jsonl", "--dataset", "summeval"], "nosuch.jsonl"),
    (["--items", "nosuch.txt"], "no such file"),
    (["--data", "summeval"], "--data is now --dataset NAME"),
    (["--items", "x.jsonl", "--dataset", "cnn"], "unknown --dataset"),
    (["--items", "x.jsonl", "--dataset", "summeval", "--score", "vibes"], "--score"),
    (["--items", "x.jsonl", "--dataset", "summeval", "--judge", "gpt"], "unknown judge"),
])
def test_bad_inputs_exit_2_with_one_line(tmp_path, args, needle):
    write_summeval(tmp_path / "x.jsonl", docs=1, systems=3)
    env_cwd = {"cwd": tmp_path}
    r = run_cli("recipe", "geval", *args, "--out", str(tmp_path / "out"), "--quiet", **env_cwd)
    one_line_error(r, needle)


def test_a_dataset_name_without_its_file_says_where_the_file_is_looked_for(tmp_path, monkeypatch):
    monkeypatch.delenv("JUDGELAB_SHARED_DATA", raising=False)
    (tmp_path / "work").mkdir()
    r = run_cli("recipe", "geval", "--dataset", "summeval", "--judge", "local", "--out", "o", cwd=tmp_path / "work")
    one_line_error(r, "summeval/summeval_expert_means.jsonl", "../shared/data seen from the folder you run in",
                   str(tmp_path / "shared" / "data"), "JUDGELAB_SHARED_DATA", "--items FILE")


@pytest.mark.slow
@needs_topical
def test_recipe_on_the_embedded_judge(tmp_path):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    env = dict(os.environ, JUDGELAB_SHARED_DATA=str(SHARED_DATA), COLUMNS="200")
    import subprocess

    r = subprocess.run([sys.executable, "-m", "judgelab.cli", "recipe", "geval", "--dataset", "topical-chat", "--judge", "local",
                        "--n-items", "1", "--n-resamples", "20", "--out", str(tmp_path / "out"), "--quiet"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    ratings = pd.read_csv(tmp_path / "out" / "ratings.csv")
    assert len(ratings) == 6 * 4 and (ratings["status"] == "ok").all()
    grounded = ratings[ratings["criterion"] == "groundedness"]["score"]
    assert grounded.between(0, 1).all()  # read on its own 0-1 scale
    turn = pd.read_csv(tmp_path / "out" / "turn_level.csv")
    assert set(turn["method"]) == {"pearson", "spearman", "kendall"}
