"""The report's Preference section: pairwise judging as the folder's record holds it.

Rendered from the steps' own records in results.json and nothing else: ``preference agree``
(:class:`~judgelab.preference.agreement_results.PreferenceAgreement`: the headline in words, the agreement table with
the human baseline set apart, both-order consistency), ``preference win-rates``
(:class:`~judgelab.preference.win_rates_results.PreferenceRates`: win rates against the baseline with their standard
errors, the length-controlled win rate, the Bradley–Terry leaderboard and its chart), ``rate --pairs`` (the
verdict counts by choice and the failures per rater) and ``audit --verdicts`` (the pairwise judges' position and
length preference, from audit.json). It computes no statistic.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from judgelab.preference.agreement_results import METRICS, PreferenceAgreement
from judgelab.preference.win_rates_results import PreferenceRates, Standing
from judgelab.report.folder import RunFolder, is_human
from judgelab.report.html_model import Figure, Table, natural_key
from judgelab.report.preference_words import PreferenceLine, preference_lines
from judgelab.report.svg import Point, interval_chart

__all__ = ["PreferenceSection", "build_preference", "PREFERENCE_TEMPLATE", "NO_BIAS_RECORDED", "PREFERENCE_TABLES"]

#: The tables this section shows (not repeated under "Other tables"); a run's verdicts.csv stays there as data.
PREFERENCE_TABLES = {"preference_agreement", "preference_orders", "win_rates", "leaderboard"}

#: Said where no position or length preference of the pairwise judges is recorded.
NO_BIAS_RECORDED = ("No position or length preference of the pairwise judges is recorded here: `judgelab audit "
                    "--verdicts VERDICTS… --out DIR` measures them (the share of first-shown picks, the winner flipping "
                    "with the order, the preference for the longer response) against the humans on the same pairs.")
_LC_CAVEAT = ("The length-controlled win rate is the tanh length GLM's win rate at equal lengths; AlpacaEval's "
              "published figures also use an instruction-difficulty term fitted on its own leaderboard, so ours "
              "differ from them where that term is not available.")
_STYLE_CAVEAT = ("Style-controlled ratings (Arena-Hard's covariates: length, headers, lists, bold) depend on which "
                 "systems are in the pool: adding or removing a system can move every other's rating.")
_PAIRWISE = {"pairwise_first": "picks the first shown (share of decisive verdicts − 1/2)",
             "pairwise_flip": "winner flips with the order (share of pairs)",
             "pairwise_longer": "picks the longer response (judge − humans)",
             "pairwise_own": "picks its own family (judge − humans)"}


@dataclass
class PreferenceSection:
    """Everything the Preference section shows; each part ``None`` or empty where the record has none."""

    lines: list[PreferenceLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    agreement: Table | None = None
    human_baseline: Table | None = None
    win_rates: Table | None = None
    win_rate_notes: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    leaderboard: Table | None = None
    bias: Table | None = None
    bias_note: str = ""
    counts: Table | None = None


def build_preference(folder: RunFolder) -> PreferenceSection | None:
    """The section of ``folder`` (``None`` when its record holds no preference step)."""
    agree_step = folder.record.step("preference agree")
    rates_doc = folder.record.result("preference_rates")
    verdicts = folder.record.result("verdicts")
    if agree_step is None and rates_doc is None and not isinstance(verdicts, dict):
        return None
    section = PreferenceSection()
    agreement = PreferenceAgreement.from_record(agree_step.results) if agree_step is not None else None
    if agreement is not None:
        _agreement(section, agreement)
    if rates_doc is not None:
        _rates(section, PreferenceRates.from_record(rates_doc))
    if isinstance(verdicts, dict):
        section.counts = _counts(verdicts)
    _bias(section, folder, agreement)
    if not section.lines:
        section.notes.insert(0, "No agreement with human preferences is recorded here: `judgelab preference agree "
                                "VERDICTS… --out DIR` (with human raters' verdicts on the same pairs) adds it.")
    return section


def _estimate(row: Any, metric: str) -> list[Any]:
    est = row.measures.get(metric)
    return [None, None, None] if est is None else [est.value, est.ci_low, est.ci_high]


def _agreement(section: PreferenceSection, result: PreferenceAgreement) -> None:
    section.lines = preference_lines(result)
    columns = ["rater", "criterion", "pairs", "instructions"]
    kinds: list[Any] = ["text", "text", "int", "int"]
    for m in METRICS:
        columns += [m, f"{m} low", f"{m} high"]
        kinds += ["num"] * 3
    def rows(kind: str) -> list[list[Any]]:
        mine = sorted((r for r in result.rows if (r.kind == "human") == (kind == "human")),
                      key=lambda r: (r.criterion, natural_key(r.rater)))
        return [[r.rater, r.criterion, r.n, r.items, *(v for m in METRICS for v in _estimate(r, m))] for r in mine]
    level = result.settings.get("confidence_level", 0.95)
    note = (f"accuracy: share of pairs whose winner is the humans' label, averaged over the two orders; both_correct: "
            f"pairs right in both orders; consistency: the same winner in both orders; *_no_ties: ties left out "
            f"(MT-Bench's second convention); kappa: Cohen's κ with the humans' label. Intervals: {float(level):.0%} "
            f"cluster bootstrap over instructions. Both-order rule: {result.rule}.")
    judges = rows("judge")
    if judges:
        section.agreement = Table("pref-agreement", "Pairwise judges' agreement with the humans' preference",
                                  columns, kinds, judges, note=note)
    humans = rows("human")
    if humans:
        section.human_baseline = Table("pref-human-baseline", "Human baseline: each human rater against the "
                                       "majority of the others", columns, kinds, humans,
                                       note="The figure a judge is compared with in the headline.")
    section.notes += list(result.notes)


def _rates(section: PreferenceSection, rates: PreferenceRates) -> None:
    ordered = sorted(rates.win_rates, key=lambda w: (w.criterion, is_human(w.rater), natural_key(w.rater),
                                                     -w.win_rate, natural_key(w.system)))
    section.win_rates = Table(
        "pref-win-rates", f"Win rate against the baseline {rates.baseline} (AlpacaEval's), with its standard error",
        ["rater", "criterion", "system", "win rate", "± SE", "wins", "baseline wins", "draws", "verdicts",
         "discrete win rate", "length-controlled win rate"],
        ["text", "text", "text", "num", "num", "int", "int", "int", "int", "num", "num"],
        [[w.rater, w.criterion, w.system, w.win_rate, w.standard_error, w.n_wins, w.n_wins_base, w.n_draws, w.n_total,
          w.discrete_win_rate, w.length_controlled_win_rate] for w in ordered],
        note="win rate = 100 × the mean preference for the system (a tie 0.5); ± SE = 100 × its standard error "
             "(ddof 1), as AlpacaEval reports it." + _row_notes([(f"{w.rater} · {w.system}", w.note) for w in ordered]))
    section.win_rate_notes.append(_LC_CAVEAT)
    if any(s.style_controlled for s in rates.leaderboard):
        section.win_rate_notes.append(_STYLE_CAVEAT)
    boards: dict[tuple[str, str], list[Standing]] = {}
    for s in rates.leaderboard:
        boards.setdefault((s.rater, s.criterion), []).append(s)
    for k, ((rater, criterion), standings) in enumerate(sorted(boards.items(), key=lambda kv: (
            kv[0][1], is_human(kv[0][0]), natural_key(kv[0][0])))):
        section.figures.append(_leaderboard_chart(k, rater, criterion, standings, rates.methods.get("leaderboard", "")))
    ranked = sorted(rates.leaderboard, key=lambda s: (s.criterion, natural_key(s.rater),
                                                      s.rank if s.rank is not None else 10**9, natural_key(s.system)))
    if ranked:
        section.leaderboard = Table(
            "pref-leaderboard", "Leaderboard: Bradley–Terry ratings with bootstrap intervals",
            ["rater", "criterion", "rank", "system", "rating", "95% low", "95% high", "win rate vs anchor", "verdicts",
             "style-controlled"],
            ["text", "text", "int", "text", "num", "num", "num", "num", "int", "text"],
            [[s.rater, s.criterion, s.rank, s.system, s.rating, s.ci_low, s.ci_high, s.win_rate_vs_anchor, s.n_verdicts,
              "yes" if s.style_controlled else "no"] for s in ranked],
            note=f"Method: {rates.methods.get('leaderboard', 'not recorded')}."
                 + _row_notes([(f"{s.rater} · {s.system}", s.note) for s in ranked]))


def _row_notes(notes: list[tuple[str, str]]) -> str:
    """The rows' notes as one text: each distinct note once, with the rows it belongs to (all rows: said so)."""
    by_note: dict[str, list[str]] = {}
    for row, note in notes:
        if note:
            by_note.setdefault(note, []).append(row)
    return "".join(f" {note[0].upper() + note[1:]} ({'every row' if len(rows) == len(notes) else ', '.join(rows)})."
                   for note, rows in by_note.items())


