"""CachedJudge: the one call ledger, its keys unchanged so old stores keep resuming.

The expected keys below were computed by judgelab's code before the ledger moved into
``models/cache.py`` (commit 1728904: ``Runner._call`` and ``perturb.llm._one``) for the
same fixed requests; a change here means existing stores would pay for their calls again.
"""
import asyncio

import pytest

from judgelab.datasets.items import Item
from judgelab.models.base import JudgeRequest, Sampling
from judgelab.models.cache import CachedJudge
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.perturb.llm import PURPOSE, perturb_with_llm
from judgelab.prompts import Criterion, Template
from judgelab.run import Runner, RunSpec
from judgelab.store import Store

TEMPLATE = Template(name="fixed-keys", instruction="Rate the text.\n\n{{ text }}",
                    criteria={"quality": Criterion(question="How good is it? Answer 1-5.")})
ITEM = Item("a", "A fine story.", system="human")

OLD_KEYS = [
    (RunSpec(samples=1, sampling=Sampling(temperature=0.7, seed=5)), "65a64247f4b351c09376fd2c464f553c0bbc04de7b0230ddb6cdd038c4a0e903"),
    (RunSpec(samples=3), "a5eabb137c11a6e13578b98ed75f12aa75329729aaf271d2b57dcd7d8365a95b"),
    (RunSpec(score="logprob"), "db435caa1378aeae1cdfc28c0c1ea6df7f7f9c3e89c62758acda988a114fe6b6"),
]


@pytest.mark.parametrize(("spec", "key"), OLD_KEYS, ids=["one-sample-seeded", "n-call", "logprob"])
def test_rating_keys_are_those_of_the_old_code(spec, key):
    judge = ScriptedTestJudge({"default": "4"})
    asyncio.run(Runner(judge, Store(":memory:"), spec, template=TEMPLATE).run([ITEM]))
    assert [c.key for c in judge.calls] == [key]


@pytest.mark.parametrize(("spec", "key"), OLD_KEYS, ids=["one-sample-seeded", "n-call", "logprob"])
def test_a_store_written_by_the_old_code_resumes_with_no_call(tmp_path, spec, key):
    path = tmp_path / "old.sqlite"
    answer = {"choices": [{"text": "4", "tokens": [["4", 0.0, {"4": 0.0}]], "finish_reason": "stop"}] * spec.samples
              if spec.score != "logprob" else [{"text": "4", "tokens": [["4", 0.0, {"4": 0.0}]], "finish_reason": "score"}],
              "prompt_tokens": 7, "completion_tokens": 1}
    with Store(path) as store:  # as the old code left it after a kill: the call answered, no judgment yet
        store.put_call(key, {"written": "by judgelab before the CachedJudge"}, answer)
    judge = ScriptedTestJudge({"default": "2"})
    with Store(path) as store:
        stats = asyncio.run(Runner(judge, store, spec, template=TEMPLATE).run([ITEM]))
        scores = set(store.ratings()["score"])
    assert judge.calls == [] and stats.calls_made == 0 and stats.cache_hits == 1 and scores == {4.0}


def test_perturbation_key_is_that_of_the_old_code():
    judge = ScriptedTestJudge({"default": "x"})
    cached = CachedJudge(judge, Store(":memory:"))
    request = JudgeRequest(messages=(("user", "Revise this sentence: The cat sat on the mat."),),
                           sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=64, seed=0))
    _, key = asyncio.run(cached.complete(request, purpose=PURPOSE))
    assert key == judge.calls[0].key == "f2d680233c183d9db33bfc58107e908a9b540f69d61f70f1ccbe8fc4c708bfae"


