"""The run core: plan the calls of a spec, execute them through the call ledger, record judgments.

``from judgelab.run import RunSpec, Runner, run_sync`` is the public surface; the stages live in
the modules of this package.
"""
from judgelab.run.runner import (
    ANSWER_PLACEHOLDER,
    PlannedCall,
    RunPlan,
    RunSpec,
    RunStats,
    Runner,
    public_identity,
    run_identity,
    run_sync,
    run_to_end,
)

__all__ = ["RunSpec", "RunStats", "Runner", "RunPlan", "PlannedCall", "ANSWER_PLACEHOLDER", "run_sync", "run_to_end",
           "run_identity", "public_identity"]
