"""``judgelab preference …``: pairwise verdicts (which of two responses is better) — agreement with human
preferences, win rates and leaderboards (``docs/preference.md``).

The sub-app is made here; its commands are in its neighbours (``cli/preference_*.py``, imported by ``cli/__init__.py``:
from here they would be an import cycle), each registered on :data:`preference_app`.
"""
from __future__ import annotations

import typer

from judgelab.cli.common import RATING, app

preference_app = typer.Typer(
    help="Pairwise verdicts (AlpacaEval, Arena-Hard, MT-Bench, LLMBar style): agreement with human preferences, "
         "win rates, leaderboards.", no_args_is_help=True)
app.add_typer(preference_app, name="preference", rich_help_panel=RATING)
