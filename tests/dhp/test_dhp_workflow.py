"""DHP perturbations, analysis from a ratings file, and `judgelab dhp` end to end."""
import json
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from conftest import run_cli
from judgelab.datasets.items import Item
from judgelab.dhp.build import build_perturbed
from judgelab.dhp.task import available_tasks, load_task
from judgelab.errors import JudgelabError
from judgelab.perturb import rules
from judgelab.perturb.llm import check_generation, clean_generation

TEXT = ("The old lighthouse was switched off in 1994. For years it stood empty. Last spring volunteers repaired the roof. "
        "They now open it to visitors on weekends. A small museum tells the story of the keepers.")


def alnum_diff(a, b):
    return sum(ch.isalnum() for ch in a) - sum(ch.isalnum() for ch in b)


@pytest.mark.parametrize("k", [1, 10, 50])
def test_character_deletions_hit_exactly_k(k):
    out = rules.delete_characters(TEXT, k, random.Random(3))
    assert out.changed and out.hits == k and alnum_diff(TEXT, out.text) == k
    assert rules.delete_characters(TEXT, k, random.Random(3)).text == out.text  # reproducible


def osa_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: substitutions, insertions, deletions and adjacent swaps cost 1."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_typos_make_k_errors():
    k = 10
    distances = []
    for seed in range(30):
        out = rules.add_typos(TEXT, k, random.Random(seed))
        assert out.changed and out.hits == k
        assert out.text == rules.add_typos(TEXT, k, random.Random(seed)).text
        distances.append(osa_distance(TEXT, out.text))
    # Each of the k typos is one edit at its own position; two neighbouring edits can rarely cancel
    # or merge (a doubled letter next to a dropped copy of it), so the distance is k almost always.
    assert max(distances) <= k and np.mean([d == k for d in distances]) >= 0.8


def test_word_deletion_and_shuffle():
    out = rules.delete_words(TEXT, 5, random.Random(1))
    assert out.changed and out.hits == 5 and len(TEXT.split()) - len(out.text.split()) == 5
    assert rules.delete_words(TEXT, 5, random.Random(1)).text == out.text  # reproducible
    words, kept = TEXT.split(), out.text.split()
    gaps = [i for i in range(len(words) - 4) if words[:i] + words[i + 5:] == kept]
    assert gaps  # 5 consecutive words removed, the others unchanged and in order
    # the text around the gap is the original's own text (its start and its end), not rewritten
    i = gaps[0]
    assert TEXT.startswith(" ".join(kept[:i])) and TEXT.endswith(" ".join(kept[i:]))
    assert out.text == " ".join(kept)  # words joined by single spaces, as in the original
    shuffled = rules.shuffle_sentences(TEXT, 2, random.Random(2))
    before, after = rules.split_sentences(TEXT), rules.split_sentences(shuffled.text)
    assert sorted(before) == sorted(after) and sum(a != b for a, b in zip(before, after)) == 2
    full = rules.shuffle_sentences(TEXT, None, random.Random(2))
    assert all(a != b for a, b in zip(before, rules.split_sentences(full.text)))


def test_too_short_texts_are_left_untouched_with_a_warning():
    for out in (rules.delete_characters("Hi.", 10, random.Random(0)), rules.delete_words("Two words.", 5, random.Random(0)),
                rules.shuffle_sentences("One sentence only.", 2, random.Random(0))):
        assert not out.changed and out.warning and "too short" in out.warning


def test_sentence_splitter_offline():
    assert rules.split_sentences("Dr. Smith arrived at 5 p.m. on Monday. He left! Did he return? Yes.") == [
        "Dr. Smith arrived at 5 p.m. on Monday.", "He left!", "Did he return?", "Yes."]


def test_build_is_seeded_per_item_and_reports_failures():
    task = load_task("story-completion")
    items = [Item("a", "She smiled and waved goodbye to everyone.", context="Story A.", extra={"wrong_ending": "He ate soup."}),
             Item("b", "The dog finally came home that night.", context="Story B.")]
    built, report = build_perturbed(items, task, seed=7)
    again, _ = build_perturbed(items[:1], task, seed=7)
    first = {(i.system, i.item_id): i.text for i in built}
    assert all(first[(i.system, i.item_id)] == i.text for i in again)  # independent of the other items
    assert first[("wrong-ending", "a")] == "He ate soup." and ("wrong-ending", "b") not in first
    assert first[("random-ending", "a")] == items[1].text
    reasons = set(report.loc[~report.ok, "reason"])
    assert "the item has no wrong_ending" in reasons and any("no generator" in r for r in reasons)


