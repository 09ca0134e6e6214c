"""``python -m judgelab.llama_server``: llama-cpp-python's OpenAI-compatible server on the CPU path that is
safe on this machine.

``python -m llama_cpp.server`` builds its models with llama.cpp's extra buffer types (repacked
weights, the AMX int8 path), which crash the process on some CPUs at the first completion (see
:mod:`judgelab.models.backends.local_model`). This launcher takes the same options (llama-cpp-python's
own ``Settings``, through its ``add_args_from_model`` / ``parse_model_from_args``), and loads the model
inside :func:`~judgelab.models.backends.local_model.safe_cpu_path` — the embedded judge's CPU path
(probed once per machine, cached, ``JUDGELAB_LLAMA_REPACK=on|off`` overrides) — then serves
``llama_cpp.server.app.create_app``'s app with uvicorn. Defaults: ``--model`` the embedded judge's GGUF,
``--host 127.0.0.1``; ``--port 0`` picks a free port (said on the first line).
"""
from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, NoReturn

from judgelab.errors import EXIT_USAGE, JudgelabError

__all__ = ["DEFAULT_HOST", "ServeSettings", "read_settings", "served_app", "main"]

DEFAULT_HOST = "127.0.0.1"
PROG = "python -m judgelab.llama_server"


class _OneLineParser(argparse.ArgumentParser):
    """Bad options are one line and exit status 2 (argparse would print its usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{PROG}: error: {message} (see --help)\n")


@dataclass(frozen=True)
class ServeSettings:
    """What the launcher serves: llama-cpp-python's own settings objects.

    Attributes:
        server: ``llama_cpp.server.settings.ServerSettings`` (host, port, api_key, ssl …).
        model: ``llama_cpp.server.settings.ModelSettings`` (model path, n_ctx, n_threads …).
    """

    server: Any
    model: Any


def _parser() -> argparse.ArgumentParser:
    from llama_cpp.server.cli import add_args_from_model
    from llama_cpp.server.settings import Settings

    parser = _OneLineParser(
        prog=PROG, description="llama-cpp-python's OpenAI-compatible server (python -m llama_cpp.server) on the "
        "llama.cpp CPU path that is safe on this machine (the embedded judge's; docs/judges.md).",
        epilog=f"Defaults differ from llama_cpp.server's in two places: --model is the embedded judge's GGUF, "
        f"--host is {DEFAULT_HOST}. --port 0 picks a free port.")
    add_args_from_model(parser, Settings)
    return parser


def read_settings(argv: list[str]) -> ServeSettings:
    """Parse ``argv`` (llama_cpp.server's options) into its settings objects, with this launcher's defaults.

    Args:
        argv: the options, as ``python -m llama_cpp.server`` takes them.

    Returns:
        The :class:`ServeSettings`.

    Raises:
        JudgelabError: a value llama-cpp-python refuses, a model file that is not there, or a setting
            this launcher cannot honour (``CONFIG_FILE``, ``--hf_model_repo_id``).
        SystemExit: unknown options (one line, status 2) or ``--help``.
    """
    try:
        from llama_cpp.server.cli import parse_model_from_args
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError as exc:
        raise JudgelabError(f"the server needs llama-cpp-python's server extra ({exc.name} is missing): "
                            "pip install 'judgelab[serve]'") from None
    import pydantic

    if os.environ.get("CONFIG_FILE"):
        raise JudgelabError("CONFIG_FILE is set: this launcher serves the one model its options name; unset CONFIG_FILE")
    args = _parser().parse_args(argv)
    if getattr(args, "hf_model_repo_id", None):
        raise JudgelabError("--hf_model_repo_id is not supported here: download the GGUF and pass --model PATH")
    if args.model is None:
        from judgelab.models.backends.local_model import default_model_path

        args.model = str(default_model_path())
    elif not Path(args.model).is_file():
        raise JudgelabError(f"--model {args.model}: no such GGUF file")
    if args.host is None:
        args.host = DEFAULT_HOST
    try:
        return ServeSettings(parse_model_from_args(ServerSettings, args), parse_model_from_args(ModelSettings, args))
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "settings"
        raise JudgelabError(f"--{where}: {first.get('msg', 'invalid value')}") from None


@contextmanager
def served_app(settings: ServeSettings) -> Iterator[tuple[Any, Any]]:
    """llama-cpp-python's app with its model loaded on the safe CPU path: ``(app, CpuPath)``.

    The CPU path stays in force for the block, so a model llama-cpp-python loads again later (a
    reload) gets it too.
    """
    from llama_cpp.server.app import create_app

    from judgelab.models.backends.local_model import safe_cpu_path

    with safe_cpu_path(Path(settings.model.model)) as cpu:
        try:
            app = create_app(server_settings=settings.server, model_settings=[settings.model])
        except (ValueError, RuntimeError) as exc:
            raise JudgelabError(f"could not load GGUF model {settings.model.model}: {exc}") from None
        yield app, cpu


def _serve(settings: ServeSettings) -> None:
    import uvicorn

    from judgelab.serve import bind, is_loopback, url_host

    server = settings.server
    sock = bind(server.host, server.port)  # a port in use is one line, before the model loads
    if not is_loopback(server.host) and not server.api_key:
        print(f"{PROG}: note: --host {server.host} is reachable from other machines and --api_key is not set",
              file=sys.stderr)
    with served_app(settings) as (app, cpu):
        port = sock.getsockname()[1]
        scheme = "https" if server.ssl_certfile else "http"
        print(f"{PROG}: {settings.model.model} at {scheme}://{url_host(server.host)}:{port}/v1; "
              f"llama.cpp CPU path: {cpu.name} — {cpu.reason}", file=sys.stderr, flush=True)
        config = uvicorn.Config(app, ssl_keyfile=server.ssl_keyfile, ssl_certfile=server.ssl_certfile)
        uvicorn.Server(config).run(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    """The command: serve until Ctrl-C or SIGTERM; a user error is one line and exit status 2."""
    try:
        _serve(read_settings(sys.argv[1:] if argv is None else argv))
    except JudgelabError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
