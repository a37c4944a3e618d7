"""What every script's command line shares: a parser whose errors are one line, and option checks.

``OneLineParser`` is the argparse parser of every script of the course: its errors are one line
and exit status 2. ``number_list`` reads an option's comma-separated numbers, and ``checked``
turns a checker's refusal into the parser's one-line error; ``fail`` ends a script with one line:

    seeds = checked(parser, number_list, args.seeds, "--seeds", check_int, 0)   # "0,1,2" -> (0, 1, 2)
    checked(parser, check_int, "--window", args.window)                          # an int >= 1

Its own module, below the training loop, the sweeps, the figures and the course's upkeep, so that
each imports it without loading the others (the standard library and act_numpy.checks only).
"""

import argparse
import sys

from act_numpy.checks import check_int


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line (the message and a pointer to --help) and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def fail(script, message, status=2):
    """End a script with one line on stderr, no traceback (status 2: options refused)."""
    print(f"{script}: error: {message}", file=sys.stderr)
    sys.exit(status)


def checked(parser, check, *args, **kwargs):
    """``check(*args, **kwargs)``'s value (act_numpy.checks' check_int or check_float, or
    number_list); its ValueError ends the command as ``parser``'s one-line error instead."""
    try:
        return check(*args, **kwargs)
    except ValueError as err:
        parser.error(str(err))


def number_list(text, name, check=check_int, *bounds, empty=False, **options):
    """'0.1,1e-3' -> (0.1, 0.001): the comma-separated numbers of option ``name``, in the order
    given, each read as an int (check=check_int) or a float (check=check_float) and passed
    through ``check(f"each of {name}", value, *bounds, **options)``; empty items are skipped.
    ValueError naming ``name`` for text that is not such a list, a number out of bounds, or no
    number at all unless ``empty``."""
    kind = int if check is check_int else float
    try:
        values = tuple(kind(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"{name} must be a comma-separated list of numbers, got {text!r}") from None
    if not values and not empty:
        raise ValueError(f"{name} must hold at least one number, got {text!r}")
    return tuple(check(f"each of {name}", v, *bounds, **options) for v in values)
