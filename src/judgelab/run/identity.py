"""A run's identity: what makes two runs ask the same questions the same way (and share a rater label)."""
from __future__ import annotations

from typing import Any

from judgelab.digest import sha256_hex
from judgelab.prompts import Template
from judgelab.secrets import url_without_credentials
from judgelab.spec import RunSpec

__all__ = ["run_identity", "public_identity", "identity_digest"]


def run_identity(spec: RunSpec, judge: dict[str, Any], template: Template, criteria: list[str]) -> dict[str, Any]:
    """What defines a run: two runs with equal identities ask the same questions the same way.

    The judge (kind, model, endpoint without credentials), the template's name and a SHA-256 of
    its full content (an edited template is a new run even under the same name), the criteria,
    instruction variant, samples, score and query modes, the sampling parameters (when text is
    generated), log-probability and refusal options, and ``constrain`` when answers are constrained
    (only then, so earlier free runs keep their identity). What an item says is not part of it: each
    judgment records the prompt it answered (:func:`judgelab.store.prompt_key`).

    Args:
        spec: the run's settings (``score`` decided: :meth:`RunSpec.resolved`).
        judge: the backend's :meth:`~judgelab.models.base.Backend.identity`.
        template: the loaded template.
        criteria: the criteria asked.

    Returns:
        A JSON-serialisable dict; :meth:`judgelab.store.Store.claim_rater` keys rater labels by it.

    Example:
        >>> from judgelab.prompts import load_template
        >>> spec = RunSpec(judge="openai:m").resolved()
        >>> identity = run_identity(spec, {"kind": "scripted-test-double", "model": "m"}, load_template("chiang-lee-story"), ["likability"])
        >>> identity["samples"], identity["score"]
        (3, 'parsed')
    """
    scoring = spec.score_mode == "logprob"
    identity = {
        "judge": public_identity(judge),
        "template": template.name,
        "template_sha256": template.digest(),
        "criteria": list(criteria),
        "variant": spec.variant,
        "samples": spec.effective_samples,
        "score": spec.score_mode,
        "query_mode": spec.query_mode,
        "sampling": None if scoring else spec.sampling.model_dump(),
        "top_logprobs": 0 if scoring else spec.top_logprobs,
        "max_refusal_retries": 0 if scoring else spec.max_refusal_retries,
    }
    if spec.constrain:  # only when set: identities (and so labels) of earlier free runs stay as they were
        identity["constrain"] = True
    return identity


def identity_digest(identity: dict[str, Any]) -> str:
    """The first 12 hex digits of the identity's SHA-256 (recorded with every judgment)."""
    return sha256_hex(identity)[:12]


def public_identity(identity: dict[str, Any]) -> dict[str, Any]:
    """A judge identity with credentials removed from its URL (user:password@, query string).

    Example:
        >>> public_identity({"kind": "openai", "base_url": "http://user:pw@host:8000/v1?key=s"})["base_url"]
        'http://host:8000/v1'
    """
    out = dict(identity)
    url = out.get("base_url")
    if isinstance(url, str):
        out["base_url"] = url_without_credentials(url)
    return out
