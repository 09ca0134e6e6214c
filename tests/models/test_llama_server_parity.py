"""The same GGUF gives the same log-probability scores through ``--judge local`` and through a real
OpenAI-compatible llama.cpp server (llama-cpp-python's own, started by ``python -m judgelab.llama_server``:
``llama_cpp.server`` with its model loaded on the embedded judge's CPU path, so a CPU whose AMX path
crashes llama.cpp runs it too; a server that dies fails the test at once with its stderr).

Gemma's tokenizer spells " 4" as " " + "4": after "Answer:" the next token is mostly a bare space,
and reading the labels there gave ``no_label_mass`` for every judgment through the API. The OpenAI
backend now detects such a tokenizer once and reads the labels after a space, as the embedded judge
does.

llama.cpp's logits depend on how a prompt is split into batches (a token evaluated alone and the
same token inside a larger batch can differ by up to ~0.9 logit on this model, measured): the
embedded judge always evaluates in 64-token aligned blocks, while the server reuses the longest
prefix of the previous request and evaluates the rest from there. So the server is restarted
before each measured judgment, and both evaluate every prompt from an empty cache in 64-token
batches: then any difference would come from judgelab's reading of the answer, which is what is
under test.
"""
from __future__ import annotations

import asyncio

import pytest

from servers import ServerProcess, llama_server

pytestmark = pytest.mark.slow


def _start_server(model: str, port: int, log_dir) -> ServerProcess:
    """The llama.cpp server on ``port`` (0: a free one), evaluating in 64-token batches as the embedded judge."""
    return llama_server(log_dir, "--model", model, "--n_ctx", "4096", "--n_batch", "64", "--n_ubatch", "64",
                        "--n_threads", "2", "--verbose", "false", port=port)


def test_local_and_llama_server_give_the_same_logprob_scores(tmp_path):
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra is not installed")
    from judgelab.models.base import JudgeRequest, Sampling
    from judgelab.models.backends.local import LocalBackend, default_model_path
    from judgelab.models.backends.openai_compatible import OpenAIBackend
    from judgelab.logprob_score import expected_score
    from judgelab.prompts import load_template
    from judgelab.rate import demo_items

    template = load_template("chiang-lee-story")
    items = demo_items(6)
    requests = [JudgeRequest(messages=(("user", template.render("grammaticality", {"text": i.text})),),
                             sampling=Sampling(), score_cue=template.logprob_cue) for i in items]
    model = str(default_model_path())
    local = LocalBackend(n_threads=2, reuse_prefix=False)

    async def local_scores() -> list[float | None]:
        out = []
        for request in requests:
            response = await local.complete(request)
            out.append(expected_score(response.choices[0].tokens[0][2], (1, 5))[0])
        return out

    async def api_scores() -> tuple[list[float | None], OpenAIBackend]:
        server = await asyncio.to_thread(_start_server, model, 0, tmp_path)  # a free port, kept by the restarts
        port = int(server.ready_match.group(1))
        api = OpenAIBackend(model="gemma", base_url=f"http://127.0.0.1:{port}/v1", style="completion", concurrency=1, max_retries=2)
        out = []
        try:
            # the server loaded its model on the embedded judge's CPU path (the one that is safe here)
            assert server.ready_match.group(2) == local.cpu_path.name, (server.ready_match.group(0), local.cpu_path)
            warm = JudgeRequest(messages=(("user", template.render("likability", {"text": items[0].text})),),
                                sampling=Sampling(), score_cue=template.logprob_cue)
            await server.watch(api.complete(warm))  # the backend learns the tokenizer's habit once
            assert api.space_before_label is True
            for request in requests:
                await asyncio.to_thread(server.stop)
                server = await asyncio.to_thread(_start_server, model, port, tmp_path)
                response = await server.watch(api.complete(request))
                out.append(expected_score(response.choices[0].tokens[0][2], (1, 5))[0])
        finally:
            await asyncio.to_thread(server.stop)
            await api.aclose()
        return out, api

    expected = asyncio.run(local_scores())
    got, api = asyncio.run(api_scores())
    assert all(s is not None for s in expected) and all(s is not None for s in got), (expected, got)
    for item, a, b in zip(items, expected, got):
        assert abs(a - b) <= 1e-3, (item.item_id, a, b)
    assert any("spells ' 4'" in note for note in api.notes)
