"""Small inputs of the model-calling commands, shared by the tests that run every command against a judge
(the stub in tests/cli/test_interface.py, llama-cpp-python's server in tests/models/test_real_server.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def stories(tmp_path: Path) -> Path:
    """Four stories in the layout of ``recipe chiang-lee --stories``."""
    rows = [{"id": f"s{i}", "story": f"Story {i}. The fox ran over the hill and found a red door.", "prompt": f"Prompt {i}",
             "writer": "human" if i % 2 else "gpt2"} for i in range(4)]
    path = tmp_path / "stories.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def hanna_stories(tmp_path: Path) -> Path:
    """Three stories in HANNA's CSV layout (``recipe hanna --stories``)."""
    path = tmp_path / "hanna.csv"
    pd.DataFrame({"Prompt": ["P one", "P one", "P two"], "Human": ["H one.", "H one.", "H two."],
                  "Story": ["A story.", "Another story.", "Third story."], "Model": ["m1", "m2", "m1"]}).to_csv(path)
    return path


def nle_data(tmp_path: Path) -> tuple[Path, Path]:
    """Six e-SNLI explanations and their human ratings (``pairwise``, ``recipe nle``)."""
    data = tmp_path / "esnli.csv"
    pd.DataFrame({"id": [f"e{i}" for i in range(6)], "Sentence1": [f"A man walks {i}." for i in range(6)],
                  "Sentence2": ["A person moves."] * 6, "gold_label": ["entailment"] * 6,
                  "Explanation_1": [f"Walking is moving, case {i}." for i in range(6)]}).to_csv(data, index=False)
    human = tmp_path / "human.csv"
    pd.DataFrame({"id": [f"e{i}" for i in range(6)], "informativeness": [1, 2, 3, 4, 5, 6],
                  "clarity": [2, 3, 4, 5, 6, 7]}).to_csv(human, index=False)
    return data, human
