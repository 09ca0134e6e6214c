#!/usr/bin/env bash
# A 429 storm: RUNS runs of 120 items (chiang-lee template, 1,440 judgments, 480 calls each) against the
# OpenAI-compatible stub answering 30% of calls with 429 (Retry-After: 0.2) and 10% with 500, default
# retry settings. Every run should exit 0 with every judgment ok. Usage: bash benchmarks/retry_storm.sh [RUNS]
set -u
RUNS=${1:-10}
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/judgelab-storm.XXXXXX")
cd "$WORK"
PORT=18777
$PY -m judgelab.testing.openai_stub --port $PORT --rate-limited 0.3 --server-errors 0.1 --retry-after 0.2 --seed 7 > stub.out 2>&1 &
STUB=$!
trap 'kill $STUB 2>/dev/null' EXIT
sleep 2
$PY - <<'PY'
import json
with open("items.jsonl", "w") as f:
    for i in range(120):
        f.write(json.dumps({"id": f"s{i}", "text": f"Story {i}. It has a beginning and an end.",
                            "context": f"Prompt {i}", "system": "human" if i % 2 else "gpt2"}) + "\n")
PY
for r in $(seq 1 "$RUNS"); do
  start=$(date +%s.%N)
  $PY -m judgelab.cli rate --items items.jsonl --judge openai:m@http://127.0.0.1:$PORT/v1 --out run$r --quiet > run$r.log 2>&1
  rc=$?
  end=$(date +%s.%N)
  summary=$($PY -c "
import json, pandas as pd
d = pd.read_csv('run$r/ratings.csv'); r = json.load(open('run$r/run.json'))['runs'][0]['retries']
print(f'ok {(d.status == \"ok\").sum()}/{len(d)}, retries {r}')" 2>/dev/null || echo "no ratings (see $WORK/run$r.log)")
  echo "run $r: exit $rc, $summary, $(echo "$end - $start" | bc) s"
done
echo "outputs in $WORK"
