"""judgelab: LLM judges, measured like human raters.

Public API::

    from judgelab import parse_rating, RunSpec, Store, make_judge, load_items, run_spec
    from judgelab import load_items, rate_items, import_human, agreement   # DataFrames in, DataFrames out

See docs/python-api.md for worked examples. Names are imported on first use, so that
``import judgelab`` (and the ``judgelab`` command's start-up) stays instant: pandas,
scipy, llama_cpp and openai load only when something needs them.
"""
from __future__ import annotations

from judgelab._lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS = {
    "Item": "judgelab.datasets.items",
    "FieldMap": "judgelab.datasets.items",
    "load_items": "judgelab.datasets.items",
    "rate_items": "judgelab.rate",
    "RateResult": "judgelab.rate",
    "JudgeRun": "judgelab.rate",
    "import_human": "judgelab.ratings",
    "read_ratings": "judgelab.ratings",
    "agreement": "judgelab.agree",
    "AgreeReport": "judgelab.agree",
    "run_agree": "judgelab.agree_run",
    "AgreeRun": "judgelab.agree_run",
    "HumanFile": "judgelab.agree_run",
    "run_audit": "judgelab.audit_run",
    "AuditRun": "judgelab.audit_run",
    "run_escalate": "judgelab.escalate_run",
    "JudgelabError": "judgelab.errors",
    "BackendError": "judgelab.errors",
    "CapabilityError": "judgelab.errors",
    "Sampling": "judgelab.models",
    "make_judge": "judgelab.models",
    "parse_rating": "judgelab.parse",
    "parse_judgment": "judgelab.parse",
    "expected_score": "judgelab.logprob_score",
    "available_templates": "judgelab.prompts",
    "load_template": "judgelab.prompts",
    "RunSpec": "judgelab.run",
    "Runner": "judgelab.run",
    "run_spec": "judgelab.run",
    "JudgeSpec": "judgelab.spec",
    "Store": "judgelab.store",
    "summarize": "judgelab.summary",
    "compare_systems": "judgelab.summary",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
