"""Rating extraction on realistic answers (Chiang & Lee 2023, appendix D.2.1, tables 7-10)."""
import math

import pytest

from judgelab import parse_rating
from judgelab.logprob_score import expected_score
from judgelab.parse import parse_judgment

# ChatGPT's answers printed in tables 7-10 of the paper, with the rating the authors read.
PAPER_ANSWERS = [
    ("I would rate the grammatical correctness of the text of the story fragment as a 4. There are a few minor "
     "errors and awkward phrasings, but overall the text is well-constructed and easy to understand.", 4),
    ("I would rate the fit of the sentences in the story fragment as a 5. The sentences flow well together, "
     "building a clear and cohesive narrative.", 5),
    ("I would rate the story fragment as a 2 in terms of enjoyment. The fragment is written in a somber and "
     "introspective tone, and it deals with themes of isolation and loneliness.", 2),
    ("I would rate the grammatical correctness of the story fragment as a 3. The text is generally understandable, "
     "but there are a few punctuation errors and awkward phrasing that make it somewhat difficult to follow.", 3),
    ("I would rate the relevance of the story fragment to the prompt as a 1. While the story fragment does mention "
     "someone being gone, it doesn't seem to be directly related to the idea of filling out a form.", 1),
    ("The text of the story fragment appears to be grammatically correct, with no major errors or awkward phrasing. "
     "On a scale of 1-5, with 1 being the lowest, I would rate the grammatical correctness of the text as a 5.", 5),
    ("The sentences in the story fragment fit together well, creating a clear and coherent image of the scene and "
     "the characters' actions and thoughts. On a scale of 1-5, with 1 being the lowest, I would rate how well the "
     "sentences fit together as a 4.", 4),
    ("Based on the structure, writing style and plot of the story fragment, I would rate it as 3 in terms of "
     "enjoyability. The fragment sets up an intriguing situation with the mysterious little black box.", 3),
    ("I would rate the story fragment as a 5 in relevance to the prompt \"The Little Black Box.\" The story fragment "
     "centers around a little black box.", 5),
    ("I would rate the grammatical correctness of the text as a 3. There are a few errors such as \"Many displays of "
     "various vice\" which should be \"Many displays of various vices\" and \"I so small flakes of snow\".", 3),
    ("I would rate the enjoyability of the story fragment as a 1. The fragment lacks a clear plot, purpose or "
     "character development.", 1),
]


@pytest.mark.parametrize("text,expected", PAPER_ANSWERS)
def test_paper_answers(text, expected):
    assert parse_rating(text) == expected


REALISTIC = [
    ("4", 4), ("4.5", 4.5), ("Score: 4/5", 4), ("**Rating:** 3 out of 5", 3), ("Rating: **2**", 2),
    ("I'd give it a 4 out of 5.", 4), ("On a scale of 1–5 (1 = lowest), I rate this a 2.", 2),
    ("On a scale from 1 to 5, with 5 being the highest, my rating is 4.", 4),
    ("I would rate it a four.", 4), ("My score: five", 5), ("## Score\n3", 3),
    ("Given the 2 typos in the first paragraph, I would rate it as a 4.", 4),
    ("I strongly agree (5) that the meaning of title 1 is preserved in title 2.", 5),
    ("The meaning of news title 1 is mostly preserved in news title 2. I rate it 4.", 4),
    ("Rating: 3.5/5 — decent but uneven.", 3.5), ("5/5", 5), ("  3  ", 3),
]


@pytest.mark.parametrize("text,expected", REALISTIC)
def test_realistic_answers(text, expected):
    assert parse_rating(text) == expected


@pytest.mark.parametrize("text,status", [
    ("I am an AI and I do not have the ability to experience enjoyment.", "refusal"),
    ("As an AI language model, I cannot rate this story.", "refusal"),
    ("I'm sorry, but this content violates the content policy.", "refusal"),
    ("", "empty"), ("   ", "empty"), (None, "empty"),
    ("The story is well written and engaging.", "no_rating"),
    ("I would rate it a 7.", "out_of_range"), ("Score: 0", "out_of_range"),
])
def test_no_rating(text, status):
    result = parse_judgment(text)
    assert result.score is None and result.status == status
    assert parse_rating(text) is None


def test_custom_scale():
    assert parse_rating("I give it 6 out of 7", scale=(1, 7)) == 6
    assert parse_rating("Rating: 9/10", scale=(1, 10)) == 9
    assert parse_rating("Rating: 9/10", scale=(1, 5)) is None


def test_expected_score_renormalises_and_reports_outside_mass():
    lp = {"1": math.log(0.1), " 2": math.log(0.1), "▁3": math.log(0.2), "The": math.log(0.6)}
    score, outside, probs = expected_score(lp, (1, 5))
    assert score == pytest.approx((1 * 0.1 + 2 * 0.1 + 3 * 0.2) / 0.4)
    assert outside == pytest.approx(0.6)
    assert sum(probs.values()) == pytest.approx(1.0)
    assert expected_score({"The": 0.0})[0] is None


