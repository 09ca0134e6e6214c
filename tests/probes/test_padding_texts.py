"""The padding perturbations: only padding is added, the original survives byte for byte, seeded by label."""
from __future__ import annotations

import math
import random

import pytest

from judgelab.datasets.items import Item
from judgelab.errors import JudgelabError
from judgelab.perturb.padding import (
    FILLERS,
    Padding,
    add_filler,
    padding_rng,
    parse_padding,
    repeat_sentences,
    strip_padding,
    word_count,
)
from judgelab.perturb.rules import split_sentences
from judgelab.probes.padding_study import build_padded

TEXT = ("The council met on Monday.  It voted to close the bridge!\nRepairs start in May, said Dr. Lee. "
        "Traffic will use the ferry meanwhile.")


@pytest.mark.parametrize("share", [0.25, 0.5, 1.0])
def test_filler_appends_only_filler_sentences(share):
    p = add_filler(TEXT, share, random.Random(1))
    assert p.changed and p.text.startswith(TEXT) and strip_padding(p) == TEXT
    assert p.added_words >= math.ceil(share * word_count(TEXT))
    assert word_count(p.text) == word_count(TEXT) + p.added_words
    (start, end), = p.spans
    added = p.text[start:end]
    assert added.startswith(" ") and set(split_sentences(added)) <= set(FILLERS)
    # whole sentences only: one fewer would not reach the target
    last = split_sentences(added)[-1]
    assert p.added_words - word_count(last) < math.ceil(share * word_count(TEXT))


@pytest.mark.parametrize("share", [0.25, 0.5, 2.0])
def test_repeat_inserts_copies_of_the_texts_own_sentences(share):
    p = repeat_sentences(TEXT, share, random.Random(2))
    assert p.changed and strip_padding(p) == TEXT  # byte-identical apart from the inserted spans
    own = set(split_sentences(TEXT))
    for start, end in p.spans:
        piece = p.text[start:end]
        assert piece[0] == " " and piece[1:] in own
        assert p.text[:start].endswith(piece[1:])  # each copy follows its sentence
    assert p.added_words >= math.ceil(share * word_count(TEXT))
    assert word_count(p.text) == word_count(TEXT) + p.added_words


def test_short_text_is_padded_by_at_least_the_target_and_the_share_recorded():
    p = repeat_sentences("Sure, I like that.", 0.25, random.Random(0))
    assert p.text == "Sure, I like that. Sure, I like that." and p.added_share == 1.0


def test_empty_text_is_left_out_with_a_reason():
    for p in (repeat_sentences("   ", 0.5, random.Random(0)), add_filler("", 0.5, random.Random(0))):
        assert not p.changed and p.warning


def test_parse_padding():
    assert parse_padding("repeat:50") == Padding("repeat", 0.5)
    assert parse_padding("filler:25").name == "filler-25"
    for bad in ("filler", "glitter:20", "filler:x", "filler:0", "filler:-5", "filler:nan", "repeat:900"):
        with pytest.raises(JudgelabError):
            parse_padding(bad)


def _items():
    return [Item(f"i{k}", f"Sentence one of item {k}. Sentence two is a little longer here. Three.", s, f"g{k}")
            for k in range(6) for s in ("sysA", "sysB")]


def test_same_seed_same_bytes_and_independent_of_order_and_count():
    paddings = [parse_padding(p) for p in ("repeat:50", "filler:50")]
    a, design_a = build_padded(_items(), paddings, seed=7)
    b, _ = build_padded(_items(), paddings, seed=7)
    assert [(i.item_id, i.system, i.text.encode()) for i in a] == [(i.item_id, i.system, i.text.encode()) for i in b]
    c, _ = build_padded(list(reversed(_items()))[:5], paddings, seed=7)
    by_label = {(i.item_id, i.system): i.text for i in a}
    assert all(by_label[(i.item_id, i.system)] == i.text for i in c)
    d, _ = build_padded(_items(), paddings, seed=8)
    assert any(x.text != y.text for x, y in zip(a, d))
    assert list(design_a["padded_system"][:2]) == ["sysA+pad:repeat-50", "sysB+pad:repeat-50"]
    assert padding_rng(7, "filler-50", "sysA", "i1").random() == padding_rng(7, "filler-50", "sysA", "i1").random()


def test_copies_keep_the_item_labels_and_fields():
    items = [Item("x", "A b c. D e f.", "s", "grp", "ctx", {"history": "h"})]
    texts, design = build_padded(items, [parse_padding("filler:50")])
    copy = texts[1]
    assert (copy.item_id, copy.system, copy.group, copy.context, copy.extra) == ("x", "s+pad:filler-50", "grp", "ctx",
                                                                                 {"history": "h"})
    assert bool(design["changed"].iloc[0])


def test_refused_designs():
    with pytest.raises(JudgelabError, match="twice"):
        build_padded(_items(), [parse_padding("filler:50"), parse_padding("filler:50.0")])
    with pytest.raises(JudgelabError, match="marks padded copies"):
        build_padded([Item("a", "x y.", "s+pad:filler-50")], [parse_padding("filler:50")])


def test_lower_case_tokenised_text_repeats_its_own_sentences():
    text = "i do n't know . that is interesting , do you like it ? i do !"
    p = repeat_sentences(text, 0.25, random.Random(4))
    assert strip_padding(p) == text and p.added_words < word_count(text)  # one sentence, not the whole reply
    pieces = {"i do n't know .", "that is interesting , do you like it ?", "i do !"}
    assert all(p.text[a + 1:b] in pieces for a, b in p.spans)


@pytest.mark.parametrize("name", ["judgelab.perturb.padding", "judgelab.probes.padding", "judgelab.probes.padding_study"])
def test_docstring_examples_run(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