def test_llm_output_checks():
    assert clean_generation("Revised Summary: The cat sat.", "summary") == "The cat sat."
    assert check_generation("The cat sat.", "the cat  sat.") == (False, "unchanged text")
    assert check_generation("The cat sat.", "")[0] is False
    assert check_generation("The cat sat on the mat.", "The dog sat on the mat.")[0] is True


def test_all_shipped_tasks_load():
    assert set(available_tasks()) == {"summarization", "story-completion", "question-answering", "translation"}
    assert load_task("summarization").metrics == ["coherence", "consistency", "fluency", "relevance"]
    with pytest.raises(JudgelabError, match="unknown DHP task"):
        load_task("poetry")


def known_ratings(tmp_path, seed=0):
    """A ratings file for a judge whose scores are known: ties, zeros and a perfect separation."""
    rng = np.random.default_rng(seed)
    task = load_task("summarization")
    rows = []
    n = 12
    orig = {m: rng.integers(3, 6, n).astype(float) for m in task.metrics}
    for m in task.metrics:
        for i in range(n):
            rows.append(("original", m, i, orig[m][i]))
            rows.append(("typos/minor", m, i, orig[m][i] - rng.integers(0, 2)))      # zeros and ties
            rows.append(("typos/major", m, i, orig[m][i] - 2.0))                    # always lower
            rows.append(("reordering/minor", m, i, orig[m][i]))                      # all zero differences
    df = pd.DataFrame(rows, columns=["system", "criterion", "item_id", "score"]).assign(rater="known-judge", sample=0)
    path = tmp_path / "ratings.csv"
    df.to_csv(path, index=False)
    return df, path


def independent(df, perturbation, metrics, weights=None):
    ps = []
    for m in metrics:
        o = df[(df.system == "original") & (df.criterion == m)].sort_values("item_id")["score"].to_numpy()
        p = df[(df.system == perturbation) & (df.criterion == m)].sort_values("item_id")["score"].to_numpy()
        d = o - p
        ps.append(1.0 if np.all(d == 0) else st.wilcoxon(d, zero_method="wilcox", alternative="greater").pvalue)
    w = np.full(len(ps), 1 / len(ps)) if weights is None else np.asarray(weights)
    hmp = float(np.sum(w) / np.sum(w / np.asarray(ps)))
    return ps, hmp, np.log(max(hmp, 1e-300)) / np.log(0.05)


def test_analyze_command_matches_independent_scipy(tmp_path):
    df, path = known_ratings(tmp_path)
    votes = tmp_path / "votes.json"
    votes.write_text(json.dumps({"typos": {"fluency": 7, "coherence": 3}, "reordering/minor": {"coherence": 10}}))
    result = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--expert-weights", str(votes), "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == 1 and doc["task"] == "summarization" and len(doc["judges"]) == 1
    out = next(iter(doc["judges"].values()))
    metrics = ["coherence", "consistency", "fluency", "relevance"]
    by_name = {p["name"]: p for p in out["perturbations"]}
    assert set(by_name) == {"typos/minor", "typos/major", "reordering/minor"}
    for name in by_name:
        ps, hmp, d = independent(df, name, metrics)
        assert [by_name[name]["p"][m] for m in metrics] == pytest.approx(ps, abs=1e-9)
        assert by_name[name]["p_hmp"] == pytest.approx(hmp, abs=1e-9) and by_name[name]["D"] == pytest.approx(d, abs=1e-9)
    ew = [0.3, 0.0, 0.7, 0.0]
    _, hmp_ew, d_ew = independent(df, "typos/major", metrics, ew)
    assert by_name["typos/major"]["p_hmp_ew"] == pytest.approx(hmp_ew, abs=1e-9) and by_name["typos/major"]["D_ew"] == pytest.approx(d_ew, abs=1e-9)
    assert by_name["reordering/minor"]["p_hmp"] == 1.0 and by_name["reordering/minor"]["D"] == 0.0
    # character level: typos minor+major; sentence level: reordering -> level-balanced mean
    d = {n: by_name[n]["D"] for n in by_name}
    assert out["D_avg"] == pytest.approx(0.5 * (d["typos/minor"] + d["typos/major"]) / 2 + 0.5 * d["reordering/minor"], abs=1e-9)
    assert out["D_min"] == pytest.approx(0.0)


