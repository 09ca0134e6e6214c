"""Ratings import (long and wide), judge-vs-human tables, baselines and `judgelab agree`."""
import io
import json

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA, judgelab_cmd, run_cli
from judgelab.agree import human_baseline, judge_vs_human, self_consistency, williams_matrix
from judgelab.errors import JudgelabError
from judgelab.ratings import combine, import_long, import_wide, read_ratings
from judgelab.stats import correlate, icc


def synthetic(tmp_path, n_groups=12, n_systems=4, seed=0):
    """Human raters h1..h3 (wide) and two judges (tidy, 3 samples) on the same items."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(3, 1, size=(n_systems, n_groups))
    human, judge = [], []
    for s in range(n_systems):
        for g in range(n_groups):
            for h in range(3):
                human.append({"story": f"{g}", "model": f"sys{s}", "prompt": f"p{g}", "annotator": f"h{h}",
                              "clarity": float(np.clip(np.round(truth[s, g] + rng.normal(0, 0.7)), 1, 5))})
            for name, noise in (("good", 0.5), ("bad", 2.0)):
                for k in range(3):
                    judge.append({"item_id": f"{g}", "system": f"sys{s}", "group": f"p{g}", "criterion": "clarity",
                                  "rater": name, "sample": k, "score": float(np.clip(np.round(truth[s, g] + rng.normal(0, noise)), 1, 5))})
    pd.DataFrame(human).to_csv(tmp_path / "human.csv", index=False)
    pd.DataFrame(judge).to_csv(tmp_path / "judges.csv", index=False)
    return tmp_path / "human.csv", tmp_path / "judges.csv"


def load(tmp_path):
    h, j = synthetic(tmp_path)
    humans = import_wide(h, ["clarity"], item="story", rater="annotator", system="model", group="prompt")
    return combine([humans, read_ratings(j)])


def test_wide_and_long_imports_agree(tmp_path):
    h, _ = synthetic(tmp_path)
    wide = import_wide(h, ["clarity"], item="story", rater="annotator", system="model", group="prompt")
    long_path = tmp_path / "long.csv"
    pd.read_csv(h).rename(columns={"clarity": "score"}).assign(criterion="clarity").to_csv(long_path, index=False)
    long = import_long(long_path, item="story", rater="annotator", criterion="criterion", score="score", system="model", group="prompt")
    key = ["rater", "system", "item_id", "criterion"]
    assert wide.sort_values(key).reset_index(drop=True).equals(long.sort_values(key).reset_index(drop=True))
    assert set(wide["rater"]) == {"human:h0", "human:h1", "human:h2"}


def test_judge_vs_human_matches_direct_computation(tmp_path):
    df = load(tmp_path)
    table = judge_vs_human(df, ["kendall", "pearson"]).set_index(["rater", "level", "method"])
    hm = df[df.rater.str.startswith("human:")].groupby(["system", "item_id"])["score"].mean()
    good = df[df.rater == "good"].groupby(["system", "item_id"])["score"].mean()
    joined = pd.concat([hm.rename("h"), good.rename("g")], axis=1)
    assert table.loc[("good", "overall", "kendall"), "r"] == pytest.approx(correlate(joined.h, joined.g, "kendall").r, abs=1e-12)
    sysm = joined.groupby(level="system").mean()
    assert table.loc[("good", "system", "pearson"), "r"] == pytest.approx(np.corrcoef(sysm.h, sysm.g)[0, 1], abs=1e-12)
    assert table.loc[("good", "overall", "kendall"), "r"] > table.loc[("bad", "overall", "kendall"), "r"]


def test_baseline_consistency_and_williams(tmp_path):
    df = load(tmp_path)
    base = human_baseline(df, ["pearson"], ["overall"]).iloc[0]
    h = df[df.rater.str.startswith("human:")].pivot_table(index=["system", "item_id"], columns="rater", values="score")
    mean = h.mean(axis=1)
    assert base.vs_mean == pytest.approx(np.mean([np.corrcoef(h[c], mean)[0, 1] for c in h]), abs=1e-12)
    assert base.pairwise == pytest.approx(np.mean([np.corrcoef(h[a], h[b])[0, 1] for a, b in [("human:h0", "human:h1"), ("human:h0", "human:h2"), ("human:h1", "human:h2")]]), abs=1e-12)
    sc = self_consistency(df).set_index("rater")
    assert sc.loc["humans", "icc2k"] == pytest.approx(icc(h.to_numpy()).average.estimate, abs=1e-12)
    w = williams_matrix(df).set_index(["judge_a", "judge_b"])
    assert w.loc[("good", "bad"), "p_bh"] < 0.05 < w.loc[("bad", "good"), "p_bh"]


def test_bad_input_is_clear(tmp_path):
    df = load(tmp_path)
    with pytest.raises(JudgelabError, match="unknown criterion 'nope'"):
        judge_vs_human(df, criteria=["nope"])
    with pytest.raises(JudgelabError, match="missing column 'annotator'"):
        import_wide(tmp_path / "judges.csv", ["score"], rater="annotator")
    lonely = pd.DataFrame({"item_id": ["x1", "x2", "x3"], "system": "other", "criterion": "clarity", "rater": "lonely", "score": [1, 2, 3]})
    table = judge_vs_human(combine([df, lonely]))
    row = table[(table.rater == "lonely") & (table.level == "overall")].iloc[0]
    assert np.isnan(row.r) and "no items rated by both" in row.note
    const = df[df.rater == "good"].assign(rater="constant", score=3.0)
    row = judge_vs_human(combine([df, const])).query("rater == 'constant' and level == 'overall'").iloc[0]
    assert np.isnan(row.r) and "constant" in row.note


def test_agree_command(tmp_path):
    h, j = synthetic(tmp_path)
    args = ["agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-fields", "clarity", "--id-field", "story",
            "--rater-field", "annotator", "--system-field", "model", "--group-field", "prompt", "--method", "kendall,spearman",
            "--n-resamples", "100"]
    result = judgelab_cmd(*args, "--format", "json", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["schema"] == 1  # the tables moved under "tables" when the JSON got its schema
    assert set(data["tables"]) == {"correlations", "human_baseline", "self_consistency", "williams"}
    assert (tmp_path / "out" / "williams.csv").exists()
    assert judgelab_cmd(*args, "--format", "table").returncode == 0
    bad = judgelab_cmd("agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-fields", "clarity")
    assert bad.returncode == 2 and "missing column" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_correlations_carry_clustered_cis(tmp_path):
    df = load(tmp_path)
    table = judge_vs_human(df, ["pearson"], n_resamples=200, seed=3)
    assert (table["ci_low"] <= table["r"]).all() and (table["r"] <= table["ci_high"]).all()
    assert table.equals(judge_vs_human(df, ["pearson"], n_resamples=200, seed=3))  # seeded
    base = human_baseline(df, ["pearson"], ["overall"], n_resamples=200).iloc[0]
    assert base.vs_mean_ci_low <= base.vs_mean <= base.vs_mean_ci_high
    assert base.pairwise_ci_low <= base.pairwise <= base.pairwise_ci_high


def test_mean_only_human_file_and_map(tmp_path):
    """A wide file without a rater column is one rater human:mean; --map renames criteria before matching."""
    rows = []
    rng = np.random.default_rng(1)
    for doc in range(8):
        for s in range(4):
            rows.append({"doc_id": f"d{doc}", "system": f"M{s}", "summary": f"text {doc} {s}",
                         "grammaticality": float(rng.integers(1, 6)) + 1 / 3})
    human = tmp_path / "means.jsonl"
    human.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    judge = pd.DataFrame([{"item_id": r["doc_id"], "system": r["system"], "group": r["doc_id"], "criterion": "grammar",
                           "rater": "j", "score": round(r["grammaticality"] + rng.normal(0, 0.5))} for r in rows])
    judge.to_csv(tmp_path / "judge.csv", index=False)
    from judgelab.agree import agreement
    from judgelab.ratings import rename_criteria

    h = import_wide(human)
    assert set(h["rater"]) == {"human:mean"} and set(h["criterion"]) == {"grammaticality"}  # the text column is no criterion
    both = combine([read_ratings(tmp_path / "judge.csv"), h])
    with pytest.raises(JudgelabError, match="no criterion 'grammer'.*criteria present: grammar, grammaticality"):
        rename_criteria(both, {"grammer": "grammaticality"})
    df = rename_criteria(both, {"grammar": "grammaticality"})
    report = agreement(df, ["kendall"], n_resamples=50)
    assert len(report.correlations) == 3 and report.correlations["r"].notna().all()
    assert report.human_baseline.empty and "means" in report.skipped["human_baseline"]
    assert report.williams.empty and "two judges" in report.skipped["williams"]


@pytest.mark.skipif(not (SHARED_DATA / "summeval" / "summeval_expert_means.jsonl").exists(),
                    reason="needs ../shared/data/summeval/summeval_expert_means.jsonl (SummEval expert means)")
def test_agree_takes_summeval_means_as_they_are(tmp_path):
    """`judgelab agree RUN/ratings.csv --human summeval_expert_means.jsonl`, with judge ratings shaped as
    `recipe geval` writes them (item_id = doc_id, system, group = doc_id); the judge is synthetic (human
    mean + noise, rounded), built from the real file so the ids and systems match."""
    source = SHARED_DATA / "summeval" / "summeval_expert_means.jsonl"
    rng = np.random.default_rng(0)
    rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    judge = pd.DataFrame([{"item_id": r["doc_id"], "system": r["system"], "group": r["doc_id"], "criterion": c,
                           "rater": "synthetic-judge", "sample": 0, "status": "ok",
                           "score": float(np.clip(np.round(r[c] + rng.normal(0, 1)), 1, 5))}
                          for r in rows for c in ("coherence", "fluency")])
    run = tmp_path / "run"
    run.mkdir()
    judge.to_csv(run / "ratings.csv", index=False)
    (run / "README.md").write_text("# a run\n")
    res = judgelab_cmd("agree", str(run / "ratings.csv"), "--human", str(source), "--out", str(run), "--level", "overall,system",
                       "--n-resamples", "100", "--format", "json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    corr = pd.DataFrame(data["tables"]["correlations"])
    assert set(corr["criterion"]) == {"coherence", "fluency"} and (corr["n"] > 0).all()
    assert (corr["ci_low"] < corr["r"]).all() and (corr["r"] < corr["ci_high"]).all()
    assert (corr.loc[corr.level == "overall", "r"] > 0.3).all()  # human mean + noise must track the humans
    assert "human_baseline skipped" in res.stderr and "williams skipped" in res.stderr
    williams = (run / "williams.csv").read_text()
    assert williams.strip() == "criterion,judge_a,judge_b,r_a,r_b,r_ab,n,t,p,p_bh"  # header only, not 0 bytes
    readme = (run / "README.md").read_text()
    assert readme.startswith("# a run") and "compare two judges" in readme and "correlations.csv" in readme
    steps = json.loads((run / "run.json").read_text())
    assert steps["command"] == "agree" and steps["settings"]["n_resamples"] == 100


def test_agree_command_notes_and_map_errors(tmp_path):
    h, j = synthetic(tmp_path)
    base = ["agree", str(j), "--human", str(h), "--criteria-fields", "clarity", "--id-field", "story", "--rater-field", "annotator",
            "--system-field", "model", "--group-field", "prompt", "--n-resamples", "0", "--format", "csv"]
    res = judgelab_cmd(*base)
    assert res.returncode == 0, res.stderr
    notes = [line for line in res.stderr.splitlines() if line.startswith("judgelab: note:")]
    assert notes and len(notes) == len(set(notes)) and any("per-group p-values" in n for n in notes)
    bad = judgelab_cmd(*base, "--map", "clartiy=clarity")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "clartiy" in bad.stderr and "criteria present: clarity" in bad.stderr
    renamed = judgelab_cmd(*base, "--map", "clarity=lucidity", "--format", "json")
    assert renamed.returncode == 0 and {r["criterion"] for r in json.loads(renamed.stdout)["tables"]["correlations"]} == {"lucidity"}


def test_csv_on_stdout_is_one_table(tmp_path):
    h, j = synthetic(tmp_path)
    res = judgelab_cmd("agree", str(j), "--human", str(h), "--criteria-fields", "clarity", "--id-field", "story",
                       "--rater-field", "annotator", "--system-field", "model", "--group-field", "prompt", "--n-resamples", "0",
                       "--format", "csv")
    assert res.returncode == 0, res.stderr
    table = pd.read_csv(io.StringIO(res.stdout))  # one table that reads back, no '# name' separators
    assert {"rater", "criterion", "level", "method", "r", "ci_low", "ci_high", "note"} <= set(table.columns)
    assert "written with --out" in res.stderr


def test_ci_method_reaches_every_interval(tmp_path):
    """--ci-method picks the cluster-bootstrap interval of every correlation: the expanded percentile interval
    (Hesterberg) is wider than the percentile one from the same resamples; run.json names it; unknown is refused."""
    df = load(tmp_path)
    plain = judge_vs_human(df, ["pearson"], ["overall", "group"], n_resamples=300, seed=1)
    wide = judge_vs_human(df, ["pearson"], ["overall", "group"], n_resamples=300, seed=1, ci_method="expanded")
    assert (plain["r"] == wide["r"]).all()
    assert ((wide["ci_high"] - wide["ci_low"]) > (plain["ci_high"] - plain["ci_low"])).all()
    base = human_baseline(df, ["pearson"], ["group"], n_resamples=300, ci_method="BCa").iloc[0]
    assert base.vs_mean_ci_low <= base.vs_mean <= base.vs_mean_ci_high
    h, j = synthetic(tmp_path)
    args = ["agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-fields", "clarity", "--id-field",
            "story", "--rater-field", "annotator", "--system-field", "model", "--group-field", "prompt", "--n-resamples", "100"]
    ok = run_cli(*args, "--ci-method", "expanded", "--out", str(tmp_path / "out"))
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "out" / "run.json").read_text())["settings"]["ci_method"] == "expanded"
    bad = run_cli(*args, "--ci-method", "studentized", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "unknown --ci-method 'studentized'" in bad.stderr and not (tmp_path / "bad").exists()


def test_few_groups_give_an_interval_with_its_caveat_and_too_few_give_none(tmp_path):
    """12 groups: a group-level interval, and the note says fewer than 20 clusters cover less than nominal;
    4 groups: no interval, with the reason (below the stated minimum of 5)."""
    df = load(tmp_path)
    row = judge_vs_human(df, ["pearson"], ["group"], n_resamples=200).iloc[0]
    assert row["ci_low"] <= row["r"] <= row["ci_high"]
    assert "only 12 group values" in row["note"] and "fewer than 20 clusters" in row["note"]
    (tmp_path / "small").mkdir()
    h, j = synthetic(tmp_path / "small", n_groups=4)
    small = combine([import_wide(h, ["clarity"], item="story", rater="annotator", system="model", group="prompt"),
                     read_ratings(j)])
    row = judge_vs_human(small, ["pearson"], ["group"], n_resamples=200).iloc[0]
    assert np.isnan(row["ci_low"]) and "at least 5" in row["note"]


def test_kendall_from_codes_is_scipys_tau_bit_for_bit():
    """The count-table Kendall of the bootstrap's fast path gives scipy's float exactly (b and c, ties, NaN),
    one table at a time and many at once."""
    from scipy import stats

    from judgelab.stats.bootstrap_schemes import _dense_codes, kendall_from_codes, kendall_from_tables

    rng = np.random.default_rng(3)
    for _ in range(400):
        n = int(rng.integers(1, 40))
        x = rng.integers(1, 6, n) / rng.choice([1.0, 3.0])
        y = rng.integers(1, 4, n) + rng.integers(0, 3, n) / 3
        x[rng.random(n) < 0.1] = np.nan
        (xc, ux), (yc, uy) = _dense_codes(x, "exact"), _dense_codes(y, "exact")
        keep = ~np.isnan(x)
        for variant in "bc":
            got = kendall_from_codes(xc, yc, ux, uy, variant)
            constant = keep.sum() < 3 or np.unique(x[keep]).size < 2 or np.unique(y[keep]).size < 2
            want = np.nan if constant else stats.kendalltau(x[keep], y[keep], variant=variant).statistic
            assert (np.isnan(got) and np.isnan(want)) or got == want, (x, y, variant)
    tables = rng.integers(0, 4, size=(50, 4, 3))
    for variant in "bc":
        many = kendall_from_tables(tables, variant)
        for t, got in zip(tables, many):
            xs, ys = np.nonzero(t)
            reps = t[xs, ys]
            x, y = np.repeat(xs, reps).astype(float), np.repeat(ys, reps).astype(float)
            constant = x.size < 3 or np.unique(x).size < 2 or np.unique(y).size < 2
            want = np.nan if constant else stats.kendalltau(x, y, variant=variant).statistic
            assert (np.isnan(got) and np.isnan(want)) or got == want


def test_fast_bootstrap_keeps_every_number_of_the_sort_per_resample_path(tmp_path, monkeypatch):
    """judge_vs_human and human_baseline give the same tables (r, CIs, notes) with the count-table
    Kendall and with one scipy kendalltau per resample (the implementation before it)."""
    from judgelab.stats import bootstrap_schemes as bootstrap

    df = load(tmp_path)
    fast = (judge_vs_human(df, ["kendall"], ["overall", "system"], n_resamples=199, seed=4),
            human_baseline(df, ["kendall"], ["overall", "system"], n_resamples=199, seed=4))
    for variant, ci in (("b", "BCa"), ("c", "expanded"), ("b", "basic")):
        fast_v = human_baseline(df, ["kendall"], ["overall", "system"], variant=variant, n_resamples=99, seed=1, ci_method=ci)
        monkeypatch.setattr(bootstrap, "FAST_KENDALL", False)
        slow_v = human_baseline(df, ["kendall"], ["overall", "system"], variant=variant, n_resamples=99, seed=1, ci_method=ci)
        monkeypatch.undo()
        pd.testing.assert_frame_equal(fast_v, slow_v, check_exact=True)
    monkeypatch.setattr(bootstrap, "FAST_KENDALL", False)
    slow = (judge_vs_human(df, ["kendall"], ["overall", "system"], n_resamples=199, seed=4),
            human_baseline(df, ["kendall"], ["overall", "system"], n_resamples=199, seed=4))
    for a, b in zip(fast, slow):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert fast[1]["vs_mean_ci_low"].notna().all()


def test_fail_under_gates_on_the_ci_lower_bound(tmp_path):
    """--fail-under METHOD:LEVEL[:CRITERION]:VALUE: exit 3 when a judge's 95% CI lower bound is below VALUE,
    0 when every bound is above; a bad gate is one line (exit 2) and writes nothing."""
    h, j = synthetic(tmp_path)
    args = ["agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-fields", "clarity", "--id-field",
            "story", "--rater-field", "annotator", "--system-field", "model", "--group-field", "prompt", "--n-resamples", "200",
            "--format", "json"]
    table = pd.DataFrame(json.loads(run_cli(*args).stdout)["tables"]["correlations"])
    lows = table[(table.level == "overall")].set_index("rater")["ci_low"]
    good, bad = lows["good"], lows["bad"]
    assert good > bad
    passed = run_cli(*args, "--fail-under", f"kendall:overall:{bad - 0.01:.4f}")
    assert passed.returncode == 0 and "--fail-under met" in passed.stderr
    failed = run_cli(*args, "--fail-under", f"kendall:overall:clarity:{(good + bad) / 2:.4f}", "--out", str(tmp_path / "o"))
    assert failed.returncode == 3
    lines = [x for x in failed.stderr.splitlines() if "below --fail-under" in x]
    assert len(lines) == 1 and "bad, clarity, kendall at the overall level: CI lower bound" in lines[0]
    assert (tmp_path / "o" / "correlations.csv").exists()  # the tables are written; the status says the gate failed
    for gate, needle in (("spearman:overall:0.3", "method 'spearman' is not computed"), ("kendall:overall:x", "not a number"),
                         ("kendall:0.3", "expected METHOD:LEVEL:VALUE"), ("kendall:overall:nope:0.3", "no criterion 'nope'")):
        r = run_cli(*args, "--fail-under", gate, "--out", str(tmp_path / "refused"))
        assert r.returncode == 2 and needle in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp_path / "refused").exists()


def test_icc_note_names_the_real_cause():
    """Identical samples within each item: the note says so (not 'needs two complete items')."""
    def table(score):
        return pd.DataFrame([dict(item_id=f"i{i}", system="s", group=None, criterion="c", rater="j", sample=k,
                                  score=score(i, k), status="ok") for i in range(6) for k in range(3)])

    same_within = self_consistency(table(lambda i, k: float(i % 3 + 1))).iloc[0]
    assert same_within.icc2k == 1.0 and "identical scores (no disagreement within an item)" in same_within.note
    constant = self_consistency(table(lambda i, k: 2.0)).iloc[0]
    assert "every score is the same (2)" in constant.note
    one_item = self_consistency(table(lambda i, k: float(k)).query("item_id == 'i0'")).iloc[0]
    assert "two items scored by every one of the samples; 1 item(s) are" in one_item.note


def test_batched_kendall_intervals_equal_one_resample_at_a_time_with_gaps_and_repeats(monkeypatch):
    """paired_correlation_ci at both levels, tables with missing scores and several rows per item and
    system: the batched path gives the interval of one kendalltau per resample, exactly."""
    from judgelab.stats import bootstrap_schemes as bootstrap
    from judgelab.stats.bootstrap_schemes import paired_correlation_ci

    rng = np.random.default_rng(0)
    for trial in range(12):
        rows = [{"item_id": f"i{i}", "system": f"s{s}", "a": rng.integers(1, 6) / 3 if rng.random() > 0.05 else np.nan,
                 "b": rng.integers(1, 6) + rng.integers(0, 3) / 3, "c": rng.integers(1, 4) / 7}
                for i in range(int(rng.integers(6, 25))) for s in range(int(rng.integers(3, 6)))
                if rng.random() < 0.8 for _ in range(int(rng.integers(1, 3)))]
        table = pd.DataFrame(rows)
        pairs = [("a", "b"), ("a", "c"), ("b", "c")][:1 + trial % 3]
        for level in ("overall", "system"):
            for method in ("percentile", "BCa"):
                fast = paired_correlation_ci(table, pairs, level, "kendall", "b", "exact", 99, 0.95, trial, method)
                monkeypatch.setattr(bootstrap, "FAST_KENDALL", False)
                slow = paired_correlation_ci(table, pairs, level, "kendall", "b", "exact", 99, 0.95, trial, method)
                monkeypatch.undo()
                assert repr(fast) == repr(slow)


def test_a_csv_ratings_file_is_read_by_its_tidy_columns_only(tmp_path, monkeypatch):
    """A ratings.csv is read column-wise (no dict per row, the raw answers never held) into the table the
    same rows give from JSON lines; an error still names the line its row starts on."""
    import judgelab.datasets.readers as readers

    rows = [{"item_id": f"i{k}", "system": "s", "group": "", "criterion": "fluency", "rater": "m@t#abcdef",
             "sample": str(k % 2), "score": str(k % 5 + 1) if k != 3 else "", "status": "ok" if k != 4 else "no_rating",
             "raw": f"line one\nline two {k}", "latency_s": "0.1"} for k in range(12)]
    pd.DataFrame(rows).to_csv(tmp_path / "r.csv", index=False)
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    expected = read_ratings(tmp_path / "r.jsonl")
    monkeypatch.setattr(readers, "read_csv", lambda path: pytest.fail("a ratings.csv read as a dict per row"))
    got = read_ratings(tmp_path / "r.csv")
    pd.testing.assert_frame_equal(got, expected)
    assert got["status"].tolist()[3:5] == ["missing", "no_rating"]
    rows[5]["score"] = "high"
    pd.DataFrame(rows).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(JudgelabError, match=r"bad.csv: line 12, column 'score': score 'high' is not a number"):
        read_ratings(tmp_path / "bad.csv")


def test_a_parquet_ratings_file_is_read_by_its_tidy_columns_only(tmp_path, monkeypatch):
    """rate --ratings-format parquet: the ratings are read without the raw answers, into the table the whole file gives."""
    rows = pd.DataFrame({"item_id": ["a", "b", "c"], "system": "s", "criterion": "fluency", "rater": "m@t#abcdef",
                         "sample": [0, 0, 1], "score": [4.0, None, 2.0], "status": ["ok", "no_rating", "ok"],
                         "raw": ["Rating: 4", "no idea", "Rating: 2"]})
    rows.to_parquet(tmp_path / "r.parquet")
    expected = read_ratings(rows)
    asked = []
    real = pd.read_parquet
    monkeypatch.setattr(pd, "read_parquet", lambda path, **kw: asked.append(kw.get("columns")) or real(path, **kw))
    pd.testing.assert_frame_equal(read_ratings(tmp_path / "r.parquet"), expected)
    assert asked and "raw" not in asked[0] and "item_id" in asked[0]
