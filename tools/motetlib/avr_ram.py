# SPDX-License-Identifier: MIT
"""The RAM of an ATmega128 image: its static data by item, from the linker
map, and its budget with the kernel stack that `motet stack` bounds.

    python3 avr_ram.py IMAGE.elf --annotations FILE [...] [--su DIR ...] [--sized SOURCE ...]

Prints the static RAM (.data and .bss: on the AVR, constants not kept in
program memory are copied into .data at boot) by item, the analysed
kernel-stack bound, and the RAM the image runs with: from the start of
its data (0x100) to the top of its stack, the linker's __stack (0x10FF,
the 4 KB of internal SRAM, unless the image moves it into external SRAM).
Fails unless the static data and the bound fit in it, i.e. unless the
stack provably cannot grow into the data: the check a sensing module of
devices/ssl-mixed.toml passes (apps/ssl/CMakeLists.txt runs it as the
test ssl_device_avr_ram; ports/avr/port.cmake, motet_avr_ram_test(), for
every example image). The bound is refused (exit 1) if the analysis is.
With --sized, it also fails unless the link compiled each C file SOURCE
with -fstack-usage (its object has a .su file): the frames of that file's
functions are then the compiler's, not estimates from their prologues,
which miss what a function pushes after them.
Exit status: 0 fits, 1 does not (or the analysis refused), 2 usage or
tool error.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import port_avr  # noqa: E402
import stackcheck  # noqa: E402
from elf_symbols import defined_symbols  # noqa: E402

DATA_START = 0x100  # ATmega128: registers and I/O below
RAM_SECTIONS = (".data", ".bss", ".rodata", "COMMON")
# What the kernel's and the port's variables are, for the tables.
KNOWN = {
    "heap": "the heap (task states, message payloads, bus frames)",
    "live_starts": "the heap's map of live block starts (MOTET_MEM_START_MAP)",
    "rx_frame": "the bus receive buffer (port_avr_bus.c)",
    "msg_block_storage": "message blocks (MOTET_MAX_QUEUED_MSGS)",
    "MIG": "the task migrator (slots, record ring, our requests awaiting their end)",
    "B": "the bus manager (transmit queue, links, sequence numbers, given-up notes, counters)",
    "A": "application loads across modules (the load taken part in, our failures followed)",
    "T": "time sync (its fit window)",
    "task_cache_storage": "task control blocks (MOTET_MAX_TASKS)",
    "timer_cache_storage": "timers (MOTET_MAX_TIMERS)",
    "counted_blocks": "the system tasks' timers (verdict deadline, migrator's tick)",
    "remote_cache_storage": "remote task blocks (MOTET_MAX_REMOTE_TASKS)",
    "remote": "remote task slots",
    "log_ring": "the event log (MOTET_LOG_ENTRIES)",
    "sched": "the scheduler",
    "queue_level": "the message queue's levels",
    "quarter": "the sine table (apps/ssl/dsp/trig.c)",
}


def items(map_path: Path) -> list[tuple[str, int]]:
    """[(item, bytes)] of the image's static RAM, largest first: a variable
    by its name, the string literals of an object file together."""
    sizes: dict[str, int] = {}
    for section, n, obj in port_avr.map_sections(map_path):
        if not section.startswith(RAM_SECTIONS) or n == 0:
            continue
        name = re.sub(r"^(COMMON|\.(data|bss|rodata))\.", "", section)
        if name.startswith(("str", ".")) or name in RAM_SECTIONS:  # anonymous
            name = f"strings and constants of {port_avr._object_name(obj)}"
        elif name in KNOWN:
            name = f"{name}: {KNOWN[name]}"
        sizes[name] = sizes.get(name, 0) + n
    return sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))


def ram_bytes(elf: Path) -> int:
    """The RAM the image runs with: data start to its stack's top."""
    defined = defined_symbols("avr-nm", elf)
    if defined is None:
        raise RuntimeError(f"avr-nm cannot read {elf}")
    if "__stack" not in defined:
        raise RuntimeError(f"{elf}: no __stack symbol")
    return defined["__stack"][0] + 1 - DATA_START


