"""Any OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp server, Ollama, TGI …).

Uses the official ``openai`` SDK over aiohttp (``openai.DefaultAioHttpClient``, from the
``openai[aiohttp]`` extra; ``transport="httpx"`` chooses the SDK's default client) with its
own retries switched off. Each call is one attempt: a 429, a 5xx, a timeout or a broken
connection is raised as a :class:`~judgelab.errors.TransientError` (with the server's
``Retry-After``), and :class:`judgelab.models.retry.CallGate` retries it, as it does for every backend.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from judgelab.errors import (
    BackendError,
    CallTimeout,
    ConnectionFailed,
    JudgelabError,
    RateLimited,
    ServerError,
    Unreachable,
)
from judgelab.models.backends.openai_answers import _space_then_digit, read_chat, read_completion, read_openai_body
from judgelab.models.backends.openai_http import (
    OVERLOADED,
    RETRY_LATER,
    SERVER_ERRORS,
    available_transports,
    cause,
    error_fingerprint,
    http_client,
    pick_transport,
    refused,
    retry_after_seconds,
    server_reason,
)
from judgelab.models.capabilities import EndpointCapabilities, refuses_response_format
from judgelab.models.registry import register_backend
from judgelab.models.retry import RetryPolicy
from judgelab.settings import connection_default

if TYPE_CHECKING:
    import openai
from judgelab.models.base import (
    Backend,
    Capabilities,
    JudgeRequest,
    JudgeResponse,
    flatten_messages,
)

__all__ = ["OpenAIBackend", "retry_after_seconds", "available_transports", "read_openai_body"]

class OpenAIBackend(Backend):
    """Any OpenAI-compatible endpoint through the official SDK (chat or completion requests).

    One attempt per call; transient failures are raised for :class:`~judgelab.models.retry.CallGate`
    to retry (the SDK's own retries are off). Registered as ``openai:MODEL[@BASE_URL]``.

    Args:
        model: the model name the server knows.
        base_url: the endpoint (``$OPENAI_BASE_URL`` or OpenAI's when ``None``).
        api_key: the key (``$OPENAI_API_KEY`` when ``None``; never stored).
        style: ``chat`` or ``completion`` (completion-style log-probability scoring).
        concurrency: calls at once.
        max_retries, backoff_base, backoff_cap: the retry policy (:class:`~judgelab.models.retry.RetryPolicy`).
        timeout: seconds one attempt may take (``--timeout``).
        supports_n, top_logprobs, supports_seed: what the server offers.
        transport: ``auto`` (aiohttp, an error if missing), ``aiohttp`` or ``httpx``.
        max_tokens_param: ``auto`` (switch once on the server's answer), ``max_tokens`` or
            ``max_completion_tokens`` (reasoning models).

    Raises:
        BackendError: an unknown style, length parameter or transport.

    Example:
        >>> judge = OpenAIBackend("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="k")  # doctest: +SKIP
        >>> judge.identity()["base_url"]  # doctest: +SKIP
        'http://127.0.0.1:9/v1'
    """
    kind = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        style: str = connection_default("style"),
        concurrency: int = connection_default("concurrency"),
        max_retries: int = connection_default("max_retries"),
        backoff_base: float = connection_default("backoff_base"),
        backoff_cap: float = 30.0,
        timeout: float = connection_default("timeout"),
        supports_n: bool = connection_default("supports_n"),
        top_logprobs: int = 20,
        supports_seed: bool = True,
        transport: str = connection_default("transport"),
        max_tokens_param: str = connection_default("max_tokens_param"),
    ) -> None:
        import openai
        if style not in {"chat", "completion"}:
            raise BackendError(f"unknown request style {style!r}; use chat or completion")
        if max_tokens_param not in {"auto", "max_tokens", "max_completion_tokens"}:
            raise BackendError(f"unknown --max-tokens-param {max_tokens_param!r}; use auto, max_tokens or max_completion_tokens")
        #: The request parameter that limits the answer's length. Reasoning models refuse
        #: ``max_tokens`` and need ``max_completion_tokens``; with ``auto`` the backend starts
        #: with ``max_tokens`` and switches once when the server says it is unsupported.
        self.max_tokens_param = "max_tokens" if max_tokens_param == "auto" else max_tokens_param
        self._auto_token_param = max_tokens_param == "auto"
        self._notes: list[str] = []
        #: What the endpoint showed it can do (n, chat log-probabilities, response_format, concurrency).
        self.caps = self.learned = EndpointCapabilities()
        #: Whether scores are read after a bare space (see :func:`_space_then_digit`); None until known.
        self.space_before_label: bool | None = None
        self.model_id = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        if not self.base_url.startswith(("http://", "https://")):
            from judgelab.secrets import mask_url_secrets

            raise BackendError(f"the judge endpoint must be an http(s) URL, not {mask_url_secrets(self.base_url)!r}")
        if "@" in self.base_url.split("//", 1)[1].split("/", 1)[0]:
            raise BackendError("credentials in the endpoint URL are not accepted: pass the key with --api-key or OPENAI_API_KEY")
        if "?" in self.base_url or "#" in self.base_url:
            # a query string often carries a key (…/v1?key=sk-…); it would reach run.json, the store and messages
            raise BackendError("a query string in the endpoint URL is not accepted (it may hold a key, which must never be "
                               "stored): give the URL up to its path and the key with --api-key or OPENAI_API_KEY")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if "api.openai.com" in self.base_url:
                raise BackendError("no API key: pass --api-key or set OPENAI_API_KEY")
            key = "not-needed"  # local servers (vLLM, llama.cpp, Ollama) accept any key
        self.style = style
        self.timeout = timeout
        self.retry_policy = RetryPolicy(max_retries=max_retries, backoff_base=backoff_base, backoff_cap=backoff_cap)
        self.capabilities = Capabilities(
            max_n=128 if supports_n else 1,
            top_logprobs=top_logprobs,
            seed=supports_seed,
            score_mode=top_logprobs > 0,
            concurrency=concurrency,
            # a JSON schema is a chat-completion option; /v1/completions has no response_format
            constrain="json_schema" if style == "chat" else None,
        )
        self.transport = pick_transport(transport)
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=key,
            max_retries=0,
            timeout=timeout,
            http_client=http_client(self.transport, concurrency, timeout),
        )

    def identity(self) -> dict[str, Any]:
        # The transport and the length parameter's name are not part of the identity: they do not change the answers.
        """The judge's identity: kind, model, request style and endpoint (no key, no transport).

        Returns:
            A dict; the transport and the length parameter's name are left out, as they do not
            change the answers.
        """
        return {"kind": self.kind, "model": self.model_id, "style": self.style, "base_url": self.base_url}

    @property
    def notes(self) -> tuple[str, ...]:
        """What the endpoint taught this run (a switched length parameter, a tokenizer habit)."""
        return tuple(self._notes + self.caps.notes())

    def share_capabilities(self, caps: EndpointCapabilities) -> None:
        """Learn into ``caps`` (one record for the replicas of a fleet)."""
        self.caps = self.learned = caps

    def run_facts(self) -> dict[str, Any]:
        """The transport, the length parameter's name (they do not change the answers) and what the endpoint
        showed it can do (``capabilities``: :meth:`judgelab.models.capabilities.EndpointCapabilities.to_dict`)."""
        return {"transport": self.transport, "max_tokens_param": self.max_tokens_param,
                "capabilities": self.caps.to_dict()}

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        await self._client.close()

    async def _complete(self, request: JudgeRequest) -> JudgeResponse:
        """One attempt; a failure worth retrying is raised as a :class:`~judgelab.errors.TransientError`."""
        import openai
        start = time.perf_counter()
        sent_format = (self.caps.response_format_in_use() if self.style == "chat" and request.answer_format is not None
                       and request.score_cue is None else None)  # the response_format mechanism of this attempt
        try:
            response = await self._send(request)
        except openai.APIStatusError as exc:
            code = exc.status_code
            wait = retry_after_seconds(getattr(exc.response, "headers", None))
            if code == 429:
                raise RateLimited(f"HTTP 429 from {self.base_url}", wait) from None
            reason = f"HTTP {code} {server_reason(exc)}".rstrip()
            if sent_format is not None and refuses_response_format(code, reason):  # the next mechanism, at once
                self.caps.refused_response_format(sent_format, reason)  # (or one line: none is left)
                return await self._complete(request)
            if code in SERVER_ERRORS:
                fingerprint = None if code in RETRY_LATER else error_fingerprint(exc)  # the same twice: permanent
                raise ServerError(f"server error from {self.base_url}: {reason}", wait, fingerprint,
                                  overloaded=code in OVERLOADED) from None
            raise BackendError(f"judge endpoint {self.base_url} refused the request: {reason}") from None
        except openai.APIConnectionError as exc:  # APITimeoutError included
            # checked first: the SDK's aiohttp transport reports a refused connection as a timeout
            if refused(exc):
                raise Unreachable(f"judge endpoint {self.base_url} is unreachable (connection refused or unknown host)") from None
            if isinstance(exc, openai.APITimeoutError):
                raise CallTimeout(f"no answer from {self.base_url} within {self.timeout:g} s (--timeout)") from None
            raise ConnectionFailed(f"connection to {self.base_url} broke ({cause(exc)})") from None
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as exc:
            what = "chat completion" if self.style == "chat" else "completion"
            raise BackendError(f"judge endpoint {self.base_url} answered with something that is not an OpenAI "
                               f"{what} ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}); "
                               f"check --base-url and --style") from None
        response.latency_s = time.perf_counter() - start
        self.caps.saw_samples(request.n, len(response.choices))  # the run asks the others (run/execute.py)
        return response

    def _switch_token_param(self, exc: "openai.APIStatusError") -> bool:
        """Switch once from ``max_tokens`` to ``max_completion_tokens`` when the server refuses the former
        (True also when a concurrent request already switched)."""
        if not self._auto_token_param or exc.status_code != 400:
            return False
        if self.max_tokens_param == "max_completion_tokens":
            return True
        text = str(exc.message or "") + " " + str(getattr(exc, "body", "") or "")
        if "max_tokens" not in text or not any(w in text.lower() for w in ("unsupported", "not supported", "max_completion_tokens")):
            return False
        self.max_tokens_param = "max_completion_tokens"
        self._notes.append("the endpoint refused max_tokens; switched to max_completion_tokens for the rest of the run")
        return True

    async def _create(self, path: str, kwargs: dict[str, Any], headers: dict[str, str] | None) -> Any:
        """POST the body :meth:`request_body` built, as it is, through the SDK's client (``client.post``: its
        transport, retries off, auth and errors); the answer is the decoded JSON body (``cast_to=object``),
        read by :func:`~judgelab.models.backends.openai_answers.read_chat` as a batch answer is.

        The SDK's ``create`` would walk the body's fields again to transform them (about a fifth of a
        zero-latency call's CPU), and building its completion objects from the answer took about a tenth;
        the body is already the JSON an OpenAI batch line carries, so it is sent unchanged: a live call and
        a batch line of the same request carry the same body and are read by the same reader.
        """
        import openai

        cast: Any = object  # the decoded JSON (a str when the server answered something else than JSON)
        options: Any = {"headers": headers} if headers else {}
        endpoint = path.removeprefix("/v1")  # the client's base URL ends in /v1
        try:
            return await self._client.post(endpoint, body=kwargs, cast_to=cast, options=options)
        except openai.BadRequestError as exc:
            if "max_tokens" not in kwargs or not self._switch_token_param(exc):
                raise
        kwargs = dict(kwargs)
        kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
        return await self._client.post(endpoint, body=kwargs, cast_to=cast, options=options)

    def request_body(self, request: JudgeRequest, cue_suffix: str = "") -> tuple[str, dict[str, Any]]:
        """(URL path, JSON body) of one request exactly as the live call sends it (what an OpenAI
        batch-input line carries: ``/v1/chat/completions`` or ``/v1/completions``)."""
        s = request.sampling
        scoring = request.score_cue is not None
        top = request.top_logprobs or (20 if scoring else 0)
        common: dict[str, Any] = {
            "model": self.model_id,
            "temperature": 0.0 if scoring else s.temperature,
            "top_p": s.top_p,
            self.max_tokens_param: 1 if scoring else s.max_tokens,
            "n": request.n,
        }
        if s.seed is not None:
            common["seed"] = s.seed
        if self.style == "chat":
            messages = request.as_dicts()
            if scoring and request.score_cue:
                messages[-1] = {"role": messages[-1]["role"], "content": messages[-1]["content"] + "\n" + request.score_cue}
            body = dict(common, messages=messages)
            if top:
                body.update(logprobs=True, top_logprobs=top)
            if request.answer_format is not None and not scoring:
                body["response_format"] = self.caps.response_format_body(request.answer_format)
            return "/v1/chat/completions", body
        prompt = flatten_messages(request.messages)
        if scoring and request.score_cue:
            prompt = prompt + "\n" + request.score_cue + cue_suffix
        body = dict(common, prompt=prompt)
        if top:
            body["logprobs"] = top
        return "/v1/completions", body

    def batchable(self, request: JudgeRequest) -> str | None:
        """Why a request cannot be answered from a batch (one request, one answer), or None.

        Completion-style log-probability scoring may need a second request after a bare space
        (a tokenizer habit learnt from the first answer), which a batch line cannot express.
        """
        if self.style == "completion" and request.score_cue is not None:
            return ("completion-style log-probability scoring cannot run as a batch: its labels may be read after a "
                    "second request (a tokenizer that spells ' 4' as ' ' + '4', learnt from the first answer), and vllm "
                    "run-batch reads no /v1/completions lines; score it live, or batch with --style chat (chat lines, "
                    "scored from the chat template's tokens: another rater) or --score parsed")
        return None

    def batch_request(self, request: JudgeRequest) -> tuple[str, dict[str, Any]]:
        """(URL path, body) of a batch-input line: the live request's body (see :meth:`request_body`)."""
        self.check(request)
        why = self.batchable(request)
        if why is not None:
            from judgelab.errors import CapabilityError

            raise CapabilityError(why)
        return self.request_body(request)

    def batch_client(self) -> Any:
        """The SDK client (its ``files`` and ``batches`` resources serve ``--execution batch``)."""
        return self._client

    def read_batch_answer(self, body: Any) -> JudgeResponse:
        """An answer from a batch-output line's ``response.body`` (:meth:`read_body`)."""
        return self.read_body(body)

    def read_body(self, body: Any) -> JudgeResponse:
        """An answer from the JSON body of a (batch) response, read as a live answer is (:func:`read_openai_body`)."""
        return read_openai_body(body, self.style, self.model_id)

    def _read_chat(self, raw: Any) -> JudgeResponse:
        return read_chat(raw, self.model_id)

    def _read_completion(self, raw: Any) -> JudgeResponse:
        return read_completion(raw, self.model_id)

    async def _send(self, request: JudgeRequest, cue_suffix: str = "") -> JudgeResponse:
        scoring = request.score_cue is not None
        headers = {"X-Judgelab-Request-Key": request.key} if request.key else None
        if self.style == "chat":
            path, kwargs = self.request_body(request)
            raw = await self._create(path, kwargs, headers)
            response = self._read_chat(raw)
            if scoring:  # no log-probabilities over chat: one line naming --style completion, not a run of no_label_mass
                self.caps.saw_chat_scoring([c.tokens for c in response.choices], self.base_url)
            return response
        if scoring and not cue_suffix and self.space_before_label:
            return await self._send(request, cue_suffix=" ")  # known tokenizer habit: one request
        path, kwargs = self.request_body(request, cue_suffix)
        raw = await self._create(path, kwargs, headers)
        response = self._read_completion(raw)
        if scoring and not cue_suffix:
            choices = response.choices
            if self.space_before_label is None:
                self.space_before_label = _space_then_digit(choices)
                if self.space_before_label:
                    self._notes.append("the judge's tokenizer spells ' 4' as ' ' + '4': scores are read after a space "
                                      "appended to the cue, as the embedded judge does")
            if self.space_before_label:
                # Tokenizers such as Gemma's have no " 4" token: the labels come one token after a
                # bare space. Read them there — exactly what the embedded judge does for such tokenizers.
                second = await self._send(request, cue_suffix=" ")
                second.extra["score_prefix"] = " "
                second.prompt_tokens += response.prompt_tokens
                return second
        return response


# -- registry ------------------------------------------------------------------
_OPTIONS = ("api_key", "style", "concurrency", "max_retries", "backoff_base", "supports_n", "timeout", "transport",
            "max_tokens_param")


def _parse_spec(rest: str, defaults: dict[str, Any]) -> dict[str, Any]:
    if not rest:
        raise JudgelabError("an openai judge needs a model: --judge openai:MODEL or openai:MODEL@BASE_URL")
    model, _, url = rest.partition("@")
    opts = {k: v for k, v in defaults.items() if k in _OPTIONS}
    opts.update(model=model, base_url=url or defaults.get("base_url"))
    if url and "," in url:  # a fleet of replicas: openai:MODEL@URL1,URL2,…
        opts["replicas"] = [u.strip() for u in url.split(",")]
        opts["base_url"] = None
        if len([u for u in opts["replicas"] if u]) < 2:
            raise JudgelabError(f"a fleet names two or more replica URLs separated by commas, got {url!r}")
    return opts


def _build(**options: Any) -> Backend:
    if not options.get("model"):
        raise JudgelabError("the openai judge needs --model")
    replicas = options.pop("replicas", None)
    if replicas:
        from judgelab.models.backends.fleet import Fleet

        return Fleet(options.pop("model"), replicas, OpenAIBackend, **options)
    return OpenAIBackend(**options)


register_backend("openai", syntax="openai:MODEL[@BASE_URL[,BASE_URL…]]", parse=_parse_spec, build=_build,
                 options=("model", "base_url", *_OPTIONS), description="any OpenAI-compatible endpoint (official SDK)",
                 batch=True, read_answer=lambda body, judge: read_openai_body(body, str(judge.get("style", "chat")),
                                                                              str(judge.get("model", ""))))