# Answers of the embedded judge (Gemma 3 270M) that restate the scale with its anchors, recorded on the demo's
# texts: the first number is a scale point of the restated list, not a rating.
@pytest.mark.parametrize("text", [
    " 1-5 (1: very incoherent, 2: somewhat incoherent, 3: neutral, 4: mostly coherent)\n\nEvaluation Score",
    " 1-5; errors make most sentences hard to read. - 2: Poor; frequent errors. - 3: Fair; some errors. - 4: Good",
    " 1-5.\n\nSource Article:\n\nThe old lighthouse was switched off in 1994.",
    " 1-5 (1: Mostly unsupported or contradicting the article)\n\n1. 2. 3. 4. 5.\n\nSource Article:",
])
def test_a_restated_anchor_list_is_not_a_rating(text):
    result = parse_judgment(text)
    assert result.score is None and result.status in {"no_rating", "out_of_range"}


@pytest.mark.parametrize("text,expected", [
    ("Rating: 4\n\n(1: poor, 2: fair, 3: good, 4: very good, 5: excellent)", 4),
    ("4: mostly coherent", 4),
    ("Scale 1-5 (1: poor, 5: excellent). I would rate it a 3.", 3),
    ("On a scale of 1-5. My rating is 2.", 2),
    ("Coherence: 4, Fluency: 3", 4),
    ("1. The summary is short. Score: 3", 3),
])
def test_ratings_beside_anchor_lists_still_parse(text, expected):
    assert parse_rating(text) == expected


# Answers of the embedded judge's GGUF served by llama-cpp-python's OpenAI-compatible server: the chat template's
# tags stay in the text, and a model that goes on to write the next turn writes lists. A tag is a turn boundary and
# a list item's number is no rating.
@pytest.mark.parametrize("text,expected", [
    ("[INST]1. English is not my first language, so please bear with me.", None),
    ("Answer: [INST]1. English is not my first language, so please bear with me.", None),
    ("1. The story is coherent. 2. Fluency is fine.", None),
    ("1) The story is coherent.\n2) Fluency is fine.", None),
    ("- The story is coherent.\n- It reads well.", None),
    ("<start_of_turn>model\nRating: 4<end_of_turn>", 4),
    ("[/INST] 2", 2),
    ("<|im_start|>assistant\n5<|im_end|>", 5),
    ("<|start_header_id|>assistant<|end_header_id|>\n\n3<|eot_id|>", 3),
    ("<s>[INST] Rate the story. [/INST] 4 </s>", 4),
    ("[/INST]\n2. The story is hard to follow.", None),
    ("Rating: 3.", 3), ("3.", 3), ("3", 3), ("Rating: 3. The story is coherent.", 3),
    ("1. Coherence is good. Rating: 2. Fluency suffers.", 2),
    ("- Coherence: good\n- Rating: 4", 4),
    # recorded from that server (`rate --score parsed`, chiang-lee-story): a turn written for the user, a bracketed
    # list of the scale points; both read 1 before
    (" \nPlease rate this story fragment. \nPlease give the answer in English with a comma if necessary.\n[INST]1[/INST]",
     None),
    ("\n\n[1] [2] [3] [4] [5] [6] \n\n  [/INST] \n\n<b>The fox ran over the hill and found a red door. It opened it</b>",
     None),
    ("<|im_start|>user\nRate it 3 at most.<|im_end|>\n<|im_start|>assistant\n4<|im_end|>", 4),
    ("(1) (2) (3) (4) (5) I would rate it a 3.", 3),
])
def test_chat_template_tags_and_list_markers_are_not_ratings(text, expected):
    result = parse_judgment(text)
    assert result.score == expected, result
    assert (result.status == "ok") == (expected is not None)
    if expected is not None:  # the rating's position is its position in the answer
        assert text[result.start] == str(expected)


def test_a_parse_compiles_no_pattern_and_reads_the_same(monkeypatch):
    """A run parses every answer on one scale: the scale's restatement patterns are compiled once,
    so reading an answer calls none of ``re``'s compiling functions (a million answers paid 7 pattern
    look-ups each), and the answers read exactly as they did."""
    from judgelab import parse

    expected = [(text, parse_judgment(text, (1, 5))) for text, _ in PAPER_ANSWERS]
    expected.append(("Scale (1 lowest, 5 highest): 1: poor, 2: fair. **Score: 4/5**",
                     parse_judgment("Scale (1 lowest, 5 highest): 1: poor, 2: fair. **Score: 4/5**", (1, 5))))

    class NoCompiling:
        def __getattr__(self, name):
            raise AssertionError(f"re.{name} called while parsing")

    monkeypatch.setattr(parse, "re", NoCompiling())
    assert [(text, parse_judgment(text, (1, 5))) for text, _ in expected] == expected
    assert expected[-1][1].score == 4.0
