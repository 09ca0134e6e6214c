"""The typed rater identity (``judgelab.raters``): every label judgelab writes round-trips, a rater is human by
its kind only (a ``humanlike`` judge is a judge in ``rate``, ``agree`` and ``audit`` alike), and no module but
``raters.py`` reads a label by string (``label_scan``)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import label_scan
from judgelab import raters
from judgelab.raters import Rater, parse_label

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _code_labels() -> list[str]:
    """Labels as judgelab's own code writes them (the spec, the store, the recipes, the readers)."""
    from judgelab.recipes.tables import annotator_matrix
    from judgelab.spec import RunSpec
    from judgelab.store import Store
    from judgelab.testing.bias_simulator import simulate_study

    out = []
    for variant in (None, "short"):
        for constrain in (False, True):
            spec = RunSpec(judge="openai:m", template="story", variant=variant,
                           constrain=constrain)
            out.append(spec.preferred_label("gemma-2b", "story"))
    for label in ("{model}@chiang-lee-story@T=0.7", "m@nle-x#1a2b3c|pairwise"):
        spec = RunSpec(judge="openai:m", template="t", label=label, constrain=True)
        out += [spec.preferred_label("m", "t"), label]
    store = Store(":memory:")
    first = store.claim_rater({"samples": 1}, "m@t")
    taken = store.claim_rater({"samples": 2}, "m@t")
    dynamic = raters.with_variant(taken, "dynamic")
    out += [first, taken, dynamic, store.claim_rater({"samples": 3}, dynamic),
            raters.with_stage(taken, "pairwise"), raters.with_stage(first, "pairwise-test-vanilla"),
            raters.with_stage(raters.judge("{model}", "nle-hanna").label, "pairwise")]
    out += sorted(simulate_study(10, seed=1).ratings["rater"].unique())
    df = pd.DataFrame({"item_id": ["a", "a"], "rater": [taken, "x#3"], "sample": [1, 0], "score": [1.0, 2.0],
                       "status": "ok", "system": "s", "criterion": "c"})
    out += [str(c) for c in annotator_matrix(df).columns]
    out += ["human:mean", "human:ann", "jury:mean", "jury:weighted", "humanlike", "human-judge", "juryman"]
    return out


WEIRD = ["", "@", "#", "|", "+", "human:", "jury:", "a++b", "x|y@z", "m@t#0", "m@t#012", "m@t#123456",
         "m@t#abc123#7", "m@t+constrained+constrained", "m@t#abc123+dynamic+constrained", "human:x#abc123",
         "m@t+constrained|pairwise+constrained#def456", "human:a|b", "a@b@c+d"]


def _hanna_labels() -> list[str]:
    path = DATA / "hanna" / "hanna_metric_scores_llm.csv"
    if not path.exists():
        return []
    from judgelab.recipes.hanna import load_scores, to_ratings

    return sorted(to_ratings(load_scores(path))["rater"].unique())


@pytest.mark.parametrize("label", _code_labels() + WEIRD)
def test_every_label_round_trips(label):
    assert parse_label(label).label == label


def test_hanna_labels_round_trip():
    labels = _hanna_labels()
    if not labels:
        pytest.skip("../shared/data/hanna not present")
    assert len(labels) > 10
    for label in labels:
        rater = parse_label(label)
        assert rater.label == label
        assert rater.kind in ("human", "judge")
        assert rater.kind == "human" or rater.template.startswith("eval-prompt-")


def test_fields_of_each_convention():
    r = parse_label("gemma@story+short+constrained#1a2b3c")
    assert (r.kind, r.name, r.template, r.variants, r.constrained, r.digest, r.sample) == \
        ("judge", "gemma", "story", ("short",), True, "1a2b3c", None)
    assert r.base.label == "gemma@story+short+constrained" == r.undigested.label
    assert parse_label("human:ann") == Rater("human", "ann")
    assert parse_label("human:mean") == Rater("consensus", "mean")
    assert parse_label("jury:weighted") == Rater("jury", "weighted")
    pairwise = parse_label("m@nle-x#1a2b3c|pairwise-test-vanilla")
    assert (pairwise.stage, pairwise.parent.digest, pairwise.model, pairwise.digest) == \
        ("pairwise-test-vanilla", "1a2b3c", "m", None)
    dynamic = parse_label("m@nle-x#1a2b3c+dynamic")
    assert (dynamic.variants, dynamic.parent.label, dynamic.model) == (("dynamic",), "m@nle-x#1a2b3c", "m")
    sample = parse_label("m@t#1a2b3c#2")
    assert (sample.digest, sample.sample, sample.base.label) == ("1a2b3c", 2, "m@t")
    assert parse_label("{model}@chiang-lee-story@T=0.7").template == "chiang-lee-story@T=0.7"
    assert parse_label("x#12").sample == 12 and parse_label("m@t#123456").digest == "123456"


