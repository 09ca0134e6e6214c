"""`agree --standardize z`: per-rater standardisation checked against scipy.stats.zscore, scipy's
correlations and the krippendorff package computed by hand; invariances that must hold exactly."""
import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import run_cli
from judgelab.agree import agreement
from judgelab.agree_standardize import alpha_vs_humans, standardize_scores


def ratings(seed=0, n_items=30, mean_only=False):
    """Three humans with their own leniency and spread, a lenient narrow judge (3 samples), a second judge."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, n_items)
    rows = []
    for h, (shift, scale) in enumerate([(0.0, 1.0), (0.6, 0.7), (-0.4, 1.3)]):
        for i in range(n_items):
            rows.append({"item_id": str(i), "system": "s", "group": f"g{i % 6}", "criterion": "c",
                         "rater": f"human:h{h}", "sample": 0, "status": "ok",
                         "score": float(np.round(3 + shift + scale * (truth[i] - 3) + rng.normal(0, 0.6)))})
    for name, shift, scale in (("lenient", 1.2, 0.4), ("other", 0.0, 1.0)):
        for i in range(n_items):
            for k in range(3):
                rows.append({"item_id": str(i), "system": "s", "group": f"g{i % 6}", "criterion": "c", "rater": name,
                             "sample": k, "status": "ok",
                             "score": float(np.round(3 + shift + scale * (truth[i] - 3) + rng.normal(0, 0.5)))})
    df = pd.DataFrame(rows)
    if mean_only:
        hum = df[df.rater.str.startswith("human:")].groupby(["item_id", "system", "group", "criterion"], as_index=False)
        means = hum["score"].mean().assign(rater="human:mean", sample=0, status="ok")
        df = pd.concat([means, df[~df.rater.str.startswith("human:")]], ignore_index=True)
    return df


def test_scores_are_scipy_zscores_per_rater_and_criterion():
    df = ratings()
    df.loc[5, "status"] = "unparsed"  # a failed judgment: not part of its rater's mean and SD, stays failed
    z, scales = standardize_scores(df)
    for rater, part in df.groupby("rater"):
        ok = part[part.status == "ok"]
        got = z.loc[(z.rater == rater) & (z.status == "ok"), "score"].to_numpy()
        assert np.allclose(got, stats.zscore(ok.score.to_numpy()), atol=1e-12)
        row = scales.set_index("rater").loc[rater]
        assert row["mean"] == pytest.approx(ok.score.mean()) and row["sd"] == pytest.approx(ok.score.std(ddof=0))
    assert z.loc[5, "status"] == "unparsed"


def test_constant_rater_is_left_out_with_its_reason():
    df = ratings()
    df.loc[df.rater == "other", "score"] = 4.0
    z, scales = standardize_scores(df)
    assert "other" not in set(z.rater)
    assert "SD 0" in scales.set_index("rater").loc["other", "note"]
    report = agreement(df, ["pearson"], ["overall"], n_resamples=0, standardize="z")
    side = report.extra["standardization"]
    row = side[(side.rater == "other") & (side.statistic == "r")].iloc[0]
    assert np.isnan(row.standardized) and "could not be standardised" in row.note


def test_standardised_correlation_matches_a_hand_computation():
    df = ratings()
    report = agreement(df, ["pearson", "spearman"], ["overall"], n_resamples=0, standardize="z")
    zs = df.copy()
    zs["score"] = zs.groupby(["rater", "criterion"])["score"].transform(lambda s: stats.zscore(s.to_numpy()))
    human = zs[zs.rater.str.startswith("human:")].groupby("item_id")["score"].mean()
    judge = zs[zs.rater == "lenient"].groupby("item_id")["score"].mean()
    human, judge = human.align(judge, join="inner")
    table = report.correlations.set_index(["rater", "method"])
    assert table.loc[("lenient", "pearson"), "r"] == pytest.approx(stats.pearsonr(judge, human)[0], abs=1e-12)
    # ranks: means equal on paper must tie whatever the summation order (rounded before ranking)
    ranked = stats.spearmanr(judge.round(9), human.round(9))[0]
    assert table.loc[("lenient", "spearman"), "r"] == pytest.approx(ranked, abs=1e-12)


def test_invariant_statistics_do_not_move():
    """Against one human rater (a file of means) every correlation is invariant to the judge's linear map,
    and a judge's self-consistency (one map for all its samples) is too; human pairwise correlations also."""
    means = ratings(mean_only=True)
    side = agreement(means, ["kendall", "pearson"], ["overall", "group", "system"], n_resamples=0,
                     standardize="z").extra["standardization"]
    corr = side[side.table == "correlations"]
    assert len(corr) == 2 * 2 * 3 and corr.raw.notna().sum() == 8  # one system: no system-level r
    assert np.allclose(corr.raw, corr.standardized, atol=1e-12, equal_nan=True)
    side = agreement(ratings(), ["pearson"], ["overall"], n_resamples=0, standardize="z").extra["standardization"]
    judge_sc = side[(side.table == "self_consistency") & (side.rater != "humans")]
    assert len(judge_sc) == 4 and np.allclose(judge_sc.raw, judge_sc.standardized, atol=1e-9)
    pairwise = side[side.statistic == "pairwise"]
    assert np.allclose(pairwise.raw, pairwise.standardized, atol=1e-12)
    humans_icc = side[(side.rater == "humans") & (side.statistic == "icc2k")].iloc[0]
    assert humans_icc.standardized > humans_icc.raw  # the humans' leniency differences no longer count


