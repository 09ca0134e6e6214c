"""judgelab preference win-rates: the folder it writes, its record, and one-line errors (in-process)."""
from __future__ import annotations

import json

import pandas as pd

from alpaca_fixture import ANNOTATOR, annotation, write
from conftest import run_cli
from judgelab.preference.win_rates_results import LEADERBOARD_COLUMNS, WIN_RATE_COLUMNS, PreferenceRates


def _files(tmp_path):
    a = write(tmp_path / "a.json", [annotation(i, "sys-a", p, out2="word " * (5 + i)) for i, p in
                                    enumerate([2, 1, 1.5, 1.75, 1.2, 1.9, 2, 1])])
    b = write(tmp_path / "b.json", [annotation(i, "sys-b", p, out2="## h\n" + "w " * (3 + i)) for i, p in
                                    enumerate([1, 1.1, 1.5, 2, 1.3, 1, 1.6, 1.4])])
    return a, b


def test_win_rates_folder_tables_and_record(tmp_path):
    a, b = _files(tmp_path)
    out = tmp_path / "out"
    r = run_cli("preference", "win-rates", str(a), str(b), "--baseline", "base", "--out", str(out), "--n-resamples", "20")
    assert r.returncode == 0, r.stderr
    assert "Win rates against base" in r.stdout and "sys-a" in r.stdout
    wr = pd.read_csv(out / "win_rates.csv")
    assert list(wr.columns) == WIN_RATE_COLUMNS
    assert wr.set_index("system").loc["sys-a", "n_total"] == 8 and (wr["rater"] == ANNOTATOR).all()
    lb = pd.read_csv(out / "leaderboard.csv")
    assert list(lb.columns) == LEADERBOARD_COLUMNS and set(lb["system"]) == {"base", "sys-a", "sys-b"}
    doc = json.loads((out / "results.json").read_text())
    step = next(s for s in doc["steps"] if s["kind"] == "preference win-rates")
    rates = PreferenceRates.from_record(step["results"]["preference_rates"])
    assert rates.win_rate_frame()["win_rate"].round(9).tolist() == wr["win_rate"].round(9).tolist()
    assert rates.baseline == "base" and step["settings"]["n_resamples"] == 20
    assert {f["name"] for f in step["files"]} >= {"win_rates.csv", "leaderboard.csv"}


def test_unknown_baseline_is_one_line_naming_the_systems(tmp_path):
    a, b = _files(tmp_path)
    r = run_cli("preference", "win-rates", str(a), str(b), "--baseline", "gpt", "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "baseline 'gpt' is not a system of the verdicts; give --baseline one of: base, sys-a, sys-b" in r.stderr
    assert not (tmp_path / "o").exists()


def test_a_file_of_no_known_format_is_one_line(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps([{"question": "q", "answer": "a"}]))
    r = run_cli("preference", "win-rates", str(bad), "--baseline", "base")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not a file of verdicts" in r.stderr


def test_negative_resamples_is_one_line_naming_the_option(tmp_path):
    a, _ = _files(tmp_path)
    r = run_cli("preference", "win-rates", str(a), "--baseline", "base", "--n-resamples", "-1")
    assert r.returncode == 2 and "--n-resamples is -1; give 0 (no intervals) or more" in r.stderr


def test_style_controlled_leaderboard_through_the_command(tmp_path):
    a, b = _files(tmp_path)
    r = run_cli("preference", "win-rates", str(a), str(b), "--baseline", "base", "--style-control", "--n-resamples", "5",
                "--no-length-control", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    lb = pd.read_csv(tmp_path / "o" / "leaderboard.csv")
    wr = pd.read_csv(tmp_path / "o" / "win_rates.csv")
    assert lb["style_controlled"].all() and wr["length_controlled_win_rate"].isna().all()
    assert (wr["note"] == "length control not asked").all()


def test_win_rates_under_mt_bench_s_rule(tmp_path):
    """--order-rule mt-bench: a pair whose orders disagree counts as one tie against the baseline."""
    import pandas as pd

    path = tmp_path / "v.csv"
    pd.DataFrame({"rater": ["j"] * 4, "item_id": ["1", "1", "2", "2"], "first": ["base", "m", "base", "m"],
                  "second": ["m", "base", "m", "base"], "choice": ["second", "second", "second", "first"]}).to_csv(path, index=False)
    keep = run_cli("preference", "win-rates", str(path), "--baseline", "base", "--n-resamples", "0", "--format", "json")
    mt = run_cli("preference", "win-rates", str(path), "--baseline", "base", "--n-resamples", "0", "--order-rule",
                 "mt-bench", "--format", "json")
    assert keep.returncode == 0 and mt.returncode == 0, keep.stderr + mt.stderr
    import json

    row = lambda r: [x for x in json.loads(r.stdout)["tables"]["win_rates"] if x["system"] == "m"][0]  # noqa: E731
    assert (row(keep)["n_total"], row(keep)["n_wins"], row(keep)["n_wins_base"], row(keep)["n_draws"]) == (4, 3, 1, 0)
    assert (row(mt)["n_total"], row(mt)["n_wins"], row(mt)["n_draws"]) == (2, 1, 1)  # item 1 disagrees: a tie
