"""The pass schedule of the online learners: a fixed count, or VW's holdout regime."""
import numpy as np
import pytest

from xcbench.tree.passes import PassSchedule


def _run(schedule, errors):
    orders = []
    for order, error in zip(schedule, errors):
        orders.append(order)
        if schedule.holdout is not None:
            schedule.report(error)
    return orders


def test_a_fixed_count_trains_on_every_row_that_many_times():
    schedule = PassSchedule(50, 4, np.random.default_rng(0))
    orders = _run(schedule, [0.5] * 10)
    assert schedule.holdout is None and len(orders) == 4 == schedule.passes_done
    for order in orders:
        assert sorted(order.tolist()) == list(range(50))


def test_auto_holds_out_every_tenth_row_and_stops_after_three_passes_without_gain():
    schedule = PassSchedule(100, "auto", np.random.default_rng(0))
    assert schedule.holdout.tolist() == list(range(9, 100, 10))
    errors = [0.5, 0.4, 0.3, 0.35, 0.2, 0.31, 0.25, 0.9, 0.1, 0.1]
    orders = _run(schedule, errors)
    # a new best at passes 1, 2, 3 and 5; passes 6-8 do not beat 0.2: stop after pass 8
    assert len(orders) == 8 == schedule.passes_done
    held = set(schedule.holdout.tolist())
    assert all(held.isdisjoint(order.tolist()) and len(order) == 90 for order in orders)


def test_auto_stops_at_the_pass_cap():
    schedule = PassSchedule(100, "auto", np.random.default_rng(0), max_passes=5)
    assert len(_run(schedule, np.linspace(1, 0, 20))) == 5


@pytest.mark.parametrize("n_rows", [0, 5])
def test_auto_with_too_few_rows_to_hold_out_makes_one_pass(n_rows):
    schedule = PassSchedule(n_rows, "auto", np.random.default_rng(0))
    assert schedule.holdout is None and len(_run(schedule, [0.1] * 3)) == 1


@pytest.mark.parametrize("passes", [3, "auto"])
def test_keep_out_holds_rows_out_of_a_regime_that_holds_none(passes, monkeypatch):
    import xcbench.tree.passes as passes_module
    monkeypatch.setattr(passes_module, "LARGE_DATA", 200)  # "auto" on large data: one pass
    schedule = PassSchedule(300, passes, np.random.default_rng(0), keep_out=7)
    assert schedule.holdout.tolist() == list(range(9, 70, 10))  # every tenth row, 7 of them
    orders = _run(schedule, np.linspace(1, 0, 10))  # kept out, not a reason to stop
    assert len(orders) == (3 if passes == 3 else 1) == schedule.passes_done
    assert all(set(schedule.holdout.tolist()).isdisjoint(o.tolist()) and len(o) == 293
               for o in orders)


def test_keep_out_leaves_the_auto_holdout_and_tiny_data_alone():
    auto = PassSchedule(100, "auto", np.random.default_rng(0), keep_out=3)
    assert auto.holdout.tolist() == list(range(9, 100, 10))  # the regime's own 10
    assert PassSchedule(15, 2, np.random.default_rng(0), keep_out=3).holdout is None