def _leaderboard_chart(k: int, rater: str, criterion: str, standings: list[Standing], method: str) -> Figure:
    ranked = sorted(standings, key=lambda s: (s.rating is None, -(s.rating or 0.0), natural_key(s.system)))
    styled = " (style-controlled)" if any(s.style_controlled for s in standings) else ""
    title = f"Leaderboard{styled}: {criterion}, judged by {rater}"
    points = [Point(s.system, s.rating, s.ci_low, s.ci_high, note=s.note) for s in ranked]
    desc = (f"Bradley–Terry rating of each system{styled} from {rater}'s verdicts on {criterion}, highest first, with "
            "95% bootstrap intervals over instructions; the anchor is at 1000 and 400 points are odds of 10 to 1.")
    svg = interval_chart(points, f"fig-pref-board-{k}", title, desc, "rating (Elo-like scale; 95% bootstrap interval)",
                         "system", reference=1000.0, reference_label="anchor 1000")
    return Figure(f"fig-pref-board-{k}", title, desc + (f" Method: {method}." if method else ""), svg)


def _counts(verdicts: dict[str, Any]) -> Table:
    raters = verdicts.get("raters") or {}
    rows = [[rater, c.get("verdicts"), c.get("first"), c.get("second"), c.get("tie"), c.get("failed")]
            for rater, c in sorted(raters.items(), key=lambda kv: natural_key(kv[0])) if isinstance(c, dict)]
    return Table("pref-counts", "Verdicts by choice and failures per rater (rate --pairs)",
                 ["rater", "verdicts", "first", "second", "tie", "failed"], ["text", "int", "int", "int", "int", "int"],
                 rows, note=f"{verdicts.get('pairs', 0)} pairs, orders: {verdicts.get('orders', '?')}, "
                            f"{verdicts.get('prompts', 0)} prompts asked; ties {'allowed' if verdicts.get('ties') else 'not offered'}. "
                            "A failed verdict (no choice read) enters no statistic.")


