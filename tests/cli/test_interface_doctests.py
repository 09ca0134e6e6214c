"""The docstring examples of the interface modules run (those marked ``+SKIP`` need a model or files)."""
import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["judgelab.runfile", "judgelab.output.index", "judgelab.output.tables",
                                  "judgelab.output.folder", "judgelab.output.manifest", "judgelab.dhp.analysis",
                                  "judgelab.rate", "judgelab.recipes.common", "judgelab.dhp.study", "judgelab.spec",
                                  "judgelab.digest", "judgelab.choices", "judgelab.cli.summary",
                                  "judgelab.cli.renamed"])
def test_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
