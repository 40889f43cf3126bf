"""Results drawn with matplotlib: sample counts, expectation values over time (or any parameter),
and the cost of a contraction plan step by step.

Each function returns a matplotlib ``Figure`` (made without pyplot: no window opens, nothing
global changes; ``figure.savefig(path)`` writes it, a notebook shows it), or draws into the
``ax=`` it is given and returns that axes' figure. matplotlib is needed:
``pip install matplotlib``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from .numerics.arguments import checked_count

__all__ = ["counts", "expectations", "plan", "ANNOTATED_BARS"]

#: a counts histogram writes each bar's value above it up to this many bars (past it they overlap)
ANNOTATED_BARS = 40


def _axes(ax: Any, size: tuple[float, float], rows: int = 1) -> tuple[Any, list[Any]]:
    if ax is not None:
        return ax.figure, [ax]
    try:
        from matplotlib.figure import Figure
    except ImportError as error:  # pragma: no cover - matplotlib is a test dependency
        raise ImportError("tq.plot needs matplotlib: pip install matplotlib") from error
    figure = Figure(figsize=size, layout="constrained")
    return figure, list(np.atleast_1d(figure.subplots(rows, 1, sharex=True)))


def counts(samples: Mapping[str, int], top: int | None = 20, ax: Any = None, title: str | None = None,
           probabilities: bool = False) -> Any:
    """A bar chart of sample counts (``c.sample(...)``'s dict), the ``top`` most frequent
    outcomes (all with ``top=None``), most frequent first, ties in key order; the rest summed
    in one bar "other" when some are left out. Each bar's value is written above it when there
    are at most :data:`ANNOTATED_BARS` bars.

    Parameters
    ----------
    samples : mapping of str to int
        Outcome -> count, as ``sample(format="counts")`` returns.
    top : int or None
        How many outcomes get their own bar.
    probabilities : bool
        Show frequencies (counts over the total) instead of counts.

    Examples
    --------
    >>> import tyxonq as tq
    >>> samples = tq.Circuit(2).h(0).cx(0, 1).sample(1000, seed=1)
    >>> figure = tq.plot.counts(samples)
    >>> [label.get_text() for label in figure.axes[0].get_xticklabels()]
    ['00', '11']
    """
    if not isinstance(samples, Mapping) or not samples:
        raise TypeError("samples must be a non-empty dict of outcome -> count, as c.sample(shots) returns")
    values = {str(key): int(value) for key, value in samples.items()}
    if any(value < 0 for value in values.values()):
        raise ValueError("samples holds a negative count; counts are numbers of shots")
    ordered = sorted(values.items(), key=lambda item: (-item[1], item[0]))
    if top is not None:
        top = checked_count(top, "top")
        if len(ordered) > top:
            ordered = ordered[:top] + [("other", sum(v for _, v in ordered[top:]))]
    total = sum(values.values())
    labels = [key for key, _ in ordered]
    heights = [value / total if probabilities else value for _, value in ordered]
    figure, (axes,) = _axes(ax, (max(3.0, 0.45 * len(labels) + 1.5), 3.2))
    bars = axes.bar(range(len(labels)), heights, color="#4a7fb5", gid="count")
    axes.set_xticks(range(len(labels)), labels, rotation=90 if max(map(len, labels)) > 3 else 0,
                    family="monospace")
    axes.set_ylabel("probability" if probabilities else "count")
    axes.set_xlabel("outcome")
    for bar, value in zip(bars if len(bars) <= ANNOTATED_BARS else (), heights):
        axes.annotate(f"{value:.3g}" if probabilities else f"{value}", (bar.get_x() + bar.get_width() / 2,
                      bar.get_height()), ha="center", va="bottom", fontsize=7)
    if title is not None:
        axes.set_title(title)
    return figure


def expectations(times: Sequence[float], values: Any, labels: Sequence[str] | None = None, ax: Any = None,
                 xlabel: str = "time", ylabel: str = "expectation", title: str | None = None) -> Any:
    """Expectation values against time (or any parameter): ``values`` of shape ``(len(times),)``
    or ``(len(times), k)`` (what :func:`tyxonq.evolve` returns with ``observables=``), one line
    per column, named by ``labels``.

    Examples
    --------
    >>> import tyxonq as tq
    >>> h = tq.hamiltonians.heisenberg(4)
    >>> times = [0.0, 0.5, 1.0]
    >>> values = tq.evolve(h, tq.Circuit(4).x(0), times, observables=[tq.PauliSum([(1.0, "ZIII")])])
    >>> figure = tq.plot.expectations(times, values, labels=["Z0"])
    >>> len(figure.axes[0].get_lines())
    1
    """
    host = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values)
    if np.iscomplexobj(host):
        if np.max(np.abs(host.imag), initial=0.0) > 1e-9 * max(1.0, float(np.max(np.abs(host), initial=0.0))):
            raise ValueError("values are complex; plot their real parts (expectations of Hermitian "
                             "observables are real)")
        host = host.real
    times = np.asarray(times, dtype=float)
    if host.ndim == 1:
        host = host[:, None]
    if host.ndim != 2 or host.shape[0] != len(times):
        raise ValueError(f"values has shape {host.shape}; expected ({len(times)},) or ({len(times)}, k): "
                         "one row per time")
    if labels is not None and len(labels) != host.shape[1]:
        raise ValueError(f"labels has {len(labels)} names for {host.shape[1]} columns of values")
    figure, (axes,) = _axes(ax, (5.0, 3.2))
    for column in range(host.shape[1]):
        axes.plot(times, host[:, column], marker="o" if len(times) <= 30 else None, markersize=3,
                  label=None if labels is None else labels[column], gid="expectation")
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    if labels is not None:
        axes.legend(fontsize=8)
    if title is not None:
        axes.set_title(title)
    return figure


def plan(report: Any, ax: Any = None, title: str | None = None) -> Any:
    """A contraction plan's cost step by step, from :func:`tyxonq.rehearse` (or
    ``c.rehearse(...)``): the width of each pairwise step's result (log2 of its entries) and its
    log10 multiply-adds, the plans one after the other, costliest first. With ``ax`` only the
    widths are drawn (into it).

    Examples
    --------
    >>> import tyxonq as tq
    >>> c = tq.templates.brickwork(20, [0.1] * 80, 4)
    >>> figure = tq.plot.plan(tq.rehearse(c.expectation_ps, z=[10]))
    >>> [axes.get_ylabel() for axes in figure.axes]
    ['width (log2 entries)', 'log10 multiply-adds']
    """
    steps = getattr(report, "steps", None)
    if steps is None:
        raise TypeError("report must be a tq.ContractionReport (tq.rehearse(fn, ...) or c.rehearse(...))")
    if not steps:
        raise ValueError("this report has no contraction steps (its routes: "
                         f"{', '.join(report.routes) or 'none'}): nothing was contracted to plot")
    widths = [width for width, _ in steps]
    flops = [math.log10(max(count, 1)) for _, count in steps]
    figure, axes = _axes(ax, (6.0, 4.0), rows=2)
    positions = np.arange(1, len(steps) + 1)
    axes[0].plot(positions, widths, drawstyle="steps-mid", color="#4a7fb5", gid="width")
    axes[0].axhline(report.width, color="#b54a4a", linewidth=0.8, linestyle="--", gid="largest")
    axes[0].set_ylabel("width (log2 entries)")
    if len(axes) > 1:
        axes[1].bar(positions, flops, color="#7fa65a", gid="flops")
        axes[1].set_ylabel("log10 multiply-adds")
        axes[1].set_xlabel("contraction step")
    else:
        axes[0].set_xlabel("contraction step")
    axes[0].set_title(title if title is not None else
                      f"width {report.width:.0f}, log10 flops {report.log10_flops:.2f}, "
                      f"{report.distinct_plans} plan(s)", fontsize=9)
    return figure
