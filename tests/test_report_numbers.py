import math

import pytest

from xcbench.report.numbers import mean_pm_std, percent, sig3


@pytest.mark.parametrize("value, text", [
    (0.1121, "0.112"), (0.133, "0.133"), (12.345, "12.3"), (5, "5.00"), (100.4, "100"),
    (1080087.1, "1,080,000"), (1234.5, "1,230"), (0.00012345, "0.000123"),
    (1.234e-5, "1.23e-05"), (0, "0"), (-2.5, "-2.50"), (None, "n/a"), (math.nan, "n/a"),
    (math.inf, "inf")])
def test_sig3_keeps_three_significant_digits(value, text):
    assert sig3(value) == text


def test_mean_pm_std_rounds_the_spread_to_the_mean_decimals():
    assert mean_pm_std(29.85, 0.4123) == "29.9 ± 0.4"
    assert mean_pm_std(0.0665, 0.00012) == "0.0665 ± 0.0001"
    assert mean_pm_std(2.5, 0.001) == "2.50 ± 0.001"  # one digit rather than 0.00
    assert mean_pm_std(12345, 678) == "12,300 ± 678"
    assert mean_pm_std(3.0, 0.0) == "3.00"
    assert mean_pm_std(math.nan, 1.0) == "n/a"


def test_percent_uses_the_same_digits_as_the_tables():
    assert percent(0.2987) == "29.9%"
    assert percent(0.084) == "8.40%"
    assert percent(None) == "n/a"
