"""Preference folders for the report's tests, made by the commands themselves: ``rate --pairs`` with the scripted
stand-in judge on responses written here, human verdicts on the same pairs, then ``preference agree --out`` into the
run's folder and ``preference win-rates --out`` into a folder of its own. The texts are this project's own."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli

SYSTEMS = ("base", "M2", "M10")
#: the judge prefers M10's responses (they open with "In short"), and otherwise picks the response shown first
JUDGE = {"rules": [{"contains": "[Response A]\nIn short", "reply": "A is better. [[A]]"},
                   {"contains": "[Response B]\nIn short", "reply": "B is better. [[B]]"}],
         "default": "The first reads better. [[A]]"}


def _response(system: str, k: int) -> str:
    if system == "M10" and k % 4 == 0:  # no "In short": the judge picks the first shown
        return f"Step {k} is done by checking each part twice, then writing the answer down with a reason."
    if system == "M10":
        return f"In short: step {k} is done by checking each part twice, then writing the answer down with a reason."
    if system == "M2":
        return f"Step {k}: check it, then write it."
    return f"Do step {k}."


def write_responses(path: Path, items: int = 12) -> Path:
    rows = [{"item_id": f"q{k}", "instruction": f"Explain how to do step {k} of the task <b>carefully</b>.",
             "system": s, "response": _response(s, k)} for k in range(1, items + 1) for s in SYSTEMS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_human_verdicts(path: Path, criterion: str, items: int = 12) -> Path:
    """Two humans on every pair against the baseline, one order each: both prefer M10 but on every fifth item; on M2
    they differ."""
    lines = ["rater,item_id,criterion,first,second,choice"]
    for k in range(1, items + 1):
        for human in ("human:ana", "human:ben"):
            lines.append(f"{human},q{k},{criterion},M10,base,{'second' if k % 5 == 0 else 'first'}")
            m2_wins = (k % 3 != 0) if human == "human:ana" else (k % 2 == 0)
            lines.append(f"{human},q{k},{criterion},base,M2,{'second' if m2_wins else 'first'}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def preference_folders(tmp: Path, items: int = 12) -> tuple[Path, Path]:
    """(the run folder of ``rate --pairs`` with ``preference agree`` and ``preference win-rates`` recorded into it,
    a folder of ``preference win-rates`` alone)."""
    responses = write_responses(tmp / "responses.jsonl", items)
    script = tmp / "judge.json"
    script.write_text(json.dumps(JUDGE), encoding="utf-8")
    run = tmp / "run"
    r = run_cli("rate", "--items", str(responses), "--pairs", "baseline:base", "--template", "pairwise-comparison",
                "--judge", f"scripted-test-double:{script}", "--samples", "1", "--out", str(run), "--quiet")
    assert r.returncode == 0, r.stderr
    import pandas as pd

    criterion = str(pd.read_csv(run / "verdicts.csv")["criterion"].iloc[0])
    humans = write_human_verdicts(tmp / "humans.csv", criterion, items)
    r = run_cli("preference", "agree", str(run / "verdicts.csv"), str(humans), "--out", str(run), "--n-resamples", "200")
    assert r.returncode == 0, r.stderr
    rates = tmp / "rates"
    for out in (run, rates):
        r = run_cli("preference", "win-rates", str(run / "verdicts.csv"), str(humans), "--baseline", "base", "--out",
                    str(out), "--n-resamples", "100")
        assert r.returncode == 0, r.stderr
    return run, rates
