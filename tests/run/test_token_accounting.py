"""export --meta counts each call's tokens once: the columns sum to the calls table's total."""
import asyncio
import json
import sqlite3

from judgelab.datasets.items import Item
from judgelab.models.backends.scripted import ScriptedTestJudge
from judgelab.prompts import Criterion, Template
from judgelab.run import Runner, RunSpec
from judgelab.store import Store

TEMPLATE = Template(name="tokens", instruction="{{ text }}", criteria={
    "both": Criterion(question="Rate fluency and coherence, 1-5."),
    "plain": Criterion(question="Rate it, 1-5."),
})
TEMPLATE.criteria["both"].metrics.extend(["fluency", "coherence"])
ITEMS = [Item("a", "A fine story.", system="s1"), Item("b", "Bad bad story.", system="s2")]
SCRIPT = {"rules": [{"contains": "Bad bad story.\nRate it", "replies": ["As an AI language model, I cannot rate this.",
                                                                        "I would rate it a 2."]}],
          "default": "Fluency: 4. Coherence: 3. I would rate it a 4."}


def _calls_totals(path):
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT response FROM calls").fetchall()
    finally:
        db.close()
    return (sum(json.loads(r[0])["prompt_tokens"] for r in rows), sum(json.loads(r[0])["completion_tokens"] for r in rows))


def test_meta_tokens_sum_to_the_calls_table(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        for max_n, samples in ((16, 3), (1, 2)):  # an n request shared by 3 samples; single calls with refusals
            judge = ScriptedTestJudge(SCRIPT, max_n=max_n, model_id=f"double-{max_n}")
            stats = asyncio.run(Runner(judge, store, RunSpec(samples=samples), template=TEMPLATE).run(ITEMS))
            assert stats.recorded == len(ITEMS) * 3 * samples
        ratings = store.ratings(with_meta=True)
    assert any(len(json.loads(a)) > 1 for a in ratings["attempts"])  # refusals were regenerated
    prompt, completion = _calls_totals(path)
    assert prompt > 0 and completion > 0
    assert int(ratings["prompt_tokens"].sum()) == prompt and int(ratings["completion_tokens"].sum()) == completion
    db = sqlite3.connect(path)
    naive = db.execute("SELECT SUM(prompt_tokens) FROM judgments").fetchone()[0]  # each call's tokens on every row
    db.close()
    assert naive > prompt  # what export --meta summed before
    repeated = ratings.groupby("call_key")["prompt_tokens"].apply(lambda s: int((s > 0).sum()))
    assert (repeated <= 1).all()  # every call's tokens on at most one row
    one_rater = Store(path, read_only=True).ratings(with_meta=True, rater=ratings["rater"].iloc[0])
    assert one_rater["prompt_tokens"].sum() > 0 and list(one_rater.columns[-6:]) == [
        "attempts", "call_key", "prompt_tokens", "completion_tokens", "latency_s", "meta"]
