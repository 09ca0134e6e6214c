"""judgelab: LLM judges, measured like human raters.

Public API::

    from judgelab import parse_rating, RunSpec, Store, make_judge, load_items, run_sync

See README.md for a worked example.
"""
from judgelab.datasets.items import Item, load_items
from judgelab.errors import BackendError, CapabilityError, JudgelabError
from judgelab.models import Sampling, make_judge
from judgelab.parse import expected_score, parse_judgment, parse_rating
from judgelab.prompts import available_templates, load_template
from judgelab.run import RunSpec, Runner, run_sync
from judgelab.store import Store
from judgelab.summary import compare_systems, summarize

__version__ = "0.1.0"

__all__ = [
    "Item", "load_items", "JudgelabError", "BackendError", "CapabilityError", "Sampling", "make_judge",
    "parse_rating", "parse_judgment", "expected_score", "available_templates", "load_template",
    "RunSpec", "Runner", "run_sync", "Store", "summarize", "compare_systems",
]
