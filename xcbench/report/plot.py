"""Plots of run results: any two measured quantities, with error bars and the Pareto front,
and single-example latency against the number of classes."""
from __future__ import annotations

import math

from ..store.atomic import replace_atomically
from .aggregate import LATENCY_SPREAD_PERCENTILES, group_rows
from .axis_scale import apply_scale, thin_crowded_log_ticks
from .columns import get_column
from .machines import short_machine_names
from .params import params_label, shown_params

MARKERS = "osD^vP*X<>ph"
#: characters of parameter values in a legend entry (the table shows them all)
LEGEND_PARAMS = 60

#: error-bar notes, by what an axis shows
LATENCY_BARS = (f"latency error bars: p{LATENCY_SPREAD_PERCENTILES[0]}-"
                f"p{LATENCY_SPREAD_PERCENTILES[1]} of all timed single-example calls")
SEED_BARS = "error bars: ± std over seeds (none for one seed)"


def pareto_front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both coordinates (lower is better),
    in order of increasing first coordinate."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1]))
    front, best = [], math.inf
    for i in order:
        if points[i][1] < best:
            front.append(i)
            best = points[i][1]
    return front


def row_label(row: dict, machine_names: dict | None = None) -> str:
    """Legend text of a row: method (params, as the report table shows them), and its
    machine's name from ``machine_names`` when given (plots that mix machines)."""
    params = shown_params(row["params"], row.get("effective_params"), limit=LEGEND_PARAMS)
    return with_machine(f"{row['method']} ({params})", row["machine"], machine_names)


def with_machine(text: str, machine: str, machine_names: dict | None) -> str:
    """``text``, followed by the machine's short name when ``machine_names`` is given."""
    return f"{text}, {machine_names[machine]}" if machine_names else text


def _machine_names(rows: list[dict]) -> dict | None:
    """Short machine names when ``rows`` mix machines, else None."""
    labels = {r["machine"] for r in rows}
    return short_machine_names(labels) if len(labels) > 1 else None


def method_colours(methods) -> dict[str, tuple]:
    """One colour per method name (an RGBA tuple), in sorted order of ``methods`` through
    matplotlib's tab10 (tab20 beyond 10 methods; reused beyond 20). A report computes it
    once from all its records, so a method keeps its colour in every plot."""
    import matplotlib

    names = sorted(set(methods))
    cmap = matplotlib.colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {name: cmap(i % cmap.N) for i, name in enumerate(names)}


def row_styles(rows: list[dict], colours: dict | None = None) -> list[tuple]:
    """(colour, marker) per row: the colour of its method in ``colours`` (made from these
    rows when None or missing a method), one marker per params of a method."""
    methods = [r["method"] for r in rows]
    if colours is None or not set(methods) <= set(colours):
        colours = method_colours(methods)
    seen: dict[str, int] = {}
    styles = []
    for row in rows:
        n = seen.get(row["method"], 0)
        seen[row["method"]] = n + 1
        styles.append((colours[row["method"]], MARKERS[n % len(MARKERS)]))
    return styles


def bar_note(columns) -> str:
    """What the error bars of a plot of ``columns`` show: the latency spread only where
    an axis is latency, the seed spread only where an axis is another quantity."""
    notes = [LATENCY_BARS] if any(c.name == "p50" for c in columns) else []
    if any(c.name != "p50" for c in columns):
        notes.append(SEED_BARS if not notes else "other " + SEED_BARS)
    return "; ".join(notes)


def missing_note(records: list[dict], shown_methods, columns) -> str:
    """A sentence naming the methods with finished runs but no point on a plot of
    ``columns`` (they did not measure one of them, e.g. no path cost); '' if none."""
    missing = sorted({r["method"] for r in records if r.get("status") == "ok"}
                     - set(shown_methods))
    if not missing:
        return ""
    absent = " or ".join(c.header for c in columns)
    return f"not shown (no {absent} measured): {', '.join(missing)}"


def value_and_bar(row: dict, column) -> tuple[float, tuple[float, float] | None]:
    """A row's value of ``column`` and its error bar (below, above): the latency spread
    for p50, else ± std over seeds; None when there is no spread to show."""
    value, std = row["values"][column.name]
    if column.name == "p50" and row.get("latency_spread"):
        lo, hi = row["latency_spread"]
        return value, (max(value - lo, 0.0), max(hi - value, 0.0))
    if row["n_seeds"] > 1 and std and math.isfinite(std):
        return value, (std, std)
    return value, None