def test_a_second_run_of_llm_perturbations_makes_no_call(tmp_path):
    jobs = [("fictional-entities", "minor", "sentence", "Anna walked to Paris in May."),
            ("grammatical-errors", "minor", "sentence", "The cat sat on the mat today.")]
    first = ScriptedTestJudge(lambda prompt: "Revised sentence: Zorb walked to Quux in May." if "Anna" in prompt
                              else "The cats sits on the mat today.")
    with Store(tmp_path / "s.sqlite") as store:
        out1 = perturb_with_llm(first, store, jobs)
    assert len(first.calls) == 2 and all(p.ok for p in out1)
    second = ScriptedTestJudge({"default": "something else entirely"})
    with Store(tmp_path / "s.sqlite") as store:
        out2 = perturb_with_llm(second, store, jobs)
    assert second.calls == [] and out2 == out1


def test_new_answers_are_journaled_at_once_and_written_with_the_group(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    cached = CachedJudge(ScriptedTestJudge({"default": "4"}), store)
    cached.writer.FLUSH_SECONDS = 3600  # only an explicit flush (or a full group) writes
    request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
    _, key = asyncio.run(cached.complete(request, slot=0))
    assert store.n_calls() == 0 and key in (tmp_path / "s.sqlite.journal").read_text()  # journaled, not yet written
    again, same = asyncio.run(cached.complete(request, slot=0))  # answered from the group waiting to be written
    assert same == key and again.choices[0].text == "4" and cached.calls_made == 1 and cached.cache_hits == 1
    _, key2 = asyncio.run(cached.complete(request, slot=1))
    cached.flush()
    assert store.call_keys() == {key, key2}
    store.close()


def test_the_journal_holds_only_answers_not_yet_committed(tmp_path):
    """A long run's journal does not grow with the run: it is emptied at each group commit that
    leaves nothing journaled unwritten, and what it holds is still replayed after a kill."""
    journal = tmp_path / "s.sqlite.journal"
    store = Store(tmp_path / "s.sqlite")
    cached = CachedJudge(ScriptedTestJudge({"default": "4"}), store)
    cached.writer.FLUSH_SECONDS = 3600
    request = JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())
    keys = [asyncio.run(cached.complete(request, slot=s))[1] for s in range(3)]
    assert len(journal.read_text().splitlines()) == 3
    store.put_call("other", {"q": 1}, {"choices": [{"text": "1"}]})  # a commit of other calls empties nothing
    assert len(journal.read_text().splitlines()) == 3
    cached.flush()
    assert journal.read_text() == "" and store.call_keys() >= set(keys)
    _, last = asyncio.run(cached.complete(request, slot=9))  # journaled after the truncation, at its start
    assert [line.startswith('{"key":"' + last) for line in journal.read_text().splitlines()] == [True]
    store._journal.close()  # a kill before the group commit: the line is replayed by the next opening
    store._journal = None
    store._db.close()
    store._unlock()
    with Store(tmp_path / "s.sqlite") as again:
        assert last in again.call_keys() and not journal.exists()


def test_too_many_answers_are_an_error():
    from judgelab.errors import JudgelabError

    class TooMany(ScriptedTestJudge):
        async def _complete(self, request):
            response = await super()._complete(request)
            response.choices = response.choices * 2
            return response

    cached = CachedJudge(TooMany({"default": "4"}), Store(":memory:"))
    with pytest.raises(JudgelabError, match="2 answers for n=1"):
        asyncio.run(cached.complete(JudgeRequest(messages=(("user", "x"),), sampling=Sampling())))


