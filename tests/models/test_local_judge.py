"""The embedded judge (llama.cpp, Gemma 3 270M from PyPI): offline, deterministic, prefix reuse."""
import asyncio
import math

import pytest

from conftest import judgelab_cmd
from judgelab.models.base import JudgeRequest, Sampling

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")


@pytest.fixture(scope="module")
def local():
    from judgelab.models.backends.local import LocalBackend

    return LocalBackend()


PARA = ("Read the paragraph and rate its quality from 1 (worst) to 5 (best).\nParagraph:\n"
        "The committee met on Tuesday to review the budget for the new library wing. " * 6)


def score(backend, question):
    req = JudgeRequest(messages=(("user", PARA + question),), sampling=Sampling(), score_cue="Answer:")
    return asyncio.run(backend.complete(req))


@pytest.mark.slow
def test_score_mode_gives_a_label_distribution(local):
    response = score(local, "Question: How fluent is the paragraph?")
    alternatives = response.choices[0].tokens[0][2]
    mass = sum(math.exp(alternatives[str(i)]) for i in range(1, 6))
    assert 0.2 < mass <= 1.0
    assert response.prompt_tokens > 50 and response.completion_tokens == 0


@pytest.mark.slow
def test_prefix_reuse_is_exact_and_saves_work(local):
    questions = ["Question: How fluent is the paragraph?", "Question: How coherent is the paragraph?"] * 2
    local.reuse_prefix = False
    local._llm.reset()
    fresh = [score(local, q).choices[0].tokens[0][2] for q in questions]
    local.reuse_prefix = True
    local.tokens_evaluated = local.tokens_reused = 0
    reused = [score(local, q).choices[0].tokens[0][2] for q in questions]
    assert fresh == reused  # identical numbers: canonical batch boundaries
    assert local.tokens_reused > local.tokens_evaluated


@pytest.mark.slow
def test_generation(local):
    req = JudgeRequest(messages=(("user", PARA + "Question: How fluent is it?\nAnswer:"),), sampling=Sampling(max_tokens=8, seed=1))
    response = asyncio.run(local.complete(req))
    assert isinstance(response.choices[0].text, str) and response.completion_tokens >= 1


@pytest.mark.slow
def test_demo_runs_offline(tmp_path):
    result = judgelab_cmd("demo", "--n-items", "2", "--quiet", "--out", str(tmp_path / "demo"), timeout=600)
    assert result.returncode == 0, result.stderr
    assert "Discernment scores" in result.stdout and "D_avg" in result.stdout
    for name in ("ratings.csv", "perturbed.jsonl", "perturbations.csv", "discernment.json", "discernment.png", "response_style.png"):
        assert (tmp_path / "demo" / name).exists(), name


def test_missing_gguf_is_one_line(tmp_path):
    result = judgelab_cmd("demo", "--model-path", str(tmp_path / "missing.gguf"), "--quiet", "--out", str(tmp_path / "d"))
    assert result.returncode == 2 and "GGUF model not found" in result.stderr and "Traceback" not in result.stderr


def test_model_is_assembled_into_an_empty_cache(tmp_path):
    from judgelab.models.backends.local import default_model_path

    path = default_model_path(tmp_path / "cache")
    assert path.exists() and path.stat().st_size > 200_000_000
    assert not list((tmp_path / "cache").glob("*.partial"))  # assembled atomically
    assert default_model_path(tmp_path / "cache") == path  # second call reuses it


@pytest.mark.slow
def test_dry_run_counts_prompt_tokens_with_the_judges_own_tokenizer(local, tmp_path):
    from judgelab.models.base import flatten_messages

    messages = (("user", "Rate the fluency of this paragraph from 1 to 5."), ("assistant", "4"), ("user", "And now?"))
    expected = len(local._llm.tokenize(flatten_messages(messages).encode("utf-8"), add_bos=True, special=False))
    assert local.count_prompt_tokens(messages) == expected > 0
    result = judgelab_cmd("demo", "--dry-run", "--n-items", "1", "--out", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stderr
    assert "the embedded judge's tokenizer" in result.stdout and not (tmp_path / "demo").exists()


@pytest.mark.slow
def test_a_pairwise_verdict_is_read_from_the_embedded_judges_log_probabilities(tmp_path):
    """rate --pairs with the embedded judge: the exact mass on the choice letters A and B gives p_first (before,
    only digit labels were scored and every verdict was no_label_mass)."""
    import pandas as pd

    from conftest import run_cli

    responses = tmp_path / "responses.jsonl"
    responses.write_text(
        '{"item_id": "q1", "instruction": "What is the capital of Peru?", "system": "base", "response": "Cusco."}\n'
        '{"item_id": "q1", "instruction": "What is the capital of Peru?", "system": "m1", "response": "Lima."}\n',
        encoding="utf-8")
    r = run_cli("rate", "--items", str(responses), "--pairs", "baseline:base", "--template", "pairwise-comparison",
                "--judge", "local", "--samples", "1", "--out", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    v = pd.read_csv(tmp_path / "run" / "verdicts.csv")
    assert len(v) == 2 and set(v["status"]) == {"ok"} and v["p_first"].between(0, 1).all()
    assert set(v["choice"]) <= {"first", "second", "tie"}
