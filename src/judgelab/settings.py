"""The sampling and connection settings of a run, and the one place their defaults are stated and merged.

A setting nobody chose is ``None`` ("not set"), never a default value in disguise, so the layers a
run is built from can be merged without guessing: an explicit choice (a flag, a Python argument)
wins over the run file, which wins over a recipe's own choice (a published setting: HANNA's 32 or
256 tokens, NLE's 160 tokens), which wins over the default stated here (:func:`merge`).

* :class:`SamplingConfig` — temperature, top-p, max tokens and seed as chosen (each may be unset);
  :func:`run_sampling` merges layers into the :class:`Sampling` a request carries, over
  :data:`RUN_SAMPLING_DEFAULTS` (Chiang & Lee 2023, §3.2: T = 1.0, top-p 0.9; 128 tokens).
* :class:`JudgeOptions` — how to reach a judge (endpoint, key, concurrency, retries, timeout …),
  each unset until chosen; :meth:`JudgeOptions.for_backend` merges them over :data:`CONNECTION_DEFAULTS`.

Bounds live in the models only: the command line, run files and Python calls get the same check
and the same one-line error.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from judgelab.choices import Style, TokenParam, Transport

__all__ = ["Sampling", "SamplingConfig", "JudgeOptions", "RUN_SAMPLING_DEFAULTS", "CONNECTION_DEFAULTS",
           "merge", "run_sampling", "connection_default"]

#: A request nobody tuned (log-probability scoring, DHP's and the padding probe's deterministic asks):
#: greedy, the whole nucleus, 128 tokens. :class:`Sampling`'s own defaults.
REQUEST_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 128, "seed": None}


class Sampling(BaseModel):
    """Sampling parameters of one request (validated: bad values are a one-line error; frozen).

    Every field has a value: this is what a request sends and what the ledger key and the run's
    identity digest. What a user chose (possibly nothing) is a :class:`SamplingConfig`; a rating
    run's values come from :func:`run_sampling`. Fields left out take :data:`REQUEST_DEFAULTS`.

    Args:
        temperature: 0 (greedy) to 2.
        top_p: nucleus mass in (0, 1].
        max_tokens: the answer's length limit (an answer cut off there is ``truncated``).
        seed: a sampling seed, for backends that take one (``Capabilities.seed``).

    Example:
        >>> Sampling(temperature=1.0, top_p=0.9).model_dump()
        {'temperature': 1.0, 'top_p': 0.9, 'max_tokens': 128, 'seed': None}
    """

    temperature: float = Field(default=REQUEST_DEFAULTS["temperature"], ge=0.0, le=2.0)
    top_p: float = Field(default=REQUEST_DEFAULTS["top_p"], gt=0.0, le=1.0)
    max_tokens: int = Field(default=REQUEST_DEFAULTS["max_tokens"], ge=1, le=32768)
    seed: int | None = REQUEST_DEFAULTS["seed"]

    model_config = {"frozen": True}


class SamplingConfig(BaseModel):
    """Sampling as chosen: each field ``None`` until someone sets it (bounds as :class:`Sampling`'s).

    Example:
        >>> SamplingConfig(temperature=0.5).model_dump(exclude_none=True)
        {'temperature': 0.5}
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(default=None, ge=1, le=32768)
    seed: int | None = None


#: Sampling of rating runs unless told otherwise: Chiang & Lee (2023), §3.2 (T = 1.0, top-p 0.9), 128 tokens.
RUN_SAMPLING_DEFAULTS = SamplingConfig(temperature=1.0, top_p=0.9, max_tokens=128)

class JudgeOptions(BaseModel):
    """How to reach a judge: the connection options shared by every ``--judge`` of a command.

    Each option is ``None`` until chosen; :meth:`for_backend` gives the backend the chosen values
    over :data:`CONNECTION_DEFAULTS`. The API key is held for building the client only: it is
    excluded from every dump, repr and recorded setting (keys never reach a store, log or report).

    Args:
        base_url: the endpoint of ``openai:MODEL`` without ``@URL``.
        api_key: the endpoint's key (else the backend reads ``$OPENAI_API_KEY``); never recorded.
        style: ``chat`` or ``completion`` requests.
        concurrency: calls in flight at most (the backend's connection pool).
        max_retries: retries of server errors, timeouts and broken connections.
        backoff_base: the first retry's wait in seconds (doubled at each retry).
        timeout: seconds one attempt may take.
        supports_n: the server answers several samples in one request.
        transport: the HTTP transport (``auto`` is aiohttp).
        max_tokens_param: ``auto``, ``max_tokens`` or ``max_completion_tokens``.
        model_path: the GGUF of a bare ``local``.

    Example:
        >>> options = JudgeOptions(api_key="sk-secret", concurrency=4)
        >>> "sk-secret" in repr(options) or "sk-secret" in options.model_dump_json()
        False
        >>> options.for_backend()["concurrency"], options.for_backend()["timeout"]
        (4, 120.0)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    style: Style | None = None
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    max_retries: int | None = Field(default=None, ge=0, le=50)
    backoff_base: float | None = Field(default=None, gt=0.0, le=60.0)
    timeout: float | None = Field(default=None, gt=0.0, le=3600.0)
    supports_n: bool | None = None
    transport: Transport | None = None
    max_tokens_param: TokenParam | None = None
    model_path: Path | None = None

    def for_backend(self) -> dict[str, Any]:
        """The options as the registry's parsers take them (each backend takes those it declares):
        the chosen ones over :data:`CONNECTION_DEFAULTS`, the key in clear text, the model path as text."""
        merged = merge(self, CONNECTION_DEFAULTS, into=JudgeOptions)
        out = {k: getattr(merged, k) for k in type(self).model_fields}
        out["api_key"] = self.api_key.get_secret_value() if self.api_key else None
        out["model_path"] = str(self.model_path) if self.model_path else None
        return out


#: How a judge is reached unless told otherwise (an unset ``base_url``: ``$OPENAI_BASE_URL``, else OpenAI's).
CONNECTION_DEFAULTS = JudgeOptions(style="chat", concurrency=16, max_retries=10, backoff_base=0.5, timeout=120.0,
                                   supports_n=True, transport="auto", max_tokens_param="auto")

def connection_default(name: str) -> Any:
    """The default of one connection option (a backend's constructor default reads it here)."""
    return getattr(CONNECTION_DEFAULTS, name)


_Config = TypeVar("_Config", SamplingConfig, "JudgeOptions")


def merge(*layers: "BaseModel | Mapping[str, Any] | None", into: type[_Config]) -> _Config:
    """The layers merged field by field, first set value wins (explicit, run file, recipe, default).

    Args:
        *layers: configurations, mappings or ``None``, most explicit first; a ``None`` value is "not set".
        into: the configuration class to build (its validation applies to the result).

    Example:
        >>> merge(SamplingConfig(temperature=0.0), {"max_tokens": 96}, RUN_SAMPLING_DEFAULTS, into=SamplingConfig).model_dump()
        {'temperature': 0.0, 'top_p': 0.9, 'max_tokens': 96, 'seed': None}
    """
    out: dict[str, Any] = {}
    for layer in layers:
        if layer is None:
            continue
        values = dict(layer) if isinstance(layer, Mapping) else {k: getattr(layer, k) for k in type(layer).model_fields}
        for key, value in values.items():
            if value is not None and key not in out:
                out[key] = value
    return into(**out)


def run_sampling(*layers: "SamplingConfig | Sampling | Mapping[str, Any] | None") -> Sampling:
    """The :class:`Sampling` of a rating run: ``layers`` (most explicit first) over :data:`RUN_SAMPLING_DEFAULTS`.

    A :class:`Sampling` layer has every field set, so a layer after it only fills an unset seed.

    Example:
        >>> run_sampling({"temperature": 0.5}).model_dump()
        {'temperature': 0.5, 'top_p': 0.9, 'max_tokens': 128, 'seed': None}
    """
    chosen = merge(*layers, RUN_SAMPLING_DEFAULTS, into=SamplingConfig)
    return Sampling(**chosen.model_dump())
