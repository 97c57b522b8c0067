# SPDX-License-Identifier: MIT
"""The threads part of the footprint check: with MOTET_THREADS=0 no thread
code or data may exist.

Compares libmotet_kernel.a (threads on, on a port that has them) with
libmotet_kernel_nothreads.a (threads compiled out) object by object, and
fails unless, in the no-thread kernel:
  - every thread object (thread*.c.o) is empty: no text, data or bss;
  - no object defines or references a thread symbol (thread_*, sem_*,
    policy_*, rq_*, port_context_*, timer_kernel_*): the hooks in the
    scheduler and the timers folded away;
  - the total is smaller than with threads.
Together with the scheduler and timer objects being the same as before the
threads existed (checked when they were added, docs/threads.md), this is
the proof that a kernel without threads pays nothing for them.

    from motetlib import thread_size
    status = thread_size.check(build_dir)   # prints the table, 0 = pass
"""

import re
import sys

from . import build

LIBS = ("libmotet_kernel.a", "libmotet_kernel_nothreads.a")
TARGETS = ("motet_kernel", "motet_kernel_nothreads")  # what builds LIBS
THREAD_SOURCE = re.compile(r"thread[a-z_]*\.c")  # of an object: build.object_source()
THREAD_SYMBOL = re.compile(r"^(thread_|sem_|policy_|rq_|port_context_|timer_kernel_)")


def is_thread_object(name):
    """Whether an archive member is a thread object, whatever the generator
    names it (thread.c.o on the host, thread.c.obj on the cross ports)."""
    return THREAD_SOURCE.fullmatch(build.object_source(name)) is not None


def nm_symbols(archive):
    """{object: set of symbols it defines or references} of an archive."""
    return build.archive_symbols(archive)


def report(threads, nothreads, symbols):
    """Table lines and failures from {object: (text, data, bss)} of both
    kernels and {object: symbols} of the no-thread one."""
    lines = [f"{'object':<28} {'threads':>8} {'none':>8} {'diff':>7}   (text+data+bss bytes)"]
    failures = []
    total_on = total_off = 0
    for name in sorted(set(threads) | set(nothreads)):
        on = sum(threads.get(name, (0, 0, 0)))
        off = sum(nothreads.get(name, (0, 0, 0)))
        total_on += on
        total_off += off
        lines.append(f"{name:<28} {on:>8} {off:>8} {off - on:>+7}")
        if is_thread_object(name) and off:
            failures.append(f"{name} has {off} B without threads")
    lines.append(f"{'total':<28} {total_on:>8} {total_off:>8} {total_off - total_on:>+7}")
    for obj, syms in sorted(symbols.items()):
        leaked = sorted(s for s in syms if THREAD_SYMBOL.match(s))
        if leaked:
            failures.append(f"{obj} still names {', '.join(leaked)} without threads")
    if total_off >= total_on:
        failures.append(f"the kernel without threads ({total_off} B) is not smaller than "
                        f"the one with them ({total_on} B)")
    return lines, failures


def check(bdir=None, port=build.DEFAULT_PORT):
    """Compare the two built kernels; prints the table. Exit status."""
    kdir = build.build_dir(bdir) / "kernel"
    paths = [kdir / lib for lib in LIBS]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print(f"size: error: {missing[0]} does not exist (build the kernel first)",
              file=sys.stderr)
        return 1
    try:
        threads, nothreads = (build.archive_sizes(p) for p in paths)
        symbols = nm_symbols(paths[1])
    except RuntimeError as e:
        print(f"size: error: {e}", file=sys.stderr)
        return 1
    if not any(is_thread_object(n) and sum(v) for n, v in threads.items()):
        print(f"size: threads: the {port} port has no thread contexts yet; nothing to compare")
        return 0
    lines, failures = report(threads, nothreads, symbols)
    print(f"size: threads compiled out, {port} port ({LIBS[0]} vs {LIBS[1]})")
    for line in lines:
        print("  " + line)
    for f in failures:
        print(f"size: FAIL: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(check(sys.argv[1] if len(sys.argv) > 1 else None))