def _bias(section: PreferenceSection, folder: RunFolder, agreement: PreferenceAgreement | None) -> None:
    from judgelab.report.html_build import table_file

    effects: list[dict[str, Any]] = []
    file = table_file(folder, "audit")
    if file is not None:
        doc = json.loads(file.read_text(encoding="utf-8"))
        effects = [e for e in (doc.get("effects") or []) if isinstance(e, dict) and e.get("bias") in _PAIRWISE]
    if effects:
        section.bias = Table("pref-bias", "Position and length preference of the pairwise judges (audit --verdicts)",
                             ["rater", "criterion", "bias", "estimate", "95% low", "95% high", "n", "detected"],
                             ["text", "text", "text", "num", "num", "num", "int", "text"],
                             [[e.get("rater"), e.get("criterion"), _PAIRWISE[str(e.get("bias"))], e.get("estimate"),
                               e.get("ci_low"), e.get("ci_high"), e.get("n"), "yes" if e.get("detected") else "no"]
                              for e in effects], note="The Audit section below charts each effect.")
        return
    section.bias_note = NO_BIAS_RECORDED
    if agreement is not None and agreement.orders:
        by_key = {(r.rater, r.criterion): r for r in agreement.rows}
        rows = []
        for o in agreement.orders:
            if int(o.get("both_orders") or 0) == 0:
                continue
            row = by_key.get((str(o.get("rater")), str(o.get("criterion"))))
            rows.append([o.get("rater"), o.get("criterion"), o.get("both_orders"), o.get("disagree"),
                         *(_estimate(row, "consistency") if row is not None else [None] * 3)])
        if rows:
            section.bias = Table("pref-orders", "Both orders: pairs asked in both orders and how often the winner "
                                 "stays (preference agree)",
                                 ["rater", "criterion", "pairs in both orders", "orders disagree", "consistency",
                                  "95% low", "95% high"], ["text", "text", "int", "int", "num", "num", "num"], rows,
                                 note="consistency: the share of pairs with the same winner in both orders (a tie "
                                      "counts as a winner); a judge that picks by position has a low consistency.")


PREFERENCE_TEMPLATE = r"""
{%- if d.preference %}{% set p = d.preference %}
<section id="preference" aria-labelledby="h-preference">
<h2 id="h-preference">Preference judging</h2>
{%- if p.lines %}
<div class="hl-words" role="note" aria-label="The pairwise judges' verdict in words">
<p><strong>Does the pairwise judge agree with the humans' preference?</strong></p>
<ul>{% for l in p.lines %}<li data-decision="{{ l.decision }}"><strong>{{ l.criterion }}</strong>: {{ l.words }}</li>{% endfor %}</ul>
</div>
{%- endif %}
{%- for note in p.notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- if p.win_rates %}<h3>Win rates against the baseline</h3>
{{ table(p.win_rates) }}
{%- for note in p.win_rate_notes %}<p class="note">{{ note }}</p>{% endfor %}
{%- endif %}
{%- if p.figures or p.leaderboard %}<h3>Leaderboard</h3>
{%- for f in p.figures %}<h4 class="fig-title">{{ f.title }}</h4>{{ figure(f) }}{% endfor %}
{%- if p.leaderboard %}{{ table(p.leaderboard) }}{% endif %}
{%- endif %}
{%- if p.agreement or p.human_baseline %}<h3>Agreement with human preferences</h3>
{%- if p.agreement %}{{ table(p.agreement) }}{% endif %}
{%- if p.human_baseline %}{{ table(p.human_baseline) }}{% endif %}
{%- endif %}
<h3>Position and length bias</h3>
{%- if p.bias %}{{ table(p.bias) }}{% endif %}
{%- if p.bias_note %}<p class="note">{{ p.bias_note }}</p>{% endif %}
{%- if p.counts %}<h3>Verdicts of this run</h3>{{ table(p.counts) }}{% endif %}
</section>
{%- endif %}
"""
