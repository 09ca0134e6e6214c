"""`judgelab batch list|cancel FOLDER`: a store without (open) batches is an empty list (exit 0, said in words);
a folder without a store, or a named batch that is not open, is a user error naming what to change."""
from __future__ import annotations

import json

from conftest import one_line_error, run_cli, write_items


def test_a_store_without_batches_lists_none_and_a_folder_without_a_store_is_named(tmp_path):
    one_line_error(run_cli("batch", "list", str(tmp_path / "runs" / "stories")),
                   "no store in", "judgelab rate --out", "stories")
    one_line_error(run_cli("batch", "cancel", str(tmp_path / "runs" / "stories")), "no store in")
    script = tmp_path / "judge.json"
    script.write_text(json.dumps({"default": "Rating: 4"}))
    items = write_items(tmp_path / "items.jsonl", 2)
    rated = run_cli("rate", "--items", str(items), "--judge", f"scripted-test-double:{script}", "--samples", "1",
                    "--quiet", "--out", str(tmp_path / "runs" / "stories"))
    assert rated.returncode == 0, rated.stderr
    listed = run_cli("batch", "list", str(tmp_path / "runs" / "stories"))
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    assert listed.stdout.startswith("no batches in ") and "live calls" in listed.stdout
    cancelled = run_cli("batch", "cancel", str(tmp_path / "runs" / "stories"))
    assert cancelled.returncode == 0 and cancelled.stderr == "", cancelled.stderr
    assert cancelled.stdout.startswith("no open batches in ") and "nothing to cancel" in cancelled.stdout
    one_line_error(run_cli("batch", "cancel", str(tmp_path / "runs" / "stories"), "--batch", "batch_abc123"),
                   "no open provider batch 'batch_abc123'")
