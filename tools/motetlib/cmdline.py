# SPDX-License-Identifier: MIT
"""The argument parser of the `motet` commands: argparse's, except that an
option taking one value given twice is a usage error (status 2), where
argparse kept the last value silently: `motet run D --until 1 ... --until
5` ran for 5 s, and which one was meant is a guess. A flag given twice
loses nothing and stays allowed; an option that collects values (--fault,
--target) is given as often as wanted."""

import argparse


class _StoreOnce(argparse._StoreAction):
    """An option of one value: a second occurrence in one command line is
    refused, naming both values."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string is not None:
            if getattr(self, "_seen_in", None) is namespace:
                parser.error(f"argument {'/'.join(self.option_strings)}: given twice "
                             f"({getattr(namespace, self.dest)} and {values}); give it once")
            self._seen_in = namespace
        super().__call__(parser, namespace, values, option_string)


class ArgumentParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose options of one value (the default
    action, store) may be given once; its subcommands' parsers are of this
    class too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
