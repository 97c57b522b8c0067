# SPDX-License-Identifier: MIT
"""The argument parser of the `motet` commands: argparse's, except that an
option taking one value given twice is a usage error (status 2), where
argparse kept the last value silently: `motet run D --until 1 ... --until
5` ran for 5 s, and which one was meant is a guess. A flag given twice
loses nothing and stays allowed; an option that collects values (--fault,
--target) is given as often as wanted.

Every parser a user gives options to is one: motet and its subcommands,
the programs they run with the user's options (run, new, appc, profile,
plan, soak, stack, fuzz, the demo's ssl_demo and the benchmarks' bench_*).
The helpers that only motet's build, tests and hub start, with command
lines they make (port_avr, port_cortex_m, qemu_module, avr_ram,
stack_paint), keep argparse's."""

import argparse


class StoreOnce(argparse.Action):
    """An option of one value, stored as argparse's default action stores
    it; a second occurrence in one command line is refused, naming both
    values."""

    def __init__(self, option_strings, dest, nargs=None, **kwargs):
        if nargs == 0:
            raise ValueError("an option of one value takes a value: nargs=0 is a flag's "
                             "(action='store_true')")
        super().__init__(option_strings, dest, nargs=nargs, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None:
            if getattr(self, "_seen_in", None) is namespace:
                parser.error(f"argument {'/'.join(self.option_strings)}: given twice "
                             f"({getattr(namespace, self.dest)} and {values}); give it once")
            self._seen_in = namespace
        setattr(namespace, self.dest, values)


class ArgumentParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose options of one value (the default
    action, store) may be given once; its subcommands' parsers are of this
    class too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)