def test_analyze_bad_input(tmp_path):
    df, path = known_ratings(tmp_path)
    df.assign(system=df.system.replace("typos/minor", "glitter")).to_csv(tmp_path / "bad.csv", index=False)
    r = run_cli("dhp", "analyze", str(tmp_path / "bad.csv"), "--task", "summarization", "--format", "json")
    assert r.returncode == 2 and "unknown perturbation 'glitter'" in r.stderr
    votes = tmp_path / "v.json"
    votes.write_text(json.dumps({"typos": {"beauty": 1}}))
    r = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--expert-weights", str(votes))
    assert r.returncode == 2 and "unknown metric 'beauty'" in r.stderr


def test_dhp_with_two_judges_against_an_openai_compatible_endpoint(tmp_path, stub_factory):
    stub = stub_factory(fail_rate=0.1)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "4"}))
    out = tmp_path / "dhp"
    result = run_cli("dhp", "--task", "question-answering", "--judge", f"openai:stub-judge@{stub.base_url}",
                          "--judge", f"scripted-test-double:{script}", "--samples", "2", "--quiet", "--out", str(out))
    assert result.returncode == 0, result.stderr
    doc = json.loads((out / "discernment.json").read_text())
    assert doc["schema"] == 1 and doc["task"] == "question-answering"
    reports = doc["judges"]
    assert set(reports) == {"stub-judge@dhp-question-answering", "scripted-test-double@dhp-question-answering"}
    constant = reports["scripted-test-double@dhp-question-answering"]
    assert constant["D_avg"] == 0.0  # a judge that always says 4 cannot discern anything
    assert (out / "discernment.png").exists() and (out / "response_style.png").exists()
    again = run_cli("dhp", "--task", "question-answering", "--judge", f"scripted-test-double:{script}",
                         "--perturbed", str(out / "perturbed.jsonl"), "--quiet", "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again" / "ratings.csv").exists()


def test_votes_in_wide_and_long_csv_agree(tmp_path):
    from judgelab.dhp.analysis import load_votes

    task = load_task("summarization")
    (tmp_path / "wide.csv").write_text("perturbation,coherence,consistency,fluency,relevance\ntypos,3,0,7,0\n")
    (tmp_path / "long.csv").write_text("perturbation,metric,votes\ntypos,coherence,3\ntypos,fluency,7\n")
    wide = load_votes(tmp_path / "wide.csv", task)
    long = load_votes(tmp_path / "long.csv", task)
    assert {k: v for k, v in wide["typos"].items() if v} == long["typos"] == {"coherence": 3.0, "fluency": 7.0}
    (tmp_path / "bad.csv").write_text("x,y\n1,2\n")
    with pytest.raises(JudgelabError, match="expected columns"):
        load_votes(tmp_path / "bad.csv", task)


def separated_ratings(n_items: int) -> pd.DataFrame:
    """Every perturbed copy scored lower than its original on every metric: the best case for D."""
    task = load_task("summarization")
    rows = []
    for m in task.metrics:
        for i in range(n_items):
            rows.append(("original", m, i, 5.0 - 0.1 * i))
            rows.append(("typos/minor", m, i, 4.0 - 0.2 * i))  # differences 1, 1.1, 1.2, …: no ties
    return pd.DataFrame(rows, columns=["system", "criterion", "item_id", "score"]).assign(rater="judge", sample=0)


@pytest.mark.parametrize("exact", [False, True])
def test_too_few_pairs_for_d_above_one_is_noted(exact):
    from judgelab.dhp.analysis import analyze
    from judgelab.stats.dhp import max_discernment

    task = load_task("summarization")
    four = analyze(separated_ratings(4), task, exact=exact)["judge"]
    (row,) = four.perturbations
    assert row.pairs == 4 and row.pvalues["coherence"] == pytest.approx(0.5**4)
    assert row.D <= row.max_D <= max_discernment(4) < 1  # even a perfect judge stays below 1
    bound = "0.84" if exact else "0.93"  # the asymptotically exact HMP of four p = 1/16 is 0.081 > 1/16
    assert len(four.notes) == 1 and f"typos/minor (4 pairs, D <= {bound})" in four.notes[0]
    assert four.combination == ("asymptotically exact HMP" if exact else "Wilson's weighted HMP statistic")
    five = analyze(separated_ratings(5), task, exact=exact)["judge"]
    assert five.perturbations[0].D > 1 and five.notes == ()


