"""The choices of judgelab's options, as ``Literal`` types: the spec validates them and the command
line offers them (typer reads these types), so each list of choices is written once. Standard
library only: the command line imports this module at start-up."""
from __future__ import annotations

from typing import Literal

__all__ = ["ScoreMode", "Score", "QueryMode", "Style", "Transport", "TokenParam", "RatingsFormat", "TableFormat", "Execution", "PairOrders"]

#: How a rating is read: from the answer's text, or as the expectation over the next-token distribution.
ScoreMode = Literal["parsed", "logprob"]
#: ``--score``: ``auto`` is the judge's default mode (its backend's declared ``default_score``).
Score = Literal["auto", "parsed", "logprob"]
#: ``--query-mode`` (Chiang & Lee 2023, appendix D.2.2).
QueryMode = Literal["independent", "conversation"]
#: ``--style`` of an OpenAI-compatible judge.
Style = Literal["chat", "completion"]
#: ``--transport`` of an OpenAI-compatible judge (``auto`` is aiohttp).
Transport = Literal["auto", "aiohttp", "httpx"]
#: ``--max-tokens-param`` (reasoning models need ``max_completion_tokens``).
TokenParam = Literal["auto", "max_tokens", "max_completion_tokens"]
#: ``rate --ratings-format``.
RatingsFormat = Literal["csv", "jsonl", "parquet"]
#: ``--format`` of the table commands.
TableFormat = Literal["table", "csv", "json"]
#: ``--execution``: how the calls the ledger lacks are answered (live calls, or a provider's batch API).
Execution = Literal["live", "batch"]
#: ``rate --orders`` with ``--pairs``: each pair in both orders, or only as listed.
PairOrders = Literal["both", "given"]
