"""The HANNA audit of docs/audit.md, reproduced: the exact command, its numbers, and independent checks
of them on the raw score file (numpy means, the HANNA recipe's story-level Kendall tau)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA, run_cli

HANNA = "hanna/hanna_metric_scores_llm.csv"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("audit") / "audit-hanna"
    r = run_cli("audit", "--hanna-scores", str(SHARED_DATA / HANNA), "--judges", "*@eval-prompt-1",
                "--jury", "mean,weighted", "--selective", "--format", "csv", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def _row(table, **where):
    hit = table
    for k, v in where.items():
        hit = hit[hit[k] == v]
    assert len(hit) == 1, where
    return hit.iloc[0]


@pytest.mark.needs_shared_data(HANNA)
def test_the_documented_numbers(folder):
    """Values printed in docs/audit.md (rounded as there)."""
    len_ = pd.read_csv(folder / "leniency.csv")
    r = _row(len_, bias="leniency", rater="ChatGPT@eval-prompt-1", criterion="Coherence")
    assert (round(r["estimate"], 2), round(r["ci_low"], 2), round(r["ci_high"], 2)) == (-1.79, -1.84, -1.74)
    r = _row(len_, bias="spread_ratio", rater="Llama-13B@eval-prompt-1", criterion="Complexity")
    assert (round(r["estimate"], 2), round(r["ci_low"], 2), round(r["ci_high"], 2)) == (0.71, 0.66, 0.75)
    points = pd.read_csv(folder / "scale_points.csv")
    r = _row(points, bias="scale_point:4", rater="Llama-13B@eval-prompt-1", criterion="Complexity")
    assert round(100 * r["estimate"], 1) == 52.3
    jury = pd.read_csv(folder / "jury_agreement.csv")
    r = _row(jury, rater="jury:mean", criterion="Complexity")
    assert (round(r["r"], 3), round(r["ci_low"], 3), round(r["ci_high"], 3)) == (0.398, 0.358, 0.439)
    r = _row(jury, rater="jury:weighted - OrcaPlatypus@eval-prompt-1", criterion="Relevance")
    assert (round(r["r"], 3), round(r["ci_low"], 3), round(r["ci_high"], 3)) == (0.028, -0.005, 0.060)
    assert (folder / "jury_weights.csv").exists() and (folder / "README.md").exists()
    from judgelab.ratings import read_ratings

    rows = read_ratings(folder / "jury_ratings.csv")  # a ratings file like any judge's
    assert set(rows["rater"]) == {"jury:mean", "jury:weighted"} and len(rows) == 2 * 6 * 960
    selective = pd.read_csv(folder / "selective.csv")
    assert len(selective) == 6 and np.isinf(selective["threshold"]).all()  # nothing certified at 90%
    assert (selective["test_kept"] == 0).all() and (selective["n_test"] == 480).all()
    agree = selective.set_index("criterion")["test_agreement_all"]
    assert (round(agree.min(), 2), round(agree.max(), 2)) == (0.80, 0.93)


@pytest.mark.needs_shared_data(HANNA)
def test_independent_checks_on_the_raw_file(folder):
    from judgelab.recipes.hanna import load_scores
    from judgelab.stats.correlation import level_correlation, matrix_frame

    scores = load_scores(SHARED_DATA / HANNA)
    len_ = pd.read_csv(folder / "leniency.csv")
    jury = pd.read_csv(folder / "jury_agreement.csv")
    for llm in ("Beluga-13B", "ChatGPT", "Mistral-7B"):
        for code, crit in (("RE", "Relevance"), ("SU", "Surprise")):
            judge = scores.generated(f"{llm} {code} 1")
            humans = np.stack([scores.generated(f"Human {k} {code}") for k in (1, 2, 3)])
            shift = _row(len_, bias="leniency", rater=f"{llm}@eval-prompt-1", criterion=crit)["estimate"]
            assert shift == pytest.approx(np.mean(judge - humans.mean(0)))
            spread = _row(len_, bias="spread_ratio", rater=f"{llm}@eval-prompt-1", criterion=crit)["estimate"]
            assert spread == pytest.approx(judge.std() / humans.std())
            tau = _row(jury, rater=f"{llm}@eval-prompt-1", criterion=crit)["r"]
            # the HANNA recipe's story level: per-prompt tau over the ten systems, averaged
            story = level_correlation(matrix_frame(judge, scores.generated(crit)), "group", "kendall").r
            assert tau == pytest.approx(story)


@pytest.mark.needs_shared_data(HANNA)
def test_prompt_sensitivity_of_the_docs(tmp_path):
    """docs/audit.md's prompt-sensitivity table (every judge, four Eval-Prompts); ICC against pingouin."""
    import pingouin

    from judgelab.audit import hanna_ratings
    from judgelab.recipes.hanna import load_scores
    from judgelab.stats.prompt_sensitivity import prompt_sensitivity

    effects = prompt_sensitivity(hanna_ratings(SHARED_DATA / HANNA), ["Surprise", "Coherence"])
    got = {(e.bias, e.rater, e.criterion): e for e in effects}
    e = got[("prompt_shift", "Llama-13B", "Surprise")]
    assert (round(e.estimate, 2), round(e.ci_low, 2), round(e.ci_high, 2)) == (1.26, 1.18, 1.33)
    e = got[("prompt_icc", "Beluga-13B", "Coherence")]
    assert (round(e.estimate, 2), round(e.ci_low, 2), round(e.ci_high, 2)) == (0.52, 0.48, 0.55)
    scores = load_scores(SHARED_DATA / HANNA)
    x = np.stack([scores.generated(f"Beluga-13B CH {p}").ravel() for p in (1, 2, 3, 4)], axis=1)
    long = pd.DataFrame({"item": np.repeat(np.arange(len(x)), 4), "rater": np.tile(np.arange(4), len(x)),
                         "score": x.ravel()})
    ref = pingouin.intraclass_corr(long, "item", "rater", "score").set_index("Type").loc["ICC(A,1)"]  # ICC(2,1)
    assert e.estimate == pytest.approx(ref["ICC"])
    means = x.mean(axis=0)
    assert got[("prompt_shift", "Beluga-13B", "Coherence")].estimate == pytest.approx(means.max() - means.min())
