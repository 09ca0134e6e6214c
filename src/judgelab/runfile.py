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

Keys are checked before any work: an unknown key is one line naming it and the known keys.
Credentials belong in the environment (``OPENAI_API_KEY``), not in the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from judgelab.errors import JudgelabError

__all__ = ["RunFile", "SamplingSpec", "load_run_file", "RUN_FILE_KEYS"]


class SamplingSpec(BaseModel):
    """The ``sampling`` block: ``--temperature``, ``--top-p``, ``--max-tokens``, ``--seed``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = 1.0
    top_p: float = 0.9
    max_tokens: int = 128
    seed: Optional[int] = None


class RunFile(BaseModel):
    """One ``judgelab rate`` run: what to rate, how, with which judge(s), and where to write.

    Every field is the flag of ``judgelab rate`` of the same name (see ``judgelab rate --help``).

    Example:
        >>> spec = RunFile(items="items.jsonl", judge="openai:stub@http://127.0.0.1:9/v1", samples=1)
        >>> spec.judge, spec.score
        (['openai:stub@http://127.0.0.1:9/v1'], 'auto')
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    items: Path
    template: str = "chiang-lee-story"
    criteria: Optional[list[str]] = None
    variant: Optional[str] = None
    judge: list[str] = Field(default_factory=lambda: ["local"], min_length=1)
    samples: int = Field(default=3, ge=1, le=128)
    sampling: SamplingSpec = SamplingSpec()
    score: Literal["auto", "parsed", "logprob"] = "auto"
    query_mode: Literal["independent", "conversation"] = "independent"
    max_refusal_retries: int = Field(default=3, ge=0, le=20)
    top_logprobs: int = Field(default=0, ge=0, le=20)
    rater: Optional[str] = None
    out: Path = Path("judgelab-runs/rate")
    format: Literal["csv", "jsonl", "parquet"] = "csv"
    compare: Optional[list[str]] = None
    n_items: Optional[int] = Field(default=None, ge=1)
    id_field: str = "id"
    text_field: str = "text"
    context_field: str = "context"
    system_field: str = "system"
    group_field: str = "group"
    all_runs: bool = False
    max_failure_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    # the judges' connection (shared by every judge of the run)
    base_url: Optional[str] = None
    api_key: Optional[str] = None
    style: Literal["chat", "completion"] = "chat"
    concurrency: int = Field(default=16, ge=1, le=1024)
    max_retries: int = Field(default=10, ge=0, le=50)
    timeout: float = Field(default=120.0, gt=0.0, le=3600.0)
    no_n: bool = False
    transport: str = "auto"
    max_tokens_param: str = "auto"
    model_path: Optional[Path] = None

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
    def judge_defaults(self) -> dict[str, Any]:
        """The options every judge spec of the run shares (endpoint, key, retries …)."""
        return {"base_url": self.base_url, "api_key": self.api_key, "style": self.style, "concurrency": self.concurrency,
                "max_retries": self.max_retries, "supports_n": not self.no_n, "timeout": self.timeout, "transport": self.transport,
                "max_tokens_param": self.max_tokens_param, "model_path": str(self.model_path) if self.model_path else None}

    def run_specs(self) -> list[tuple[str, Any]]:
        """(judge spec, :class:`judgelab.run.RunSpec`) per judge; ``score: auto`` is ``logprob`` for the
        embedded judge and ``parsed`` for the others."""
        from judgelab.models import Sampling
        from judgelab.models.spec import parse_judge
        from judgelab.run import RunSpec

        if self.rater is not None and len(self.judge) > 1:
            raise JudgelabError("--rater names one run; with several judges leave it out (each judge gets its own label)")
        runs = []
        for spec in self.judge:
            kind, _ = parse_judge(spec, self.judge_defaults())
            score = ("logprob" if kind == "local" else "parsed") if self.score == "auto" else self.score
            runs.append((spec, RunSpec(
                template=self.template, criteria=self.criteria, variant=self.variant, samples=self.samples,
                sampling=Sampling(**self.sampling.model_dump()), score=score, query_mode=self.query_mode,
                max_refusal_retries=self.max_refusal_retries, top_logprobs=self.top_logprobs, rater=self.rater,
                concurrency=self.concurrency if kind != "local" else None)))
        return runs

    def load_items(self) -> list:
        """The items to rate (the first ``n_items`` of the file)."""
        from judgelab.datasets.items import FieldMap, load_items

        fields = FieldMap(id=self.id_field, text=self.text_field, context=self.context_field,
                          system=self.system_field, group=self.group_field)
        return load_items(self.items, fields, limit=self.n_items)

    def run(self, progress: bool = True, price_in: float | None = None, price_out: float | None = None):
        """Rate the items with every judge into ``out``; returns :class:`judgelab.workflow.RateResult`.

        ``price_in``/``price_out`` (USD per 1M tokens) put each judge's cost into the result and run.json.

        Raises :class:`judgelab.errors.TooManyFailures` (after writing the outputs) when more than
        ``max_failure_rate`` of a judge's judgments failed.

        Example:
            >>> result = load_run_file("spec.yaml").run(progress=False)   # doctest: +SKIP
            >>> result.summary.head()                                     # doctest: +SKIP
        """
        from judgelab.workflow import rate_items

        runs = self.run_specs()
        return rate_items(self.load_items(), runs, self.out, self.format,
                          compare=(self.compare[0], self.compare[1]) if self.compare else None, progress=progress,
                          all_runs=self.all_runs, max_failure_rate=self.max_failure_rate,
                          judge_defaults=self.judge_defaults(), price_in=price_in, price_out=price_out)

    def plan(self):
        """Plan the run without calling a model or writing anything: a list of
        :class:`judgelab.workflow.JudgePlan`, one per judge (for ``--dry-run``)."""
        from judgelab.workflow import plan_rate

        return plan_rate(self.load_items(), self.run_specs(), self.out, judge_defaults=self.judge_defaults())


#: The keys a run file may have (``sampling`` holds its own four).
RUN_FILE_KEYS = tuple(RunFile.model_fields) + ("judges",)
_PATH_KEYS = ("items", "out", "model_path")


def _resolve(value: str, folder: Path) -> str:
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (folder / p).resolve())


def _resolve_judge(spec: str, folder: Path) -> str:
    kind, sep, rest = spec.partition(":")
    if sep and rest and kind in {"local", "scripted-test-double"}:
        return f"{kind}:{_resolve(rest, folder)}"
    return spec


def load_run_file(path: str | Path) -> RunFile:
    """Read a run file (YAML) into a :class:`RunFile`; relative paths (items, out, model_path, a
    template given as a file, ``local:PATH`` and ``scripted-test-double:PATH`` judges) resolve
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
    from judgelab.prompts import read_yaml

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
        bad = [k for k in doc["sampling"] if k not in SamplingSpec.model_fields]
        if bad:
            raise JudgelabError(f"{path}: unknown key 'sampling.{bad[0]}'; known keys: {', '.join(SamplingSpec.model_fields)}")
    if "judges" in doc:
        if "judge" in doc:
            raise JudgelabError(f"{path}: give judge or judges, not both")
        doc["judge"] = doc.pop("judges")
    folder = path.resolve().parent
    for key in _PATH_KEYS:
        if isinstance(doc.get(key), str):
            doc[key] = _resolve(doc[key], folder)
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
