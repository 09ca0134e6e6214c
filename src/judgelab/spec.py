"""The run specification: what one judge is asked, and how — the one place a run is decided.

Every command that calls a model builds :class:`RunSpec` objects (``rate`` flags and run files
through :class:`judgelab.runfile.RunFile`, the recipes, DHP), and everything downstream reads
them: the dry run, the run identity (and so the rater label), the run core and ``run.json``.
Each option is validated here, once.

Defaults that depend on the judge come from its backend's registry entry, never from a test of
its kind: the score mode ``auto`` is the backend's ``default_score`` (log-probabilities for the
embedded judge, parsed text elsewhere), and the label's ``{model}`` is the backend's model id.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from judgelab.choices import Execution, QueryMode, Score, ScoreMode
from judgelab.settings import JudgeOptions, Sampling, SamplingConfig, run_sampling
from judgelab.raters import CONSTRAINED, judge, with_variant

if TYPE_CHECKING:
    from judgelab.models.base import Backend

__all__ = ["RunSpec", "AskSettings", "JudgeSpec", "JudgeOptions", "BatchOptions", "RUN_SAMPLING"]

#: The sampling of a rating run nobody tuned (:data:`judgelab.settings.RUN_SAMPLING_DEFAULTS`, merged).
RUN_SAMPLING = run_sampling()



_CONSTRAIN_LOGPROB = ("--constrain constrains generated answers; log-probability scoring reads only the scale's "
                      "labels already: use --score parsed with --constrain")


class JudgeSpec(BaseModel):
    """One judge: its ``--judge`` string and how to reach it.

    Args:
        spec: ``local``, ``local:PATH.gguf``, ``openai:MODEL``, ``openai:MODEL@URL``,
            ``scripted-test-double:SCRIPT.json`` or a registered backend's form.
        options: the connection options (:class:`JudgeOptions`).

    Example:
        >>> JudgeSpec(spec="openai:gpt-4o-mini").kind
        'openai'
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: str = "local"
    options: JudgeOptions = JudgeOptions()

    @field_validator("spec")
    @classmethod
    def _known(cls, value: str) -> str:
        from judgelab.models.spec import parse_judge

        parse_judge(value, {})  # an unknown kind or a malformed spec is one line, before any work
        return value

    @classmethod
    def of(cls, judge: "str | JudgeSpec", options: JudgeOptions | None = None) -> "JudgeSpec":
        """A judge spec from a spec string (with ``options``) or as given."""
        if isinstance(judge, JudgeSpec):
            return judge
        return cls(spec=judge, options=options or JudgeOptions())

    @property
    def kind(self) -> str:
        """The backend kind (the part before ``:``)."""
        return self.spec.partition(":")[0]

    def default_score(self) -> ScoreMode:
        """The score mode of ``score="auto"``: the backend's declared default."""
        from judgelab.models.registry import default_score

        return default_score(self.kind)

    def build(self) -> "Backend":
        """Build the backend (loads a model or opens a client)."""
        from judgelab.models.spec import build_judge

        return build_judge(self.spec, self.options.for_backend())


class BatchOptions(BaseModel):
    """How ``--execution batch`` uses a provider's batch API (none of it changes the answers: not part
    of the run's identity).

    Args:
        max_requests, max_mb: the most requests and megabytes per batch-input file (OpenAI: 50,000 and 200).
        max_attempts: answers that came back failed for one request in one run, at most (it is then
            recorded as ``error`` and asked again by the next run); expired, cancelled or refused
            batches and a kill spend none. 6: a failed line is a server error, which a live call
            retries up to 10 times, and a further batch holds only the failed lines.
        poll_seconds: seconds between two looks at a batch's state.
        discount: the batch price's discount on ``--price-in``/``--price-out`` (OpenAI: 0.5).
        window: the completion window asked for.

    Example:
        >>> BatchOptions().max_requests, BatchOptions(discount=0.5).discount
        (50000, 0.5)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_requests: int = Field(default=50_000, ge=1, le=1_000_000)
    max_mb: float = Field(default=200.0, gt=0.0, le=10_000.0)
    max_attempts: int = Field(default=6, ge=1, le=20)
    poll_seconds: float = Field(default=30.0, gt=0.0, le=3600.0)
    discount: float = Field(default=0.5, ge=0.0, le=1.0)
    window: str = "24h"


class AskSettings(BaseModel):
    """What a judge is asked and how — the settings a run spec and a run file share, declared once.

    Attributes are documented on :class:`RunSpec`; :class:`judgelab.runfile.RunFile` adds the
    run file's own keys (items, output, several judges, connection options).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    template: str = "chiang-lee-story"
    criteria: list[str] | None = None
    variant: str | None = None
    samples: int = Field(default=3, ge=1, le=128)
    sampling: SamplingConfig = SamplingConfig()
    score: Score = "auto"
    query_mode: QueryMode = "independent"
    max_refusal_retries: int = Field(default=3, ge=0, le=20)
    top_logprobs: int = Field(default=0, ge=0, le=20)
    constrain: bool = False
    rater: str | None = None
    execution: Execution = "live"
    batch: BatchOptions = BatchOptions()

    @field_validator("sampling", mode="before")
    @classmethod
    def _chosen_sampling(cls, value: Any) -> Any:
        """A :class:`Sampling` given whole is a choice of every field (``seed`` ``None``: not set)."""
        return value.model_dump() if isinstance(value, BaseModel) else value

    @field_validator("criteria", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()] or None
        return value


