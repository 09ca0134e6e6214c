"""Issue 6: Gwet's AC1, the Chiang & Lee and HANNA recipes, user-study annotations, Min-K% Prob."""
import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA, run_cli
from judgelab.stats import gwet_ac1

NAN = float("nan")


# Reference values computed with the independent implementation irrCAC 0.4.4 (CAC(...).gwet(),
# identity weights). irrCAC pins old numpy/scipy releases, so it is not a test dependency; its
# outputs (printed to 5 decimals) are stored here.
IRRCAC_CASES = [
    ([[1, 1, 1], [0, 0, 0], [1, 0, 1], [1, 1, None], [None, 1, 1], [0, 0, 1], [1, 1, 1]], 0.67816),
    ([[1, 3, 1], [4, 4, 1], [4, 3, 4], [1, 1, 3], [1, 2, 4], [1, 4, 1], [1, 3, 4], [1, 2, 5], [5, 3, 3], [2, 4, 3],
      [2, 1, 1], [5, 3, 3], [3, 4, 1], [1, 2, 3], [4, 3, 3]], 0.0143),
    ([["low", "high", "mid", "mid"], ["mid", "high", "low", "high"], ["low", None, "mid", None], ["high", "high", "high", "high"],
      ["mid", "low", None, None], ["mid", "mid", "low", "high"], ["high", "mid", "mid", "high"], [None, "mid", "mid", "low"],
      ["low", "mid", None, "low"], ["high", "high", "low", "mid"], ["low", "high", "high", "mid"], [None, None, "mid", "high"],
      ["high", "high", "high", "low"], ["mid", "mid", "mid", "low"], ["mid", None, None, "high"], ["high", "high", "mid", "high"],
      ["mid", "low", "high", "mid"], [None, "mid", "high", "low"], ["mid", "low", "high", "mid"], ["low", "low", "mid", "high"]], -0.12894),
]


@pytest.mark.parametrize("data,expected", IRRCAC_CASES)
def test_gwet_ac1_matches_irrcac(data, expected):
    assert gwet_ac1(data) == pytest.approx(expected, abs=5e-6)


def test_gwet_ac1_by_hand_and_degenerate():
    # Two raters, 4 items, categories a/b: p_a = 3/4; pi_a = 5/8, pi_b = 3/8; p_e = 2 * (5/8)(3/8) = 15/32.
    data = [["a", "a"], ["a", "b"], ["b", "b"], ["a", "a"]]
    assert gwet_ac1(data) == pytest.approx((0.75 - 15 / 32) / (1 - 15 / 32))
    assert math.isnan(gwet_ac1([[1, None], [None, 2]]))
    assert gwet_ac1([[0, 0], [0, 0]], categories=[0, 1]) == 1.0


WP = SHARED_DATA / "chiang-lee" / "wp_a.json"


