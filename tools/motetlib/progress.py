# SPDX-License-Identifier: MIT
"""Progress of a long command (a benchmark sweep, a soak) on standard
error: one line rewritten in place on a terminal, else a line at every
tenth of the work, so that a log shows the command is moving."""

import sys
import time


class Progress:
    """`with Progress("energy", total) as p: ... p.step()` after each unit."""

    def __init__(self, label, total, stream=None):
        self.label = label
        self.total = max(1, total)
        self.done = 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self.shown_tenth = -1

    def __enter__(self):
        self.show()
        return self

    def __exit__(self, *exc):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def step(self, n=1):
        self.done += n
        self.show()

    def show(self):
        secs = time.monotonic() - self.start
        line = f"{self.label}: {self.done}/{self.total} ({100 * self.done // self.total} %), " \
               f"{secs:.0f} s"
        if self.tty:
            self.stream.write("\r" + line + "   ")
        else:
            tenth = 10 * self.done // self.total
            if tenth == self.shown_tenth:
                return
            self.shown_tenth = tenth
            self.stream.write(line + "\n")
        self.stream.flush()


def run_all(label, calls, jobs=None):
    """{key: fn(*args)} for calls {key: (fn, *args)}, run on a thread pool
    (the work is in subprocesses) with a progress line as each ends."""
    import os
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(jobs or os.cpu_count() or 2) as pool, \
            Progress(label, len(calls)) as progress:
        futs = {key: pool.submit(call[0], *call[1:]) for key, call in calls.items()}
        for f in futs.values():
            f.add_done_callback(lambda _: progress.step())
        return {key: f.result() for key, f in futs.items()}
