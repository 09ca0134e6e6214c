"""Several rater pairs are matched by group label, never by position (issue 18, items 6-8).

The reference here is written from scratch in plain numpy: the group labels, one row per label;
each pair's per-group Pearson r on the rows of that label (np.corrcoef); a bootstrap that draws
group labels with the draws scipy makes from the generator judgelab passes it
(``integers(0, k, (n_resamples, k))``, checked in test_bootstrap.py).
"""
import json

import numpy as np
import pandas as pd
import pytest

from judgelab.stats.correlation import level_correlation, mean_level_correlation


def _groups_frame(seed=0, groups=30, systems=5, noise=2.5):
    """h1 and h2 identical, except h1 lacks g00 and h2 lacks g29; m a noisy judge."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for s in range(systems):
            h = float(rng.integers(1, 6))
            rows.append({"group": f"g{g:02d}", "item_id": f"g{g:02d}", "system": f"s{s}", "h1": h, "h2": h,
                         "m": h + rng.normal(0, noise)})
    f = pd.DataFrame(rows)
    f.loc[f.group == "g00", "h1"] = np.nan
    f.loc[f.group == f"g{groups - 1:02d}", "h2"] = np.nan
    return f


def _per_group_r(frame, x, y, labels):
    out = np.full(len(labels), np.nan)
    for i, g in enumerate(labels):
        sub = frame.loc[frame.group == g, [x, y]].dropna()
        if len(sub) >= 3 and sub[x].nunique() > 1 and sub[y].nunique() > 1:
            out[i] = np.corrcoef(sub[x], sub[y])[0, 1]
    return out


def _reference_ci(rs: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float, float]:
    """(point, low, high) of the mean over pairs of the mean per-group r, resampling rows of ``rs``."""
    def stat(r):
        return np.mean([np.nanmean(r[:, j]) for j in range(r.shape[1]) if (~np.isnan(r[:, j])).any()])

    k = rs.shape[0]
    draws = np.random.default_rng(seed).integers(0, k, (n_resamples, k))
    dist = np.array([stat(rs[d]) for d in draws])
    low, high = np.quantile(dist, [0.025, 0.975])
    return float(stat(rs)), float(low), float(high)


def test_group_bootstrap_resamples_labels_the_same_for_every_pair():
    frame = _groups_frame()
    pairs = [("h1", "m"), ("h2", "m")]
    labels = sorted(frame.group.unique())
    rs = np.column_stack([_per_group_r(frame, x, y, labels) for x, y in pairs])  # joined on the label
    point, low, high = _reference_ci(rs, 999, 0)
    c = mean_level_correlation(frame, pairs, "group", "pearson", n_resamples=999, seed=0)
    assert c.r == pytest.approx(point, abs=1e-12)
    assert (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert c.n == 29 and c.n_clusters == 30  # each pair has 29 groups; 30 labels are resampled
    # the defect this guards: each pair's groups stacked by position (g01 of h1 beside g00 of h2)
    shifted = np.column_stack([rs[1:, 0], rs[:-1, 1]])
    _, s_low, s_high = _reference_ci(shifted, 999, 0)
    assert (high - low) > 1.3 * (s_high - s_low)
    assert abs(c.ci_low - s_low) > 0.05


def test_a_group_one_rater_skipped_is_missing_for_that_rater_only():
    """3 raters × 6 groups × 5 systems; h3 skipped every item of g2 (the internal error of issue 18, item 7)."""
    rng = np.random.default_rng(1)
    rows = [{"group": f"g{g}", "item_id": f"g{g}", "system": f"s{s}", **{h: float(rng.integers(1, 6)) for h in ("h1", "h2", "h3")}}
            for g in range(6) for s in range(5)]
    frame = pd.DataFrame(rows)
    frame.loc[frame.group == "g2", "h3"] = np.nan
    pairs = [("h1", "h2"), ("h1", "h3"), ("h2", "h3")]
    c = mean_level_correlation(frame, pairs, "group", "pearson", n_resamples=500, seed=4)
    labels = [f"g{g}" for g in range(6)]
    rs = np.column_stack([_per_group_r(frame, x, y, labels) for x, y in pairs])
    point, low, high = _reference_ci(rs, 500, 4)
    assert c.r == pytest.approx(point, abs=1e-12) and (c.ci_low, c.ci_high) == pytest.approx((low, high), abs=1e-9)
    assert c.n_clusters == 6


def _ratings_csv(path, skip: dict[str, str], groups=8, systems=5, seed=2):
    """Tidy ratings: three human raters and a judge; ``skip`` maps a rater to a group it skipped entirely."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        for s in range(systems):
            truth = rng.normal(3, 1)
            for rater in ("human:h1", "human:h2", "human:h3", "judge"):
                if skip.get(rater) == f"g{g}":
                    continue
                noise = 1.0 if rater == "judge" else 0.7
                rows.append({"item_id": f"g{g}", "system": f"s{s}", "group": f"g{g}", "criterion": "quality", "rater": rater,
                             "score": float(np.clip(np.round(truth + rng.normal(0, noise)), 1, 5))})
    pd.DataFrame(rows).to_csv(path, index=False)
    return pd.DataFrame(rows)


