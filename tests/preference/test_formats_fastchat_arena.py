"""FastChat's MT-Bench judgments and Arena-Hard's judgment files read into verdicts (fixtures written here, in
their layouts)."""
import json

import pytest

from judgelab.errors import JudgelabError
from judgelab.preference.formats import read_verdicts
from judgelab.preference.formats.fastchat import single_ratings


def _jsonl(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


PAIR = [{"question_id": 81, "model_1": "alpha", "model_2": "beta", "g1_winner": "model_1", "g2_winner": "model_2",
         "judge": ["gpt-4", "pair-v2"], "g1_judgment": "[[A]]", "g2_judgment": "[[A]]", "turn": 1, "tstamp": 1.0},
        {"question_id": 81, "model_1": "alpha", "model_2": "beta", "g1_winner": "tie", "g2_winner": "error",
         "judge": ["gpt-4", "pair-v2-multi-turn"], "g1_judgment": "[[C]]", "g2_judgment": "??", "turn": 2,
         "tstamp": 1.0}]


def test_fastchat_pair_both_games_mapped(tmp_path):
    t = read_verdicts(_jsonl(tmp_path / "gpt-4_pair.jsonl", PAIR))
    got = sorted(zip(t["rater"], t["criterion"], t["first"], t["second"], t["choice"].fillna("-"), t["status"]))
    assert got == [("gpt-4@pair-v2", "turn-1", "alpha", "beta", "first", "ok"),
                   ("gpt-4@pair-v2", "turn-1", "beta", "alpha", "first", "ok"),  # game 2: model_2 shown first won
                   ("gpt-4@pair-v2-multi-turn", "turn-2", "alpha", "beta", "tie", "ok"),
                   ("gpt-4@pair-v2-multi-turn", "turn-2", "beta", "alpha", "-", "error")]
    assert set(t["item_id"]) == {"81"}


def test_fastchat_unknown_winner_is_one_error(tmp_path):
    bad = [{**PAIR[0], "g2_winner": "model_3"}]
    with pytest.raises(JudgelabError, match="line 1 has g2_winner 'model_3'"):
        read_verdicts(_jsonl(tmp_path / "x_pair.jsonl", bad))


def test_fastchat_single_is_ratings_not_verdicts(tmp_path):
    lines = [{"question_id": 81, "model": "alpha", "judge": ["gpt-4", "single-v1"], "score": 8, "turn": 1,
              "judgment": "Rating: [[8]]"},
             {"question_id": 81, "model": "beta", "judge": ["gpt-4", "single-v1"], "score": -1, "turn": 1,
              "judgment": "no rating"}]
    path = _jsonl(tmp_path / "gpt-4_single.jsonl", lines)
    with pytest.raises(JudgelabError, match="ratings, not pairwise verdicts.*as a ratings file"):
        read_verdicts(path)
    r = single_ratings(path).set_index("system")
    assert r.loc["alpha", "score"] == 8 and r.loc["alpha", "rater"] == "gpt-4@single-v1"
    assert r.loc["beta", "status"] == "no_rating" and r.loc["beta", "score"] != r.loc["beta", "score"]


ARENA = [{"uid": "q1", "category": "hard_prompt", "judge": "gpt-4.1", "model": "m", "baseline": "base",
          "games": [{"score": "A>>B", "judgment": {}, "prompt": []}, {"score": "B>A", "judgment": {}, "prompt": []}]},
         {"uid": "q2", "category": "hard_prompt", "judge": "gpt-4.1", "model": "m", "baseline": "base",
          "games": [{"score": "A=B"}, None]}]


def test_arena_hard_games_with_their_order(tmp_path):
    folder = tmp_path / "model_judgment" / "gpt-4.1"
    folder.mkdir(parents=True)
    t = read_verdicts(_jsonl(folder / "m.jsonl", ARENA))
    got = sorted(zip(t["item_id"], t["first"], t["second"], t["choice"].fillna("-"), t["status"], t["raw"].fillna("-")))
    assert got == [("q1", "base", "m", "first", "ok", "A>>B"),   # game 1: the baseline is A
                   ("q1", "m", "base", "second", "ok", "B>A"),   # game 2: the model is A; B (baseline) better
                   ("q2", "base", "m", "tie", "ok", "A=B"),
                   ("q2", "m", "base", "-", "missing", "-")]
    assert set(t["rater"]) == {"gpt-4.1"}


def test_arena_hard_unknown_score_is_one_error(tmp_path):
    bad = [{**ARENA[0], "games": [{"score": "A>>>B"}, {"score": "A>B"}]}]
    with pytest.raises(JudgelabError, match="game 1 has score 'A>>>B'"):
        read_verdicts(_jsonl(tmp_path / "m.jsonl", bad))


def test_arena_hard_without_baseline_says_what_to_add(tmp_path):
    old = [{"question_id": "q1", "model": "m", "games": [{"score": "A>B"}, {"score": "B>A"}]}]
    with pytest.raises(JudgelabError, match='line 1 has no baseline.*add a field "baseline"'):
        read_verdicts(_jsonl(tmp_path / "m.jsonl", old))
