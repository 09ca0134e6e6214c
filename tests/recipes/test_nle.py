"""Issue 4: scales, pairwise comparison, dynamic prompting, the NLE prompts and recipe."""
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, mean_squared_error

from conftest import SHARED_DATA, run_cli
from judgelab.pairwise import bradley_terry, delta_bin, f1_by_delta, position_consistency, sample_pairs
from judgelab.parse import parse_comparison, parse_metric
from judgelab.prompts import load_template
from judgelab.retrieve import Retriever
from judgelab.stats.scales import GRANULARITIES, majority_baseline, rmse, scale_report, to_classes, weighted_f1


def test_bins_put_boundary_values_in_the_upper_class():
    assert to_classes([1, 3.99, 4, 7], GRANULARITIES["binary"]).tolist() == [0, 0, 1, 1]
    assert to_classes([2.99, 3, 4.99, 5, 7], GRANULARITIES["ternary"]).tolist() == [0, 1, 1, 2, 2]
    assert to_classes([1.49, 1.5, 3.5, 6.5, 7], None).tolist() == [1, 2, 4, 7, 7]


@pytest.mark.parametrize("seed", range(6))
def test_f1_rmse_and_baseline_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 8, 120) + rng.choice([0, 1 / 3, 0.5, 2 / 3], 120)
    human[:6] = [4, 3, 5, 4, 3, 5]  # exact boundary values
    judge = np.clip(human + rng.normal(0, 1.3, 120), 1, 7)
    judge[6:12] = [4, 3, 5, 3.5, 4.5, 6.5]
    for granularity, edges in GRANULARITIES.items():
        th, tj = to_classes(human, edges), to_classes(judge, edges)
        report = scale_report(human, judge, granularity)
        assert report.f1 == pytest.approx(f1_score(th, tj, average="weighted"), abs=1e-12)
        assert report.rmse == pytest.approx(np.sqrt(mean_squared_error(th, tj)), abs=1e-12)
        base = np.full_like(th, np.bincount(th - th.min()).argmax() + th.min())
        assert report.baseline_f1 == pytest.approx(f1_score(th, base, average="weighted", zero_division=0), abs=1e-12)
        assert report.baseline_rmse == pytest.approx(np.sqrt(mean_squared_error(th, base)), abs=1e-12)
        assert report.f1_gain == pytest.approx(report.f1 - report.baseline_f1)


def test_majority_baseline_ties_take_the_smallest_class():
    assert majority_baseline([2, 1, 2, 1]).tolist() == [1, 1, 1, 1]
    assert rmse([1, 2], [1, 4]) == pytest.approx(np.sqrt(2))
    assert weighted_f1([0, 0, 1], [0, 0, 1]) == 1.0


def test_pair_sampling_is_reproducible_and_covers_every_delta():
    rng = np.random.default_rng(1)
    scores = {f"x{i}": float(v) for i, v in enumerate(rng.integers(1, 8, 40) + rng.choice([0, 1 / 3, 2 / 3], 40))}
    a = sample_pairs(scores, per_delta=5, seed=3)
    assert a == sample_pairs(scores, per_delta=5, seed=3) and a != sample_pairs(scores, per_delta=5, seed=4)
    existing = {delta_bin(scores[p], scores[q]) for p in scores for q in scores if p < q}
    assert {p.delta for p in a} == existing
    counts = pd.Series([p.delta for p in a]).value_counts()
    all_counts = pd.Series([delta_bin(scores[p], scores[q]) for p in scores for q in scores if p < q]).value_counts()
    for delta, n in counts.items():
        assert n == min(5, all_counts[delta])  # up to N per Δ, all where fewer exist
    for p in a:
        assert p.truth == (0 if p.delta == 0 else (1 if scores[p.first] > scores[p.second] else -1))


def test_pairwise_metrics_and_bradley_terry():
    scores = {f"i{k}": float(k) for k in range(1, 8)}
    pairs = sample_pairs(scores, 100, seed=0)
    perfect = {}
    for p in pairs:
        perfect[(p.first, p.second)] = p.truth
        perfect[(p.second, p.first)] = -p.truth
    table = f1_by_delta(pairs, perfect)
    assert (table["f1"] == 1.0).all() and position_consistency(pairs, perfect) == 1.0
    first_always = {k: 1.0 for k in perfect}  # a judge that always prefers the first text
    assert position_consistency(pairs, first_always) == 0.0
    bt = bradley_terry([(a, b, v) for (a, b), v in perfect.items()])
    assert bt.converged and 1 < bt.iterations < 500
    assert sorted(bt.scores, key=bt.scores.get) == sorted(scores, key=scores.get)
    assert abs(sum(bt.scores.values())) < 1e-9  # geometric mean 1: log-strengths average 0
    assert list(bt.to_frame().columns) == ["item", "score"] and len(bt.to_frame()) == len(scores)
    short = bradley_terry([(a, b, v) for (a, b), v in perfect.items()], iterations=2)
    assert not short.converged and short.iterations == 2
    assert bradley_terry([]).scores == {}


