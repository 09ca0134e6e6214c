"""Preference judging: a judge (or a person) sees an instruction and two responses and says which is better.

The verdicts table (:mod:`judgelab.preference.verdicts`) is the one owner of what a verdict is; the
ecosystem's judge outputs (AlpacaEval, FastChat's MT-Bench, Arena-Hard, LLMBar, inspect_ai) are read
into it by :mod:`judgelab.preference.formats`; analyses of verdicts (agreement with human preferences,
win rates, leaderboards, position and length preference) are library functions with typed results.
"""