def test_builders_render_todays_labels():
    assert raters.judge("m", "t", "v", True).label == "m@t+v+constrained"
    assert raters.human("ann").label == "human:ann" and raters.human("mean").kind == "consensus"
    assert raters.jury("mean").label == "jury:mean"
    assert raters.with_variant("m@t#1a2b3c", "constrained") == "m@t#1a2b3c+constrained"
    assert raters.with_variant("m@t", "dynamic") == "m@t+dynamic"
    assert raters.with_stage("m@t#1a2b3c", "pairwise") == "m@t#1a2b3c|pairwise"
    assert raters.with_digest("m@t", "1a2b3c") == "m@t#1a2b3c"
    assert raters.with_digest("x#1a2b3c", "d4e5f6") == "x#1a2b3c#d4e5f6"
    assert raters.with_sample("m@t", 0) == "m@t#0" and raters.with_sample("x#12", 0) == "x#12#0"
    assert raters.person_label("ann") == "human:ann" == raters.person_label("human:ann")
    assert raters.claims("m@t#1a2b3c", "m@t") and not raters.claims("m@tx", "m@t")


def test_model_of_is_the_text_before_the_first_at():
    for label in _code_labels() + WEIRD:
        r = parse_label(label)
        old = label.split("@", 1)[0] if r.kind == "judge" and "@" in label else None
        assert raters.model_of(label) == old, label
        if old is not None:
            assert raters.template_part(label) == label.split("@", 1)[1]


# -- a rater is human by its kind only -----------------------------------------------------------------

@pytest.mark.parametrize("label", ["humanlike", "human-judge", "human"])
def test_a_judge_named_like_a_human_is_a_judge(label):
    r = parse_label(label)
    assert r.kind == "judge" and raters.is_judge(label) and not raters.is_human(label)
    assert raters.is_human("human:" + label) and not raters.is_judge("human:" + label)
    assert raters.is_jury("jury:mean") and not raters.is_judge("jury:mean")


def _study(judge: str) -> pd.DataFrame:
    from judgelab.testing.bias_simulator import simulate_study

    df = simulate_study(60, seed=3).ratings
    return df.assign(rater=df["rater"].replace({"sim-judge": judge}))


def test_humanlike_judge_counts_in_the_failure_check():
    from judgelab.errors import TooManyFailures
    from judgelab.rate import check_failure_rate

    df = _study("humanlike")
    df.loc[df["rater"] == "humanlike", "status"] = "unparsed"
    with pytest.raises(TooManyFailures, match="humanlike"):
        check_failure_rate(df, 0.5)
    check_failure_rate(df[df["rater"] != "humanlike"], 0.5)  # the humans are not judged


def test_humanlike_judge_counts_in_the_recipes_failure_check(tmp_path):
    from judgelab.errors import TooManyFailures
    from judgelab.recipes.common import check_judges
    from judgelab.store import Judgment, Store

    with Store(tmp_path / "store.sqlite") as store:
        store.put(judgments=[Judgment(f"i{k}", "s", None, "c", rater, 0, None if rater == "humanlike" else 3.0,
                                      None, None, None, "unparsed" if rater == "humanlike" else "ok", "?")
                             for k in range(4) for rater in ("humanlike", "human:ann")])
    lines: list[str] = []
    with pytest.raises(TooManyFailures, match="4 of 4"):
        check_judges(tmp_path, lines.append, 0.5)
    assert lines and not any("human:ann" in line for line in lines)