def test_an_answer_is_in_the_journal_when_the_process_is_killed_right_after(tmp_path):
    """The journal's guarantee: a line is handed to the operating system in one unbuffered write, so a
    ``kill -9`` right after the answer (no flush, no close) loses nothing; the next opening replays it."""
    import io
    import subprocess
    import sys

    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.journal_call("k" * 64, {"q": "é"}, {"choices": [{"text": "4"}]})
        assert isinstance(store._journal, io.RawIOBase)  # no Python buffer between the line and the OS
    child = ("import os, signal, sys; from judgelab.store import Store; s = Store(sys.argv[1]); "
             "s.journal_call('j' * 64, {'q': 'ü'}, {'choices': [{'text': '5'}]}); os.kill(os.getpid(), signal.SIGKILL)")
    proc = subprocess.run([sys.executable, "-c", child, str(path)], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    with Store(path) as store:
        assert store.get_call("j" * 64) == {"choices": [{"text": "5"}]} and store.get_call("k" * 64) is not None


def test_a_group_of_judgments_is_one_transaction(tmp_path):
    """Judgments arriving together are written in one group commit of up to 512 records (a judgment,
    its call and its item are three), not one every 64: fewer commits, each sharing the index pages."""
    from judgelab.store import GroupWriter, Judgment

    store = Store(tmp_path / "s.sqlite")
    writer = GroupWriter(store)
    writer.FLUSH_SECONDS = 3600
    commits = []
    put = store.put
    store.put = lambda **kw: (commits.append(len(kw["calls"]) + len(kw["judgments"])), put(**kw))[1]
    for i in range(100):
        writer.add(calls=[(f"{i:064d}", {"q": i}, {"choices": [{"text": "4"}]})],
                   judgments=[Judgment(item_id=str(i), system="s", group=None, criterion="c", rater="r", sample=0,
                                       score=4.0, score_parsed=4.0, score_logprob=None, logprob_outside=None,
                                       status="ok", raw="4", attempts=[], meta={}, prompt_key="")])
    writer.flush()
    assert commits == [200] and store.n_calls() == 100 and len(store.ratings()) == 100
    store.close()


def test_a_writing_store_keeps_its_index_pages_in_memory(tmp_path):
    """A million calls make a ledger index of about 75 MB with random keys: a writing connection keeps a
    64 MiB page cache and checkpoints its WAL every 10,000 pages, so the pace does not drift."""
    with Store(tmp_path / "s.sqlite") as store:
        assert store._db.execute("PRAGMA cache_size").fetchone()[0] == -65536
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 10000


def test_the_stored_answer_is_the_answer_as_json(tmp_path):
    """The answer's text in the ledger is ``json.dumps(answer, ensure_ascii=False)``, as before."""
    import json

    store = Store(tmp_path / "s.sqlite")
    cached = CachedJudge(ScriptedTestJudge({"default": "Note: très bien — 4"}), store)
    response, key = asyncio.run(cached.complete(JudgeRequest(messages=(("user", "Rate it."),), sampling=Sampling())))
    cached.flush()
    assert store.responses_of([key])[key] == json.dumps(response.to_json(), ensure_ascii=False)
    store.close()


def test_the_ledger_is_looked_up_by_key_and_holds_no_set_of_keys():
    """A call answered in this run is known before and after its group commit, one written beside the wrapper
    (a batch executor's) at once, and a thousand calls leave the wrapper no larger: it keeps no key of its own."""
    import gc
    import sys

    store = Store(":memory:")
    judge = ScriptedTestJudge({"default": "4"})
    cached = CachedJudge(judge, store)
    sampling = Sampling(temperature=0.0)  # one run's settings: one key frame

    def ask(k):
        request = JudgeRequest(messages=(("user", f"Rate story {k}."),), sampling=sampling)
        return asyncio.run(cached.complete(request))[1]

    key = ask(0)
    assert cached.is_cached(key) and cached.writer.waiting_call(key) is not None  # buffered, not yet written
    cached.flush()
    assert cached.is_cached(key) and cached.writer.waiting_call(key) is None and store.has_call(key)
    store.put_call("written-beside", {"by": "a batch executor"}, {"choices": [{"text": "3"}]})
    assert cached.is_cached("written-beside") and not cached.is_cached("never-asked")
    gc.collect()
    before = {name: sys.getsizeof(value) for name, value in vars(cached).items()}
    for k in range(1, 1001):
        ask(k)
    cached.flush()
    gc.collect()
    grown = {n: sys.getsizeof(v) for n, v in vars(cached).items() if sys.getsizeof(v) > before.get(n, 0) + 512}
    assert not grown and len(judge.calls) == 1001, grown
