import matplotlib.lines
import pytest
from report_records import record, write_store

from xcbench.cli import main
from xcbench.report.axis_scale import choose_scale, padded_limits
from xcbench.report.plot import latency_lines, latency_vs_k_plot, metric_figure, pareto_front


def test_pareto_front_keeps_the_undominated_points_in_x_order():
    assert pareto_front([(3, 1), (1, 3), (2, 2), (2, 3), (4, 4)]) == [1, 2, 0]


def test_a_narrow_latency_range_stays_linear_and_a_wide_one_is_log():
    assert choose_scale(0.0665, 0.07) == "linear"  # microsecond differences
    assert choose_scale(0.02, 0.2) == "log"
    assert choose_scale(20, 60, spans_decades=False) == "linear"  # errors stay linear
    assert choose_scale(0.0, 5.0) == "linear"
    low, high = padded_limits(1.0, 2.0, "linear")
    assert low < 1.0 and high > 2.0
    assert padded_limits(5.0, 5.0, "linear") == (4.5, 5.5)


def _records():
    spread = [0.04e-3, 0.05e-3, 0.06e-3, 0.07e-3]
    return [record("fast", top1=0.4, p50_ms=0.01, latencies=spread),
            record("slow", top1=0.1, p50_ms=0.1),
            record("bad", top1=0.5, p50_ms=0.2),
            record("seeded", top1=0.3, p50_ms=0.05, seed=0),
            record("seeded", top1=0.2, p50_ms=0.05, seed=1)]


def test_error_vs_latency_figure_has_error_bars_front_line_and_legend():
    fig, ax = metric_figure(_records(), "p50", "top1_error")
    legend = {t.get_text(): h for t, h in zip(ax.get_legend().texts,
                                              ax.get_legend().legend_handles)}
    front = legend["Pareto front (points outlined)"]
    assert isinstance(front, matplotlib.lines.Line2D) and front.get_linestyle() == "--"
    step = next(line for line in ax.get_lines() if line.get_label().startswith("Pareto"))
    assert len(step.get_xdata()) == 3  # fast, seeded, slow; bad is dominated
    assert {"bad (defaults)", "fast (defaults)", "seeded (defaults)"} <= set(legend)
    bars = {c.get_label(): c for c in ax.containers}
    assert bars["fast (defaults)"].has_xerr and not bars["slow (defaults)"].has_xerr
    assert bars["seeded (defaults)"].has_yerr  # std over two seeds
    assert ax.get_xscale() == "log" and ax.get_yscale() == "linear"
    assert ax.xaxis.get_major_formatter()(0.05, 0) == "0.05"  # plain numbers, no 5e-2


def test_quantities_without_a_direction_get_no_front():
    records = [record("a", p50_ms=0.01, depth=1), record("b", p50_ms=0.02)]
    for r, depth in zip(records, (3, 5)):
        r["stats"] = {"depth": depth}
    fig, ax = metric_figure(records, "depth", "p50")
    assert not [line for line in ax.get_lines() if line.get_label().startswith("Pareto")]
    assert metric_figure(records, "path_cost", "p50") is None


def test_latency_vs_k_plot_draws_one_line_per_method(tmp_path):
    records = [record(m, dataset=f"fam-{k}", k=k, p50_ms=ms * k)
               for k in (10, 100) for m, ms in (("a", 1e-3), ("b", 2e-3))]
    assert latency_vs_k_plot(records, tmp_path / "k.png")
    assert (tmp_path / "k.png").stat().st_size > 10_000


def test_plot_command_writes_the_chosen_axes(tmp_path, capsys):
    write_store(tmp_path, _records() + [record("x", dataset="other")])
    assert main(["plot", "--out", str(tmp_path), "--x", "fit_seconds", "--y", "top5_error",
                 "--dataset", "d"]) == 0
    assert (tmp_path / "top5_error_vs_fit_seconds-d.png").exists()
    assert main(["plot", "--out", str(tmp_path), "--output", str(tmp_path / "all.png")]) == 2
    assert "add --dataset NAME" in capsys.readouterr().err
    assert main(["plot", "--out", str(tmp_path), "--dataset", "other",
                 "--output", str(tmp_path / "one.png")]) == 0
    assert (tmp_path / "one.png").exists()


@pytest.mark.parametrize("argv, message", [
    (["--x", "latency"], "--x: unknown name 'latency'; valid names: top1_error"),
    (["--y", "top5"], "--y: unknown name 'top5'"),
    (["--dataset", "nope"], "--dataset 'nope': no results for it"),
])
def test_plot_command_names_bad_input(tmp_path, capsys, argv, message):
    write_store(tmp_path, _records())
    assert main(["plot", "--out", str(tmp_path), *argv]) == 2
    assert message in capsys.readouterr().err


def test_latency_vs_k_lines_join_a_method_whose_settings_change_with_k(tmp_path):
    per_k = [record("st", dataset=f"fam-{k}", k=k, params={"depth": d})
             for k, d in ((10, 3), (100, 6))]
    swept = [record("hsm", dataset=f"fam-{k}", k=k, params={"lr": lr})
             for k in (10, 100) for lr in (0.1, 0.2)]
    lines = dict(latency_lines(per_k + swept))
    assert [k for k, _ in lines["st (settings per K)"]] == [10, 100]
    assert {"hsm (lr=0.1)", "hsm (lr=0.2)"} <= set(lines)  # two settings on one dataset
    single = [record("ova", dataset="fam-10", k=10)]
    assert dict(latency_lines(per_k + single))["ova (defaults)"][0][0] == 10  # one K: a point
    assert not latency_vs_k_plot(single, tmp_path / "none.png")  # no line of two points


def _x_tick_label_boxes(fig, ax):
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    return [(label.get_text(), label.get_window_extent(renderer))
            for label in ax.xaxis.get_majorticklabels() if label.get_text()]


def test_log_tick_labels_of_a_narrow_latency_range_do_not_run_together():
    """p50 from 0.0062 to 0.0108 ms is a log axis with a tick at every digit; beside a wide
    legend, 0.007, 0.008 and 0.009 ran into each other ("0.0070.0080.009"). Labels keep a
    gap of at least 6 pixels, 0.01 stays labelled, and the unlabelled ticks keep their grid
    lines as minor ticks."""
    params = {"a_fairly_long_parameter": 0.123456, "another_parameter": "auto", "depth": 12}
    records = [record(f"label_embedding_tree-variant-{i}", params=params, top1=0.1 + i / 100,
                      p50_ms=p50) for i, p50 in enumerate([0.0062, 0.0071, 0.0085, 0.0108])]
    fig, ax = metric_figure(records, "p50", "top1_error")
    assert ax.get_xscale() == "log"
    boxes = _x_tick_label_boxes(fig, ax)
    texts = [text for text, _ in boxes]
    assert "0.01" in texts and len(texts) >= 3, texts
    crowded = [(a, b) for i, (a, box_a) in enumerate(boxes)
               for b, box_b in boxes[i + 1:] if box_a.padded(3).overlaps(box_b.padded(3))]
    assert not crowded, crowded
    unlabelled = {f"{loc:g}" for loc in ax.xaxis.get_minorticklocs()}
    assert {"0.007", "0.008", "0.009"} <= set(texts) | unlabelled
