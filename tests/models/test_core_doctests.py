"""The Examples in the run core's docstrings run (they are the documentation's promises)."""
import doctest
import importlib

import pytest

MODULES = ["judgelab.models", "judgelab.models.registry", "judgelab.models.spec", "judgelab.models.cache",
           "judgelab.run", "judgelab.store", "judgelab.status", "judgelab.perturb.llm", "judgelab.perturb.rules"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
