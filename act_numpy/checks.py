"""The one argument checker of the course: a number that is not what it must be is refused in one line.

    M = check_int("max_ponder", M)                  # an integer >= 1
    lr = check_float("lr", lr, 0.0, low_open=True)  # a finite number > 0

Both return the value as a plain int or float, or raise ValueError naming the argument. Every
package above uses these two (act_beyond's models, act_experiments' configs and runners).
"""

import math
import numbers


def check_int(name, value, low=1, high=None):
    """``value`` as an int if it is an integer (not a bool) >= low, and <= high unless high is None;
    else ValueError naming ``name``."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low
            or (high is not None and value > high)):
        bounds = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name} must be an integer {bounds}, got {value!r}")
    return int(value)


def check_float(name, value, low=-math.inf, high=math.inf, low_open=False, high_open=False):
    """``value`` as a float if it is a finite number in the interval; else ValueError naming ``name``.

    low_open / high_open leave the bound out: (low, high] rather than [low, high].
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        left, right = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be in {left}{low:g}, {high:g}{right}, got {value!r}")
    return float(value)
