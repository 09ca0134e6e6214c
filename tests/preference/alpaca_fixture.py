"""A small AlpacaEval annotations.json written for these tests (our own instructions and responses)."""
from __future__ import annotations

import json
from pathlib import Path

ANNOTATOR = "weighted_test_annotator"


def annotation(i: int, system: str, preference: object, baseline: str = "base", out1: str | None = None,
               out2: str | None = None) -> dict:
    return {"instruction": f"Describe the colour of object number {i}.", "output_1": out1 or f"Object {i} is blue.",
            "generator_1": baseline, "dataset": "test", "output_2": out2 or f"Object {i} looks dark blue in daylight.",
            "generator_2": system, "annotator": ANNOTATOR, "preference": preference,
            "price_per_example": 0.001, "time_per_example": 0.5,
            "raw_completion": {"finish_reason": "stop", "content": "m"}}


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path
