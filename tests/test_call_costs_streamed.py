"""The call accounting of a folder's record (results.json ``calls``) read from the store in bounded memory
equals the whole-table computation (:func:`judgelab.call_costs.call_costs`) it replaces."""
import random

import pandas as pd
import pytest

from judgelab.call_costs import attempt_keys, call_costs
from judgelab.output.accounting import folder_call_costs
from judgelab.store import Store
from judgelab.store.judgments import Judgment


def _whole_table_record(path):
    """The computation before: every judgment's attempts and every response in memory."""
    from judgelab.raters import is_human

    columns = ["rater", "criterion", "status", "attempts"]
    with Store(path, read_only=True) as s:
        judgments = pd.DataFrame.from_records(s.judgment_rows(columns), columns=columns)
        judgments = judgments[~judgments["rater"].astype(str).map(is_human)].reset_index(drop=True)
        responses = s.responses_of({k for a in judgments["attempts"] for k in attempt_keys(a)})
    return call_costs(judgments, responses).to_record()


def _store(path, seed=0):
    rng = random.Random(seed)
    calls, judgments = [], []
    for rater in ("openai:m@t", "llama:x@t", "human:expert"):
        for i in range(60):
            for criterion in ("coherence", "fluency"):
                if rater.startswith("human"):
                    attempts = []
                else:
                    shared = f"{rater}-{i}-{criterion}"  # an n call: both samples use one key
                    attempts = [{"key": shared}]
                    if i % 7 == 0:  # a refusal regenerated: a second call
                        attempts.append({"key": shared + "-again"})
                    if i % 11 == 0:  # a call the ledger does not hold
                        attempts.append({"key": shared + "-lost"})
                    for a in attempts:
                        if a["key"].endswith("-lost"):
                            continue
                        if i % 13 == 0 and a["key"].endswith("-again"):
                            response = "not json"  # a response that cannot be read: not counted
                        elif i % 17 == 0:
                            response = '{"prompt_tokens": 5}'  # no latency, no completion tokens
                        else:
                            response = {"prompt_tokens": rng.randint(10, 90), "completion_tokens": rng.randint(1, 9),
                                        "latency_s": rng.random()}
                        calls.append((a["key"], {"q": a["key"]}, response))
                for sample in (0, 1):
                    status = "ok" if (i + sample) % 9 else "no_rating"
                    judgments.append(Judgment(f"s{i}", "sys", None, criterion, rater, sample, 3.0, 3.0, None, None,
                                              status, "Rating: 3", attempts))
    with Store(path) as store:
        store.put(calls=calls, judgments=judgments)


def test_the_streamed_accounting_equals_the_whole_table_one(tmp_path):
    _store(tmp_path / "store.sqlite")
    got = folder_call_costs(tmp_path)
    want = _whole_table_record(tmp_path / "store.sqlite")
    assert [r["rater"] for r in got["raters"]] == ["llama:x@t", "openai:m@t"]  # the human rater is not a judge
    for a, b in zip(got["raters"], want["raters"], strict=True):
        assert {k: v for k, v in a.items() if not k.startswith("latency")} == \
               {k: v for k, v in b.items() if not k.startswith("latency")}
        for k in ("latency_sum_s", "latency_mean_s", "latency_p95_s"):
            assert a[k] == pytest.approx(b[k], rel=1e-12)
    assert got["statuses"] == want["statuses"] and got["statuses_by_criterion"] == want["statuses_by_criterion"]
    assert got["raters"][0]["calls"] > 0 and any(s["status"] == "no_rating" for s in got["statuses"])


def test_a_store_without_judges_has_an_empty_record(tmp_path):
    with Store(tmp_path / "store.sqlite"):
        pass
    assert folder_call_costs(tmp_path) == {"raters": [], "statuses": [], "statuses_by_criterion": []}


def test_the_keys_are_gathered_on_disk_a_chunk_at_a_time(tmp_path):
    _store(tmp_path / "store.sqlite")
    with Store(tmp_path / "store.sqlite", read_only=True) as s:
        chunks = list(s.attempts_of("openai:m@t", chunk_rows=50))
        assert [len(c) for c in chunks] == [50, 50, 50, 50, 40]  # 60 items × 2 criteria × 2 samples
        s.gather_keys(["a", "b"], fresh=True)
        s.gather_keys(["b", ""])
        assert list(s.gathered_responses()) == []  # neither key is in the ledger
        s.gather_keys(attempt_keys(chunks[0][0])[:1], fresh=True)
        assert len(list(s.gathered_responses())) == 1
