"""For the tests of the methods' held-out probes (``xcbench.contract.holdout``): record the
rows each value tried got right, and redo by hand the rule that picks the value."""
import numpy as np


def record_held_out_rows(monkeypatch) -> list:
    """A list that receives, at each probe, {value tried: bool per held-out row} (the
    rule's value first), as the probe hands it to ``keep_unless_beaten``."""
    from xcbench.contract import holdout

    seen, real = [], holdout.keep_unless_beaten

    def spy(right):
        seen.append({value: np.array(rows, copy=True) for value, rows in right.items()})
        return real(right)

    monkeypatch.setattr(holdout, "keep_unless_beaten", spy)
    return seen


def chosen_by_hand(right: dict):
    """The rule's value (the first), unless the most accurate other value gets more rows
    right by over two standard errors of the paired difference: gain > 2 sqrt(rows where
    the two differ)."""
    start, *others = right
    best = max(others, key=lambda value: int(right[value].sum()))
    gain = int(right[best].sum()) - int(right[start].sum())
    return best if gain > 2 * np.sqrt(np.count_nonzero(right[best] != right[start])) else start