def test_typed_report_serialises_to_the_documented_json_and_tables(tmp_path):
    """DhpReport.to_dict / to_frame give the documented shapes: key order, NaN as null, one row per perturbation."""
    from judgelab.dhp.analysis import analyze, perturbation_table, report_json, summary_table
    from judgelab.dhp.task import load_task

    df, _ = known_ratings(tmp_path)
    task = load_task("summarization")
    reports = analyze(df, task, votes={"typos": {"fluency": 7, "coherence": 3}})
    rep = next(iter(reports.values()))
    doc = rep.to_dict()
    assert list(doc) == ["perturbations", "D_avg", "D_min", "D_avg_ew", "D_min_ew", "notes"]
    assert list(doc["perturbations"][0]) == ["name", "level", "pairs", "p", "p_hmp", "D", "p_hmp_ew", "D_ew"]
    assert report_json(reports, "summarization")["judges"] == {r: x.to_dict() for r, x in reports.items()}
    assert json.loads(json.dumps(doc)) == doc  # plain JSON types only
    typos = {r.name: r for r in rep.perturbations}["typos/major"]
    assert typos.expert_weights == pytest.approx({"coherence": 0.3, "consistency": 0.0, "fluency": 0.7, "relevance": 0.0})
    table = perturbation_table(reports, task.metrics)
    assert list(table.columns[:4]) == ["judge", "perturbation", "level", "pairs"]
    assert list(table["perturbation"]) == [r.name for r in rep.perturbations]
    assert table["D"].tolist() == [r.D for r in rep.perturbations]
    assert summary_table(reports).loc[0, "D_avg"] == rep.D_avg


def test_analyze_command_shows_the_few_pairs_note(tmp_path):
    path = tmp_path / "ratings.csv"
    separated_ratings(4).to_csv(path, index=False)
    r = run_cli("dhp", "analyze", str(path), "--task", "summarization", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["judges"]["judge"]["notes"][0].startswith("too few pairs for D to exceed 1")  # stdout stays JSON
    assert "judgelab: note: judge: too few pairs for D to exceed 1 in 1 of 1 perturbations" in r.stderr


def test_out_of_range_dhp_options_are_user_errors(tmp_path):
    from judgelab.dhp.analysis import load_votes
    from judgelab.dhp.study import run_dhp

    for samples in (0, -3, 129):
        with pytest.raises(JudgelabError, match="--samples must be between 1 and 128"):
            run_dhp("summarization", ["local"], tmp_path / "out", samples=samples)
    with pytest.raises(JudgelabError, match="--n-items must be at least 1"):
        run_dhp("summarization", ["local"], tmp_path / "out", n_items=0)
    assert not (tmp_path / "out").exists()  # refused before any work
    votes = tmp_path / "votes.json"
    for bad, why in ((-1, "is negative"), ("many", "is not a number"), (None, "no vote count")):
        votes.write_text(json.dumps({"typos": {"fluency": bad}}))
        with pytest.raises(JudgelabError, match=f"'typos', metric 'fluency'.*{why}"):
            load_votes(votes, load_task("summarization"))
    for bad in ([1, 2], {"typos": 3}):
        votes.write_text(json.dumps(bad))
        with pytest.raises(JudgelabError, match="expected a JSON object|must be an object"):
            load_votes(votes, load_task("summarization"))
    r = run_cli("dhp", "--task", "summarization", "--samples", "0", "--out", str(tmp_path / "cli"))
    assert r.returncode == 2 and r.stderr.strip() == "judgelab: error: --samples must be between 1 and 128 ratings per text, not 0"
    r = run_cli("dhp", "--task", "summarization", "--n-items", "0", "--out", str(tmp_path / "cli"))
    assert r.returncode == 2 and r.stderr.startswith("judgelab: error: Invalid value for '--n-items'")  # not an internal error
    assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "cli").exists()


def test_plan_dhp_is_a_study_plan_that_calls_nothing(tmp_path):
    from judgelab.dhp.study import plan_dhp
    from judgelab.rate import StudyPlan

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "4"}))
    plan = plan_dhp("summarization", [f"scripted-test-double:{script}"], n_items=2, samples=1)
    assert isinstance(plan, StudyPlan)
    (judge,) = plan.judges
    task = load_task("summarization")
    rule_based = [p for p in task.perturbations if p.method == "rule"]
    assert judge.plan.judgments == 2 * (1 + len(rule_based)) * len(task.metrics)  # originals and rule copies, one sample
    assert len(plan.later) == 1 and plan.later[0].startswith("LLM-based perturbations")  # no --generator
    doc = plan.to_dict()
    assert doc["later"] == list(plan.later) and doc["judges"][0]["judgments"] == judge.plan.judgments
