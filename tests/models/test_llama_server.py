"""``python -m judgelab.llama_server``: llama-cpp-python's server with its model loaded on the embedded judge's
CPU path (llama.cpp's extra buffer types off where they crash), its defaults and its one-line errors."""
from __future__ import annotations

import json
import os
import re
import urllib.request

import pytest

from servers import ServerProcess, serve_command

pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server extra is not installed")

from judgelab import llama_server  # noqa: E402
from judgelab.models.backends import local_model  # noqa: E402


@pytest.fixture()
def gguf(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CONFIG_FILE", raising=False)
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


@pytest.mark.parametrize("setting, extra_buffers", [("off", False), ("on", True)])
def test_the_model_is_loaded_on_the_cpu_path_of_the_embedded_judge(gguf, monkeypatch, setting, extra_buffers):
    """What llama.cpp reads when llama-cpp-python's server builds its model: ``use_extra_bufts`` as the
    embedded judge's CPU path says (plain ``llama_cpp.server`` leaves it on, which crashes AMX CPUs)."""
    import llama_cpp.llama_cpp as capi
    import llama_cpp.server.app as server_app

    monkeypatch.setenv("JUDGELAB_LLAMA_REPACK", setting)
    seen = []

    def create_app(server_settings, model_settings):  # stands in for the model load llama-cpp-python does
        seen.append((capi.llama_model_default_params().use_extra_bufts, model_settings[0].model, model_settings[0].n_ctx))
        return "the app"

    monkeypatch.setattr(server_app, "create_app", create_app)
    settings = llama_server.read_settings(["--model", str(gguf), "--n_ctx", "512"])
    with llama_server.served_app(settings) as (app, cpu):
        assert app == "the app" and cpu == local_model.choose_cpu_path(gguf)
    assert seen == [(extra_buffers, str(gguf), 512)]
    assert capi.llama_model_default_params().use_extra_bufts is True  # put back after the block


def test_defaults_are_the_embedded_model_on_loopback(gguf, monkeypatch):
    monkeypatch.setattr(local_model, "default_model_path", lambda: gguf)
    settings = llama_server.read_settings([])
    assert (settings.model.model, settings.server.host, settings.server.port) == (str(gguf), "127.0.0.1", 8000)
    settings = llama_server.read_settings(["--host", "0.0.0.0", "--port", "0", "--n_threads", "3"])
    assert (settings.server.host, settings.server.port, settings.model.n_threads) == ("0.0.0.0", 0, 3)


@pytest.mark.parametrize("argv, needle", [
    (["--no-such-option", "1"], "unrecognized arguments: --no-such-option"),
    (["--model", "missing.gguf"], "--model missing.gguf: no such GGUF file"),
    (["--n_gpu_layers", "-7"], "--n_gpu_layers: Input should be greater than or equal to -1"),
    (["--n_ctx", "many"], "argument --n_ctx: invalid int value"),
])
def test_bad_options_are_one_line_and_status_2(gguf, capsys, argv, needle):
    if argv[0] == "--n_gpu_layers":
        argv = ["--model", str(gguf), *argv]
    with pytest.raises(SystemExit) as ended:
        llama_server.main(argv)
    err = capsys.readouterr().err
    assert ended.value.code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err
    assert err.startswith("python -m judgelab.llama_server: error: ")


def test_a_config_file_that_would_replace_the_model_is_refused(gguf, monkeypatch, capsys):
    monkeypatch.setenv("CONFIG_FILE", str(gguf.with_suffix(".json")))
    with pytest.raises(SystemExit) as ended:
        llama_server.main(["--model", str(gguf)])
    assert ended.value.code == 2 and "unset CONFIG_FILE" in capsys.readouterr().err


@pytest.mark.slow
def test_the_server_process_loads_no_repacked_weights_when_the_path_says_so(tmp_path):
    """The real server, as a user starts it: llama.cpp's own load log shows whether it repacked weights
    (``CPU_REPACK``/``AMX`` model buffers). Plain buffers: none. Extra buffers, run only where this
    machine's verdict says they are safe: some (the check can see them)."""
    model = local_model.default_model_path()
    settings = ["off"] + (["on"] if local_model.choose_cpu_path(model).repack else [])
    extra = re.compile(r"(CPU_REPACK|AMX) model buffer size")
    for setting in settings:
        server = ServerProcess(serve_command("--model", str(model), "--port", "0", "--n_ctx", "512"), tmp_path,
                               ready_line=r"at http://127\.0\.0\.1:(\d+)/v1; llama\.cpp CPU path: (.+?) — ",
                               ready_url=lambda m: f"http://127.0.0.1:{m.group(1)}/v1/models",
                               env={**os.environ, "JUDGELAB_LLAMA_REPACK": setting}, name="python -m judgelab.llama_server")
        try:
            body = json.dumps({"prompt": "The judge reads the text and answers:", "max_tokens": 2}).encode()
            request = urllib.request.Request(f"http://127.0.0.1:{server.ready_match.group(1)}/v1/completions",
                                             data=body, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=120) as answer:
                assert json.load(answer)["choices"][0]["finish_reason"] in {"length", "stop"}
            server.check_alive("after its first completion")
            path, log = server.ready_match.group(2), server.stderr()
        finally:
            server.stop()
        if setting == "off":
            assert path == "plain CPU buffers (no repack)" and not extra.search(log), extra.search(log)
        else:
            assert path == "extra-buffers (repack/AMX)" and extra.search(log)