def test_parse_metric_and_comparison():
    text = "[Informativeness] 6 [Clarity] 5. The explanation is relevant."
    assert parse_metric(text, "informativeness").score == 6 and parse_metric(text, "clarity").score == 5
    assert parse_metric("Informativeness: 4/7, Clarity (1-7): 3", "clarity").score == 3
    assert parse_metric("Clarity: 9", "clarity").status == "out_of_range"
    assert parse_metric("It is good.", "clarity").score is None
    assert parse_comparison("Yes, the first is more informative.").score == 1
    assert parse_comparison("**No** - the second explains better").score == -1
    assert parse_comparison("Neutral. Both are equally clear.").score == 0
    assert parse_comparison("I cannot decide").score is None


ESNLI = {"text": "People that are facing a camera are ready to pose for a picture.",
         "premise": "3 young man in hoods standing in the middle of a quiet street facing the camera",
         "hypothesis": "Three hood wearing people pose for a picture.", "relationship": "entailment"}
LIAR = {"text": "In sum: Brown based his calculation on a transit cost estimate thats open to accusations of cherry-picking. Furthermore, even Brown and Ross think their own number falls short.",
        "statement": "A proposed tax to fund transportation projects would spend $90,000 to take a single vehicle off the road during the morning and afternoon commute.",
        "label": "false", "speaker": "Steve Brown", "context": "a forum hosted by The Atlanta Journal-Constitution"}
HATE = {"text": "The post is implicitly hateful because it implies that Blacks blame whites.",
        "post": "and i will point it out here when u call white people white supremacist just cause they disagree with you it s like me calling you the n word with no proof"}


@pytest.mark.parametrize("name,item,start,item_line,end", [
    ("nle-esnli", ESNLI, "Task: Scoring the quality of the given natural language explanation based on its referring short text from the perspective of informativeness and clarity.\n\nInstructions:\n[Short Texts and Explanation] The given short texts fit in entrailment/neutral/contridicting relation between Premiss and Hypothesis",
     "Score the informativeness and clarity (detailed definition in below) of the given explanation: [Premise] (3 young man in hoods standing in the middle of a quiet street facing the camera) [Hypothesis] (Three hood wearing people pose for a picture.) [Relationship] (Entailment) [Explanation] (People that are facing a camera are ready to pose for a picture.)",
     "Please give the score for informativeness (Indicating how relevant the information in given explanation is for your understanding of explaining the relationship between given Premise and Hypothesis) and the score for clarity (Indicating how clear the meaning of the explanation is expressed) scale from 1 to 7, integer. And then explain the reason for your scores in one or two sentences.\""),
    ("nle-liar", LIAR, "Task: Scoring the quality of the given natural language explanation based on its referring news information from the perspective of informativeness and clarity.",
     "Score the informativeness and clarity (detailed definition in below) of the given explanation: [News statement] (A proposed tax to fund transportation projects would spend $90,000 to take a single vehicle off the road during the morning and afternoon commute.) [Label of correctness] (False) [Speaker] (Steve Brown) [Context] (a forum hosted by The Atlanta Journal-Constitution) [Explanation] (In sum: Brown based his calculation on a transit cost estimate thats open to accusations of cherry-picking. Furthermore, even Brown and Ross think their own number falls short.)",
     "Please give the score for informativeness (Indicating how relevant the information in given explanation is for your understanding of why the given news is considered as the label [label]) and the score for clarity (Indicating how clear the meaning of the explanation is expressed) scale from 1 to 7, integer. And then explain the reason for your scores in one or two sentences."),
    ("nle-latent-hatred", HATE, "Task: Scoring the quality of the given natural language explanation based on its referring tweet from the perspective of informativeness and clarity.",
     "Score the informativeness and clarity (detailed definition in below) of the given explanation: [Tweet] (and i will point it out here when u call white people white supremacist just cause they disagree with you it s like me calling you the n word with no proof) [Explanation] (The post is implicitly hateful because it implies that Blacks blame whites.)",
     "Please give the score for informativeness (Indicating how relevant the information in given explanation is for your understanding of why this tweet would be perceived as hateful for human readers) and the score for clarity (Indicating how clear the meaning of the explanation is expressed) scale from 1 to 7, integer. And then explain the reason for your scores in one or two sentences."),
])
def test_prompts_render_as_tables_10_to_12(name, item, start, item_line, end):
    prompt = load_template(name).render("quality", item)
    assert prompt.startswith(start)
    lines = prompt.split("\n")
    assert lines[-2] == item_line and lines[-1] == end
    assert "[Clarity] Indicating how clear the meaning of the explanation is expressed. Scaling from 1 to 7, integer, 1 means it is unclear; 7 means it is very clear." in prompt
    assert "High score example:" in prompt and "Low score example:" in prompt


