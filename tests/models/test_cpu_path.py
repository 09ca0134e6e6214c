"""The embedded judge's llama.cpp CPU path: probed in a child process, cached, overridable."""
from __future__ import annotations

import json

import pytest

from judgelab.errors import BackendError
from judgelab.models.backends import local_model as local


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path))
    monkeypatch.delenv("JUDGELAB_LLAMA_REPACK", raising=False)
    return tmp_path


def test_a_probe_that_segfaults_is_reported_not_fatal(tmp_path):
    crash = "import ctypes\nctypes.string_at(0)\n"  # SIGSEGV in the child, as llama.cpp's AMX path did
    survived, why = local.run_probe(tmp_path / "model.gguf", code=crash)
    assert survived is False
    assert "SIGSEGV" in why


def test_a_probe_that_passes(tmp_path):
    survived, why = local.run_probe(tmp_path / "m.gguf", code="print('judgelab-probe-ok')\n")
    assert (survived, why) == (True, "probe passed")


def test_a_probe_that_fails_cleanly_names_the_status(tmp_path):
    survived, why = local.run_probe(tmp_path / "m.gguf", code="import sys\nsys.exit('no model here')\n")
    assert survived is False and "status 1" in why and "no model here" in why


def test_verdict_falls_back_to_plain_buffers_and_is_cached(cache, tmp_path):
    calls = []

    def dying_probe(path):
        calls.append(path)
        return False, "probe died with SIGSEGV"

    first = local.choose_cpu_path(tmp_path / "m.gguf", probe=dying_probe)
    assert first.repack is False and "SIGSEGV" in first.reason
    second = local.choose_cpu_path(tmp_path / "m.gguf", probe=dying_probe)
    assert second.repack is False and second.reason.startswith("cached verdict")
    assert len(calls) == 1  # probed once per llama-cpp-python version and CPU
    stored = json.loads((cache / "llama-cpu-path.json").read_text())
    assert list(stored.values())[0]["repack"] is False
    assert first.key in stored and local.llama_cpp_version() in first.key


def test_a_probe_that_fails_cleanly_is_not_a_verdict_for_the_machine(cache, tmp_path):
    """A model file llama.cpp cannot load ends the probe with status 1: plain buffers for that load,
    but nothing cached (the verdict would hold for every model on the machine)."""
    calls = []

    def failing_probe(path):
        calls.append(path)
        return local.run_probe(path, code="import sys\nsys.exit('Failed to load model from file')\n")

    first = local.choose_cpu_path(tmp_path / "bad.gguf", probe=failing_probe)
    assert first.repack is False and first.reason.endswith("; not cached") and "status 1" in first.reason
    assert not (cache / "llama-cpu-path.json").exists()
    second = local.choose_cpu_path(tmp_path / "good.gguf", probe=lambda p: (True, "probe passed"))
    assert second.repack is True and len(calls) == 1


def test_a_new_llama_cpp_version_probes_again(cache, tmp_path, monkeypatch):
    local.choose_cpu_path(tmp_path / "m.gguf", probe=lambda p: (True, "probe passed"))
    monkeypatch.setattr(local, "llama_cpp_version", lambda: "99.0.0")
    again = local.choose_cpu_path(tmp_path / "m.gguf", probe=lambda p: (False, "probe died with SIGSEGV"))
    assert again.repack is False


def test_environment_overrides(cache, tmp_path, monkeypatch):
    never = lambda p: pytest.fail("no probe when the environment decides")  # noqa: E731
    monkeypatch.setenv("JUDGELAB_LLAMA_REPACK", "off")
    assert local.choose_cpu_path(tmp_path / "m.gguf", probe=never).repack is False
    monkeypatch.setenv("JUDGELAB_LLAMA_REPACK", "on")
    assert local.choose_cpu_path(tmp_path / "m.gguf", probe=never).repack is True
    monkeypatch.setenv("JUDGELAB_LLAMA_REPACK", "maybe")
    with pytest.raises(BackendError, match="on or off"):
        local.choose_cpu_path(tmp_path / "m.gguf", probe=never)


def test_a_corrupt_verdict_file_is_ignored(cache, tmp_path):
    (cache / "llama-cpu-path.json").write_text("{not json")
    path = local.choose_cpu_path(tmp_path / "m.gguf", probe=lambda p: (True, "probe passed"))
    assert path.repack is True


@pytest.mark.slow
def test_the_real_probe_runs_the_shipped_model(cache):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    model = local.default_model_path()
    survived, why = local.run_probe(model)
    # On a machine where llama.cpp's extra-buffer path crashes this is False — and we are still alive.
    assert survived == (why == "probe passed")
