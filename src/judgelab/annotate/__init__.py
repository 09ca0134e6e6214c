"""The human loop: people rate with the judge's own rubric, and a few human ratings correct the judge.

Chiang & Lee (2023, §2 and §3.2) compare LLM evaluation with human evaluation by giving both
exactly the same task instructions, sample and question; only the way of answering differs
(a human picks a point of the Likert scale, the LLM writes an answer that is parsed). This
package closes the loop from the other side:

* :mod:`judgelab.annotate.selection` — which items people rate (uniform random, optionally
  stratified by system; where the judge disagrees with itself or with people; a list of ids)
  and in which order each annotator sees them (pure, seeded);
* :mod:`judgelab.annotate.form` — the template the judge gets, as the rating form;
* :mod:`judgelab.annotate.session` — records each submitted rating as a ``human:<annotator>``
  row of the tidy table; :mod:`judgelab.annotate.folder_state` keeps the selection and the
  annotators' links across restarts;
* :mod:`judgelab.annotate.overview` — progress, agreement between annotators, judge and humans;
* :mod:`judgelab.annotate.app` — the local web app (Starlette, served by uvicorn through
  :mod:`judgelab.serve`, which ``view`` shares);
* :mod:`judgelab.annotate.estimate` — prediction-powered estimates (PPI++; Angelopoulos et
  al. 2023, 2024) that combine the judge on every item with people on a few, the
  Alternative Annotator Test (Calderon et al., ACL 2025) and the planner (result types in
  :mod:`judgelab.annotate.estimate_results`).

Importing this package imports nothing heavy; the web parts load starlette and uvicorn
only when the ``annotate`` command runs.
"""
