"""`dhp --score logprob|parsed`: the demo's method (log-probability scores) through any judge, an
OpenAI-compatible completion endpoint included; the score mode reaches the run spec as `rate --score` does."""
import json

import pandas as pd

from conftest import run_cli


def test_logprob_scores_through_an_openai_compatible_completion_endpoint(tmp_path, stub_factory):
    """The stub answers a one-token completion request with a distribution over " 1" … " 5" (0.6 on its
    rating D, 0.1 on each other label): the expected rating 0.5 × D + 1.5 is the score, never the digit."""
    stub = stub_factory()
    out = tmp_path / "dhp"
    result = run_cli("dhp", "--task", "summarization", "--n-items", "2", "--judge", f"openai:stub@{stub.base_url}",
                     "--api-key", "k", "--style", "completion", "--score", "logprob", "--quiet", "--out", str(out))
    assert result.returncode == 0, (result.stdout[-800:], result.stderr)
    ratings = pd.read_csv(out / "ratings.csv")
    assert set(ratings["status"]) == {"ok"} and ratings["score_parsed"].isna().all()
    assert (ratings["score"] == ratings["score_logprob"]).all() and (ratings["sample"] == 0).all()  # one sample
    rating = (ratings["score"] - 1.5) / 0.5
    assert rating.between(1 - 1e-9, 5 + 1e-9).all() and ((rating - rating.round()).abs() < 1e-9).all()
    assert ratings["score"].nunique() > 1
    (run,) = json.loads((out / "run.json").read_text())["runs"]
    assert run["settings"]["score"] == "logprob" and run["settings"]["samples"] == 1  # one deterministic sample


def test_score_reaches_the_run_spec_as_rate_passes_it(tmp_path):
    """One scripted judge, two score modes: its answer text says 2, its next-token distribution means 3."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "2", "default_probs": {"1": 0.5, "5": 0.5}}))
    scores = {}
    for mode in ("parsed", "logprob"):
        out = tmp_path / mode
        result = run_cli("dhp", "--task", "summarization", "--n-items", "1", "--samples", "1", "--judge",
                         f"scripted-test-double:{script}", "--score", mode, "--quiet", "--out", str(out))
        assert result.returncode == 0, (result.stdout[-800:], result.stderr)
        ratings = pd.read_csv(out / "ratings.csv")
        assert set(ratings["status"]) == {"ok"}
        scores[mode] = set(ratings["score"])
    assert scores == {"parsed": {2.0}, "logprob": {3.0}}


def test_dry_run_plans_the_score_mode(tmp_path):
    """Log-probability scoring generates nothing: the dry run plans no completion tokens for it."""
    import re

    script = tmp_path / "script.json"
    script.write_text(json.dumps({"default": "2"}))
    planned = {}
    for mode in ("parsed", "logprob"):
        result = run_cli("dhp", "--task", "summarization", "--n-items", "1", "--samples", "1", "--judge",
                         f"scripted-test-double:{script}", "--score", mode, "--dry-run", "--price-out", "1")
        assert result.returncode == 0, result.stderr
        planned[mode] = int(re.search(r"\((\d+) completion tokens", result.stdout).group(1))
    assert planned["logprob"] == 0 < planned["parsed"]


def test_an_unknown_score_mode_is_one_line(tmp_path):
    result = run_cli("dhp", "--task", "summarization", "--score", "median", "--out", str(tmp_path / "x"))
    assert result.returncode == 2 and "--score" in result.stderr and "Traceback" not in result.stderr