def _cli(capsys, *args):
    from judgelab.cli import main

    code = 0
    try:
        main(list(args))
    except SystemExit as stop:
        code = stop.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_agree_with_raters_who_skipped_groups_exits_0_with_the_label_aligned_interval(tmp_path, capsys):
    """30 groups, h1 skipped g0, h2 skipped g29: `agree --method pearson` exits 0 and the group-level human
    baseline is the label-aligned computation (each rater against the mean of the humans who rated the item)."""
    df = _ratings_csv(tmp_path / "ratings.csv", {"human:h1": "g0", "human:h2": "g29"}, groups=30)
    code, out, err = _cli(capsys, "agree", str(tmp_path / "ratings.csv"), "--method", "pearson", "--level", "group",
                          "--n-resamples", "400", "--seed", "3", "--format", "json")
    assert code == 0, err
    assert "internal error" not in err
    base = json.loads(out)["tables"]["human_baseline"][0]
    wide = df[df.rater.str.startswith("human:")].pivot_table(index=["group", "system"], columns="rater", values="score")
    wide["mean"] = wide.mean(axis=1)
    frame = wide.reset_index()
    labels = sorted(frame.group.unique())
    raters = ["human:h1", "human:h2", "human:h3"]
    rs = np.column_stack([_per_group_r(frame, r, "mean", labels) for r in raters])
    point, low, high = _reference_ci(rs, 400, 3)
    assert base["vs_mean"] == pytest.approx(point, abs=1e-12)
    assert (base["vs_mean_ci_low"], base["vs_mean_ci_high"]) == pytest.approx((low, high), abs=1e-9)
    assert base["vs_mean_n"] == 29 and base["vs_mean_n_clusters"] == 30


def test_skipped_group_through_the_command_line(tmp_path, capsys):
    """Issue 18, item 7: 3 raters × 6 groups × 5 systems, h3 skipped g2: exit 0, not an internal error."""
    _ratings_csv(tmp_path / "r.csv", {"human:h3": "g2"}, groups=6)
    code, out, err = _cli(capsys, "agree", str(tmp_path / "r.csv"), "--method", "pearson", "--n-resamples", "100",
                          "--format", "json")
    assert code == 0 and "internal error" not in err, err
    base = pd.DataFrame(json.loads(out)["tables"]["human_baseline"]).set_index("level")
    assert base.loc["group", "vs_mean_n_clusters"] == 6 and base.loc["group", "pairwise_n_clusters"] == 6
    assert base.loc["group", "vs_mean_ci_low"] <= base.loc["group", "vs_mean"] <= base.loc["group", "vs_mean_ci_high"]


def test_an_empty_group_column_is_no_group_in_csv_as_in_jsonl(tmp_path, capsys):
    """Issue 18, item 8: a CSV's empty group cells are no group (as JSONL's null), not a group named ''."""
    df = _ratings_csv(tmp_path / "with_groups.csv", {})
    df.assign(group="").to_csv(tmp_path / "empty.csv", index=False)
    (tmp_path / "null.jsonl").write_text("\n".join(json.dumps({**r, "group": None}) for r in df.to_dict("records")) + "\n")
    tables = {}
    for name in ("empty.csv", "null.jsonl"):
        code, out, err = _cli(capsys, "agree", str(tmp_path / name), "--method", "pearson", "--n-resamples", "0",
                              "--format", "json")
        assert code == 0, err
        corr = pd.DataFrame(json.loads(out)["tables"]["correlations"]).set_index("level")
        tables[name] = corr
        assert corr.loc["group", "r"] is None or np.isnan(corr.loc["group", "r"])
        assert corr.loc["group", "n"] == 0 and "no group column" in corr.loc["group", "note"]
    assert tables["empty.csv"].equals(tables["null.jsonl"])


def test_blank_group_labels_are_no_group_and_the_rest_is_counted():
    frame = _groups_frame(groups=8)
    frame["group"] = frame["group"].astype(object)
    frame.loc[frame.group == "g03", "group"] = "  "
    c = level_correlation(frame, "group", "pearson", x="h1", y="m")
    reference = frame[frame.group.str.strip() != ""]
    expected = np.nanmean(_per_group_r(reference, "h1", "m", sorted(reference.group.unique())))
    assert c.r == pytest.approx(expected, abs=1e-12) and c.n_clusters == 6  # g00 (h1 missing) and g03 (blank) out
    assert "5 of 35 rated rows have no group and are left out" in c.note
