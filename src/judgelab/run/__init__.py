"""The run core: plan the calls of a spec, execute them through the call ledger, record judgments.

Stages, one module each: :mod:`~judgelab.run.plan` (every call, built exactly as it will be
sent; no call, no write), :mod:`~judgelab.run.execute` (scheduling, ``n`` sampling, refusal
regeneration, conversations; calls through the ledger and its executor),
:mod:`~judgelab.run.record` (parse once → judgments → the store's group writer), with
:mod:`~judgelab.run.identity` (what makes two runs the same) and :mod:`~judgelab.run.runner`
(:class:`Runner` and :func:`run_spec`, the one synchronous entry point).
"""
from judgelab.run.identity import public_identity, run_identity
from judgelab.run.plan import ANSWER_PLACEHOLDER, PlannedCall, RunPlan
from judgelab.run.record import RunStats
from judgelab.run.runner import Runner, run_spec
from judgelab.spec import JudgeSpec, RunSpec

__all__ = ["RunSpec", "JudgeSpec", "RunStats", "Runner", "RunPlan", "PlannedCall", "ANSWER_PLACEHOLDER", "run_spec",
           "run_identity", "public_identity"]