def test_dynamic_prompting_picks_the_expected_neighbour():
    pool = ["A dog is an animal, so a man walking a dog walks an animal.",
            "The tax raises money for roads and trains, which is what the statement claims.",
            "Children playing football outside means children are outdoors."]
    tests = ["Walking a dog means walking an animal.", "Kids play soccer outside, so they are outdoors."]
    retriever = Retriever("tfidf").fit(pool)
    assert retriever.nearest(tests) == [0, 2]
    example = load_template("nle-esnli").render_example({"premise": "p", "hypothesis": "h", "relationship": "neutral",
                                                        "text": pool[0], "informativeness": "6", "clarity": "5"})
    prompt = load_template("nle-esnli").render("quality", {**ESNLI, "examples": example})
    assert example in prompt and "High score example:" not in prompt


def _human_scores(tmp_path, n):
    rng = np.random.default_rng(0)
    rows = [{"id": str(i), "informativeness": float(rng.integers(1, 8)), "clarity": float(rng.integers(1, 8))} for i in range(n)]
    path = tmp_path / "human.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path, {r["id"]: r for r in rows}


def test_nle_recipe_with_human_scores_runs_every_part(tmp_path):
    data = tmp_path / "esnli.csv"
    pd.DataFrame({"gold_label": ["neutral"] * 12, "Sentence1": [f"Premise {i}" for i in range(12)],
                  "Sentence2": [f"Hypothesis {i}" for i in range(12)],
                  "Explanation_1": [f"Explanation number {i} about premise {i}" for i in range(12)]}).to_csv(data, index=False)
    human, rows = _human_scores(tmp_path, 12)
    script = tmp_path / "script.json"
    rules = [{"contains": f"[Explanation] (Explanation number {i} about premise {i})\nPlease give",
              "reply": f"[Informativeness] {int(rows[str(i)]['informativeness'])} [Clarity] {int(rows[str(i)]['clarity'])}"} for i in range(12)]
    script.write_text(json.dumps({"rules": rules, "default": "Yes"}))
    out = tmp_path / "nle"
    comparisons = tmp_path / "comparisons.csv"
    pd.DataFrame([{"first": a, "second": b, "metric": m, "verdict": "Yes" if rows[a][m] > rows[b][m] else ("No" if rows[a][m] < rows[b][m] else "Neutral")}
                  for a in rows for b in rows if a != b for m in ("informativeness", "clarity")]).to_csv(comparisons, index=False)
    r = run_cli("recipe", "nle", "--dataset", "esnli", "--items", str(data), "--human", str(human), "--judge",
                     f"scripted-test-double:{script}", "--samples", "1", "--per-delta", "3", "--quiet", "--out", str(out),
                     "--human-comparisons", str(comparisons))
    assert r.returncode == 0, r.stderr
    scales = pd.read_csv(out / "scales.csv")
    assert (scales.loc[scales["granularity"].isin(["binary", "ternary", "7-way"]), "f1"] == 1.0).all()  # a judge that copies the humans
    for name in ("pairwise_f1.csv", "pairwise_summary.csv", "dynamic_scales.csv", "dynamic_pairwise_f1.csv", "cost.csv",
                 "scatter_informativeness.png", "README.md"):
        assert (out / name).exists(), name
    f1 = pd.read_csv(out / "pairwise_f1.csv")
    assert set(f1["rater"]) == {"judge", "human comparisons"}
    assert (f1.loc[f1["rater"] == "human comparisons", "f1"] == 1.0).all()  # consistent with the scores by construction
    summary = pd.read_csv(out / "pairwise_summary.csv")
    assert (summary["position_consistency"] == 0.0).all()  # "Yes" to both orders: fully position-biased


