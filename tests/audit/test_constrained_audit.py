"""``judgelab audit --compare FIRST,SECOND``: the comparison of two raters on the same texts, without
human ratings; bad input is one line and writes nothing."""
from __future__ import annotations

import pandas as pd

from conftest import one_line_error, run_cli


def ratings_file(path, shift=1.0):
    rows = []
    for i in range(8):
        for system in ("a", "b"):
            free = 1 + (i + len(system)) % 4
            rows.append(dict(item_id=f"i{i}", system=system, criterion="c", rater="j@t", sample=0, score=free,
                             status="ok"))
            rows.append(dict(item_id=f"i{i}", system=system, criterion="c", rater="j@t+constrained", sample=0,
                             score=min(5, free + shift * (i % 2)), status="ok"))
            rows.append(dict(item_id=f"i{i}", system=system, criterion="c", rater="other", sample=0, score=3,
                             status="ok"))
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_compare_names_any_two_raters_and_the_twins_are_found_alone(tmp_path):
    path = ratings_file(tmp_path / "r.csv")
    auto = run_cli("audit", str(path), "--format", "csv", "--out", str(tmp_path / "auto"))
    assert auto.returncode == 0, auto.stderr
    shift = pd.read_csv(tmp_path / "auto" / "constrained_shift.csv")
    assert list(zip(shift["first"], shift["second"])) == [("j@t", "j@t+constrained")]
    assert shift["estimate"].iloc[0] == 0.5 and shift["n"].iloc[0] == 16 and shift["n_clusters"].iloc[0] == 8
    named = run_cli("audit", str(path), "--compare", "other,j@t", "--format", "csv", "--out", str(tmp_path / "named"))
    assert named.returncode == 0, named.stderr
    assert list(pd.read_csv(tmp_path / "named" / "constrained_shift.csv")["first"]) == ["other"]
    assert "j@t rates" in named.stderr


def test_bad_compare_is_one_line_and_writes_nothing(tmp_path):
    path = ratings_file(tmp_path / "r.csv")
    one_line_error(run_cli("audit", str(path), "--compare", "j@t", "--out", str(tmp_path / "a")), "expected FIRST,SECOND")
    one_line_error(run_cli("audit", str(path), "--compare", "j@t,nobody", "--out", str(tmp_path / "b")),
                   "'nobody' is not in the ratings")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_the_shift_is_in_audit_json_and_in_the_reports_audit_section(tmp_path):
    import json

    path = ratings_file(tmp_path / "r.csv")
    done = run_cli("audit", str(path), "--format", "csv", "--out", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    doc = json.loads((tmp_path / "a" / "audit.json").read_text(encoding="utf-8"))
    table = pd.read_csv(tmp_path / "a" / "constrained_shift.csv")
    assert [(r["first"], r["second"], r["estimate"]) for r in doc["shift"]] == list(
        zip(table["first"], table["second"], table["estimate"]))
    assert any(line.startswith("c: j@t+constrained") or "j@t+constrained" in line for line in doc["lines"])
    html = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    section = html.split('id="audit"', 1)[1]
    assert 'id="t-audit-shift"' in section and "Two raters on the same texts" in section
    assert f"[{table['ci_low'].iloc[0]:.3f}, {table['ci_high'].iloc[0]:.3f}]" in section


def test_twins_are_paired_through_a_digest_suffix_when_unambiguous():
    from judgelab.stats.paired_shift import constrained_pairs

    assert constrained_pairs(["m@t", "m@t+constrained#0a1b2c"]) == [("m@t", "m@t+constrained#0a1b2c")]
    assert constrained_pairs(["m@t#0a1b2c", "m@t+constrained"]) == [("m@t#0a1b2c", "m@t+constrained")]
    # two free raters could be the twin: none is guessed (name the pair with --compare)
    assert constrained_pairs(["m@t", "m@t#0a1b2c", "m@t+constrained#ffffff"]) == []
