"""A run whose judge fails most judgments ends with exit status 3, in every command that judges."""
from __future__ import annotations

import csv
import json

import pytest

from conftest import SHARED_DATA, run_cli


@pytest.fixture()
def mute_judge(tmp_path):
    script = tmp_path / "mute.json"
    script.write_text(json.dumps({"default": "I cannot say."}))
    return f"scripted-test-double:{script}"


def test_dhp_with_a_judge_that_never_rates(tmp_path, mute_judge):
    result = run_cli("dhp", "--task", "summarization", "--judge", mute_judge, "--n-items", "5", "--quiet",
                          "--out", str(tmp_path / "d"))
    assert result.returncode == 3, (result.stdout[-500:], result.stderr)
    assert "failed (100% > --max-failure-rate 50%)" in result.stderr and "example no_rating" in result.stdout
    assert (tmp_path / "d" / "ratings.csv").exists()


def check_nle_with_a_mute_judge(data, out, judge):
    result = run_cli("recipe", "nle", "--dataset", "esnli", "--items", str(data), "--n-items", "2", "--samples", "1",
                     "--judge", judge, "--out", str(out))
    assert result.returncode == 3, (result.stdout[-800:], result.stderr)
    assert "failed (100% > --max-failure-rate 50%)" in result.stderr
    assert (out / "README.md").exists()  # the outputs are written: the failures are data too


@pytest.mark.needs_shared_data("nle/e-snli.csv")
def test_nle_recipe_with_a_judge_that_never_writes_the_metric_format(tmp_path, mute_judge):
    check_nle_with_a_mute_judge(SHARED_DATA / "nle" / "e-snli.csv", tmp_path / "n", mute_judge)


def test_nle_recipe_with_a_mute_judge_on_a_small_file(tmp_path, mute_judge):
    """The same on three rows written here in e-snli.csv's layout (gold_label, Sentence1, Sentence2,
    Explanation_1), so it runs without ../shared/data."""
    data = tmp_path / "e-snli.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gold_label", "Sentence1", "Sentence2", "Explanation_1"])
        w.writerows([["entailment", "A man plays a guitar on stage.", "A man plays music.", "A guitar makes music."],
                     ["contradiction", "Two dogs run in the snow.", "The dogs sleep inside.", "Dogs cannot run and sleep at once."],
                     ["neutral", "A woman reads, in a park.", "She reads a novel.", "Not every book is a novel."]])
    check_nle_with_a_mute_judge(data, tmp_path / "n", mute_judge)


# -- every model-calling command: counts, examples, --max-failure-rate ---------------------------------------

def _esnli(tmp_path):
    """Three rows in e-snli.csv's layout and human scores for them (ids are the row numbers)."""
    data = tmp_path / "e-snli.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gold_label", "Sentence1", "Sentence2", "Explanation_1"])
        w.writerows([["entailment", "A man plays a guitar on stage.", "A man plays music.", "A guitar makes music."],
                     ["contradiction", "Two dogs run in the snow.", "The dogs sleep inside.", "Dogs cannot run and sleep at once."],
                     ["neutral", "A woman reads, in a park.", "She reads a novel.", "Not every book is a novel."]])
    human = tmp_path / "human.csv"
    human.write_text("id,informativeness,clarity\n0,6,5\n1,2,3\n2,4,4\n")
    return data, human


def _stories(tmp_path):
    path = tmp_path / "stories.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"s{i}", "story": f"Story {i}. The fox ran over the hill.", "prompt": f"Prompt {i}",
                                          "writer": "human" if i % 2 else "gpt2"}) for i in range(4)))
    return path


def _hanna(tmp_path):
    path = tmp_path / "hanna.csv"
    path.write_text("Prompt,Human,Story,Model\nP one,H one.,A story.,m1\nP one,H one.,Another story.,m2\n")
    return path


def _summeval(tmp_path):
    path = tmp_path / "summeval.jsonl"
    rows = [{"doc_id": f"doc{d}", "system": f"M{s}", "source": f"Article {d}.", "reference": "ref", "summary": f"Summary {s} of {d}.",
             "coherence": 1.0 + s, "consistency": 2.0 + s, "fluency": 1.0 + s / 2, "relevance": 3.0 - s} for d in range(2) for s in range(3)]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def _padding_items(tmp_path):
    path = tmp_path / "pad.jsonl"
    path.write_text("".join(json.dumps({"id": f"i{k}", "text": f"Item {k} opens here. It makes point {k}. Item {k} ends now.",
                                        "context": f"Source {k}."})
                            + "\n" for k in range(3)))
    return path