def stack_bound(elf: Path, annotations: list[Path],
                su: list[Path] | None = None) -> stackcheck.Result:
    ann = stackcheck.read_annotations(annotations, stackcheck.elf_arch(elf))
    out = stackcheck.analyse(elf, [], ann.isrs, ann=ann, su_dirs=su)
    if out["kernel"] is None:
        raise stackcheck.StackError("no kernel-stack figure: name the interrupt entries")
    return out["kernel"]


def object_sources(elf: Path, obj: Path) -> list[Path]:
    """The files the build compiled object `obj` (of the link of `elf`)
    from: its explicit inputs, as `ninja -t query` lists them."""
    tree = stackcheck.build_tree(elf)
    ninja = shutil.which("ninja") or stackcheck.cmake_cache(tree).get("CMAKE_MAKE_PROGRAM", "ninja")
    target = obj.relative_to(tree) if obj.is_relative_to(tree) else obj
    res = subprocess.run([ninja, "-C", str(tree), "-t", "query", target.as_posix()],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"ninja -t query {obj}: {res.stderr.strip() or res.stdout.strip()}")
    inputs = re.search(r"^  input: \S+\n((?:    [^|\n]\S*\n)*)", res.stdout, re.M)
    return [(tree / line.strip()).resolve() for line in (inputs[1] if inputs else "").splitlines()]


def unsized(elf: Path, sources: list[Path]) -> list[str]:
    """Why each of the C files `sources` has no compiler frames in the link
    of `elf`: compiled without -fstack-usage, or not compiled for it."""
    objects = stackcheck.linked_objects(elf)
    if objects is None:
        raise RuntimeError(f"{elf}: its build tree cannot list the objects of its link "
                           "(not a Ninja tree)")
    why = []
    for source in sources:
        # CMake names an object after its source (port_avr_boot.c.obj); the
        # build says which source it was.
        mine = [o for o in objects if o.stem == source.name
                and Path(source).resolve() in object_sources(elf, o)]
        if not mine:
            why.append(f"{source.name}: no object of the link was compiled from it")
        why += [f"{source.name}: compiled without -fstack-usage ({o.name} has no .su file)"
                for o in mine if not o.with_suffix(".su").is_file()]
    return why


def report(elf: Path, annotations: list[Path], su: list[Path] | None, small: int = 32,
           sized: list[Path] | None = None) -> int:
    rows = items(Path(f"{elf}.map"))
    static = port_avr.static_ram(port_avr.section_sizes(elf))
    ram = ram_bytes(elf)
    bound = stack_bound(elf, annotations, su)
    print(f"{elf.name}: static RAM {static} B by item:")
    rest = [n for _, n in rows if n < small]
    for name, n in rows:
        if n >= small:
            print(f"  {n:6d}  {name}")
    print(f"  {sum(rest):6d}  {len(rest)} items under {small} B each")
    estimated = unsized(elf, sized) if sized else []
    if estimated:
        print(f"avr_ram: FAIL: {elf.name}: frames estimated, not the compiler's: "
              f"{'; '.join(estimated)}", file=sys.stderr)
        return 1
    if bound.problems:
        print(f"stack bound: refused: {'; '.join(bound.problems)}", file=sys.stderr)
        return 1
    total = static + bound.depth
    print(f"analysed kernel stack {bound.depth} B; static RAM + stack {total} B of the {ram} B "
          f"the image runs with ({ram - total:+d} B)")
    if total > ram:
        print(f"avr_ram: FAIL: {elf.name}: its static RAM ({static} B) and its analysed stack "
              f"({bound.depth} B) need {total} B, more than its {ram} B", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="avr_ram.py", description=__doc__.split("\n\n")[0])
    p.add_argument("elf", type=Path)
    p.add_argument("--annotations", action="append", type=Path, default=[], required=True)
    p.add_argument("--su", action="append", type=Path, default=[])
    p.add_argument("--sized", action="append", type=Path, default=[],
                   help="a C file whose functions must have the compiler's frames")
    args = p.parse_args(argv)
    try:
        return report(args.elf, args.annotations, args.su or None, sized=args.sized)
    except (OSError, RuntimeError, stackcheck.StackError) as e:
        print(f"avr_ram: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