NLE = SHARED_DATA / "nle" / "e-snli.csv"


@pytest.mark.needs_shared_data("nle/e-snli.csv")
def test_nle_recipe_on_shared_inputs_without_human_scores(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"default": "[Informativeness] 5 [Clarity] 6. Clear enough."}))
    r = run_cli("recipe", "nle", "--dataset", "esnli", "--items", str(NLE), "--n-items", "5", "--judge",
                     f"scripted-test-double:{script}", "--quiet", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    readme = (tmp_path / "o" / "README.md").read_text()
    assert "no human scores" in readme and (tmp_path / "o" / "cost.csv").exists()
    scores = pd.read_csv(tmp_path / "o" / "judge_scores.csv")
    assert (scores["informativeness"] == 5).all() and (scores["clarity"] == 6).all()


def test_scales_command(tmp_path):
    human, rows = _human_scores(tmp_path, 20)
    judge = pd.DataFrame([{"item_id": i, "criterion": m, "rater": "j", "score": max(1, r[m] - 1)} for i, r in rows.items()
                          for m in ("informativeness", "clarity")])
    judge.to_csv(tmp_path / "judge.csv", index=False)
    res = run_cli("scales", str(tmp_path / "judge.csv"), "--human", str(human), "--format", "json",
                       "--figures", str(tmp_path / "figs"), "--out", str(tmp_path / "scales"))
    assert res.returncode == 0, res.stderr
    written = pd.read_csv(tmp_path / "scales" / "scales.csv")  # --out: the same table, an index and run.json
    assert len(written) == len(json.loads(res.stdout)["rows"]) and "f1" in written and "r" in written
    assert "scales.csv" in (tmp_path / "scales" / "README.md").read_text()
    assert json.loads((tmp_path / "scales" / "run.json").read_text())["command"] == "scales"
    doc = json.loads(res.stdout)
    assert doc["schema"] == 1 and doc["command"] == "scales"
    table = doc["rows"]
    assert {r["granularity"] for r in table} == {"binary", "ternary", "7-way", "pearson", "spearman"}
    assert (tmp_path / "figs" / "scatter_clarity.png").exists()


def test_dynamic_prompting_asks_its_own_prompts(tmp_path):
    """Issue 18: the dynamic stage's prompts (retrieved examples instead of the fixed ones) are asked under a
    rater of their own; a judge that answers 2 to the fixed examples and 6 otherwise shows the difference."""
    from judgelab.recipes.nle import run_nle
    from judgelab.store import Store

    data = tmp_path / "esnli.csv"
    pd.DataFrame({"gold_label": ["neutral"] * 12, "Sentence1": [f"Premise {i}" for i in range(12)],
                  "Sentence2": [f"Hypothesis {i}" for i in range(12)],
                  "Explanation_1": [f"Explanation number {i} about premise {i}" for i in range(12)]}).to_csv(data, index=False)
    human, _ = _human_scores(tmp_path, 12)
    script = tmp_path / "script.json"
    fixed = "High score example: [Premiss] A female dancer"
    script.write_text(json.dumps({"rules": [{"contains": "The First:", "reply": "Yes"},
                                            {"contains": fixed, "reply": "[Informativeness] 2 [Clarity] 2"},
                                            {"contains": "[Informativeness]", "reply": "[Informativeness] 6 [Clarity] 6"}],
                                  "default": "Yes"}))
    out = tmp_path / "nle"
    result = run_nle("esnli", data, out, f"scripted-test-double:{script}", human, samples=1, per_delta=2, progress=False)
    with Store(out / "store.sqlite", read_only=True) as store:
        ratings = store.ratings()
    dynamic = [r for r in set(ratings["rater"]) if r.endswith("+dynamic")]
    assert len(dynamic) == 1
    assert result.folder == out and result.raters == {"rating": dynamic[0].removesuffix("+dynamic")}
    assert result.to_dict()["raters"] == result.raters and result.sanity is None
    assert set(ratings.loc[ratings["rater"] == dynamic[0], "score"]) == {6.0}
    vanilla = ratings[(ratings["rater"] == dynamic[0].removesuffix("+dynamic"))]
    assert set(vanilla["score"]) == {2.0}
    scales = pd.read_csv(out / "dynamic_scales.csv")
    assert not scales[scales["prompting"] == "vanilla"].drop(columns="prompting").reset_index(drop=True).equals(
        scales[scales["prompting"] == "dynamic"].drop(columns="prompting").reset_index(drop=True))
