"""DHP task definitions, stored as YAML data (``dhp/tasks/*.yaml``); users add their own by path.

A task names its rubric template (the judgelab Template format: one criterion per metric,
G-Eval style prompts) — by name or path (``template: dhp-summarization``, resolved like
``--template``; the shipped rubrics live in ``prompts/templates/dhp-*.yaml``) or inline as a
mapping (user task files written that way keep working) — and its perturbations, each with a level (character, word, sentence),
a method (rule or llm), a kind and its size ``k`` or degree (Wang et al., Table 2).
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, field_validator, model_validator

from judgelab.errors import JudgelabError
from judgelab.prompts import Template, load_template, load_yaml_model, resolve_data_file

__all__ = ["Perturbation", "DhpTask", "load_task", "available_tasks", "RULE_KINDS", "LLM_KINDS"]

RULE_KINDS = ("delete_characters", "typos", "delete_words", "shuffle_sentences", "random_other", "wrong_ending")
LLM_KINDS = ("fictional-entities", "grammatical-errors", "rewrite-insert")
LEVELS = ("character", "word", "sentence")


class Perturbation(BaseModel):
    """One perturbation of a DHP task (DHP Table 2): its level (character, word, sentence), method
    (rule or llm), kind and size ``k`` (rule) or degree (llm)."""

    name: str
    level: Literal["character", "word", "sentence"]
    method: Literal["rule", "llm"]
    kind: str
    k: int | Literal["all"] | None = None
    degree: Literal["minor", "major"] | None = None

    @model_validator(mode="after")
    def _kind_fits(self) -> "Perturbation":
        kinds = RULE_KINDS if self.method == "rule" else LLM_KINDS
        if self.kind not in kinds:
            raise ValueError(f"unknown {self.method} perturbation kind {self.kind!r}; known: {', '.join(kinds)}")
        if self.kind in {"delete_characters", "typos", "delete_words"} and not isinstance(self.k, int):
            raise ValueError(f"perturbation {self.name!r} needs an integer k")
        if self.method == "llm" and self.degree is None:
            raise ValueError(f"perturbation {self.name!r} needs a degree (minor or major)")
        return self


class DhpTask(BaseModel):
    """A DHP task (DHP §3): the unit judged, the rubric template (a template name, path or inline
    template; its criteria are the metrics) and the hierarchical perturbations."""

    name: str
    description: str = ""
    unit: str = "text"
    template: Template
    perturbations: list[Perturbation]

    @field_validator("template", mode="before")
    @classmethod
    def _named_template(cls, value: Any) -> Any:
        """A template name or ``.yaml`` path is loaded with :func:`judgelab.prompts.load_template`.

        A copy is returned, so the task file's loader never alters the cached template.
        """
        if isinstance(value, str):
            return load_template(value).model_copy()
        return value

    @property
    def metrics(self) -> list[str]:
        return list(self.template.criteria)

    def perturbation(self, name: str) -> Perturbation:
        for p in self.perturbations:
            if p.name == name:
                return p
        raise JudgelabError(f"unknown perturbation {name!r} for task {self.name!r}; known: {', '.join(p.name for p in self.perturbations)}")

    @model_validator(mode="after")
    def _unique(self) -> "DhpTask":
        names = [p.name for p in self.perturbations]
        if len(names) != len(set(names)) or "original" in names:
            raise ValueError("perturbation names must be unique and not 'original'")
        return self


def _tasks_dir() -> Path:
    return Path(str(resources.files("judgelab.dhp") / "tasks"))


def available_tasks() -> list[str]:
    """The shipped task names.

    Example:
        >>> available_tasks()
        ['question-answering', 'story-completion', 'summarization', 'translation']
    """
    return sorted(p.stem for p in _tasks_dir().glob("*.yaml"))


@lru_cache(maxsize=32)
def load_task(name_or_path: str) -> DhpTask:
    """A shipped task by name (summarization, story-completion, question-answering, translation) or a YAML path."""
    path = resolve_data_file(name_or_path, _tasks_dir(), "DHP task", available_tasks())
    return load_yaml_model(path, DhpTask, "task")
