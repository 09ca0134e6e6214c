"""HANNA on the real data in ../shared/data/hanna (skipped when it is absent)."""
import io
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from conftest import SHARED_DATA, judgelab_cmd

HANNA = SHARED_DATA / "hanna"
LLM_FILE = HANNA / "hanna_metric_scores_llm.csv"
pytestmark = pytest.mark.skipif(not LLM_FILE.exists(), reason="../shared/data/hanna is not available")

from judgelab.recipes import hanna as H  # noqa: E402


@pytest.fixture(scope="module")
def scores():
    return H.load_scores(LLM_FILE)


def _avg(table, llm, prompt=1):
    t = table.set_index("measure")
    return np.mean([t.loc[f"{llm} {code} {prompt}", crit] for code, crit in H.CODES.items()])


def test_headline_overall_kendall(scores):
    table = H.correlation_table(scores, "overall", "kendall")
    got = {llm: _avg(table, llm) for llm in ("Beluga-13B", "Mistral-7B", "Llama-13B", "ChatGPT")}
    assert got["Beluga-13B"] == pytest.approx(0.25, abs=0.01)
    assert got["Mistral-7B"] == pytest.approx(0.20, abs=0.01)
    assert got["Llama-13B"] == pytest.approx(0.16, abs=0.01)
    assert got["ChatGPT"] == pytest.approx(0.18, abs=0.01)


def test_headline_system_kendall_and_human_baseline(scores):
    assert _avg(H.correlation_table(scores, "system", "kendall"), "Beluga-13B") == pytest.approx(0.70, abs=0.01)
    assert H.human_baseline(scores, "system", "kendall")["baseline"].mean() == pytest.approx(0.73, abs=0.01)


def test_table_cell_is_an_independent_scipy_computation(scores):
    full = H.correlation_table(scores, "overall", "pearson")
    table = full.set_index("measure")
    raw = pd.read_csv(LLM_FILE)
    raw = raw[raw.Model != "Human"]
    x = np.concatenate([json.loads(v) for v in raw["BLEU Ξ§"]])
    y = np.concatenate([json.loads(v) for v in raw["Coherence"]])
    assert table.loc["BLEU Ξ§", "Coherence"] == pytest.approx(st.pearsonr(x, y).statistic, abs=1e-12)
    assert list(full["measure"]) == scores.measures()  # file order, names kept exactly


def test_williams_beluga_vs_chatgpt(scores):
    w = H.williams_table(scores, "Beluga-13B … 1", "overall").set_index("measure")
    row = w.loc["ChatGPT … 1"]
    assert 0.01 <= row.min() and row.max() <= 0.145


def test_human_icc(scores):
    table = H.human_icc(scores)
    assert list(table["criterion"]) == H.CRITERIA and table["icc2k"].between(-1, 1).all()


@pytest.mark.parametrize("path", ["hanna_metric_scores.csv", "hanna_metric_scores_llm.csv"])
@pytest.mark.parametrize("level", ["system", "story", "overall"])
@pytest.mark.parametrize("method", ["kendall", "pearson", "spearman"])
def test_correlations_command_all_levels(path, level, method):
    if path == "hanna_metric_scores_llm.csv" and method != "kendall":
        pytest.skip("one method is enough on the larger file for the command test")
    result = judgelab_cmd("hanna", "correlations", "--scores", str(HANNA / path), "--level", level, "--method", method, "--format", "csv")
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(io.StringIO(result.stdout))
    assert list(table.columns) == ["measure", *H.CRITERIA]
    assert table["measure"].iloc[0] == "BLEU Ξ§" and table[H.CRITERIA].notna().all().all()


def test_williams_command_and_figures(tmp_path):
    fig = tmp_path / "w.png"
    result = judgelab_cmd("hanna", "williams", "--scores", str(LLM_FILE), "--measure", "Beluga-13B … 1", "--format", "csv", "--figure", str(fig))
    assert result.returncode == 0, result.stderr and fig.stat().st_size > 1000
    bad = judgelab_cmd("hanna", "williams", "--scores", str(LLM_FILE), "--measure", "Nope … 1")
    assert bad.returncode == 2 and "no column" in bad.stderr


def test_to_ratings_feeds_agree(scores):
    from judgelab.agree import judge_vs_human

    df = H.to_ratings(scores)
    df = df[(df.system != "Human") & df.rater.isin(["human:1", "human:2", "human:3", "Beluga-13B@eval-prompt-1"])]
    table = judge_vs_human(df, ["kendall"], ["overall"]).set_index("criterion")
    direct = H.correlation_table(scores, "overall", "kendall").set_index("measure")
    assert table.loc["Relevance", "r"] == pytest.approx(direct.loc["Beluga-13B RE 1", "Relevance"], abs=1e-9)


def test_subcommands_write_an_output_folder(tmp_path):
    result = judgelab_cmd("hanna", "icc", "--scores", str(LLM_FILE), "--format", "json", "--out", str(tmp_path / "icc"))
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == 1 and doc["command"] == "hanna icc"
    written = pd.read_csv(tmp_path / "icc" / "human_icc.csv")
    assert list(written["criterion"]) == [r["criterion"] for r in doc["rows"]]
    assert {"icc2k", "icc2k_low", "icc2k_high"} <= set(written.columns)  # the ICC columns of agree and recipe hanna
    assert "human_icc.csv" in (tmp_path / "icc" / "README.md").read_text()
    assert json.loads((tmp_path / "icc" / "run.json").read_text())["command"] == "hanna icc"
