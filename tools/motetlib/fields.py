# SPDX-License-Identifier: MIT
"""Checks shared by the readers of TOML files that describe hardware and
costs (device.py, energy.py, profile.py): unknown fields and numbers out of
their physical bounds. Each reader passes its own error class, so that its
callers catch one kind of error and the message names the file and field.
"""

import math


def show(bound):
    """A bound as written in an error: integers whole, others short."""
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def unknown(table, known, where, error):
    """Raise `error` naming the fields of `table` not in `known`."""
    extra = sorted(set(table) - set(known))
    if extra:
        raise error(f"{where}: unknown field{'s' if len(extra) > 1 else ''} "
                    f"{', '.join(extra)} (known: {', '.join(known)})")


def bounded(value, key, where, lo, hi, unit, error):
    """`value` if finite and within lo .. hi (TOML has inf and nan), else
    raise `error` naming the field, the value and the bounds."""
    if not math.isfinite(value) or not lo <= value <= hi:
        unit = f" {unit}" if unit else ""
        raise error(f"{where}: '{key}' = {value!r} is outside {show(lo)} .. {show(hi)}{unit}")
    return value