def check_wp_human_tables(path, per_writer):
    from judgelab.recipes.chiang_lee_data import load_wp, wp_human_ratings
    from judgelab.recipes.tables import pairwise_kendall, table1
    import krippendorff
    from scipy import stats as st

    data = load_wp(path)
    humans = wp_human_ratings(data)
    t1 = table1(humans).set_index(["writer", "criterion"])
    assert t1["items"].eq(per_writer).all() and t1["annotators"].eq(3).all()
    rows = [r for r in data.values() if r["human_written"] == 0]
    grammar = np.array([r["grammar"] for r in rows], float)
    assert t1.loc[("gpt2", "grammaticality"), "mean"] == pytest.approx(grammar.mean())
    assert t1.loc[("gpt2", "grammaticality"), "alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=grammar.T, level_of_measurement="interval"), abs=1e-9)
    assert t1.loc[("gpt2", "grammaticality"), "full_agreement_pct"] == pytest.approx(100 * np.mean([len(set(g)) == 1 for g in grammar]))
    t6 = pairwise_kendall(humans).set_index(["writer", "criterion"])
    taus = [st.kendalltau(grammar[:, a], grammar[:, b]).statistic for a, b in ((0, 1), (0, 2), (1, 2))]
    assert t6.loc[("gpt2", "grammaticality"), "mean_pairwise_kendall"] == pytest.approx(np.mean(taus), abs=1e-12)


@pytest.mark.needs_shared_data("chiang-lee/wp_a.json")
def test_wp_human_tables():
    check_wp_human_tables(WP, per_writer=200)


def test_wp_human_tables_on_a_small_file(tmp_path):
    """The same checks on a small file written here in wp_a.json's layout (stories keyed "0", "1", …
    with prompt, story, human_written and three raters' 1-5 ratings per criterion)."""
    rng = np.random.default_rng(5)
    stories = {str(k): {"prompt": f"Prompt {k}", "story": f"Story {k}.", "human_written": k % 2,
                        **{c: [int(v) for v in rng.integers(1, 6, 3)] for c in ("grammar", "cohesive", "enjoy", "relevant")}}
               for k in range(16)}
    stories["2"]["grammar"] = [4, 4, 4]  # one full agreement
    path = tmp_path / "wp.json"
    path.write_text(json.dumps(stories))
    check_wp_human_tables(path, per_writer=8)


def _stories(tmp_path):
    rows = [{"id": f"s{i}", "story": f"Story {i}. The fox ran over the hill and found a red door.", "prompt": f"Prompt {i}",
             "writer": "human" if i % 2 else "gpt2"} for i in range(6)]
    path = tmp_path / "stories.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_chiang_lee_recipe_flags_a_judge_that_fails_the_sanity_check(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"contains": "preserved in news title 2", "reply": "I would rate it a 3."}],
                                  "default": "I would rate it a 4."}))
    out = tmp_path / "cl"
    r = run_cli("recipe", "chiang-lee", "--items", str(_stories(tmp_path)), "--judge", f"scripted-test-double:{script}",
                     "--n-items", "2", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "SANITY CHECK FAILED" in r.stdout and "SANITY CHECK FAILED" in (out / "README.md").read_text()
    t4 = pd.read_csv(out / "table4_adversarial.csv").set_index("system")
    assert t4.loc["identical", "meaning"] == 3.0 and t4.loc["benign", "fluency"] == 4.0


def test_chiang_lee_recipe_passes_a_judge_that_gets_identical_pairs_right(tmp_path, stub_factory):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "I would rate it a 5."}))
    out = tmp_path / "cl"
    r = run_cli("recipe", "chiang-lee", "--items", str(_stories(tmp_path)), "--judge", f"scripted-test-double:{script}",
                     "--n-items", "2", "--quiet", "--out", str(out), "--variance")
    assert r.returncode == 0, r.stderr
    assert "sanity check passed" in r.stdout
    t3 = pd.read_csv(out / "table3_variance.csv")
    assert list(t3["setup"]) == ["original, T = 1.0", "+ persona, T = 1.0", "+ explain, T = 1.0",
                                 "original, T = 0.7", "original, T = 0.3", "original, T = 0.0"]
    t1 = pd.read_csv(out / "table1.csv")
    assert set(t1["writer"]) == {"human", "gpt2"} and (t1["annotators"] == 3).all()