class RunSpec(AskSettings):
    """What one judge is asked and how: template, criteria, variant, samples, sampling, scoring.

    Validated by pydantic (a bad value is one line) and frozen. ``score="auto"`` takes the
    judge's default (:meth:`JudgeSpec.default_score`); log-probability scoring (G-Eval style,
    the probability-weighted mean over the scale's labels) asks one deterministic sample per item
    and criterion, in independent conversations.

    Args:
        judge: the judge (:class:`JudgeSpec`, or its spec string).
        template: a shipped template's name or a YAML file (Chiang & Lee 2023's story prompt by default).
        criteria: the criteria to ask (all of the template's when ``None``).
        variant: an instruction variant of the template (e.g. ``explain``; section 3.3).
        samples: answers per item and criterion, the "annotators" of section 3.2.
        sampling: temperature, top-p, max tokens and seed of generated answers.
        score: ``auto``, ``parsed`` (read the rating from the text) or ``logprob``.
        query_mode: ``independent`` or ``conversation`` (appendix D.2.2).
        max_refusal_retries: regenerations of a refusal (appendix D.2.1).
        top_logprobs: alternatives per token to store beside a parsed rating.
        constrain: constrain each answer to the template's answer format (a whole scale point, one
            per metric, or Yes / No / Neutral) with the backend's mechanism: a llama.cpp grammar for
            the embedded judge, a JSON-schema ``response_format`` for OpenAI-compatible chat
            endpoints. Generated answers only (log-probability scoring reads the scale's labels
            already). Part of the run's identity; the label gets ``+constrained``.
        rater: a label the user insists on (reusing it with other settings is an error).
        label: a preferred label (recipes, DHP; ``{model}`` is the judge's model id), suffixed
            ``#<digest>`` when another run holds it.
        concurrency: calls in flight at most (the backend's own limit when ``None``).
        execution: ``live`` calls, or ``batch`` (the provider's batch API; :mod:`judgelab.run.provider_batch`).
        batch: the batch API's limits (:class:`BatchOptions`).

    Example:
        >>> spec = RunSpec(judge="openai:m", samples=2, criteria=["likability"])
        >>> spec.score_mode, spec.effective_samples, spec.preferred_label("m", "chiang-lee-story")
        ('parsed', 2, 'm@chiang-lee-story')
    """

    judge: JudgeSpec = JudgeSpec()
    label: str | None = None
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    sampling: Sampling = RUN_SAMPLING  # type: ignore[assignment]  # what was chosen, merged over the defaults

    @field_validator("sampling", mode="before")
    @classmethod
    def _chosen_sampling(cls, value: Any) -> Any:
        """A partial choice (a :class:`SamplingConfig` or mapping) fills in the run defaults
        (:func:`judgelab.settings.run_sampling`), not :class:`Sampling`'s own."""
        return value if isinstance(value, Sampling) else run_sampling(value)

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_string(cls, value: Any) -> Any:
        return {"spec": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _consistent(self) -> "RunSpec":
        if self.score == "logprob" and self.query_mode == "conversation":
            raise ValueError("log-probability scoring asks each criterion on its own; use --query-mode independent")
        if self.constrain and (self.score == "logprob" or (self.score == "auto" and self.judge.default_score() == "logprob")):
            from judgelab.errors import JudgelabError

            # checked here, before a model is loaded or a store opened (a refused command writes nothing)
            raise JudgelabError(_CONSTRAIN_LOGPROB + ("" if self.score == "logprob" else
                                " (this judge scores by log-probabilities unless told --score parsed)"))
        if self.execution == "batch":
            from judgelab.models.registry import backend_entry

            if not backend_entry(self.judge.kind).batch:
                from judgelab.errors import JudgelabError

                raise JudgelabError(f"the {self.judge.kind} judge has no batch API; --execution batch needs an "
                                 "openai:MODEL judge")
        return self

    @property
    def score_mode(self) -> ScoreMode:
        """``parsed`` or ``logprob``: ``score``, or the judge's default for ``auto``."""
        return self.judge.default_score() if self.score == "auto" else self.score

    def resolved(self, kind: str | None = None) -> "RunSpec":
        """This spec with ``score="auto"`` decided (the default of the backend ``kind``, else of its judge).

        Args:
            kind: the kind of the backend that will answer (a backend given directly to the run core).

        Returns:
            A copy whose ``score`` is ``parsed`` or ``logprob``.
        """
        if self.score != "auto":
            return self
        from judgelab.models.registry import default_score

        mode = default_score(kind) if kind else self.judge.default_score()
        if mode == "logprob" and self.constrain:
            from judgelab.errors import JudgelabError

            raise JudgelabError(_CONSTRAIN_LOGPROB + " (this judge scores by log-probabilities unless told --score parsed)")
        if mode == "logprob" and self.query_mode == "conversation":
            from judgelab.errors import JudgelabError

            raise JudgelabError("this judge scores by log-probabilities, which asks each criterion on its own: "
                                "use --score parsed with --query-mode conversation")
        return self.model_copy(update={"score": mode})

    @property
    def effective_samples(self) -> int:
        """Samples asked: 1 with log-probability scoring (deterministic), else ``samples``."""
        return 1 if self.score_mode == "logprob" else self.samples

    def preferred_label(self, model_id: str, template_name: str) -> str:
        """The label asked for: ``rater``, ``label`` with ``{model}`` filled in, or ``model@template[+variant]``.

        Args:
            model_id: the judge's model id.
            template_name: the loaded template's name.

        Returns:
            The label (the store may suffix ``#<digest>`` when another run holds it).
        """
        if self.rater:
            return self.rater
        if self.label:
            label = self.label.replace("{model}", model_id)
            return with_variant(label, CONSTRAINED) if self.constrain else label
        return judge(model_id, template_name, self.variant, self.constrain).label
