"""Run files: ``judgelab run SPEC.yaml``, the flags of ``judgelab rate`` written down.

A run file is a YAML mapping whose keys are the long flags of ``judgelab rate`` with ``_``
for ``-`` (``n_items``, ``query_mode``, ``id_field`` …); the sampling flags are grouped
under ``sampling`` and ``judge`` may be a list (alias ``judges``) — one rater per judge, as
with a repeated ``--judge``. ``judgelab rate`` builds the same :class:`RunFile` from its
flags, so a run file and the equivalent flags run the same judgments under the same rater
label (in the style of inspect_ai's and lm-evaluation-harness's task files)::

    items: stories.jsonl          # relative paths resolve against this file's folder
    template: chiang-lee-story
    criteria: [grammaticality, coherence]
    judge: openai:gpt-4o-mini     # or a list; local | local:PATH.gguf | openai:MODEL@URL | ...
    samples: 3
    sampling: {temperature: 1.0, top_p: 0.9, max_tokens: 128, seed: 1}
    score: parsed
    out: runs/stories

The sampling block fills in the run defaults (T = 1.0, top-p 0.9, 128 tokens; stated once in
:mod:`judgelab.settings`) for the keys it leaves out.
Keys are checked before any work: an unknown key is one line naming it and the known keys.
Credentials belong in the environment (``OPENAI_API_KEY``), not in the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import Field, ValidationError, field_validator, model_validator

from judgelab.errors import JudgelabError
from judgelab.settings import SamplingConfig
from judgelab.choices import PairOrders, RatingsFormat
from judgelab.status import DEFAULT_MAX_FAILURE_RATE
from judgelab.spec import AskSettings, JudgeOptions, JudgeSpec, RunSpec

__all__ = ["RunFile", "load_run_file", "RUN_FILE_KEYS", "CONNECTION_KEYS"]


#: Flags of ``judgelab rate`` that say how to reach the judges (:class:`judgelab.spec.JudgeOptions`);
#: ``no_n`` is ``supports_n`` negated.
CONNECTION_KEYS = ("base_url", "api_key", "style", "concurrency", "max_retries", "timeout", "no_n", "transport",
                   "max_tokens_param", "model_path")


class RunFile(AskSettings):
    """One ``judgelab rate`` run: what to rate, how, with which judge(s), and where to write.

    Every field is the flag of ``judgelab rate`` of the same name (see ``judgelab rate --help``);
    the connection flags (:data:`CONNECTION_KEYS`) are gathered into ``options``, one
    :class:`judgelab.spec.JudgeOptions` shared by every judge. :meth:`run_specs` turns it into one
    :class:`judgelab.spec.RunSpec` per judge, where every setting is validated.

    Example:
        >>> spec = RunFile(items="items.jsonl", judge="openai:stub@http://127.0.0.1:9/v1", samples=1, concurrency=4)
        >>> spec.judge, spec.score, spec.options.concurrency
        (['openai:stub@http://127.0.0.1:9/v1'], 'auto', 4)
    """

    items: Path
    judge: list[str] = Field(default_factory=lambda: ["local"], min_length=1)
    out: Path = Path("judgelab-runs/rate")
    ratings_format: RatingsFormat = "csv"
    compare: Optional[list[str]] = None
    n_items: Optional[int] = Field(default=None, ge=1)
    id_field: str = "id"
    text_field: str = "text"
    context_field: str = "context"
    system_field: str = "system"
    group_field: str = "group"
    all_runs: bool = False
    #: Judge pairs of responses (``docs/preference-judging.md``): ``baseline:SYSTEM``, ``all`` or a file of pairs;
    #: ``items`` then holds responses (one row per instruction × system).
    pairs: Optional[str] = None
    orders: PairOrders = "both"
    offer_tie: bool = True
    max_failure_rate: float = Field(default=DEFAULT_MAX_FAILURE_RATE, ge=0.0, le=1.0)
    options: JudgeOptions = JudgeOptions()

    @model_validator(mode="before")
    @classmethod
    def _gather_connection(cls, data: Any) -> Any:
        """The connection flags, given flat as on the command line, become ``options``."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        given = {k: data.pop(k) for k in CONNECTION_KEYS if k in data}
        if "no_n" in given:
            given["supports_n"] = not given.pop("no_n")
        if given:
            options = data.get("options")
            base = options.model_dump() if isinstance(options, JudgeOptions) else dict(options or {})
            data["options"] = {**base, **{k: v for k, v in given.items() if v is not None or k == "api_key"}}
        return data

    @field_validator("judge", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


    @field_validator("criteria", "compare", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()] or None
        return value

    @field_validator("compare")
    @classmethod
    def _two_systems(cls, value: Optional[list[str]]) -> Optional[list[str]]:
        if value is not None and len(value) != 2:
            raise ValueError("--compare needs two systems, e.g. --compare human,gpt2")
        return value

    # -- what it becomes --------------------------------------------------------
    def run_specs(self) -> list[RunSpec]:
        """One :class:`judgelab.spec.RunSpec` per judge (``score: auto`` is each judge's default)."""
        if self.rater is not None and len(self.judge) > 1:
            raise JudgelabError("--rater names one run; with several judges leave it out (each judge gets its own label)")
        if len(set(self.judge)) != len(self.judge):
            twice = sorted({j for j in self.judge if self.judge.count(j) > 1})
            raise JudgelabError(f"the same --judge is given twice: {', '.join(twice)}")
        asked = {name: getattr(self, name) for name in AskSettings.model_fields}  # every shared setting, as given
        specs = [RunSpec(judge=JudgeSpec(spec=judge, options=self.options), **asked) for judge in self.judge]
        if "samples" in self.model_fields_set and self.samples > 1 and all(s.score_mode == "logprob" for s in specs):
            # samples asked for and none would be taken: refused, never quietly one
            raise JudgelabError(
                f"--samples {self.samples} with log-probability scoring: the score is read from the distribution of "
                "one answer's next token, so further samples add nothing; leave out --samples, or sample answers with "
                "--score parsed" + ("" if self.score == "logprob" else
                                    " (this judge scores by log-probabilities unless told --score parsed)"))
        return specs

    def pair_set(self):
        """The pairs to judge (:class:`judgelab.preference.pairs.PairSet`), or None without ``pairs``."""
        if self.pairs is None:
            return None
        from judgelab.datasets.responses import ResponseFields, load_responses
        from judgelab.preference.pairs import build_pairs

        if self.n_items is not None:
            raise JudgelabError("--n-items with --pairs: list the pairs to judge in a --pairs file instead")
        fields = ResponseFields(id=("item_id", "id") if self.id_field == "id" else (self.id_field,),
                                instruction=("instruction", "text") if self.text_field == "text" else (self.text_field,),
                                system=self.system_field)
        return build_pairs(load_responses(self.items, fields), self.pairs, self.orders, self.offer_tie)

    def load_items(self) -> list:
        """The items to rate (the first ``n_items`` of the file); with ``pairs``, one per pair and order."""
        from judgelab.datasets.items import FieldMap, load_items

        pairs = self.pair_set()
        if pairs is not None:
            return pairs.items()
        fields = FieldMap(id=self.id_field, text=self.text_field, context=self.context_field,
                          system=self.system_field, group=self.group_field)
        return load_items(self.items, fields, limit=self.n_items)

    def run(self, progress: bool = True, price_in: float | None = None, price_out: float | None = None):
        """Rate the items with every judge into ``out``; returns :class:`judgelab.rate.RateResult`.

        ``price_in``/``price_out`` (USD per 1M tokens) put each judge's cost into the result and run.json.
        Raises :class:`judgelab.errors.TooManyFailures` (after writing the outputs) when more than
        ``max_failure_rate`` of a judge's judgments failed.

        Example:
            >>> result = load_run_file("spec.yaml").run(progress=False)   # doctest: +SKIP
            >>> result.summary.head()                                     # doctest: +SKIP
        """
        from judgelab.rate import rate_items

        pairs = self.pair_set()
        return rate_items(self.load_items() if pairs is None else pairs.items(), self.run_specs(), self.out, self.ratings_format,
                          compare=(self.compare[0], self.compare[1]) if self.compare else None, progress=progress,
                          all_runs=self.all_runs, max_failure_rate=self.max_failure_rate, price_in=price_in,
                          price_out=price_out, pairs=pairs)

    def plan(self):
        """Plan the run without calling a model or writing anything: a list of
        :class:`judgelab.rate.JudgePlan`, one per judge (for ``--dry-run``)."""
        from judgelab.rate import plan_rate

        return plan_rate(self.load_items(), self.run_specs(), self.out)


#: The keys a run file may have (``sampling`` holds its own four; no ``api_key``: keys stay out of files).
_FIRST = ("items", "judge")  # what every run file names, listed first in messages
RUN_FILE_KEYS = _FIRST + tuple(k for k in RunFile.model_fields if k not in _FIRST and k != "options") + tuple(
    k for k in CONNECTION_KEYS if k != "api_key") + ("judges",)
_PATH_KEYS = ("items", "out", "model_path")


def _resolve(value: str, folder: Path) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (folder / p).resolve())


