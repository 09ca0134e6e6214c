"""The Examples in the run core's docstrings run (they are the documentation's promises)."""
import doctest
import importlib

import pytest

MODULES = ["judgelab.models", "judgelab.models.base", "judgelab.models.registry", "judgelab.models.spec",
           "judgelab.models.cache", "judgelab.models.backends.scripted", "judgelab.models.backends.local", "judgelab.models.backends.openai_compatible",
           "judgelab.models.backends.local_model", "judgelab.models.backends.openai_http",
           "judgelab.run.runner", "judgelab.run.plan", "judgelab.run.identity", "judgelab.run.record",
           "judgelab.run.execute", "judgelab.models.retry", "judgelab.store", "judgelab.store.lock", "judgelab.store.runs",
           "judgelab.store.judgments", "judgelab.store.ledger", "judgelab.store.writer", "judgelab.status", "judgelab.parse", "judgelab.answer_layout", "judgelab.perturb.llm",
           "judgelab.perturb.rules", "judgelab.contamination", "judgelab.answers", "judgelab.settings", "judgelab.io_atomic",
           "judgelab.secrets", "judgelab.missing", "judgelab.spec", "judgelab.runfile", "judgelab.models.backends.fleet",
           "judgelab.models.backends.openai_answers"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
