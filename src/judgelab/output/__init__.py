"""The output layer: every file a command writes, and nothing else.

* :mod:`~judgelab.output.folder` — :class:`OutputFolder`, the one writer of a command's folder
  (tables, files, README.md, run.json; written aside and swapped in at the end);
* :mod:`~judgelab.output.tables` — tables as CSV / JSON lines / Parquet, and the JSON document
  shape every command prints;
* :mod:`~judgelab.output.index` — the README.md index;
* :mod:`~judgelab.output.manifest` — run.json (versions, masked command line, settings, steps);
* :mod:`~judgelab.output.record` — results.json, the folder's record (each step's settings, inputs,
  files and typed results), which the report renders; :mod:`~judgelab.output.legacy` rebuilds it
  for a folder of an older judgelab.

The HTML report (:mod:`judgelab.report`) renders a finished folder; the terminal's tables are
printed by :mod:`judgelab.cli.output`. None of them computes a statistic.
"""
from judgelab.output.folder import Display, OutputFolder, StagedOutputs, write_html_report, write_tables
from judgelab.output.index import write_index
from judgelab.output.manifest import mask_url_secrets, masked_argv, record_step, write_manifest
from judgelab.output.tables import json_document, write_table

__all__ = ["OutputFolder", "StagedOutputs", "Display", "write_html_report", "write_tables", "write_index", "write_manifest", "record_step", "masked_argv",
           "mask_url_secrets", "write_table", "json_document"]