def _extent(values_and_bars) -> tuple[float, float]:
    lows = [v - (b[0] if b else 0) for v, b in values_and_bars]
    highs = [v + (b[1] if b else 0) for v, b in values_and_bars]
    positive = [v for v in lows if v > 0]
    low = min(lows)
    if low <= 0 and positive and min(v for v, _ in values_and_bars) > 0:
        low = min(positive)  # a bar reaching below zero must not force a linear axis
    return low, max(highs)


def metric_figure(records: list[dict], x: str, y: str, title: str = "",
                  colours: dict | None = None):
    """A (figure, axes) of quantity ``y`` against ``x`` (column names of
    ``xcbench.report.columns``): one point per method, params and machine with error bars
    (method colours from ``colours``, see :func:`method_colours`), the Pareto front drawn
    when both have a better direction, the Bayes error on error axes, and a note naming the
    methods that measured only one of them; None if no row measured both."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xcol, ycol = get_column(x, "--x"), get_column(y, "--y")
    rows = [r for r in group_rows(records)
            if all(math.isfinite(r["values"][c.name][0]) for c in (xcol, ycol))]
    if not rows:
        return None
    names = _machine_names(rows)
    xs = [value_and_bar(r, xcol) for r in rows]
    ys = [value_and_bar(r, ycol) for r in rows]
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=120)
    signs = [1 if c.better == "lower" else -1 for c in (xcol, ycol)]
    front = set()
    if xcol.better and ycol.better:
        front_order = pareto_front([(signs[0] * xv, signs[1] * yv)
                                    for (xv, _), (yv, _) in zip(xs, ys)])
        front = set(front_order)
        ax.step([xs[i][0] for i in front_order], [ys[i][0] for i in front_order],
                where="post", color="black", linestyle="--", linewidth=1.2, alpha=0.7,
                zorder=2, label="Pareto front (points outlined)")
    for i, (row, (colour, marker)) in enumerate(zip(rows, row_styles(rows, colours))):
        (xv, xbar), (yv, ybar) = xs[i], ys[i]
        ax.errorbar([xv], [yv], xerr=None if xbar is None else [[xbar[0]], [xbar[1]]],
                    yerr=None if ybar is None else [[ybar[0]], [ybar[1]]], fmt=marker,
                    color=colour, markersize=7, capsize=3, elinewidth=1, alpha=0.9,
                    markeredgecolor="black" if i in front else colour,
                    markeredgewidth=1.5 if i in front else 0.5, zorder=3,
                    label=row_label(row, names))
    stats = records[0].get("dataset_stats") or {}
    ylow, yhigh = _extent(ys)
    if ycol.name == "top1_error" and stats.get("bayes_error") is not None:
        bayes = 100 * stats["bayes_error"]
        ax.axhline(bayes, color="red", linestyle=":", label="Bayes error")
        ylow, yhigh = min(ylow, bayes), max(yhigh, bayes)
    xscale = apply_scale(ax, "x", *_extent(xs), spans_decades=xcol.spans_decades)
    yscale = apply_scale(ax, "y", ylow, yhigh, spans_decades=ycol.spans_decades)
    notes = [bar_note((xcol, ycol)),
             missing_note(records, {r["method"] for r in rows}, (xcol, ycol))]
    label_axes(fig, ax, title, axis_label(xcol, xscale), axis_label(ycol, yscale), notes)
    return fig, ax


def metric_plot(records: list[dict], x: str, y: str, path, title: str = "",
                colours: dict | None = None) -> bool:
    """Save ``metric_figure`` as a PNG at ``path``; False if there was nothing to plot."""
    drawn = metric_figure(records, x, y, title, colours)
    if drawn is None:
        return False
    save_figure(drawn[0], path)
    return True


def axis_label(column, scale: str) -> str:
    """Axis text: the column header, and ``log scale`` when it is one."""
    return column.header + (" - log scale" if scale == "log" else "")


def label_axes(fig, ax, title: str, xlabel: str, ylabel: str, notes=()) -> None:
    """Axis labels, title, grid, the legend beside the axes and ``notes`` (lines of small
    text under the plot; empty ones left out); log tick labels that would overlap are
    thinned once the layout is final."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    notes = [n for n in notes if n]
    if notes:
        fig.text(0.01, 0.01, "\n".join(notes), fontsize=6, color="dimgrey",
                 va="bottom")
    fig.tight_layout(rect=(0, 0.03 * max(len(notes), 1), 1, 1))
    thin_crowded_log_ticks(fig, ax)


def save_figure(fig, path) -> None:
    """Save ``fig`` as a PNG at ``path`` (legend included; whole or not at all: a full disk
    leaves the previous picture) and close it."""
    import matplotlib.pyplot as plt

    try:
        replace_atomically(path, lambda f: fig.savefig(f, format="png", bbox_inches="tight"))
    finally:
        plt.close(fig)