#: command → (its arguments before --judge given tmp_path, the answer a judge that works gives)
JUDGING = {
    "pairwise": (lambda t: ["pairwise", "--dataset", "esnli", "--items", str(_esnli(t)[0]), "--human", str(_esnli(t)[1]),
                            "--per-delta", "2"], {"default": "Yes"}),
    "recipe nle": (lambda t: ["recipe", "nle", "--dataset", "esnli", "--items", str(_esnli(t)[0]), "--samples", "1"],
                   {"default": "[Informativeness] 5 [Clarity] 6"}),
    "recipe chiang-lee": (lambda t: ["recipe", "chiang-lee", "--items", str(_stories(t)), "--n-items", "1", "--samples", "1"],
                          {"default": "I would rate it a 5."}),
    "recipe hanna": (lambda t: ["recipe", "hanna", "--items", str(_hanna(t)), "--n-items", "1", "--eval-prompts", "1",
                                "--samples", "1"], {"default": "I would rate it a 4."}),
    "recipe geval": (lambda t: ["recipe", "geval", "--items", str(_summeval(t)), "--dataset", "summeval", "--score", "parsed",
                                "--n-resamples", "0"], {"default": "I would rate it a 2."}),
    "probe padding": (lambda t: ["probe", "padding", "--items", str(_padding_items(t)), "--template", "geval-summeval",
                                 "--criteria", "fluency", "--padding", "filler:50", "--samples", "1", "--score", "parsed"],
                      {"default": "2"}),
}


@pytest.mark.parametrize("command", JUDGING)
def test_a_judge_that_never_rates_is_counted_shown_and_exits_3(command, tmp_path, mute_judge):
    """As `rate`: status counts and failed answers are shown, and more failures than --max-failure-rate
    allows end with exit status 3 (the outputs written); --max-failure-rate 1 accepts them, counts still shown."""
    args, _ = JUDGING[command]
    base = [*args(tmp_path), "--judge", mute_judge, "--quiet"]
    result = run_cli(*base, "--out", str(tmp_path / "out"))
    assert result.returncode == 3, (result.stdout[-800:], result.stderr)
    shown = result.stdout + result.stderr  # commands whose stdout is data (probe padding) show them on stderr
    assert "no_rating" in shown and "failed" in shown and "example no_rating: 'I cannot say.'" in shown
    assert "> --max-failure-rate 50%" in result.stderr and (tmp_path / "out" / "README.md").exists()
    allowed = run_cli(*base, "--max-failure-rate", "1", "--out", str(tmp_path / "allowed"))
    assert allowed.returncode == 0, (allowed.stdout[-800:], allowed.stderr)
    assert "example no_rating" in allowed.stdout + allowed.stderr


@pytest.mark.parametrize("command", JUDGING)
def test_a_judge_that_answers_well_exits_0_with_its_counts(command, tmp_path):
    args, script = JUDGING[command]
    (tmp_path / "good.json").write_text(json.dumps(script))
    result = run_cli(*args(tmp_path), "--judge", f"scripted-test-double:{tmp_path / 'good.json'}", "--quiet",
                     "--out", str(tmp_path / "out"))
    assert result.returncode == 0, (result.stdout[-800:], result.stderr)
    assert "statuses of" in result.stdout + result.stderr and "example" not in result.stdout + result.stderr
    runs = json.loads((tmp_path / "out" / "run.json").read_text())["runs"]  # each rater's calls and tokens
    assert runs and all(r["calls_made"] > 0 and r["prompt_tokens"] > 0 and r["runs_with_calls"] == 1 for r in runs)


def test_pairwise_says_why_its_results_are_nan(tmp_path, mute_judge):
    """16 of 16 verdicts unreadable: every NaN of the tables comes with a note saying why."""
    import pandas as pd

    data, human = _esnli(tmp_path)
    result = run_cli("pairwise", "--dataset", "esnli", "--items", str(data), "--human", str(human), "--judge", mute_judge,
                     "--quiet", "--out", str(tmp_path / "pw"))
    assert result.returncode == 3
    summary = pd.read_csv(tmp_path / "pw" / "pairwise_summary.csv")
    assert summary["position_consistency"].isna().all() and summary["r"].isna().all()
    for _, row in summary.iterrows():
        asked = 2 * row["pairs"]  # both orders
        assert row["note"] == f"no verdict could be read: {asked} of {asked} no_rating"
    f1 = pd.read_csv(tmp_path / "pw" / "pairwise_f1.csv")
    assert f1["f1"].isna().all() and (f1["note"] == [f"no verdict for any of its {n} pairs" for n in f1["pairs"]]).all()
