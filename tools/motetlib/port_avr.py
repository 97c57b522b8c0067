# SPDX-License-Identifier: MIT
"""The AVR port's host side: run an ATmega128 image under the simavr
harness, check that an image fits the chip's SRAM, measure the benchmarks.

    port_avr.py [run] [--freq HZ] [--harness PATH] [--timeout S] IMAGE.elf
    port_avr.py check-ram IMAGE.elf
    port_avr.py bench [--build-dir DIR] [--out FILE]

`run` is the CTest runner of the AVR port (MOTET_PORT_RUNNER in
ports/avr/port.cmake): it starts motet-simavr on the image, passes the
firmware's console through, and exits with the status the firmware gave
port_halt() -- or 124 when the image does not halt within the timeout,
125 when the harness cannot start it, 126 when it crashes.

Finding the harness (tools/simavr-harness, a host program on libsimavr), in
this order: --harness PATH (the AVR build passes the copy it built, or the
one named by -DMOTET_SIMAVR_HARNESS); $MOTET_SIMAVR; `motet-simavr` on
PATH; tools/simavr-harness/motet-simavr in $MOTET_BUILD_DIR or build/ (a
native build makes it there).

`bench` is in port_avr_bench.py; this file stays importable with the
standard library alone.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `motetlib` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent.parent
HARNESS_NAME = "motet-simavr"
DEFAULT_TIMEOUT = 100.0  # seconds of host time per image
EXIT_LIMIT, EXIT_ERROR = 124, 125

SRAM_BYTES = 4096  # ATmega128 internal SRAM
STACK_RESERVE = 512  # bytes an image must leave for the one stack (at least)


def find_harness(explicit=None):
    """Path of motet-simavr, or None; see the module docstring for the order."""
    candidates = [explicit, os.environ.get("MOTET_SIMAVR"), shutil.which(HARNESS_NAME)]
    build = os.environ.get("MOTET_BUILD_DIR")
    for d in ([Path(build)] if build else []) + [ROOT / "build"]:
        candidates.append(str(d / "tools" / "simavr-harness" / HARNESS_NAME))
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def harness_or_exit(explicit=None):
    exe = find_harness(explicit)
    if exe is None:
        where = f" (not found at {explicit})" if explicit else ""
        print(f"port_avr: error: the simavr harness {HARNESS_NAME} is missing{where}.\n"
              "  Build it with a native build (cmake -S . -B build && cmake --build build\n"
              "  makes build/tools/simavr-harness/motet-simavr; needs libsimavr-dev and\n"
              "  libelf-dev), then pass it with -DMOTET_SIMAVR_HARNESS=PATH or set\n"
              "  MOTET_SIMAVR=PATH.", file=sys.stderr)
        sys.exit(EXIT_ERROR)
    return exe


def run(elf, timeout=DEFAULT_TIMEOUT, freq=None, harness=None, extra=()):
    """Run one image; returns the firmware's halt status or a harness error
    status (see the module docstring). Console output goes to stdout, the
    harness summary (cycles, time asleep, stack high-water) to stderr."""
    cmd = [harness_or_exit(harness), "--timeout", str(timeout)]
    if freq:
        cmd += ["--freq", str(freq)]
    cmd += [*extra, str(elf)]
    sys.stdout.flush()
    try:
        # The harness enforces the timeout in simulated runs; this one only
        # guards against a harness that hangs itself.
        return subprocess.run(cmd, timeout=timeout + 30).returncode
    except subprocess.TimeoutExpired:
        print(f"port_avr: error: {elf}: the harness did not stop within {timeout + 30:.0f} s",
              file=sys.stderr)
        return EXIT_LIMIT


# ---- static RAM of an image ------------------------------------------------

def section_sizes(elf):
    """{section: bytes} from `avr-size -A`."""
    res = subprocess.run(["avr-size", "-A", str(elf)], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"avr-size -A {elf} failed: {res.stderr.strip()}")
    sizes = {}
    for line in res.stdout.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+\d+", line)
        if m:
            sizes[m.group(1)] = int(m.group(2))
    return sizes


def static_ram(sizes):
    return sum(sizes.get(s, 0) for s in (".data", ".bss", ".noinit"))


def check_ram(elf):
    """Fail unless the image's static data leaves STACK_RESERVE bytes of the
    internal SRAM for the stack."""
    try:
        sizes = section_sizes(elf)
    except (OSError, RuntimeError) as e:
        print(f"port_avr: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    used = static_ram(sizes)
    left = SRAM_BYTES - used
    flash = sizes.get(".text", 0) + sizes.get(".data", 0)
    print(f"{Path(elf).name}: flash {flash} B, static RAM {used} B of {SRAM_BYTES} B, "
          f"{left} B left for the stack")
    if left < STACK_RESERVE:
        print(f"port_avr: error: {elf} leaves {left} B of SRAM for the stack, "
              f"less than {STACK_RESERVE} B", file=sys.stderr)
        return 1
    return 0


# ---- command line ----------------------------------------------------------

def _parser():
    p = argparse.ArgumentParser(
        prog="port_avr.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run an image under motet-simavr, exit with its status")
    r.add_argument("elf")
    r.add_argument("--freq", type=int, help="CPU clock in Hz (default: the image's own)")
    r.add_argument("--harness", help="path of motet-simavr")
    r.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help="host seconds before giving up (default: %(default)s)")
    c = sub.add_parser("check-ram", help="fail unless an image leaves room for the stack")
    c.add_argument("elf")
    b = sub.add_parser("bench", help="measure the AVR benchmarks, write docs/benchmarks-avr.md")
    b.add_argument("--build-dir", default=None,
                   help="AVR build directory (default: $MOTET_AVR_BUILD_DIR or build-avr)")
    b.add_argument("--harness", help="path of motet-simavr")
    b.add_argument("--out", default=str(ROOT / "docs" / "benchmarks-avr.md"),
                   help="report file (default: %(default)s)")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    # `port_avr.py IMAGE.elf` is `run IMAGE.elf` (the runner form).
    if argv and argv[0] not in ("run", "check-ram", "bench", "-h", "--help"):
        argv.insert(0, "run")
    args = _parser().parse_args(argv)
    if args.cmd == "run":
        return run(args.elf, args.timeout, args.freq, args.harness)
    if args.cmd == "check-ram":
        return check_ram(args.elf)
    if args.cmd == "bench":
        from motetlib import port_avr_bench
        return port_avr_bench.bench(args.build_dir, args.harness, args.out)
    _parser().print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
