"""A report across datasets: the ranking on top, one colour per method in every plot, notes
only where they apply, log axes that reach their largest point, the glossary last."""
import matplotlib.colors
import pytest
from report_records import record, write_store

from xcbench.report import plot as plot_module
from xcbench.report import write_report
from xcbench.report.axis_scale import log_ticks, padded_limits
from xcbench.report.plot import LATENCY_BARS, metric_figure
from xcbench.report.ranking import method_ranking, ranks
from xcbench.report.table import markdown_report


def _two_datasets():
    """d1 has a, c; d2 has b, c (so a per-plot colour order would give c two colours);
    hsm measures no path cost."""
    return [record("a", dataset="d1", top1=0.1, p50_ms=0.3, path_cost=5.0),
            record("c", dataset="d1", top1=0.2, p50_ms=0.1, path_cost=9.0),
            record("b", dataset="d2", top1=0.3, p50_ms=0.2, path_cost=7.0),
            record("c", dataset="d2", top1=0.1, p50_ms=0.5, path_cost=8.0),
            record("hsm", dataset="d2", top1=0.4, p50_ms=0.4)]


def test_ranks_share_ties():
    assert ranks({"x": 3.0, "y": 1.0, "z": 3.0}) == {"y": 1, "x": 2.5, "z": 2.5}


def test_method_ranking_averages_ranks_and_names_pareto_datasets():
    from xcbench.report.aggregate import group_rows

    ranking = {e["method"]: e for e in method_ranking(group_rows(_two_datasets()))}
    assert ranking["c"]["datasets"] == ["d1", "d2"]
    assert ranking["c"]["error_rank"] == pytest.approx((2 + 1) / 2)
    assert ranking["c"]["p50_rank"] == pytest.approx((1 + 3) / 2)
    assert ranking["c"]["front"] == ["d1", "d2"]  # fastest on d1, most accurate on d2
    assert ranking["hsm"]["front"] == [] and ranking["hsm"]["error_rank"] == 3
    assert ranking["b"]["front"] == ["d2"]  # fastest there


def test_multi_dataset_report_opens_with_the_ranking_and_ends_with_the_glossary():
    text = markdown_report(_two_datasets())
    top, glossary = text.index("## Across datasets"), text.index("## Columns")
    assert top < text.index("## d1") < text.index("## d2") < glossary
    assert "Columns:" not in text
    assert "| c | 2 | 1.5 | 2.0 | d1, d2 |" in text
    assert "## Across datasets" not in markdown_report(_two_datasets()[:2])  # one dataset


def test_legend_and_failed_table_show_the_values_a_run_used():
    used = {"C": 1.0, "max_iter": 100, "random_state": 0}
    ok = record("new", effective_params=used)
    failed = record("new", seed=1, status="error", effective_params=used)
    fig, ax = metric_figure([ok], "p50", "top1_error")
    assert [t.get_text() for t in ax.get_legend().texts] == ["Pareto front (points outlined)",
                                                             "new (C=1, max_iter=100)"]
    failed_lines = markdown_report([ok, failed]).split("Runs that did not finish:")[1]
    assert "| new | resolved C=1, max_iter=100 | 1 | error | boom |" in failed_lines
    assert "defaults" not in failed_lines.split("## Columns")[0]


def _figure_notes(fig):
    return " ".join(t.get_text() for t in fig.texts)


def test_notes_only_where_they_apply():
    records = _two_datasets()[2:]
    fig, _ = metric_figure(records, "p50", "top1_error")
    assert LATENCY_BARS in _figure_notes(fig) and "not shown" not in _figure_notes(fig)
    fig, _ = metric_figure(records, "path_cost", "top1_error")
    notes = _figure_notes(fig)
    assert "latency" not in notes and "± std over seeds" in notes
    assert "not shown (no path cost (vectors) or top-1 error (%) measured): hsm" in notes


def test_every_plot_of_a_report_draws_a_method_in_one_colour(tmp_path, monkeypatch):
    # c is second of the methods on d1 (a, c), first on d2 (c, hsm) and on fam-* (b, c)
    records = [r for r in _two_datasets() if r["method"] != "b"]
    records += [record(m, dataset=f"fam-{k}", k=k, p50_ms=1e-3 * k)
                for k in (10, 100) for m in ("b", "c")]
    write_store(tmp_path, records)
    seen: dict[str, set] = {}
    saved = plot_module.save_figure

    def spy(fig, path):
        for ax in fig.axes:
            for container in ax.containers:
                method = container.get_label().split(" (")[0]
                colour = matplotlib.colors.to_hex(container.lines[0].get_color())
                seen.setdefault(method, set()).add(colour)
        saved(fig, path)

    monkeypatch.setattr(plot_module, "save_figure", spy)
    paths = write_report(tmp_path, html=False)
    # two plots for d1 and d2, error vs latency for fam-10 and fam-100, latency vs K
    assert len(paths["plots"]) == 7
    assert set(seen) == {"a", "b", "c", "hsm"}
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert len({c for colours in seen.values() for c in colours}) == 4


@pytest.mark.parametrize("low, high", [(0.5, 130.0), (0.012, 0.9), (3.0, 11.0), (1e-3, 4e4),
                                       (40.0, 130.0)])
def test_a_log_axis_has_a_labelled_tick_beyond_its_largest_point(low, high):
    ticks = log_ticks(low, high)
    lo, hi = padded_limits(low, high, "log")
    assert ticks[0] <= low and ticks[-1] >= high
    assert lo <= ticks[0] and hi >= ticks[-1]
    assert 2 <= len(ticks) <= 13


def test_fit_time_plot_ends_on_a_tick_past_the_slowest_fit():
    records = [record("a", p50_ms=0.1), record("b", p50_ms=0.2), record("c", p50_ms=0.3)]
    for r, seconds in zip(records, (0.4, 12.0, 130.0)):
        r["summary"]["fit_seconds"] = seconds
    fig, ax = metric_figure(records, "fit_seconds", "top1_error")
    left, right = ax.get_xlim()
    shown = [t for t in ax.get_xticks() if left <= t <= right]
    assert ax.get_xscale() == "log" and max(shown) >= 130.0
