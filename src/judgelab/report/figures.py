"""Matplotlib figures written to files (no display needed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError

__all__ = ["heatmap", "bar_chart", "score_distributions", "scatter_identity"]


def _save(fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` (format by extension: .png, .pdf, .svg …) and close it.

    An unknown extension, a missing folder or a file that cannot be written is one clear error.
    """
    path = Path(path)
    import matplotlib.pyplot as plt

    try:
        formats = fig.canvas.get_supported_filetypes()
        if path.suffix.lower().lstrip(".") not in formats:
            raise JudgelabError(f"{path}: unknown image format {path.suffix or '(no extension)'!r}; "
                                f"use one of {', '.join('.' + f for f in sorted(formats))}")
        if not path.parent.is_dir():
            raise JudgelabError(f"{path}: folder {path.parent} does not exist")
        fig.tight_layout()
        try:
            fig.savefig(path, dpi=130)
        except OSError as exc:
            raise JudgelabError(f"cannot write figure {path}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return path


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def heatmap(table: pd.DataFrame, path: str | Path, title: str, fmt: str = "{:.2f}", cmap: str = "RdBu_r",
            vmin: float | None = -1.0, vmax: float | None = 1.0, annotate: bool = True) -> Path:
    """Rows × columns heatmap of a numeric table whose index labels the rows."""
    plt = _plt()
    values = table.to_numpy(dtype=float)
    height = max(3.0, 0.22 * len(table) + 1.5)
    fig, ax = plt.subplots(figsize=(1.2 * len(table.columns) + 3.5, height))
    im = ax.imshow(values, aspect="auto", cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=30, ha="right")
    ax.set_yticks(range(len(table)), [str(i) for i in table.index], fontsize=7 if len(table) > 30 else 9)
    if annotate and values.size <= 1200:
        for (i, j), v in np.ndenumerate(values):
            if not np.isnan(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6 if len(table) > 30 else 8)
    fig.colorbar(im, ax=ax, shrink=0.6)
    ax.set_title(title)
    return _save(fig, path)


def bar_chart(values: pd.DataFrame, path: str | Path, title: str, ylabel: str, threshold: float | None = None) -> Path:
    """Grouped bars: index = groups on the x axis, columns = series (e.g. judges)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(values) * max(1, len(values.columns))), 4))
    width = 0.8 / max(1, len(values.columns))
    x = np.arange(len(values))
    for k, col in enumerate(values.columns):
        ax.bar(x + k * width - 0.4 + width / 2, values[col].to_numpy(float), width, label=str(col))
    if threshold is not None:
        ax.axhline(threshold, color="red", linestyle="--", linewidth=1, label=f"threshold {threshold:g}")
    ax.set_xticks(x, [str(i) for i in values.index], rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, path)


def _histograms(ax, groups: dict[str, np.ndarray], bins: int, density: bool = False) -> None:
    """Overlaid histograms of several score groups on shared bins."""
    finite = [np.asarray(v, float)[~np.isnan(np.asarray(v, float))] for v in groups.values()]
    finite = [v for v in finite if v.size]
    lo = min((v.min() for v in finite), default=0.0)
    hi = max((v.max() for v in finite), default=1.0)
    edges = np.linspace(lo, hi if hi > lo else lo + 1, bins + 1)
    for name, v in groups.items():
        v = np.asarray(v, float)
        ax.hist(v[~np.isnan(v)], bins=edges, alpha=0.45, density=density, label=name)
    ax.set_xlabel("score")
    ax.legend(fontsize=7)


def score_distributions(groups: dict[str, np.ndarray], path: str | Path, title: str, bins: int = 20) -> Path:
    """Overlaid histograms of score distributions (e.g. originals vs perturbed copies)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    _histograms(ax, groups, bins)
    ax.set_ylabel("count")
    ax.set_title(title)
    return _save(fig, path)


def scatter_identity(x, y, path: str | Path, title: str, xlabel: str, ylabel: str) -> Path:
    """Scatter of judge vs human scores with the y = x line."""
    plt = _plt()
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter(x, y, s=12, alpha=0.6)
    lo = np.nanmin([np.nanmin(x), np.nanmin(y)])
    hi = np.nanmax([np.nanmax(x), np.nanmax(y)])
    ax.plot([lo, hi], [lo, hi], color="red", linestyle="--", linewidth=1, label="y = x")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return _save(fig, path)


def response_styles(per_judge: dict[str, dict[str, np.ndarray]], path: str | Path, title: str, bins: int = 20) -> Path:
    """One panel per judge: score distributions of the originals and of each perturbation level (DHP Figure 2)."""
    plt = _plt()
    n = max(1, len(per_judge))
    fig, axes = plt.subplots(1, n, figsize=(5 * n, 3.8), squeeze=False)
    for ax, (judge, groups) in zip(axes[0], per_judge.items()):
        _histograms(ax, groups, bins, density=True)
        ax.set_title(judge, fontsize=9)
    fig.suptitle(title, fontsize=9)
    return _save(fig, path)