def test_alpha_interval_matches_krippendorff_and_rises_for_a_lenient_judge():
    df = ratings()
    got = alpha_vs_humans(df, ["c"]).set_index("rater")
    zs = df.copy()
    zs["score"] = zs.groupby(["rater", "criterion"])["score"].transform(lambda s: stats.zscore(s.to_numpy()))
    for frame, expected_col in ((df, None), (zs, "z")):
        means = frame.groupby(["rater", "item_id"])["score"].mean().unstack()
        matrix = means.loc[["lenient", "human:h0", "human:h1", "human:h2"]].to_numpy(float)
        want = krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval")
        value = got.loc["lenient", "alpha"] if expected_col is None else alpha_vs_humans(zs, ["c"]).set_index("rater").loc["lenient", "alpha"]
        assert value == pytest.approx(want, abs=1e-12)
    side = agreement(df, ["pearson"], ["overall"], n_resamples=0, standardize="z").extra["standardization"]
    row = side[(side.statistic == "alpha_interval") & (side.rater == "lenient")].iloc[0]
    assert row.raw < 0.5 < row.standardized and row.change == pytest.approx(row.standardized - row.raw)


def test_agree_command_writes_both_sides(tmp_path):
    df = ratings()
    df[~df.rater.str.startswith("human:")].to_csv(tmp_path / "judges.csv", index=False)
    df[df.rater.str.startswith("human:")].assign(rater=lambda d: d.rater.str[6:]).to_csv(tmp_path / "people.csv",
                                                                                        index=False)
    res = run_cli("agree", str(tmp_path / "judges.csv"), "--human", str(tmp_path / "people.csv"), "--method", "pearson",
                  "--level", "overall", "--n-resamples", "50", "--standardize", "z", "--out", str(tmp_path / "out"))
    assert res.returncode == 0, res.stderr
    side = pd.read_csv(tmp_path / "out" / "standardization.csv")
    assert {"raw", "standardized", "change"} <= set(side.columns) and "alpha_interval" in set(side.statistic)
    assert set(pd.read_csv(tmp_path / "out" / "rater_scales.csv").rater) == {"lenient", "other", "human:h0", "human:h1",
                                                                            "human:h2"}
    assert json.loads((tmp_path / "out" / "run.json").read_text())["settings"]["standardize"] == "z"
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")  # the report says what its numbers are
    assert page.count("standardised scores (") == 2  # first screen and agreement section
    res = run_cli("agree", str(tmp_path / "judges.csv"), "--human", str(tmp_path / "people.csv"), "--standardize",
                  "rank", "--out", str(tmp_path / "refused"))
    assert res.returncode == 2 and res.stderr.strip().count("\n") == 0 and "--standardize" in res.stderr
    assert not (tmp_path / "refused").exists()


def test_a_failed_gate_on_standardised_scores_says_so(tmp_path):
    df = ratings()
    df[~df.rater.str.startswith("human:")].to_csv(tmp_path / "judges.csv", index=False)
    df[df.rater.str.startswith("human:")].assign(rater=lambda d: d.rater.str[6:]).to_csv(tmp_path / "people.csv",
                                                                                        index=False)
    args = ("agree", str(tmp_path / "judges.csv"), "--human", str(tmp_path / "people.csv"), "--method", "pearson",
            "--level", "overall", "--n-resamples", "50", "--fail-under", "pearson:overall:0.999")
    raw = run_cli(*args)
    std = run_cli(*args, "--standardize", "z")
    assert raw.returncode == std.returncode == 3
    raw_lines = [x for x in raw.stderr.splitlines() if "below --fail-under" in x]
    std_lines = [x for x in std.stderr.splitlines() if "below --fail-under" in x]
    assert raw_lines and not any("standardised" in x for x in raw_lines)
    assert std_lines and all(x.endswith("(on scores standardised per rater, --standardize z)") for x in std_lines)