def test_humanlike_judge_is_a_judge_in_agree_and_audit():
    from judgelab.agree import judge_vs_human
    from judgelab.audit import audit

    found = {}
    for judge in ("sim-judge", "humanlike"):
        df = _study(judge)
        table = judge_vs_human(df, ("kendall",), ("overall",))
        assert set(table["rater"]) == {judge}
        effects = [e for e in audit(df, n_resamples=49).effects if e.rater == judge]
        assert effects and all("other humans" not in e.line for e in effects)
        found[judge] = (table["r"].tolist(), [(e.bias, e.estimate, e.ci_low, e.ci_high) for e in effects])
    assert found["sim-judge"] == found["humanlike"]  # the same numbers: a judge either way


# -- nobody else reads labels ----------------------------------------------------------------------------

def test_no_module_but_raters_reads_a_label():
    found = label_scan.scan()
    assert not found, "rater labels read outside judgelab/raters.py (use judgelab.raters):\n" + "\n".join(found)


@pytest.mark.parametrize("code", [
    'judged = ratings[~ratings["rater"].astype(str).str.startswith("human")]',
    'ok = [r for r in raters if not r.startswith(HUMAN_PREFIX)]',
    'model = label.split("@", 1)[0]',
    'base = re.sub(r"#[0-9a-f]{6}$", "", label)',
    'if "+constrained" in rater: pass',
    'stage = label.rpartition("|")[2]',
])
def test_the_scan_catches_a_reintroduced_label_read(code):
    assert label_scan.label_reads(code, "x.py") == [f"x.py:1: {code}"]


def test_the_scan_catches_the_old_failure_check_in_rate():
    source = (label_scan.SRC / "rate_outputs.py").read_text(encoding="utf-8")  # rate's failure check lives there
    new = 'judged = ratings[~human_mask(ratings["rater"])]'
    assert new in source and not label_scan.label_reads(source, "rate_outputs.py")
    old = source.replace(new, 'judged = ratings[~ratings["rater"].astype(str).str.startswith("human")]')
    assert [f.split(":")[0] for f in label_scan.label_reads(old, "rate_outputs.py")] == ["rate_outputs.py"]


def test_the_scan_leaves_other_text_alone():
    code = ('notes = [n for n in notes if not n.startswith("No human ratings")]\n'
            'words = re.sub(r"\\s+", " ", text)\nparts = path.split("/")\n')
    assert label_scan.label_reads(code, "x.py") == []


@pytest.mark.parametrize("name", ["judgelab.raters", "judgelab.table", "judgelab.stats.paired_shift", "judgelab.store.runs"])
def test_doctests(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_constrained_pairs_are_the_ones_the_label_rule_gave_before():
    """``audit --compare``'s default pairs: the rule as it was written before (string operations on labels,
    here as the independent reference) on random sets of labels, nested NLE stages included."""
    import random
    import re

    from judgelab.stats.paired_shift import constrained_pairs

    digest = re.compile(r"#[0-9a-f]{6}$")

    def before(labels):
        present, out = set(labels), []
        for rater in sorted(present):
            if "+constrained" in rater:
                free = rater.replace("+constrained", "", 1)
                if free in present:
                    out.append((free, rater))
                    continue
                twins = [r for r in present if "+constrained" not in r and digest.sub("", r) == digest.sub("", free)]
                if len(twins) == 1:
                    out.append((twins[0], rater))
        return out

    labels = ["m@t", "m@t+constrained", "m@t#1a2b3c", "m@t+constrained#abcdef", "m@t+v", "m@t+v+constrained", "x",
              "x+constrained", "human:a", "jury:mean", "m@t+constrained+dynamic", "m@t+dynamic",
              "m@t+constrained+dynamic+constrained", "m@t|pairwise", "m@t|pairwise+constrained", "n@t#123456",
              "n@t+constrained", "human:x#abc123", "human:x+constrained"]
    rng = random.Random(0)
    samples = [rng.sample(labels, rng.randint(1, 9)) for _ in range(2000)]
    assert sum(bool(before(s)) for s in samples) > 500  # the sets have pairs to find
    for s in samples:
        assert constrained_pairs(s) == before(s), s
