"""Ratings import (long and wide), judge-vs-human tables, baselines and `judgelab agree`."""
import json

import numpy as np
import pandas as pd
import pytest

from conftest import judgelab_cmd
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
    assert sc.loc["humans", "icc2k"] == pytest.approx(icc(h.to_numpy())["ICC(2,k)"][0], abs=1e-12)
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
    args = ["agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-cols", "clarity", "--item-col", "story",
            "--rater-col", "annotator", "--system-col", "model", "--group-col", "prompt", "--method", "kendall,spearman"]
    result = judgelab_cmd(*args, "--format", "json", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"correlations", "human_baseline", "self_consistency", "williams"}
    assert (tmp_path / "out" / "williams.csv").exists()
    assert judgelab_cmd(*args, "--format", "table").returncode == 0
    bad = judgelab_cmd("agree", str(j), "--human", str(h), "--human-layout", "wide", "--criteria-cols", "clarity")
    assert bad.returncode == 2 and "missing column" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