def test_recipes_against_an_openai_compatible_endpoint(tmp_path, stub_factory):
    stub = stub_factory(fail_rate=0.1)
    judge = f"openai:stub@{stub.base_url}"
    r = run_cli("recipe", "chiang-lee", "--items", str(_stories(tmp_path)), "--judge", judge, "--n-items", "2",
                     "--quiet", "--out", str(tmp_path / "cl"))
    assert r.returncode == 0, r.stderr
    stories = tmp_path / "hanna.csv"
    pd.DataFrame({"Prompt": ["P one", "P one", "P two"], "Human": ["H one.", "H one.", "H two."],
                  "Story": ["A story.", "Another story.", "Third story."], "Model": ["m1", "m2", "m1"]}).to_csv(stories)
    r = run_cli("recipe", "hanna", "--items", str(stories), "--judge", judge, "--n-items", "2", "--eval-prompts", "1,2",
                     "--quiet", "--out", str(tmp_path / "hn"))
    assert r.returncode == 0, r.stderr
    icc = pd.read_csv(tmp_path / "hn" / "icc2k.csv")
    assert list(icc.columns) == ["rater", "criterion", "icc2k", "icc2k_low", "icc2k_high", "note"]  # as agree and hanna icc
    assert len(icc) == 12 and set(icc["criterion"]) == {"relevance", "coherence", "empathy", "surprise", "engagement", "complexity"}
    asg = pd.read_csv(tmp_path / "hn" / "asg.csv")
    assert set(asg["system"]) == {"m1", "m2", "Human"}
    assert (tmp_path / "hn" / "README.md").exists() and (tmp_path / "hn" / "explanations.csv").exists()
    assert (tmp_path / "hn" / "explanation_map.png").exists()


USER_STUDY = SHARED_DATA / "hanna" / "user_study.csv"


@pytest.mark.needs_shared_data("hanna/user_study.csv")
def test_user_study_rates_and_ac1():
    from judgelab.recipes.explanations import error_annotations

    table = error_annotations(USER_STUDY).set_index("category")
    raw = pd.read_csv(USER_STUDY)
    assert table.loc["syntax", "rate"] == pytest.approx(raw["Answer.a-2-syntax.1"].mean())
    assert (table["explanations"] == 100).all() and (table["annotations"] == 300).all()
    assert table["gwet_ac1"].between(-1, 1).all()
    r = run_cli("recipe", "user-study", str(USER_STUDY), "--format", "json")
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and doc["schema"] == 1 and doc["rows"][0]["category"] == "guidelines"


@pytest.mark.slow
def test_min_k_prob_orders_repeated_before_fresh_text():
    pytest.importorskip("llama_cpp")
    from judgelab.contamination import TokenScorer, min_k_prob, roc_auc

    scorer = TokenScorer()
    texts = ["The quiet harbour town of Lindqvist keeps a lighthouse that blinks green twice every nine seconds.",
             "Marta folded the blue map, counted eleven coins and walked toward the ferry before the rain began.",
             "In the attic they found a violin case full of letters addressed to a sailor named Orvel."]
    member = [scorer.min_k(t, 0.2, context=t + "\n") for t in texts]   # seen just before: known by construction
    fresh = [scorer.min_k(t, 0.2) for t in texts]
    assert all(m > f for m, f in zip(member, fresh))
    assert roc_auc(member + fresh, [1, 1, 1, 0, 0, 0]) == 1.0
    assert min_k_prob([-1.0, -5.0, -3.0, -0.5, -2.0], 0.4) == pytest.approx(-4.0)


def test_roc_auc_matches_sklearn():
    from sklearn.metrics import roc_auc_score
    from judgelab.contamination import roc_auc

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 60)
    s = rng.normal(size=60) + y * 0.8
    s[:5] = s[5:10]  # ties
    assert roc_auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def _contamination_texts(tmp_path):
    path = tmp_path / "texts.jsonl"
    path.write_text("\n".join(json.dumps({"id": i, "text": t, "member": m}) for i, (t, m) in enumerate(
        [("The cat sat on the mat.", 1), ("Zebras juggle quartz under violet moons.", 0)])))
    return path


@pytest.mark.slow
def test_contamination_command(tmp_path):
    pytest.importorskip("llama_cpp")
    path = _contamination_texts(tmp_path)
    r = run_cli("contamination", "--items", str(path), "--label-field", "member", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert "ROC AUC (members vs non-members): " in r.stdout


def test_contamination_command_refuses_labels_that_are_not_0_1(tmp_path):
    """Checked before the model is loaded: no llama.cpp needed."""
    bad = run_cli("contamination", "--items", str(_contamination_texts(tmp_path)), "--label-field", "nope")
    assert bad.returncode == 2 and "0/1" in bad.stderr