def error_vs_latency_plot(records: list[dict], path, title: str = "",
                          colours: dict | None = None) -> bool:
    """Top-1 error (%) against p50 single-example latency (ms); see ``metric_plot``."""
    return metric_plot(records, "p50", "top1_error", path, title, colours)


def error_vs_path_cost_plot(records: list[dict], path, title: str = "",
                            colours: dict | None = None) -> bool:
    """Top-1 error (%) against the vectors evaluated per prediction; see ``metric_plot``."""
    return metric_plot(records, "path_cost", "top1_error", path, title, colours)


def dataset_families(records: list[dict]) -> dict[str, list[str]]:
    """Families of datasets: names sharing a prefix (all but the last ``-`` part, e.g.
    ``synthetic-sparse`` for ``synthetic-sparse-1k``) whose numbers of classes differ;
    {family: dataset names sorted by K}, only families of two or more datasets."""
    n_classes = {}
    for r in records:
        k = (r.get("dataset_stats") or {}).get("n_classes")
        if k is not None and "-" in r["dataset"]:
            n_classes[r["dataset"]] = k
    groups: dict[str, list[str]] = {}
    for name in n_classes:
        groups.setdefault(name.rsplit("-", 1)[0], []).append(name)
    return {family: sorted(names, key=n_classes.get) for family, names in groups.items()
            if len({n_classes[n] for n in names}) > 1}


def latency_lines(records: list[dict]) -> list[tuple[str, list[tuple[int, dict]]]]:
    """(legend label, [(K, row), ...] sorted by K) per line of the latency-vs-K plot; a
    single point where a method ran at one K only (e.g. a flat baseline refused beyond it).
    A method (with its query-time parameters, e.g. a decoder, and machine) run once per
    dataset is one line even when its settings differ with K (a depth chosen per K): the
    label then says "settings per K". A method run with several settings on one dataset
    gets one line per settings instead."""
    n_classes = {r["dataset"]: (r.get("dataset_stats") or {}).get("n_classes") for r in records}
    query_names = {r["method"]: set(r.get("query_params") or {}) for r in records}
    groups: dict[tuple, list[dict]] = {}
    for row in group_rows(records):
        if math.isfinite(row["values"]["p50"][0]) and n_classes.get(row["dataset"]):
            query = {k: v for k, v in row["params"].items() if k in query_names[row["method"]]}
            groups.setdefault((row["method"], params_label(query), row["machine"]),
                              []).append(row)
    lines: dict[tuple, list[tuple[int, dict]]] = {}
    for (method, query, machine), rows in groups.items():
        if len({r["dataset"] for r in rows}) == len(rows):
            same = len({params_label(r["params"]) for r in rows}) == 1
            label = (row_label(rows[0]) if same else
                     f"{method} ({'' if query == 'defaults' else query + ', '}settings per K)")
            lines[(label, machine)] = [(n_classes[r["dataset"]], r) for r in rows]
        else:
            for r in rows:
                lines.setdefault((row_label(r), machine), []).append((n_classes[r["dataset"]], r))
    return [(label, sorted(points, key=lambda p: p[0]))
            for (label, _), points in sorted(lines.items())]


def latency_vs_k_plot(records: list[dict], path, title: str = "",
                      colours: dict | None = None) -> bool:
    """Save a PNG of p50 single-example latency (ms) against the number of classes K, one
    line per method (see ``latency_lines``; colours from ``colours``) and machine, with the
    latency spread as error bars; False if no line has two points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p50 = get_column("p50")
    lines = latency_lines(records)
    if not any(len(points) > 1 for _, points in lines):
        return False
    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=120)
    firsts = [points[0][1] for _, points in lines]
    names = _machine_names(firsts)
    all_ms, all_ks = [], []
    for (label, points), (colour, marker) in zip(lines, row_styles(firsts, colours)):
        ks = [k for k, _ in points]
        bars = [value_and_bar(row, p50) for _, row in points]
        ms = [v for v, _ in bars]
        yerr = [[b[0] if b else 0 for _, b in bars], [b[1] if b else 0 for _, b in bars]]
        ax.errorbar(ks, ms, yerr=yerr, marker=marker, color=colour, capsize=3,
                    label=with_machine(label, points[0][1]["machine"], names))
        all_ms += bars
        all_ks += ks
    xscale = apply_scale(ax, "x", min(all_ks), max(all_ks))
    yscale = apply_scale(ax, "y", *_extent(all_ms), spans_decades=True)
    xlabel = "number of classes K" + (" - log scale" if xscale == "log" else "")
    label_axes(fig, ax, title, xlabel, axis_label(p50, yscale), [bar_note((p50,))])
    save_figure(fig, path)
    return True