def _resolve_judge(spec: str, folder: Path) -> str:
    from judgelab.models.registry import registered_kinds, backend_entry

    kind, sep, rest = spec.partition(":")
    if sep and rest and kind in registered_kinds() and backend_entry(kind).file_argument:
        return f"{kind}:{_resolve(rest, folder)}"
    return spec


def load_run_file(path: str | Path) -> RunFile:
    """Read a run file (YAML) into a :class:`RunFile`; relative paths (items, out, model_path, a file of
    ``pairs``, a template given as a file, ``local:PATH`` and ``scripted-test-double:PATH`` judges) resolve
    against the file's folder.

    Args:
        path: the YAML file.

    Returns:
        The validated :class:`RunFile`; call ``.run()`` to execute it or ``.plan()`` to see its calls.

    Raises:
        JudgelabError: one line for a missing or malformed file, an unknown key (naming the known
        keys) or an invalid value (naming the key).

    Example:
        >>> spec = load_run_file("runs/stories.yaml")   # doctest: +SKIP
        >>> spec.run()                                  # doctest: +SKIP
    """
    from judgelab.prompts.yaml_places import read_yaml

    path = Path(path)
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise JudgelabError(f"{path}: a run file is a mapping of keys (items, template, judge, …), not {type(doc).__name__}")
    doc = {str(k): v for k, v in doc.items()}
    if "api_key" in doc:  # files are shared and committed; a key in one would leak
        raise JudgelabError(f"{path}: a run file never holds an API key; set $OPENAI_API_KEY or pass --api-key")
    unknown = [k for k in doc if k not in RUN_FILE_KEYS]
    if unknown:
        raise JudgelabError(f"{path}: unknown key {unknown[0]!r}; known keys: {', '.join(RUN_FILE_KEYS)}")
    if isinstance(doc.get("sampling"), dict):
        bad = [k for k in doc["sampling"] if k not in SamplingConfig.model_fields]
        if bad:
            raise JudgelabError(f"{path}: unknown key 'sampling.{bad[0]}'; known keys: {', '.join(SamplingConfig.model_fields)}")
    if "judges" in doc:
        if "judge" in doc:
            raise JudgelabError(f"{path}: give judge or judges, not both")
        doc["judge"] = doc.pop("judges")
    folder = path.resolve().parent
    for key in _PATH_KEYS:
        if isinstance(doc.get(key), str):
            doc[key] = _resolve(doc[key], folder)
    pairs = doc.get("pairs")
    if isinstance(pairs, str) and pairs != "all" and not pairs.startswith("baseline:"):  # a file of pairs
        doc["pairs"] = _resolve(pairs, folder)
    template = doc.get("template")
    if isinstance(template, str) and (template.endswith((".yaml", ".yml")) or "/" in template):
        doc["template"] = _resolve(template, folder)
    judges = doc.get("judge")
    if isinstance(judges, str):
        doc["judge"] = _resolve_judge(judges, folder)
    elif isinstance(judges, list):
        doc["judge"] = [_resolve_judge(j, folder) if isinstance(j, str) else j for j in judges]
    try:
        return RunFile.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise JudgelabError(f"{path}: invalid value for {where}: {first['msg']}") from None
