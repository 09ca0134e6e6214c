"""Offline batch files at scale: export → the ``vllm run-batch`` stand-in → import → the run from the ledger.

N stories × the four ``chiang-lee-story`` criteria × 1 sample, judge ``openai:stub@…`` (never
contacted: every answer comes from the batch file). Times each step as the user runs it
(in-process command calls, imports warm) and checks the final run made no call.

Run: ``python benchmarks/batch_file_scale.py [--items 5000]``. Writes ``benchmarks/batch_file_scale.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    args = parser.parse_args()
    from judgelab.cli import main as cli
    from judgelab.testing.openai_stub import answer_batch_file

    def run(*argv: str) -> float:
        start = time.perf_counter()
        try:
            cli(list(argv))
        except SystemExit as exc:
            if exc.code:
                raise RuntimeError(f"judgelab {' '.join(argv[:2])} exited {exc.code}") from None
        return time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        items = folder / "items.jsonl"
        with items.open("w") as f:
            for i in range(args.items):
                f.write(json.dumps({"id": str(i), "text": f"Story {i}: the keeper counted the ships again.",
                                    "context": "a prompt", "system": "a" if i % 2 else "b"}) + "\n")
        common = ["rate", "--items", str(items), "--judge", "openai:stub@http://127.0.0.1:9/v1", "--samples", "1",
                  "--out", str(folder / "out"), "--quiet"]
        t_export = run(*common, "--export-batch", str(folder / "requests.jsonl"))
        start = time.perf_counter()
        counts = answer_batch_file(str(folder / "requests.jsonl"), str(folder / "answers.jsonl"), model="stub")
        t_answer = time.perf_counter() - start
        t_import = run("batch", "import", str(folder / "answers.jsonl"), "--out", str(folder / "out"))
        t_again = run("batch", "import", str(folder / "answers.jsonl"), "--out", str(folder / "out"))
        t_rate = run(*common)
        manifest = json.loads((folder / "out" / "run.json").read_text())
        calls = manifest["runs"][0]["calls_made"]
        size = (folder / "requests.jsonl").stat().st_size
    if calls != 0:
        raise RuntimeError(f"the run after the import made {calls} calls")
    import openai

    result = {"requests": counts["requests"], "input_mb": round(size / 1e6, 2), "export_s": round(t_export, 2),
              "stand_in_answer_s": round(t_answer, 2), "import_s": round(t_import, 2), "import_again_s": round(t_again, 2),
              "rate_from_ledger_s": round(t_rate, 2), "calls_made_by_the_final_run": calls,
              "python": platform.python_version(), "openai": openai.__version__}
    (HERE / "batch_file_scale.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
